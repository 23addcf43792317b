//! Watching a child for its exit without a signal handler: a descriptor that becomes readable
//! once the process has exited (Linux: a pidfd; macOS: a kqueue with `EVFILT_PROC`
//! `NOTE_EXIT`), which the runtime's reactor can wait on.
//! Where the platform has none, [`exit_fd`] answers `None` and the caller falls back to a
//! thread blocked in `waitpid` (see [`crate::reap`]).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;

use std::io;
use std::os::fd::OwnedFd;

/// A close-on-exec descriptor that turns readable once `pid` (our child) has exited, or
/// `None` where the kernel cannot provide one (remembered: later calls do not retry).
pub fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    imp::exit_fd(pid)
}

/// Whether a readable [`exit_fd`] means the child can be reaped at once. A pidfd turns
/// readable only once the child is a zombie; macOS posts `NOTE_EXIT` a moment before, so a
/// `waitpid(WNOHANG)` may still find it running and the caller must then wait without
/// `WNOHANG` (the kqueue's one event is spent: it will not turn readable again).
pub const READABLE_MEANS_REAPABLE: bool = cfg!(not(target_os = "macos"));
