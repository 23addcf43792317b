//! Linux: `pipe2(O_CLOEXEC)` and `F_SETPIPE_SZ`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::fcntl::OFlag;

pub(super) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(io::Error::from)
}

pub(super) fn grow(fd: BorrowedFd<'_>, bytes: i32) {
    // SAFETY: fcntl on a descriptor the caller keeps open; failure (limits) is ignored.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes);
    }
}
