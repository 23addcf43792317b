//! Linux: `pidfd_open` (5.3+). ENOSYS is remembered once in a static, as tokio's process
//! module does, so older kernels pay for the failed system call only once.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `pidfd_open` answered ENOSYS: this kernel has none, never ask again.
static NO_PIDFD: AtomicBool = AtomicBool::new(false);

pub(super) fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    exit_fd_with(pid, &NO_PIDFD, pidfd_open)
}

fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain system call with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a non-negative result is a new descriptor (O_CLOEXEC) that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// The strategy with the system call and the memory passed in, so tests can fake ENOSYS.
fn exit_fd_with(
    pid: i32,
    unsupported: &AtomicBool,
    open: impl Fn(i32) -> io::Result<OwnedFd>,
) -> io::Result<Option<OwnedFd>> {
    if unsupported.load(Ordering::Relaxed) {
        return Ok(None);
    }
    match open(pid) {
        Ok(fd) => Ok(Some(fd)),
        Err(e) => match e.raw_os_error() {
            Some(libc::ENOSYS) => {
                unsupported.store(true, Ordering::Relaxed);
                Ok(None)
            }
            // Anything else (a seccomp filter, EMFILE): the thread fallback for this child,
            // and ask again next time.
            _ => Ok(None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn enosys_is_remembered_other_errors_are_not() {
        let flag = AtomicBool::new(false);
        let calls = AtomicUsize::new(0);
        let fail = |errno| {
            let calls = &calls;
            move |_pid: i32| -> io::Result<OwnedFd> {
                calls.fetch_add(1, Ordering::Relaxed);
                Err(io::Error::from_raw_os_error(errno))
            }
        };
        assert!(exit_fd_with(1, &flag, fail(libc::EPERM)).unwrap().is_none());
        assert!(!flag.load(Ordering::Relaxed));
        assert!(exit_fd_with(1, &flag, fail(libc::ENOSYS))
            .unwrap()
            .is_none());
        assert!(flag.load(Ordering::Relaxed));
        assert!(exit_fd_with(1, &flag, fail(libc::ENOSYS))
            .unwrap()
            .is_none());
        assert_eq!(
            calls.load(Ordering::Relaxed),
            2,
            "not asked again after ENOSYS"
        );
        let fresh = AtomicBool::new(false);
        assert!(exit_fd_with(1, &fresh, fail(libc::EMFILE))
            .unwrap()
            .is_none());
        assert!(!fresh.load(Ordering::Relaxed));
    }

    #[test]
    fn a_pidfd_turns_readable_when_the_child_exits() {
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "read x"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let fd = exit_fd(child.id() as i32)
            .unwrap()
            .expect("pidfd on this kernel");
        let readable = |ms: u16| {
            let mut p = [nix::poll::PollFd::new(
                std::os::fd::AsFd::as_fd(&fd),
                nix::poll::PollFlags::POLLIN,
            )];
            nix::poll::poll(&mut p, nix::poll::PollTimeout::from(ms)).unwrap() == 1
        };
        assert!(!readable(0));
        drop(child.stdin.take());
        assert!(readable(10_000));
        child.wait().unwrap();
    }
}
