//! What a sandbox leaves behind is cleaned up off the spawn and release paths, on one
//! background thread: the namespace's init is reaped (after the SIGKILL sent at release, the
//! kernel has torn the namespace down) and only then the terminal's TMPDIR removed (nothing
//! in the namespace writes there any more); spare TMPDIRs are created ahead (see `tmpdir`).
//! Without the thread (it could not start), the same work happens inline. Directories still
//! waiting for removal when the process exits are removed by an `atexit` handler.

use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, Once, OnceLock};

/// Directories queued for removal and not removed yet.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_pending() {
    if let Ok(mut pending) = PENDING.lock() {
        for dir in pending.drain(..) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Removes `dir` and forgets it.
fn remove(dir: PathBuf) {
    let _ = std::fs::remove_dir_all(&dir);
    if let Ok(mut pending) = PENDING.lock() {
        pending.retain(|d| *d != dir);
    }
}

enum Job {
    /// Reap this init (if any), then remove this directory (if any).
    Reap(Option<i32>, Option<PathBuf>),
    /// Create spare TMPDIRs.
    Refill,
}

/// SIGKILLs a namespace's init: the kernel then kills every process left in the namespace.
pub fn kill_init(pid: i32) {
    // SAFETY: `pid` is our own child (CLONE_PARENT of the launcher) and not yet reaped (only
    // its guard reaps it), so it cannot have been reused.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Waits for our own child `pid`.
pub fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waiting for our own child, as above.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

fn run(job: Job) {
    match job {
        Job::Reap(pid, dir) => {
            if let Some(pid) = pid {
                reap(pid);
            }
            if let Some(dir) = dir {
                remove(dir);
            }
        }
        Job::Refill => super::tmpdir::refill(),
    }
}

/// Notes `dir` as waiting for removal: if the process exits first, the `atexit` handler
/// removes it.
pub fn note_pending(dir: &std::path::Path) {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain function that only locks a mutex and removes
        // directories.
        unsafe { libc::atexit(remove_pending) };
    });
    if let Ok(mut pending) = PENDING.lock() {
        pending.push(dir.to_path_buf());
    }
}

fn send(job: Job) {
    if let Job::Reap(_, Some(dir)) = &job {
        note_pending(dir);
    }
    static WORKER: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    let tx = WORKER.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        std::thread::Builder::new()
            .name("acp-terminal-sandbox-cleanup".into())
            .spawn(move || rx.into_iter().for_each(run))
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let unsent = match tx {
        Some(tx) => tx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .err()
            .map(|e| e.0),
        None => Some(job),
    };
    if let Some(job) = unsent {
        run(job);
    }
}

/// Reaps `init` (already killed) and then removes `dir`, in the background.
pub fn reap_and_remove_later(init: Option<i32>, dir: Option<PathBuf>) {
    if init.is_some() || dir.is_some() {
        send(Job::Reap(init, dir));
    }
}

/// Removes `dir` in the background.
pub fn remove_later(dir: PathBuf) {
    send(Job::Reap(None, Some(dir)));
}

/// Tops up the spare TMPDIRs in the background.
pub fn refill_tmpdirs() {
    send(Job::Refill);
}
