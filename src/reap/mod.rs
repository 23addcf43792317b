//! Reaping a terminal's child: knowing when it exited, and collecting its status (so no zombie
//! of ours is left), without a SIGCHLD handler.
//!
//! Two strategies, chosen per child by [`ExitWatch::new`], as tokio's process module does:
//! - the platform's exit signal ([`crate::sys::exit_watch::ExitSignal`]: a pidfd on Linux in
//!   the runtime's reactor; on Windows a thread-pool wait on the process handle): no thread of
//!   ours, nothing polls while the child runs;
//! - where there is none (kernels before 5.3, whose ENOSYS is remembered once), a thread
//!   blocked in the platform's reap (`waitpid`) for that child.
//!
//! The child itself is the platform's ([`crate::sys::exit_watch::Child`]: a pid, a process
//! handle); its end arrives as a [`Reaped`] and is mapped here to the ACP status.
//!
//! The status is collected through the [`Wait`] trait, so tests drive both strategies with a
//! fake child. An unknown status (someone else reaped the child) is reported as neither code
//! nor signal: never invented.

mod pidfd;
mod thread;

use std::io;

use crate::exit::ExitStatus;
use crate::sys::exit_watch::{Child, ExitSignal, Reaped};

/// Collecting one child's exit status.
pub trait Wait: Send + 'static {
    /// The status if the child has exited (and is now reaped), without blocking.
    fn try_wait(&mut self) -> Option<ExitStatus>;
    /// Blocks until the child has exited, and reaps it.
    fn wait(&mut self) -> ExitStatus;
}

impl Wait for Child {
    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.try_reap().map(exit_status)
    }

    fn wait(&mut self) -> ExitStatus {
        exit_status(self.reap())
    }
}

/// The platform's report of an end as the ACP exit status.
fn exit_status(reaped: Reaped) -> ExitStatus {
    match reaped {
        Reaped::Exited(code) => ExitStatus {
            exit_code: Some(code),
            signal: None,
        },
        Reaped::Signaled(signo) => ExitStatus::signaled(signo),
        Reaped::Unknown => ExitStatus::unknown(),
    }
}

/// Waits for one child's exit with the best strategy available.
pub enum ExitWatch<W: Wait> {
    /// The platform's exit signal (an exit descriptor in the reactor; a wait on the handle).
    Fd(pidfd::FdWatch<W>),
    /// A thread blocked in `waitpid`.
    Thread(thread::ThreadWatch),
}

impl<W: Wait> ExitWatch<W> {
    /// Watches `child`, with `signal` (its exit signal, or `None` where the platform has
    /// none). Must run inside a tokio runtime.
    pub fn new(child: W, signal: Option<ExitSignal>) -> io::Result<Self> {
        Ok(match signal {
            Some(signal) => ExitWatch::Fd(pidfd::FdWatch::new(child, signal)),
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

/// Watches our child (through its exit signal where the platform has one: a pidfd on Linux).
pub fn watch(child: Child) -> io::Result<ExitWatch<Child>> {
    let signal = crate::sys::exit_watch::exit_signal(&child)?;
    ExitWatch::new(child, signal)
}

#[cfg(all(test, unix))]
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

// Real children are Unix processes here (nix); Windows' exit watch is tested in sys.
#[cfg(all(test, unix))]
mod tests {
    use super::fake::FakeChild;
    use super::*;
    use nix::errno::Errno;
    use nix::sys::wait::{waitpid, WaitPidFlag};
    use nix::unistd::Pid;
    use std::io::Write;

    #[test]
    fn platform_reports_as_acp_statuses() {
        assert_eq!(exit_status(Reaped::Exited(3)), ExitStatus::code(3));
        // Windows' 32-bit codes (an NTSTATUS) pass whole.
        assert_eq!(
            exit_status(Reaped::Exited(0xC000_0005)).exit_code,
            Some(3_221_225_477)
        );
        assert_eq!(
            exit_status(Reaped::Signaled(libc::SIGKILL)),
            ExitStatus {
                exit_code: None,
                signal: Some("SIGKILL".into())
            }
        );
        assert_eq!(exit_status(Reaped::Unknown), ExitStatus::unknown());
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
        let signal = ExitSignal::new(r).unwrap();
        let mut watch = ExitWatch::new(child.clone(), Some(signal)).unwrap();
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

    /// Our child `pid` watched through its exit descriptor (`use_fd`) or by a waiting thread.
    fn watch_pid(pid: i32, use_fd: bool) -> ExitWatch<Child> {
        let child = Child::from_pid(pid);
        let signal = if use_fd {
            crate::sys::exit_watch::exit_signal(&child).unwrap()
        } else {
            None
        };
        ExitWatch::new(child, signal).unwrap()
    }

    #[tokio::test]
    async fn a_real_child_is_reaped_by_both_strategies() {
        for use_fd in [true, false] {
            let child = std::process::Command::new("/bin/sh")
                .args(["-c", "exit 7"])
                .spawn()
                .unwrap();
            let pid = child.id() as i32;
            let mut watch = watch_pid(pid, use_fd);
            assert_eq!(watch.wait().await, ExitStatus::code(7));
            // Reaped: no zombie left, waitpid knows the pid no more.
            assert_eq!(
                waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
                Err(Errno::ECHILD)
            );
            std::mem::forget(child);
        }
    }

    /// The twelfth attack: a worker terminated while its terminals ran took the runtime's tasks
    /// with it, the output pumps among them; their commands stayed zombies of Node for good (a
    /// sandboxed one also kept its namespace's init from ending). A child whose watch is
    /// dropped unreaped is reaped all the same, by both strategies.
    #[test]
    fn a_child_whose_watch_went_away_with_its_runtime_is_still_reaped() {
        for use_fd in [true, false] {
            let child = std::process::Command::new("sleep")
                .arg("0.3")
                .spawn()
                .unwrap();
            let pid = child.id() as i32;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut watch = watch_pid(pid, use_fd);
                tokio::spawn(async move { watch.wait().await });
                tokio::task::yield_now().await;
            });
            // The runtime goes, with the task that was waiting for the child.
            drop(rt);
            std::mem::forget(child);
            // A zombie still takes signals' existence check; a reaped pid is gone (ESRCH).
            let exists = || nix::sys::signal::kill(Pid::from_raw(pid), None).is_ok();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            assert!(
                !exists(),
                "the child (use_fd {use_fd}) is reaped, not left a zombie"
            );
        }
    }

    #[test]
    fn someone_else_reaping_gives_an_unknown_status_not_an_invented_one() {
        assert_eq!(
            Child::from_pid(i32::MAX).try_wait(),
            Some(ExitStatus::unknown())
        );
    }
}
