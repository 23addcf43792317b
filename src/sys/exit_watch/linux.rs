//! Linux: `pidfd_open` (5.3+). ENOSYS is remembered once in a static, as tokio's process
//! module does, so older kernels pay for the failed system call only once.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

static NO_PIDFD: AtomicBool = AtomicBool::new(false);

pub(super) fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    if NO_PIDFD.load(Ordering::Relaxed) {
        return Ok(None);
    }
    // SAFETY: plain system call with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd >= 0 {
        // SAFETY: a non-negative result is a new descriptor (O_CLOEXEC) that we own.
        return Ok(Some(unsafe { OwnedFd::from_raw_fd(fd as i32) }));
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ENOSYS) => {
            NO_PIDFD.store(true, Ordering::Relaxed);
            Ok(None)
        }
        // A seccomp filter or an old kernel variant refusing it: fall back for this child.
        Some(libc::EPERM | libc::EINVAL) => Ok(None),
        _ => Err(err),
    }
}
