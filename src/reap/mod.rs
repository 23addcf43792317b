//! Reaping a terminal's child: knowing when it exited, and collecting its status (so no zombie
//! of ours is left), without a SIGCHLD handler.
//!
//! Two strategies, chosen per child by [`ExitWatch::new`], as tokio's process module does:
//! - a descriptor that turns readable at the exit ([`crate::sys::exit_watch`], a pidfd on
//!   Linux) in the runtime's reactor: no thread, nothing polls while the child runs;
//! - where there is none (kernels before 5.3, whose ENOSYS is remembered once), a thread
//!   blocked in `waitpid` for that child.
//!
//! The status is collected through the [`Wait`] trait, so tests drive both strategies with a
//! fake child. An unknown status (someone else reaped the child) is reported as neither code
//! nor signal: never invented.

mod pidfd;
mod thread;

use std::io;
use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::exit::ExitStatus;

/// Collecting one child's exit status.
pub trait Wait: Send + 'static {
    /// The status if the child has exited (and is now reaped), without blocking.
    fn try_wait(&mut self) -> Option<ExitStatus>;
    /// Blocks until the child has exited, and reaps it.
    fn wait(&mut self) -> ExitStatus;
}

/// Our child `pid`, reaped with `waitpid`.
#[derive(Debug, Clone, Copy)]
pub struct Child(pub i32);

impl Wait for Child {
    fn try_wait(&mut self) -> Option<ExitStatus> {
        reap(self.0, Some(WaitPidFlag::WNOHANG))
    }

    fn wait(&mut self) -> ExitStatus {
        loop {
            if let Some(s) = reap(self.0, None) {
                return s;
            }
        }
    }
}

/// One `waitpid`: `None` while the child runs (or for a stop/continue report).
fn reap(pid: i32, flags: Option<WaitPidFlag>) -> Option<ExitStatus> {
    loop {
        match waitpid(Pid::from_raw(pid), flags) {
            Ok(WaitStatus::StillAlive) => return None,
            Ok(ws) => return exit_status(ws),
            Err(Errno::EINTR) => continue,
            Err(_) => return Some(ExitStatus::unknown()),
        }
    }
}

/// A final wait status as the ACP exit status; `None` for non-final ones (stopped, continued).
fn exit_status(status: WaitStatus) -> Option<ExitStatus> {
    match status {
        WaitStatus::Exited(_, code) => Some(ExitStatus::code(code)),
        WaitStatus::Signaled(_, sig, _) => Some(ExitStatus::signaled(sig as i32)),
        _ => None,
    }
}

/// Waits for one child's exit with the best strategy available.
pub enum ExitWatch<W: Wait> {
    /// An exit descriptor in the reactor.
    Fd(pidfd::FdWatch<W>),
    /// A thread blocked in `waitpid`.
    Thread(thread::ThreadWatch),
}

impl<W: Wait> ExitWatch<W> {
    /// Watches `child`, with `exit_fd` (its exit descriptor, or `None` where the platform has
    /// none). Must run inside a tokio runtime.
    pub fn new(child: W, exit_fd: Option<OwnedFd>) -> io::Result<Self> {
        Ok(match exit_fd {
            Some(fd) => ExitWatch::Fd(pidfd::FdWatch::new(child, fd)?),
            None => ExitWatch::Thread(thread::ThreadWatch::new(child)?),
        })
    }

    /// Resolves with the exit status once the child exited; it is reaped by then.
    pub async fn wait(&mut self) -> ExitStatus {
        match self {
            ExitWatch::Fd(w) => w.wait().await,
            ExitWatch::Thread(w) => w.wait().await,
        }
    }
}

/// Watches our child `pid` (a pidfd where the kernel has one).
pub fn watch(pid: i32) -> io::Result<ExitWatch<Child>> {
    ExitWatch::new(Child(pid), crate::sys::exit_watch::exit_fd(pid)?)
}

#[cfg(test)]
pub(crate) mod fake {
    use super::*;
    use std::sync::{Arc, Condvar, Mutex};

