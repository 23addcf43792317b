//! The session step (Unix): the child leads a new process group in the caller's session (what
//! containment signals as one), or a new session: a pty terminal's, with the pty as its
//! controlling terminal, or one asked for on pipes (no controlling terminal at all, so nothing
//! it runs can type into Node's).

use std::os::fd::RawFd;

/// How the child relates to sessions and process groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// Leader of a new process group in the caller's session.
    NewGroup,
    /// Leader of a new session; with `Some(fd)`, that terminal becomes its controlling tty.
    NewSession(Option<RawFd>),
}

impl SessionMode {
    /// The mode of a launch: on a pty (`tty`), its session with the pty as controlling
    /// terminal; else a session of its own when `own_session`, or a new group.
    pub fn of(tty: Option<RawFd>, own_session: bool) -> Self {
        match (tty, own_session) {
            (Some(fd), _) => SessionMode::NewSession(Some(fd)),
            (None, true) => SessionMode::NewSession(None),
            (None, false) => SessionMode::NewGroup,
        }
    }

    /// Enters the mode, in the child. `Err(())` leaves the failed call's errno in place.
    ///
    /// # Safety
    /// Only in a child about to `execve` (raw system calls only).
    pub unsafe fn enter(self) -> Result<(), ()> {
        match self {
            SessionMode::NewGroup => {
                if libc::setpgid(0, 0) != 0 {
                    return Err(());
                }
            }
            SessionMode::NewSession(tty) => {
                if libc::setsid() < 0 {
                    return Err(());
                }
                if let Some(fd) = tty {
                    if libc::ioctl(fd, libc::TIOCSCTTY as _, 0) != 0 {
                        return Err(());
                    }
                }
            }
        }
        Ok(())
    }
}
