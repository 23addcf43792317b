//! Output streaming to a JS listener (`onOutput`): the core pushes chunks from its reader
//! task; at most one delivery is queued at a time, and it takes what is pending, so chunks
//! coalesce while JS is busy.
//!
//! Invariant: a listener loses no byte to its own slowness. Once [`PAUSE_AT`] bytes wait for it,
//! the sink is behind ([`OutputSink::behind`]) and the output pump stops reading until it caught
//! up to half of that: the command blocks on a full pipe, as under `cmd | slow_consumer`. What is
//! pending is still bounded ([`crate::pending`], 8 MiB): only a replay larger than that (a
//! subscription with `replay` to a large retained output) can lose its oldest bytes, and the
//! next call says how many.
//!
//! Invariant: one call of a listener gets at most [`DELIVERY_MAX`] bytes, and the delivery
//! after a call is a `setImmediate` of it, so the event loop runs its timers and I/O between
//! two calls. (A call queued from the reader thread while JS runs would
//! be made in the same turn: Node runs up to 1000 queued calls of a threadsafe function in one
//! go, and a listener behind a flood then held the loop for seconds.)
//!
//! Invariant: the exit is reported after the last byte. The queued call and the settlement of
//! `waitForExit()` travel to the JS thread separately, in no fixed order; so whatever reports
//! the exit to JS first hands every pending byte to every listener of the terminal
//! ([`Listeners::flush`]), on the JS thread, before the promise settles or the status shows.
//! That is at most [`PAUSE_AT`] plus one read per listener.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::Env;

use napi_derive::napi;

use crate::output::display::{DisplayFilter, DisplayOptions};
use tokio::sync::Notify;

use crate::pending::{Pending, HIGH_WATER_MARK};
use crate::terminal::OutputSink;

struct SinkState {
    pending: Pending,
    scheduled: bool,
    cancelled: bool,
    /// `display: 'safe'`: what reaches the listener is filtered first (on the reader's
    /// thread, before the pending bound, so the filter sees every byte in order).
    display: Option<DisplayFilter>,
    /// Scratch space for the filter's output.
    filtered: Vec<u8>,
    /// Signalled once the listener caught up after [`OutputSink::behind`] said it was behind.
    waker: Option<Arc<Notify>>,
    /// [`OutputSink::behind`] answered true and the waker has not been signalled since.
    pump_waits: bool,
}

impl SinkState {
    /// Signals the pump if it waits for this listener and the listener is back under half of
    /// [`PAUSE_AT`] (or cancelled: then it never has to wait for it again).
    fn wake_if_caught_up(&mut self) {
        if self.pump_waits && (self.cancelled || self.pending.len() <= PAUSE_AT / 2) {
            self.pump_waits = false;
            if let Some(w) = &self.waker {
                w.notify_one();
            }
        }
    }
}

/// Bytes waiting for a listener from which the output pump stops reading until it catches up.
/// Small, because what waits is delivered in one turn when the exit is reported; at least two
/// of the reader's reads (1 MiB each), so a flood still goes in large reads.
pub(super) const PAUSE_AT: usize = 2 << 20;

/// The most one call of a listener gets: small enough that a listener's work per call (a
/// decode, a terminal widget's write) stays well under a frame, large enough that a flood
/// costs few calls.
pub(super) const DELIVERY_MAX: usize = 256 * 1024;

/// What a listener learns besides the bytes of a chunk.
#[napi(object, object_from_js = false)]
pub struct OutputChunkInfo {
    /// Bytes dropped right before this chunk; 0 normally. A listener that falls behind the
    /// command holds the command back instead of losing bytes; only a replay of more than
    /// 8 MiB (the high-water mark) at subscription drops the oldest of it. The retained
    /// output (`currentOutput()`) never loses bytes this way.
    pub dropped: f64,
}

/// The listener's arguments.
type ListenerArgs = FnArgs<(Buffer, OutputChunkInfo)>;

/// An output listener as JS passes it.
pub(super) type ListenerFn<'e> = Function<'e, ListenerArgs, UnknownReturnValue>;

type DispatchFn = ThreadsafeFunction<Arc<JsSink>, (), (), Status, false, true>;

/// Delivers output to a JS listener: at most one call is queued at a time, and it takes
/// everything that arrived until it runs (so chunks coalesce while JS is busy).
pub(super) struct JsSink {
    state: Mutex<SinkState>,
    listener: FunctionRef<ListenerArgs, UnknownReturnValue>,
    dispatch: std::sync::OnceLock<DispatchFn>,
}

