//! Watching a child for its exit without a signal handler: a descriptor that becomes readable
//! once the process has exited and can be reaped (Linux: a pidfd; macOS: a pipe closed by one
//! thread serving a kqueue of `EVFILT_PROC` / `NOTE_EXIT` filters), which the runtime's reactor
//! can wait on.
//! Where the platform has none, [`exit_fd`] answers `None` and the caller falls back to a
//! thread blocked in `waitpid` (see [`crate::reap`]).
//! The core sees [`Child`] (reaped into a [`Reaped`]) and [`ExitSignal`] (wakes when the child
//! may have exited): Unix, the pid and its exit descriptor; Windows, the process handle and a
//! thread-pool wait on it (`ExitWait`).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(unix)]
pub mod orphans;
#[cfg(unix)]
pub use orphans::reap_later;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{exit_signal, Child, ExitSignal};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{exit_signal, Child, ExitSignal};
// The platform layer's Windows tests wait on the processes they start.
#[cfg(all(windows, test))]
pub use windows::{try_exit, wait_exit};

mod reaped;
pub use reaped::Reaped;

#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::os::fd::OwnedFd;

/// A close-on-exec descriptor that turns readable once `pid` (our child) has exited, or
/// `None` where the kernel cannot provide one (remembered: later calls do not retry).
#[cfg(unix)]
pub fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    imp::exit_fd(pid)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn readable(fd: &OwnedFd, ms: u16) -> bool {
        let mut p = [nix::poll::PollFd::new(
            fd.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        nix::poll::poll(&mut p, nix::poll::PollTimeout::from(ms)).unwrap() == 1
    }

    fn waiting_child() -> std::process::Child {
        std::process::Command::new("/bin/sh")
            .args(["-c", "read x"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn turns_readable_when_the_child_exits() {
        let mut child = waiting_child();
        let fd = exit_fd(child.id() as i32)
            .unwrap()
            .expect("an exit descriptor on this kernel");
        assert!(!readable(&fd, 0));
        drop(child.stdin.take());
        assert!(readable(&fd, 10_000));
        child.wait().unwrap();
    }

    #[test]
    fn is_readable_at_once_for_a_child_that_already_exited() {
        let mut child = waiting_child();
        let pid = child.id() as i32;
        drop(child.stdin.take());
        // Wait for the exit without reaping (WNOWAIT): the child stays a zombie.
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: waitid writes the child's state into `info`, which we never read.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        assert_eq!(rc, 0);
        let fd = exit_fd(pid)
            .unwrap()
            .expect("an exit descriptor on this kernel");
        assert!(readable(&fd, 10_000));
        child.wait().unwrap();
    }
}
