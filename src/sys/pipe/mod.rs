//! Pipes: creating them close-on-exec atomically, and growing one that floods.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// A pipe `(read end, write end)`, both close-on-exec from the start (no window in which a
/// concurrent launch could inherit them).
pub fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    imp::pipe_cloexec()
}

/// Asks for a larger pipe buffer (best effort; a no-op where the platform cannot).
pub fn grow(fd: &impl AsFd, bytes: i32) {
    imp::grow(fd.as_fd(), bytes)
}