    /// A child whose exit the test decides: `exit(status)` makes it exited.
    #[derive(Clone, Default)]
    pub struct FakeChild {
        state: Arc<(Mutex<Option<ExitStatus>>, Condvar)>,
        /// How often its status was collected.
        pub reaped: Arc<Mutex<usize>>,
    }

    impl FakeChild {
        pub fn exit(&self, status: ExitStatus) {
            *self.state.0.lock().unwrap() = Some(status);
            self.state.1.notify_all();
        }
    }

    impl Wait for FakeChild {
        fn try_wait(&mut self) -> Option<ExitStatus> {
            let s = self.state.0.lock().unwrap().clone();
            if s.is_some() {
                *self.reaped.lock().unwrap() += 1;
            }
            s
        }

        fn wait(&mut self) -> ExitStatus {
            let mut s = self.state.0.lock().unwrap();
            while s.is_none() {
                s = self.state.1.wait(s).unwrap();
            }
            *self.reaped.lock().unwrap() += 1;
            s.clone().unwrap()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeChild;
    use super::*;
    use std::io::Write;

    #[test]
    fn wait_statuses() {
        use nix::sys::signal::Signal;
        let p = Pid::from_raw(1);
        assert_eq!(
            exit_status(WaitStatus::Exited(p, 3)),
            Some(ExitStatus {
                exit_code: Some(3),
                signal: None
            })
        );
        assert_eq!(
            exit_status(WaitStatus::Signaled(p, Signal::SIGKILL, false)),
            Some(ExitStatus {
                exit_code: None,
                signal: Some("SIGKILL".into())
            })
        );
        assert_eq!(exit_status(WaitStatus::Stopped(p, Signal::SIGSTOP)), None);
    }

    #[tokio::test]
    async fn the_fd_strategy_reaps_once_the_descriptor_turns_readable() {
        let child = FakeChild::default();
        let (r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
        nix::fcntl::fcntl(
            &r,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        let mut watch = ExitWatch::new(child.clone(), Some(r)).unwrap();
        assert!(matches!(watch, ExitWatch::Fd(_)));
        // Readable but not exited yet (a spurious wake-up): keeps waiting.
        let mut w = std::fs::File::from(w);
        w.write_all(b"x").unwrap();
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), watch.wait());
        assert!(waiting.await.is_err());
        // The exit: the descriptor signals again, as a pidfd does when its process exits.
        child.exit(ExitStatus::code(3));
        w.write_all(b"y").unwrap();
        assert_eq!(watch.wait().await, ExitStatus::code(3));
        assert_eq!(*child.reaped.lock().unwrap(), 1);
    }

    #[tokio::test]
    async fn without_an_exit_descriptor_a_thread_waits() {
        let child = FakeChild::default();
        let mut watch = ExitWatch::new(child.clone(), None).unwrap();
        assert!(matches!(watch, ExitWatch::Thread(_)));
        let c = child.clone();
        std::thread::spawn(move || c.exit(ExitStatus::signaled(libc::SIGKILL)));
        assert_eq!(watch.wait().await, ExitStatus::signaled(libc::SIGKILL));
        assert_eq!(*child.reaped.lock().unwrap(), 1);
    }

    #[tokio::test]
    async fn a_real_child_is_reaped_by_both_strategies() {
        for use_fd in [true, false] {
            let child = std::process::Command::new("/bin/sh")
                .args(["-c", "exit 7"])
                .spawn()
                .unwrap();
            let pid = child.id() as i32;
            let fd = if use_fd {
                crate::sys::exit_watch::exit_fd(pid).unwrap()
            } else {
                None
            };
            let mut watch = ExitWatch::new(Child(pid), fd).unwrap();
            assert_eq!(watch.wait().await, ExitStatus::code(7));
            // Reaped: no zombie left, waitpid knows the pid no more.
            assert_eq!(
                waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
                Err(Errno::ECHILD)
            );
            std::mem::forget(child);
        }
    }

    #[test]
    fn someone_else_reaping_gives_an_unknown_status_not_an_invented_one() {
        assert_eq!(Child(i32::MAX).try_wait(), Some(ExitStatus::unknown()));
    }
}
