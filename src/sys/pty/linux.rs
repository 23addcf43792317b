//! Linux: `posix_openpt`, then the slave through `TIOCGPTPEER` (4.13+; no path lookup, no race
//! with a concurrent /dev/pts change), falling back to `ptsname_r` + `open`.

use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use super::unix::{cvt, Pty};

pub(super) fn open_pair() -> io::Result<Pty> {
    // SAFETY: plain system calls on descriptors we own; results are checked.
    unsafe {
        let m = cvt(libc::posix_openpt(
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NONBLOCK,
        ))?;
        let master = OwnedFd::from_raw_fd(m);
        cvt(libc::grantpt(m))?;
        cvt(libc::unlockpt(m))?;
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        let s = libc::ioctl(m, libc::TIOCGPTPEER as _, flags);
        let s = if s >= 0 {
            s
        } else {
            let mut name = [0 as libc::c_char; 128];
            if libc::ptsname_r(m, name.as_mut_ptr(), name.len()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let path = CStr::from_ptr(name.as_ptr());
            cvt(libc::open(path.as_ptr(), flags))?
        };
        Ok(Pty {
            master,
            slave: OwnedFd::from_raw_fd(s),
        })
    }
}
