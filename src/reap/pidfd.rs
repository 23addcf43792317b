//! The exit-signal strategy: wait for the platform's exit signal (an exit descriptor in the
//! reactor), then reap.

use super::Wait;
use crate::exit::ExitStatus;
use crate::sys::exit_watch::ExitSignal;

/// A child watched through its exit signal.
pub struct FdWatch<W: Wait> {
    signal: Option<ExitSignal>,
    child: W,
}

impl<W: Wait> FdWatch<W> {
    pub(super) fn new(child: W, signal: ExitSignal) -> Self {
        Self {
            signal: Some(signal),
            child,
        }
    }

    pub(super) async fn wait(&mut self) -> ExitStatus {
        while let Some(signal) = &mut self.signal {
            match signal.wake().await {
                Ok(()) => {
                    if let Some(status) = self.child.try_wait() {
                        return status;
                    }
                }
                // The reactor cannot watch it any more (never seen): reap directly.
                Err(_) => self.signal = None,
            }
        }
        // The exit signal came, so this does not block for long.
        self.child.wait()
    }
}
