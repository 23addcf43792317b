//! Output streaming to a JS listener (`onOutput`): the core pushes chunks from its reader
//! task; at most one call into JS is queued at a time, and it takes everything pending, so
//! chunks coalesce while JS is busy and a slow listener never slows the command. What is
//! pending is bounded ([`crate::pending`]): a listener more than 8 MiB behind loses the oldest
//! bytes, and its next call says how many.
//!
//! Invariant: the exit is reported after the last byte. The queued call and the settlement of
//! `waitForExit()` travel to the JS thread separately, in no fixed order; so whatever reports
//! the exit to JS first hands every pending byte to every listener of the terminal
//! ([`Listeners::flush`]), on the JS thread, before the promise settles or the status shows.

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
}

/// What a listener learns besides the bytes of a chunk.
#[napi(object, object_from_js = false)]
pub struct OutputChunkInfo {
    /// Bytes dropped right before this chunk because the listener fell more than 8 MiB
    /// (the high-water mark) behind the command; 0 normally. The retained output
    /// (`currentOutput()`) never loses bytes this way.
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

    /// On the JS thread: hand everything pending to the listener.
    fn deliver(&self, env: &Env) -> Result<()> {
        let (data, dropped) = {
            let mut s = self.lock();
            s.scheduled = false;
            if s.cancelled {
                return Ok(());
            }
            match s.pending.take() {
                Some(taken) => taken,
                None => return Ok(()),
            }
        };
        let f = self.listener.borrow_back(env)?;
        let info = OutputChunkInfo {
            dropped: dropped as f64,
        };
        f.call((Buffer::from(data), info).into())?;
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
            if let Err(e) = sink.deliver(env) {
                env.fatal_exception(e);
            }
        }
    }
}
