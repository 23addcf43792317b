//! macOS: a kqueue per child with an `EVFILT_PROC` / `NOTE_EXIT` filter on its pid. A kqueue
//! descriptor polls readable while it holds a pending event, so the runtime's reactor (itself
//! a kqueue) can wait on it like on a Linux pidfd.
//!
//! Two differences the caller must know (see [`super::READABLE_MEANS_REAPABLE`]):
//! - `NOTE_EXIT` is posted while the kernel is still tearing the process down, shortly before
//!   it becomes a zombie, so a `waitpid(WNOHANG)` right after may still find it running (as
//!   libuv found on macOS and the BSDs); the caller then waits for it without `WNOHANG`.
//! - A child that is already a zombie cannot be registered (`ESRCH`): the kqueue then gets a
//!   triggered `EVFILT_USER` event instead, so it is readable at once.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub(super) fn exit_fd(pid: i32) -> io::Result<Option<OwnedFd>> {
    // SAFETY: kqueue takes no arguments; a non-negative result is a new descriptor we own.
    let kq = unsafe { libc::kqueue() };
    if kq < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created, owned by nobody else.
    let kq = unsafe { OwnedFd::from_raw_fd(kq) };
    // kqueues are not inherited across fork, but a posix_spawn without
    // POSIX_SPAWN_CLOEXEC_DEFAULT elsewhere in the process would still inherit the descriptor.
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(kq.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    match register(&kq, exit_event(pid)) {
        Ok(()) => Ok(Some(kq)),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {
            register(&kq, already_exited())?;
            Ok(Some(kq))
        }
        Err(e) => Err(e),
    }
}

fn event(ident: usize, filter: i16, flags: u16, fflags: u32) -> libc::kevent {
    libc::kevent {
        ident,
        filter,
        flags,
        fflags,
        data: 0,
        udata: std::ptr::null_mut(),
    }
}

/// The exit of `pid`, reported once.
fn exit_event(pid: i32) -> libc::kevent {
    event(
        pid as usize,
        libc::EVFILT_PROC,
        libc::EV_ADD | libc::EV_ONESHOT,
        libc::NOTE_EXIT,
    )
}

/// A user event added already triggered: the kqueue is readable at once.
fn already_exited() -> libc::kevent {
    event(
        0,
        libc::EVFILT_USER,
        libc::EV_ADD | libc::EV_ONESHOT,
        libc::NOTE_TRIGGER,
    )
}

fn register(kq: &OwnedFd, ev: libc::kevent) -> io::Result<()> {
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
