//! Unix pseudo-terminals: the pair, its window size (`TIOCSWINSZ`), its foreground group
//! (`tcgetpgrp`) and its modes (termios), all through the master.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::{imp, PtySize};

/// What the core holds of a pty terminal: a duplicate of the master.
pub type Control = OwnedFd;

/// The terminal modes a program may change (`stty`): flags and control characters.
pub type Modes = nix::sys::termios::Termios;

/// An open pseudo-terminal pair.
#[derive(Debug)]
pub struct Pty {
    /// Master side (ours): non-blocking, close-on-exec.
    pub master: OwnedFd,
    /// Slave side (the command's terminal): close-on-exec; `dup2`'d to the child's 0, 1, 2.
    pub slave: OwnedFd,
}

pub(super) fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Opens a pty pair of the given size: master non-blocking, both close-on-exec.
pub fn open(size: PtySize) -> io::Result<Pty> {
    let pty = imp::open_pair()?;
    set_size(&pty.master, size)?;
    Ok(pty)
}

/// Sets the window size (`TIOCSWINSZ`); the kernel sends SIGWINCH to the terminal's
/// foreground process group when it changes.
pub fn set_size(fd: &impl AsRawFd, size: PtySize) -> io::Result<()> {
    let ws = libc::winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads a `winsize` we own.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ as _, &ws) }).map(|_| ())
}

/// Reads the window size (`TIOCGWINSZ`).
#[cfg(test)]
fn get_size(fd: &impl AsRawFd) -> io::Result<PtySize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes a `winsize` we own.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ as _, &mut ws) })?;
    Ok(PtySize {
        cols: ws.ws_col,
        rows: ws.ws_row,
    })
}

/// The foreground process group of the terminal whose master (or slave) is `fd`
/// (`tcgetpgrp`); `None` when the terminal has none or is gone.
pub fn foreground_group(fd: &impl std::os::fd::AsFd) -> Option<i32> {
    nix::unistd::tcgetpgrp(fd)
        .ok()
        .map(|p| p.as_raw())
        .filter(|&p| p > 0)
}

/// Duplicates `fd` (close-on-exec: `F_DUPFD_CLOEXEC`).
pub fn dup(fd: &impl std::os::fd::AsFd) -> io::Result<OwnedFd> {
    fd.as_fd().try_clone_to_owned()
}

/// The pty's current modes (on a master, the termios calls act on the slave's settings).
pub fn modes(control: &Control) -> io::Result<Modes> {
    nix::sys::termios::tcgetattr(control).map_err(io::Error::from)
}

/// Puts `saved` back if a program changed the modes (`stty olcuc`, `stty intr undef`, raw
/// mode left behind); true when they had changed.
pub fn restore_modes(control: &Control, saved: &Modes) -> io::Result<bool> {
    use nix::sys::termios::{tcgetattr, tcsetattr, SetArg};
    let now = tcgetattr(control).map_err(io::Error::from)?;
    let same = now.input_flags == saved.input_flags
        && now.output_flags == saved.output_flags
        && now.control_flags == saved.control_flags
        && now.local_flags == saved.local_flags
        && now.control_chars == saved.control_chars;
    if !same {
        tcsetattr(control, SetArg::TCSANOW, saved).map_err(io::Error::from)?;
    }
    Ok(!same)
}

/// Whether a program waits for an answer to a terminal query: the pty is in non-canonical
/// mode without echo (as a program that reads the answer sets it).
pub fn awaits_replies(control: &Control) -> bool {
    use nix::sys::termios::LocalFlags;
    match nix::sys::termios::tcgetattr(control) {
        Ok(t) => !t
            .local_flags
            .intersects(LocalFlags::ICANON | LocalFlags::ECHO),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(fd: &impl std::os::fd::AsFd) -> (i32, i32) {
        use nix::fcntl::{fcntl, FcntlArg};
        (
            fcntl(fd, FcntlArg::F_GETFL).unwrap(),
            fcntl(fd, FcntlArg::F_GETFD).unwrap(),
        )
    }

    #[test]
    fn opens_cloexec_nonblocking_master_with_size() {
        let p = open(PtySize {
            cols: 100,
            rows: 30,
        })
        .unwrap();
        let (fl, fd) = flags(&p.master);
        assert_ne!(fl & libc::O_NONBLOCK, 0);
        assert_ne!(fd & libc::FD_CLOEXEC, 0);
        let (fl, fd) = flags(&p.slave);
        assert_eq!(fl & libc::O_NONBLOCK, 0);
        assert_ne!(fd & libc::FD_CLOEXEC, 0);
        assert_eq!(
            get_size(&p.slave).unwrap(),
            PtySize {
                cols: 100,
                rows: 30
            }
        );
        set_size(&p.master, PtySize { cols: 7, rows: 3 }).unwrap();
        assert_eq!(get_size(&p.slave).unwrap(), PtySize { cols: 7, rows: 3 });
    }

    // Linux only: macOS answers 0 (EOF) rather than EIO, and its last close of a blocking
    // slave waits until the master has read the output, which this single thread cannot do.
    #[cfg(target_os = "linux")]
    #[test]
    fn master_reads_eio_once_the_slave_is_closed_after_the_data() {
        let p = open(PtySize::default()).unwrap();
        assert_eq!(nix::unistd::write(&p.slave, b"tail\n").unwrap(), 5);
        drop(p.slave);
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            let e = match nix::unistd::read(&p.master, &mut buf) {
                Ok(n) if n > 0 => {
                    got.extend_from_slice(&buf[..n]);
                    continue;
                }
                Ok(_) => None,
                Err(e) => Some(e as i32),
            };
            if e == Some(libc::EAGAIN) {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
            assert_eq!(e, Some(libc::EIO));
            break;
        }
        // The line discipline turns \n into \r\n (ONLCR).
        assert_eq!(got, b"tail\r\n");
    }
}
