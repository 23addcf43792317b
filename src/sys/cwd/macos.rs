//! macOS: directories opened `O_RDONLY | O_DIRECTORY` (or `O_SEARCH`, macOS 13+, for one that
//! may be entered but not listed, as `chdir` allows), `fcntl(F_GETPATH)` for where a
//! descriptor is, and libproc's `proc_pidinfo(PROC_PIDVNODEPATHINFO)` for another process's
//! working directory (readable for our own user's processes, as `/proc/<pid>/cwd` on Linux).

use std::ffi::{CStr, OsStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

pub(super) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let open = |flags: OFlag| {
        nix::fcntl::open(
            path,
            flags | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)
    };
    match open(OFlag::O_RDONLY) {
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            // Searchable but not readable: O_SEARCH needs only the execute bit (macOS 13+;
            // older systems answer EACCES again).
            open(OFlag::from_bits_retain(libc::O_SEARCH)).map_err(|_| e)
        }
        r => r,
    }
}

pub(super) fn fd_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    let mut buf = [0u8; libc::MAXPATHLEN as usize];
    // SAFETY: F_GETPATH writes at most MAXPATHLEN (= PATH_MAX) bytes into our buffer.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    c_path(&buf).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))
}

pub(super) fn process_cwd(pid: i32) -> Option<PathBuf> {
    let mut info = MaybeUninit::<libc::proc_vnodepathinfo>::zeroed();
    let size = std::mem::size_of::<libc::proc_vnodepathinfo>() as libc::c_int;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `info` and returns how many.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDVNODEPATHINFO,
            0,
            info.as_mut_ptr().cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    // SAFETY: fully written (n == size); all-integer fields, any bit pattern is valid.
    let info = unsafe { info.assume_init() };
    let path = &info.pvi_cdir.vip_path;
    // SAFETY: `vip_path` is MAXPATHLEN chars laid out contiguously ([[c_char; 32]; 32]).
    let bytes = unsafe {
        std::slice::from_raw_parts(path.as_ptr().cast::<u8>(), std::mem::size_of_val(path))
    };
    c_path(bytes)
}

/// The path in a NUL-terminated buffer the kernel filled; `None` when it is empty.
fn c_path(buf: &[u8]) -> Option<PathBuf> {
    let s = CStr::from_bytes_until_nul(buf).ok()?;
    (!s.is_empty()).then(|| Path::new(OsStr::from_bytes(s.to_bytes())).to_path_buf())
}
