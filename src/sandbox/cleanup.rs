//! Ending a sandboxed terminal's namespace: SIGKILL its init at once (the kernel then kills
//! every process left in the namespace and frees its mounts and IPC objects), and reap the
//! init on the reaper thread ([`reap_later`]), off the release path (the kernel's teardown of
//! the namespace can take a moment).

use crate::sys::exit_watch::orphans::reaped_now;
pub use crate::sys::exit_watch::reap_later;

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

/// Reaps our child `pid` if it ends within `within`; otherwise on the reaper thread. Never
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
