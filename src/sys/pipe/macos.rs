//! macOS: no `pipe2`, so `pipe` and then `FD_CLOEXEC` on both ends. Our own launches cannot
//! inherit them in between: they use `POSIX_SPAWN_CLOEXEC_DEFAULT`, which passes only the
//! descriptors they name. Pipe buffers grow by themselves (up to 64 KiB) and cannot be sized.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

pub(super) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe()?;
    for fd in [&r, &w] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    Ok((r, w))
}

pub(super) fn grow(_fd: BorrowedFd<'_>, _bytes: i32) {}
