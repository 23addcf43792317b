//! Unix: a child is its pid, reaped with `waitpid`; the exit signal is the exit descriptor
//! (pidfd or kqueue pipe) in the runtime's reactor.

use std::io;
use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;

use super::Reaped;

/// Our child, reaped with `waitpid`. Its owner reaps it; dropped unreaped (the task that
/// watched it went away with its runtime, or an error came first), it is handed to the reaper
/// thread ([`super::reap_later`]), so no zombie of ours outlives its owner.
#[derive(Debug)]
pub struct Child {
    pid: i32,
    reaped: bool,
}

impl Child {
    /// Our child `pid` (a process we spawned and nobody else reaps).
    pub fn from_pid(pid: i32) -> Self {
        Child { pid, reaped: false }
    }

    /// Its status if it has exited (and is now reaped), `None` while it runs.
    pub fn try_reap(&mut self) -> Option<Reaped> {
        let r = reap(self.pid, Some(WaitPidFlag::WNOHANG));
        self.reaped |= r.is_some();
        r
    }

    /// Its pid, with the duty to reap it: the caller waits for it from now on (the guardian,
    /// which also watches it stop).
    pub fn into_pid(mut self) -> i32 {
        self.reaped = true;
        self.pid
    }

    /// Blocks until it has exited, and reaps it.
    pub fn reap(&mut self) -> Reaped {
        loop {
            if let Some(s) = reap(self.pid, None) {
                self.reaped = true;
                return s;
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            super::reap_later(self.pid);
        }
    }
}

/// One `waitpid`: `None` while the child runs (or for a stop/continue report).
fn reap(pid: i32, flags: Option<WaitPidFlag>) -> Option<Reaped> {
    loop {
        match waitpid(Pid::from_raw(pid), flags) {
            Ok(WaitStatus::StillAlive) => return None,
            Ok(ws) => return reaped(ws),
            Err(Errno::EINTR) => continue,
            Err(_) => return Some(Reaped::Unknown),
        }
    }
}

/// A final wait status; `None` for non-final ones (stopped, continued).
fn reaped(status: WaitStatus) -> Option<Reaped> {
    match status {
        WaitStatus::Exited(_, code) => Some(Reaped::Exited(code as u32 & 0xff)),
        WaitStatus::Signaled(_, sig, _) => Some(Reaped::Signaled(sig as i32)),
        _ => None,
    }
}

/// The exit descriptor of a child in the reactor: wakes when the child may have exited.
pub struct ExitSignal(AsyncFd<OwnedFd>);

impl ExitSignal {
    /// Registers `fd` (readable once the child has exited) with the runtime's reactor.
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        Ok(Self(crate::sys::reactor::register_readable(fd)?))
    }

    /// Resolves at the next wake-up (which may be spurious: check the child then). The
    /// readiness is consumed, so the following call waits for a new one.
    pub async fn wake(&mut self) -> io::Result<()> {
        let mut guard = self.0.readable().await?;
        guard.clear_ready();
        Ok(())
    }
}

/// The exit signal of `child` (its exit descriptor), or `None` where the kernel has none.
pub fn exit_signal(child: &Child) -> io::Result<Option<ExitSignal>> {
    match super::exit_fd(child.pid)? {
        Some(fd) => ExitSignal::new(fd).map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::Signal;

    #[test]
    fn wait_statuses() {
        let p = Pid::from_raw(1);
        assert_eq!(reaped(WaitStatus::Exited(p, 3)), Some(Reaped::Exited(3)));
        assert_eq!(
            reaped(WaitStatus::Signaled(p, Signal::SIGKILL, false)),
            Some(Reaped::Signaled(libc::SIGKILL))
        );
        assert_eq!(reaped(WaitStatus::Stopped(p, Signal::SIGSTOP)), None);
    }
}