impl JsSink {
    /// A sink for `listener`; with `display`, the listener gets the output filtered for a
    /// real terminal ([`crate::output::display`]).
    pub(super) fn new(
        env: &Env,
        listener: &Function<ListenerArgs, UnknownReturnValue>,
        display: Option<DisplayOptions>,
    ) -> Result<Arc<Self>> {
        let sink = Arc::new(JsSink {
            state: Mutex::new(SinkState {
                pending: Pending::new(HIGH_WATER_MARK),
                scheduled: false,
                cancelled: false,
                display: display.map(DisplayFilter::new),
                filtered: Vec::new(),
                waker: None,
                pump_waits: false,
            }),
            listener: listener.create_ref()?,
            dispatch: std::sync::OnceLock::new(),
        });
        let noop =
            env.create_function_from_closure::<(), (), _>("acpTerminalOutput", |_| Ok(()))?;
        let tsfn = noop
            .build_threadsafe_function::<Arc<JsSink>>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(
                |ctx: napi::threadsafe_function::ThreadsafeCallContext<Arc<JsSink>>| {
                    ctx.value.deliver(&ctx.env)?;
                    Ok(())
                },
            )?;
        let _ = sink.dispatch.set(tsfn);
        Ok(sink)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// On the JS thread, as the queued delivery: hands the listener the oldest pending bytes
    /// (at most [`DELIVERY_MAX`]). After a call, the next delivery is queued with
    /// `setImmediate` (it finds nothing to do if nothing arrives meanwhile), so the event loop
    /// turns between two calls: a threadsafe call queued by the reader while this one runs
    /// would be made in this same turn.
    fn deliver(self: &Arc<Self>, env: &Env) -> Result<()> {
        let (taken, more) = {
            let mut s = self.lock();
            s.scheduled = false;
            if s.cancelled {
                return Ok(());
            }
            let taken = s.pending.take_up_to(DELIVERY_MAX);
            s.wake_if_caught_up();
            let more = taken.is_some();
            // Queued below; until it runs, pushes queue nothing more.
            s.scheduled = more;
            (taken, more)
        };
        if more {
            // Queued before the call, so a listener that throws does not stop the stream.
            if let Err(e) = self.deliver_next_turn(env) {
                self.lock().scheduled = false;
                return Err(e);
            }
        }
        match taken {
            Some((data, dropped)) => self.call_listener(env, data, dropped),
            None => Ok(()),
        }
    }

    /// On the JS thread: hands the listener everything pending now, in pieces of at most
    /// [`DELIVERY_MAX`] (the exit is about to be reported: every byte goes first).
    fn deliver_all(&self, env: &Env) -> Result<()> {
        loop {
            let taken = {
                let mut s = self.lock();
                if s.cancelled {
                    return Ok(());
                }
                let taken = s.pending.take_up_to(DELIVERY_MAX);
                s.wake_if_caught_up();
                taken
            };
            match taken {
                Some((data, dropped)) => self.call_listener(env, data, dropped)?,
                None => return Ok(()),
            }
        }
    }

    fn call_listener(&self, env: &Env, data: Vec<u8>, dropped: u64) -> Result<()> {
        let f = self.listener.borrow_back(env)?;
        let info = OutputChunkInfo {
            dropped: dropped as f64,
        };
        f.call((Buffer::from(data), info).into())?;
        Ok(())
    }

    /// Queues the next [`JsSink::deliver`] with `setImmediate`: after this turn's timers and
    /// I/O, unlike a threadsafe-function call, which Node would make in this same turn.
    fn deliver_next_turn(self: &Arc<Self>, env: &Env) -> Result<()> {
        let sink = self.clone();
        let next = env
            .create_function_from_closure::<(), (), _>("acpTerminalOutput", move |ctx| {
                sink.deliver(ctx.env)
            })?;
        let set_immediate: Function<Function<(), ()>, Unknown> =
            env.get_global()?.get_named_property("setImmediate")?;
        set_immediate.call(next)?;
        Ok(())
    }

    /// Whether `unsubscribe` was called.
    fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }

    pub(super) fn cancel(&self) {
        let mut s = self.lock();
        s.cancelled = true;
        s.pending.clear();
        s.wake_if_caught_up();
    }
}

impl OutputSink for Arc<JsSink> {
    fn push(&self, chunk: &[u8]) {
        let mut guard = self.lock();
        let s = &mut *guard;
        if s.cancelled {
            return;
        }
        if let Some(filter) = s.display.as_mut() {
            s.filtered.clear();
            filter.filter(chunk, &mut s.filtered);
            if s.filtered.is_empty() {
                return;
            }
            s.pending.push(&s.filtered);
        } else {
            s.pending.push(chunk);
        }
        if !s.scheduled {
            s.scheduled = true;
            drop(guard);
            if let Some(d) = self.dispatch.get() {
                d.call(self.clone(), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }

    fn close(&self) {
        // Pending data is still delivered by the call already queued.
    }

    fn behind(&self) -> bool {
        let mut s = self.lock();
        let behind = !s.cancelled && s.pending.len() >= PAUSE_AT;
        s.pump_waits |= behind;
        behind
    }

    fn set_waker(&self, waker: Arc<Notify>) {
        self.lock().waker = Some(waker);
    }
}

/// The listeners of one terminal handle, kept on the JS thread so that what reports the exit
/// can deliver their pending bytes first.
#[derive(Clone, Default)]
pub(super) struct Listeners(Rc<RefCell<Vec<Arc<JsSink>>>>);

impl Listeners {
    /// Remembers a listener (unsubscribed ones are forgotten at the next add).
    pub(super) fn add(&self, sink: Arc<JsSink>) {
        let mut list = self.0.borrow_mut();
        list.retain(|s| !s.is_cancelled());
        list.push(sink);
    }

    /// On the JS thread: calls every listener with what is pending for it now, as its queued
    /// call would have. A listener that throws is reported as an uncaught exception (as from
    /// its queued call), and the others are still called.
    pub(super) fn flush(&self, env: &Env) {
        // A copy: a listener may subscribe another one while it runs.
        let list: Vec<Arc<JsSink>> = self.0.borrow().clone();
        for sink in list {
            if let Err(e) = sink.deliver_all(env) {
                env.fatal_exception(e);
            }
        }
    }
}
