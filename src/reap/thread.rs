//! The fallback strategy: a thread blocked in `waitpid` for one child.

use std::io;

use super::Wait;
use crate::exit::ExitStatus;

/// A child watched by a thread of its own.
pub struct ThreadWatch(tokio::sync::oneshot::Receiver<ExitStatus>);

impl ThreadWatch {
    pub(super) fn new(mut child: impl Wait) -> io::Result<Self> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("acp-terminal-wait".into())
            .spawn(move || {
                let _ = tx.send(child.wait());
            })?;
        Ok(Self(rx))
    }

    pub(super) async fn wait(&mut self) -> ExitStatus {
        (&mut self.0)
            .await
            .unwrap_or_else(|_| ExitStatus::unknown())
    }
}
