//! Children whose owner went away before reaping them (tokio's orphan queue, without its
//! SIGCHLD handler): a terminal's output pump dropped with the runtime of a Node environment
//! that ended (a worker terminated), a sandbox's namespace init killed at release. One thread
//! reaps them all, none waiting for another: an init can stay unreapable for long (its
//! namespace's last process not reaped yet), so what is left is polled every 10 ms with
//! non-blocking waits; the thread sleeps while nothing is left.
//!
//! Only the owner of an unreaped child hands it over ([`reap_later`]), and then never waits for
//! it again: the pid cannot be reused before this thread reaps it.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How often the children left are polled.
const POLL: Duration = Duration::from_millis(10);

/// The children handed over and not reaped yet, and whether the reaper thread runs.
struct Orphans {
    left: Vec<i32>,
    thread: bool,
}

static ORPHANS: Mutex<Orphans> = Mutex::new(Orphans {
    left: Vec::new(),
    thread: false,
});
static WAKE: Condvar = Condvar::new();

fn orphans() -> std::sync::MutexGuard<'static, Orphans> {
    ORPHANS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reaps our child `pid` on the reaper thread. The caller gives it up: nothing else may wait
/// for it. Never blocks: where the thread cannot be started (no thread left to this user),
/// what has ended is reaped here and the rest waits for a later call to start it.
pub fn reap_later(pid: i32) {
    hand_over(&mut orphans(), pid, || {
        std::thread::Builder::new()
            .name("acp-terminal-reaper".into())
            .spawn(reap_all)
            .is_ok()
    });
}

/// [`reap_later`] on `o`, with `start_thread` starting the reaper thread (true once it runs).
fn hand_over(o: &mut Orphans, pid: i32, start_thread: impl FnOnce() -> bool) {
    o.left.push(pid);
    if o.thread {
        WAKE.notify_one();
        return;
    }
    o.thread = start_thread();
    if !o.thread {
        o.left.retain(|&pid| !reaped_now(pid));
    }
}

/// The reaper thread: reaps every pid handed over, none waiting for another; polls those
/// left every [`POLL`], sleeps while there are none.
fn reap_all() {
    let mut o = orphans();
    loop {
        o.left.retain(|&pid| !reaped_now(pid));
        o = if o.left.is_empty() {
            WAKE.wait(o).unwrap_or_else(|p| p.into_inner())
        } else {
            WAKE.wait_timeout(o, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0
        };
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

    /// A zombie still passes the existence check; a reaped pid fails it (ESRCH). (No `/proc`:
    /// these tests run on macOS too.)
    fn zombie_or_alive(pid: i32) -> bool {
        // SAFETY: signal 0 sends nothing; it only checks that the pid exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    /// The thirteenth attack: with no thread left to the user (RLIMIT_NPROC), the reaper could
    /// not start and its fallback waited, blocking, on Node's JS thread or a runtime worker for
    /// a child that might never end: Node hung. Handing over never blocks; what has ended is
    /// reaped at the next hand-over.
    #[test]
    #[allow(clippy::zombie_processes)]
    fn without_a_reaper_thread_handing_over_never_blocks() {
        let mut o = Orphans {
            left: Vec::new(),
            thread: false,
        };
        let running = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let running_pid = running.id() as i32;
        hand_over(&mut o, running_pid, || false);
        assert_eq!(o.left, vec![running_pid], "left for later, not waited for");
        let done = std::process::Command::new("true").spawn().unwrap();
        let done_pid = done.id() as i32;
        std::thread::sleep(Duration::from_millis(200));
        hand_over(&mut o, done_pid, || false);
        assert!(!o.thread);
        assert_eq!(o.left, vec![running_pid], "what had ended is reaped");
        assert!(!zombie_or_alive(done_pid));
        // SAFETY: a signal to our own unreaped child.
        unsafe { libc::kill(running_pid, libc::SIGKILL) };
        std::thread::sleep(Duration::from_millis(200));
        o.left.retain(|&pid| !reaped_now(pid));
        assert!(o.left.is_empty());
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
