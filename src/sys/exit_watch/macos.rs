//! macOS: one kqueue for the whole process with an `EVFILT_PROC` / `NOTE_EXIT` filter per
//! child, served by one thread ("acp-terminal-exits"), and per child the read end of a pipe
//! whose write end that thread closes once the child can be reaped: the read end then polls
//! readable (end of file), like a Linux pidfd, and the runtime's reactor can wait on it.
//!
//! Why not hand out the kqueue itself: macOS posts `NOTE_EXIT` while the kernel is still
//! tearing the process down, a moment before it becomes a zombie, so a `waitpid(WNOHANG)` right
//! after can still find it running (libuv met this on macOS and the BSDs). The thread therefore
//! waits for the zombie with `waitid(WEXITED | WNOWAIT)`, which does not reap it, before it
//! closes the pipe; the caller's `waitpid(WNOHANG)` then always succeeds.
//!
//! Invariants:
//! - A child that already exited when it is registered (`ESRCH`, or a zombie found right after
//!   registering) has its pipe closed at once.
//! - A filter attached while the child was already exiting may never fire, so the thread also
//!   checks each child registered in the last [`RECHECK_FOR`] once per [`RECHECK_EVERY`] (a
//!   user event wakes it when it waited without a timeout): no exit goes unnoticed, and
//!   nothing is polled once every child is older than that.
//! - One thread and one kqueue for any number of terminals; one pipe per watched child, closed
//!   by the thread (write end) and the caller (read end).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Ident of the user event that wakes the thread when it waits without a timeout.
const WAKE: usize = 1;
/// How long after registration a child is also checked without an event.
const RECHECK_FOR: Duration = Duration::from_secs(5);
/// How often those recent children are checked.
const RECHECK_EVERY: Duration = Duration::from_secs(1);

struct Watcher {
    kq: OwnedFd,
    /// Write ends of the pipes of children not yet seen exiting, by pid.
    waiting: Mutex<HashMap<i32, OwnedFd>>,
    /// Children registered in the last [`RECHECK_FOR`], with when.
    recent: Mutex<Vec<(i32, Instant)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Watcher {
    /// The child can be reaped (or is not ours to wait for): let its reader see end of file.
    fn release(&self, pid: i32) {
        lock(&self.waiting).remove(&pid);
    }

    fn serve(&self) {
        // SAFETY: an all-zero kevent is a valid value (integers and a null pointer).
        let mut events: [libc::kevent; 32] = unsafe { std::mem::zeroed() };
        loop {
            let recheck = !lock(&self.recent).is_empty();
            let timeout = libc::timespec {
                tv_sec: RECHECK_EVERY.as_secs() as libc::time_t,
                tv_nsec: 0,
            };
            // SAFETY: kevent writes at most `events.len()` entries into our array; the
            // timeout (or null: wait for ever) is read only.
            let n = unsafe {
                libc::kevent(
                    self.kq.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    events.as_mut_ptr(),
                    events.len() as libc::c_int,
                    if recheck {
                        &timeout as *const libc::timespec
                    } else {
                        std::ptr::null()
                    },
                )
            };
            for ev in events.iter().take(n.max(0) as usize) {
                if ev.filter == libc::EVFILT_PROC {
                    let pid = ev.ident as i32;
                    wait_until_reapable(pid);
                    self.release(pid);
                }
            }
            if recheck {
                let due: Vec<i32> = {
                    let mut recent = lock(&self.recent);
                    recent.retain(|(_, at)| at.elapsed() < RECHECK_FOR);
                    recent.iter().map(|(pid, _)| *pid).collect()
                };
                for pid in due.into_iter().filter(|&p| is_reapable(p)) {
                    self.release(pid);
                }
            }
        }
    }
}

fn watcher() -> io::Result<&'static Watcher> {
    static WATCHER: OnceLock<Watcher> = OnceLock::new();
    if let Some(w) = WATCHER.get() {
        return Ok(w);
    }
    // SAFETY: kqueue takes no arguments; a non-negative result is a new descriptor we own.
    let kq = unsafe { libc::kqueue() };
    if kq < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created and owned by nobody else.
    let kq = unsafe { OwnedFd::from_raw_fd(kq) };
    // kqueues are not inherited across fork; close-on-exec keeps it from other spawners too.
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(kq.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // The thread waits without a timeout while no child is recent: this wakes it.
    kevent_change(&kq, user_event(libc::EV_ADD | libc::EV_CLEAR, 0))?;
    let mut fresh = false;
    let w = WATCHER.get_or_init(|| {
        fresh = true;
        Watcher {
            kq,
            waiting: Mutex::new(HashMap::new()),
            recent: Mutex::new(Vec::new()),
        }
    });
    if fresh {
        std::thread::Builder::new()
            .name("acp-terminal-exits".into())
            .spawn(move || w.serve())?;
    }
    Ok(w)
}

pub(super) fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    let w = watcher()?;
    let (read, write) = crate::sys::pipe::pipe_cloexec()?;
    // In the table before the filter exists, so the thread always finds it.
    lock(&w.waiting).insert(pid, write);
    match register(&w.kq, pid) {
        Ok(()) => {
            let mut recent = lock(&w.recent);
            recent.push((pid, Instant::now()));
            if recent.len() == 1 {
                // The thread may be waiting without a timeout: make it start the rechecks.
                kevent_change(&w.kq, user_event(0, libc::NOTE_TRIGGER))?;
            }
        }
        // Already a zombie (or gone): nothing will be posted.
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => w.release(pid),
        Err(e) => {
            w.release(pid);
            return Err(e);
        }
    }
    if is_reapable(pid) {
        w.release(pid);
    }
    Ok(Some(read))
}

