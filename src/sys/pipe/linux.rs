//! Linux: `pipe2(O_CLOEXEC)` and `F_SETPIPE_SZ`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::fcntl::OFlag;

pub(super) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(io::Error::from)
}

/// Asks for a pipe buffer of `bytes`; the capacity the pipe has now, `None` when it cannot be
/// sized (a pty master, or limits refused it).
pub(super) fn grow(fd: BorrowedFd<'_>, bytes: i32) -> Option<usize> {
    // SAFETY: fcntl on a descriptor the caller keeps open; it returns the new capacity or -1.
    let got = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes) };
    usize::try_from(got).ok()
}
