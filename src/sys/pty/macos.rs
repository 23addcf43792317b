//! macOS: `posix_openpt` + `grantpt` + `unlockpt`, the slave's name from `TIOCPTYGNAME` (a
//! buffer of our own, unlike `ptsname`), and `open(O_NOCTTY | O_CLOEXEC)`: opening a terminal
//! without `O_NOCTTY` would make it Node's controlling terminal when Node has none.
//!
//! `posix_openpt` takes only `O_RDWR | O_NOCTTY` portably, so the master is made close-on-exec
//! and non-blocking right after it is opened. Our own launches cannot inherit it in between:
//! they use `POSIX_SPAWN_CLOEXEC_DEFAULT`, which passes only the descriptors they name.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::unix::{cvt, Pty};

/// Size of the buffer `TIOCPTYGNAME` fills (128 bytes, per `<sys/ttycom.h>`).
const PTY_NAME_LEN: usize = 128;

pub(super) fn open_pair() -> io::Result<Pty> {
    // SAFETY: plain system calls on descriptors we own; results are checked.
    unsafe {
        let master = OwnedFd::from_raw_fd(cvt(libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY))?);
        let m = master.as_raw_fd();
        cvt(libc::fcntl(m, libc::F_SETFD, libc::FD_CLOEXEC))?;
        let fl = cvt(libc::fcntl(m, libc::F_GETFL))?;
        cvt(libc::fcntl(m, libc::F_SETFL, fl | libc::O_NONBLOCK))?;
        cvt(libc::grantpt(m))?;
        cvt(libc::unlockpt(m))?;
        let mut name = [0 as libc::c_char; PTY_NAME_LEN];
        cvt(libc::ioctl(m, libc::TIOCPTYGNAME as _, name.as_mut_ptr()))?;
        let path = slave_path(&name)?;
        let s = cvt(libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        ))?;
        Ok(Pty {
            master,
            slave: OwnedFd::from_raw_fd(s),
        })
    }
}

/// The NUL-terminated name in the buffer `TIOCPTYGNAME` filled.
fn slave_path(buf: &[libc::c_char; PTY_NAME_LEN]) -> io::Result<&CStr> {
    // SAFETY: c_char and u8 have the same size and alignment; the slice stays in `buf`.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), buf.len()) };
    CStr::from_bytes_until_nul(bytes).map_err(|_| io::Error::from_raw_os_error(libc::ENAMETOOLONG))
}