/// Adds the one-shot exit filter for `pid` to the watcher's kqueue.
fn register(kq: &OwnedFd, pid: i32) -> io::Result<()> {
    kevent_change(
        kq,
        libc::kevent {
            ident: pid as usize,
            filter: libc::EVFILT_PROC,
            flags: libc::EV_ADD | libc::EV_ONESHOT,
            fflags: libc::NOTE_EXIT,
            data: 0,
            udata: std::ptr::null_mut(),
        },
    )
}

/// The thread's wake-up event, with `flags` (adding it) or `fflags` (triggering it).
fn user_event(flags: u16, fflags: u32) -> libc::kevent {
    libc::kevent {
        ident: WAKE,
        filter: libc::EVFILT_USER,
        flags,
        fflags,
        data: 0,
        udata: std::ptr::null_mut(),
    }
}

/// Applies one change to a kqueue.
fn kevent_change(kq: &OwnedFd, ev: libc::kevent) -> io::Result<()> {
    loop {
        // SAFETY: one change read from `ev`; no event list is written.
        let rc = unsafe {
            libc::kevent(
                kq.as_raw_fd(),
                &ev,
                1,
                std::ptr::null_mut(),
                0,
                std::ptr::null(),
            )
        };
        if rc >= 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// `waitid(P_PID, pid, WEXITED | WNOWAIT | flags)`: true when it reported the child exited
/// (it stays a zombie for the caller to reap); also true when it is not ours to wait for
/// (`ECHILD`), so that nobody waits for ever.
fn waitid_exited(pid: i32, flags: libc::c_int) -> bool {
    loop {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: waitid writes into `info`, which starts zeroed (si_pid 0: "none yet").
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT | flags,
            )
        };
        if rc == 0 {
            // SAFETY: zero-initialized and possibly filled by waitid.
            return unsafe { info.assume_init().si_pid } != 0;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            _ => return true,
        }
    }
}

fn is_reapable(pid: i32) -> bool {
    waitid_exited(pid, libc::WNOHANG)
}

/// After `NOTE_EXIT`: the zombie follows within moments.
fn wait_until_reapable(pid: i32) {
    waitid_exited(pid, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_unknown_to_us_does_not_leave_a_reader_waiting() {
        // pid 1 is never our child: ECHILD, so its pipe closes at once.
        let fd = exit_fd(1).unwrap().unwrap();
        let mut p = [nix::poll::PollFd::new(
            std::os::fd::AsFd::as_fd(&fd),
            nix::poll::PollFlags::POLLIN,
        )];
        assert_eq!(
            nix::poll::poll(&mut p, nix::poll::PollTimeout::from(5000u16)).unwrap(),
            1
        );
    }
}
