//! Children whose owner went away before reaping them (tokio's orphan queue, without its
//! SIGCHLD handler): a terminal's output pump dropped with the runtime of a Node environment
//! that ended (a worker terminated), a sandbox's namespace init killed at release. One thread
//! reaps them all, none waiting for another: an init can stay unreapable for long (its
//! namespace's last process not reaped yet), so what is left is polled every 10 ms with
//! non-blocking waits; the thread sleeps while nothing is left.
//!
//! Only the owner of an unreaped child hands it over ([`reap_later`]), and then never waits for
//! it again: the pid cannot be reused before this thread reaps it.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How often the children left are polled.
const POLL: Duration = Duration::from_millis(10);

/// Reaps our child `pid` on the reaper thread (or here, blocking, if that thread cannot run).
/// The caller gives it up: nothing else may wait for it.
pub fn reap_later(pid: i32) {
    static REAPER: OnceLock<Option<Mutex<Sender<i32>>>> = OnceLock::new();
    let tx = REAPER.get_or_init(|| {
        let (tx, rx) = channel::<i32>();
        std::thread::Builder::new()
            .name("acp-terminal-reaper".into())
            .spawn(move || reap_all(rx))
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let sent = tx.as_ref().is_some_and(|tx| {
        tx.lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(pid)
            .is_ok()
    });
    if !sent {
        while !reaped_now(pid) {
            std::thread::sleep(POLL);
        }
    }
}

/// The reaper thread: reaps every pid it is given, polling those left.
fn reap_all(rx: Receiver<i32>) {
    let mut left: Vec<i32> = Vec::new();
    loop {
        let next = if left.is_empty() {
            match rx.recv() {
                Ok(pid) => Some(pid),
                Err(_) => return,
            }
        } else {
            rx.recv_timeout(POLL).ok()
        };
        left.extend(next);
        left.retain(|&pid| !reaped_now(pid));
    }
}

/// One non-blocking wait for our child `pid`: true once it is reaped (or is not ours to wait
/// for).
pub fn reaped_now(pid: i32) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child into a local, without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r >= 0 {
            return r == pid;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zombie_or_alive(pid: i32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    /// The eleventh attack: one init that could not end (its command never reaped) kept the
    /// reaper thread in a blocking wait, and every later release's init stayed a zombie behind it.
    #[test]
    // (Both children are reaped by the reaper thread: that is what is tested.)
    #[allow(clippy::zombie_processes)]
    fn one_child_that_does_not_end_holds_no_other_back() {
        let stuck = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        reap_later(stuck.id() as i32);
        let done = std::process::Command::new("true").spawn().unwrap();
        let done_pid = done.id() as i32;
        std::thread::sleep(Duration::from_millis(50));
        reap_later(done_pid);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while zombie_or_alive(done_pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let reaped = !zombie_or_alive(done_pid);
        // SAFETY: a signal to our own unreaped child.
        unsafe { libc::kill(stuck.id() as i32, libc::SIGKILL) };
        assert!(reaped, "the exited child was reaped while another one runs");
    }
}
