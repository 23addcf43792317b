//! macOS: no `pipe2`, so `pipe` and then `FD_CLOEXEC` on both ends. Our own launches cannot
//! inherit them in between: they use `POSIX_SPAWN_CLOEXEC_DEFAULT`, which passes only the
//! descriptors they name. Pipe buffers grow by themselves (up to 64 KiB) and cannot be sized,
//! so floods are never paced here (no [`Timer`] is ever made).

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

pub(super) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe()?;
    for fd in [&r, &w] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    Ok((r, w))
}

/// Pipes cannot be sized: the capacity a flood may be paced with is unknown, so 0.
pub(super) fn grow(_fd: BorrowedFd<'_>, _bytes: i32) -> usize {
    0
}

/// No timer: floods are not paced on macOS (see [`grow`]), so none can exist (kqueue's
/// microsecond timers are not reachable through tokio's `AsyncFd`).
#[derive(Debug)]
pub(super) enum Timer {}

impl Timer {
    pub(super) fn new() -> io::Result<Timer> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub(super) fn arm(&mut self, _after: Duration) -> io::Result<()> {
        match *self {}
    }

    pub(super) async fn expired(&mut self) {
        match *self {}
    }
}
