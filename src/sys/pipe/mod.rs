//! Pipes: creating them close-on-exec (atomically where the platform can), and growing one
//! that floods.

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
pub use windows::{null_input, pipe, PipeReader, PipeWriter};

use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// A pipe `(read end, write end)`, both close-on-exec: from the start on Linux (`pipe2`); on
/// macOS right after `pipe`, where our own launches cannot inherit them in between anyway
/// (`POSIX_SPAWN_CLOEXEC_DEFAULT`).
pub fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    imp::pipe_cloexec()
}

/// Asks for a larger pipe buffer (best effort; a no-op where the platform cannot).
pub fn grow(fd: &impl AsFd, bytes: i32) {
    imp::grow(fd.as_fd(), bytes)
}
