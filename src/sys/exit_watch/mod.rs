//! Watching a child for its exit without a signal handler: a descriptor that becomes readable
//! once the process has exited (Linux: a pidfd), which the runtime's reactor can wait on.
//! Where the platform has none, [`exit_fd`] answers `None` and the caller falls back to a
//! thread blocked in `waitpid` (see [`crate::reap`]).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

use std::io;
use std::os::fd::OwnedFd;

/// A close-on-exec descriptor that turns readable once `pid` (our child) has exited, or
/// `None` where the kernel cannot provide one (remembered: later calls do not retry).
pub fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    imp::exit_fd(pid)
}
