//! Ending a sandboxed terminal's namespace: SIGKILL its init at once (the kernel then kills
//! every process left in the namespace and frees its mounts and IPC objects), and reap the
//! init on a background thread, off the release path (the kernel's teardown of the namespace
//! can take a moment).

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

/// SIGKILLs the namespace's init `pid` (our unreaped child).
pub fn kill_init(pid: i32) {
    // SAFETY: a signal to our own child, which cannot be reaped (and its pid reused) before
    // we wait for it.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Reaps our child `pid`, blocking.
pub fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waiting for our own child into a local.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// Reaps our child `pid` if it ends within `within`; otherwise on the cleanup thread. Never
/// waits longer: a namespace's init ends only once every process of its namespace is reaped,
/// and the command is our child, reaped by a task that may need the very thread waiting here.
pub fn reap_soon(pid: i32, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    while !reaped_now(pid) {
        if std::time::Instant::now() >= deadline {
            return reap_later(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Reaps our child `pid` on the cleanup thread (or here, if that thread cannot run).
pub fn reap_later(pid: i32) {
    static WORKER: OnceLock<Option<Mutex<Sender<i32>>>> = OnceLock::new();
    let tx = WORKER.get_or_init(|| {
        let (tx, rx) = channel::<i32>();
        std::thread::Builder::new()
            .name("acp-terminal-sandbox-cleanup".into())
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
        reap(pid);
    }
}

/// The cleanup thread: reaps every pid it is given, none waiting for another. An init can stay
/// unreapable for long (its namespace's last process, our child, not reaped yet, or never: the
/// worker that would have reaped it is gone): the others are polled meanwhile (every 10 ms
/// while any is left; asleep otherwise).
fn reap_all(rx: std::sync::mpsc::Receiver<i32>) {
    let mut left: Vec<i32> = Vec::new();
    loop {
        let next = if left.is_empty() {
            match rx.recv() {
                Ok(pid) => Some(pid),
                Err(_) => return,
            }
        } else {
            rx.recv_timeout(std::time::Duration::from_millis(10)).ok()
        };
        left.extend(next);
        left.retain(|&pid| !reaped_now(pid));
    }
}

/// One non-blocking wait for our child `pid`: true once it is reaped (or is not ours to wait
/// for).
fn reaped_now(pid: i32) -> bool {
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
    /// cleanup thread in a blocking wait, and every later release's init stayed a zombie behind it.
    #[test]
    // (Both children are reaped by the cleanup thread: that is what is tested.)
    #[allow(clippy::zombie_processes)]
    fn one_child_that_does_not_end_holds_no_other_back() {
        let stuck = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        reap_later(stuck.id() as i32);
        let done = std::process::Command::new("true").spawn().unwrap();
        let done_pid = done.id() as i32;
        std::thread::sleep(std::time::Duration::from_millis(50));
        reap_later(done_pid);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while zombie_or_alive(done_pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let reaped = !zombie_or_alive(done_pid);
        kill_init(stuck.id() as i32);
        assert!(reaped, "the exited child was reaped while another one runs");
    }
}
