//! Output streaming to a JS listener (`onOutput`): the core pushes chunks from its reader
//! task; at most one call into JS is queued at a time, and it takes everything pending, so
//! chunks coalesce while JS is busy and a slow listener never slows the command.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::Env;

use crate::terminal::OutputSink;

#[derive(Default)]
struct SinkState {
    pending: Vec<u8>,
    scheduled: bool,
    cancelled: bool,
}

type DispatchFn = ThreadsafeFunction<Arc<JsSink>, (), (), Status, false, true>;

/// Delivers output to a JS listener: at most one call is queued at a time, and it takes
/// everything that arrived until it runs (so chunks coalesce while JS is busy).
pub(super) struct JsSink {
    state: Mutex<SinkState>,
    listener: FunctionRef<Buffer, UnknownReturnValue>,
    dispatch: std::sync::OnceLock<DispatchFn>,
}

impl JsSink {
    pub(super) fn new(
        env: &Env,
        listener: &Function<Buffer, UnknownReturnValue>,
    ) -> Result<Arc<Self>> {
        let sink = Arc::new(JsSink {
            state: Mutex::new(SinkState::default()),
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
        let data = {
            let mut s = self.lock();
            s.scheduled = false;
            if s.cancelled {
                return Ok(());
            }
            std::mem::take(&mut s.pending)
        };
        if data.is_empty() {
            return Ok(());
        }
        let f = self.listener.borrow_back(env)?;
        f.call(Buffer::from(data))?;
        Ok(())
    }

    pub(super) fn cancel(&self) {
        let mut s = self.lock();
        s.cancelled = true;
        s.pending = Vec::new();
    }
}

impl OutputSink for Arc<JsSink> {
    fn push(&self, chunk: &[u8]) {
        let mut s = self.lock();
        if s.cancelled {
            return;
        }
        s.pending.extend_from_slice(chunk);
        if !s.scheduled {
            s.scheduled = true;
            drop(s);
            if let Some(d) = self.dispatch.get() {
                d.call(self.clone(), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }

    fn close(&self) {
        // Pending data is still delivered by the call already queued.
    }
}
