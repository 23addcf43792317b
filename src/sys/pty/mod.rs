//! Pseudo-terminals: opening a pair (per platform), the window size, the foreground group.
//!
//! Invariants:
//! - No child launched concurrently for another terminal inherits either end (Linux: both are
//!   opened close-on-exec atomically; macOS: the master is made close-on-exec right after
//!   opening, and our launches pass only the descriptors they name), so the master sees the
//!   end exactly when this terminal's processes have closed the slave.
//! - The master is non-blocking (it lives in the runtime's reactor); the slave is blocking, as
//!   programs expect of their terminal.
//! - The caller closes its slave right after the launch; from then on, EIO (Linux) or end of
//!   file (macOS) on a master read means "every process of the terminal closed it", i.e. the
//!   end of the output.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
#[allow(unused_imports)] // the core uses these once it runs on Windows
pub use windows::ConPty;

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// Default size of a pty terminal: columns.
pub const DEFAULT_COLS: u16 = 80;
/// Default size of a pty terminal: rows.
pub const DEFAULT_ROWS: u16 = 24;

/// A terminal size in character cells (both at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtySize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl Default for PtySize {
    fn default() -> Self {
        Self {
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
        }
    }
}

/// An open pseudo-terminal pair.
#[derive(Debug)]
pub struct Pty {
    /// Master side (ours): non-blocking, close-on-exec.
    pub master: OwnedFd,
    /// Slave side (the command's terminal): close-on-exec; `dup2`'d to the child's 0, 1, 2.
    pub slave: OwnedFd,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
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
