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
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child into a local, without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid
            || (r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR))
        {
            return;
        }
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
            .spawn(move || rx.into_iter().for_each(reap))
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
