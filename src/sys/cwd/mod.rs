//! Working directories as descriptors: the directory a request names is opened once, when it
//! is checked, and the child changes into that descriptor (so a rename or symlink swap after
//! the check changes nothing); and where a descriptor or another process's cwd really is.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Opens directory `path` for changing into it later (close-on-exec; fails with ENOTDIR for
/// anything but a directory). Symlinks in the path are followed now, once.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    imp::open_dir(path)
}

/// The absolute path an open descriptor refers to now.
pub fn fd_path(fd: &impl AsFd) -> io::Result<PathBuf> {
    imp::fd_path(fd.as_fd())
}

/// The working directory of process `pid`, if it can be read.
pub fn process_cwd(pid: i32) -> Option<PathBuf> {
    imp::process_cwd(pid)
}
