//! The exit-descriptor strategy: wait for readability in the reactor, then reap.

use std::io;
use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;

use super::Wait;
use crate::exit::ExitStatus;

/// A child watched through its exit descriptor.
pub struct FdWatch<W: Wait> {
    fd: Option<AsyncFd<OwnedFd>>,
    child: W,
}

impl<W: Wait> FdWatch<W> {
    pub(super) fn new(child: W, fd: OwnedFd) -> io::Result<Self> {
        Ok(Self {
            fd: Some(crate::sys::reactor::register_readable(fd)?),
            child,
        })
    }

    pub(super) async fn wait(&mut self) -> ExitStatus {
        while let Some(fd) = &self.fd {
            match fd.readable().await {
                Ok(mut guard) => match self.child.try_wait() {
                    Some(status) => return status,
                    None => guard.clear_ready(),
                },
                // The reactor cannot watch it any more (never seen): reap directly.
                Err(_) => self.fd = None,
            }
        }
        // The exit descriptor was readable, so this does not block for long.
        self.child.wait()
    }
}
