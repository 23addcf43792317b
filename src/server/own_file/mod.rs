//! The server's own file and the directories above it, so no sandboxed command it starts can
//! write where the next connection's server comes from.
//!
//! A backend runs the server from a file at the far end (by default in its temp directory) and
//! installs it there when it is missing. A sandboxed command whose writable roots held that file
//! or a directory above it could replace it (write it, or rename the directory away and make a
//! new one), and the next connection would run the command's program outside any sandbox.
//!
//! Invariants:
//! - The file and every directory above it are identified by device and inode, resolved once
//!   when the server starts (from `/proc/self/exe`, the very file that runs): a later rename or
//!   symlink cannot hide one.
//! - A sandboxed create's writable roots are pinned (opened) once and compared by device and
//!   inode; the launch then binds exactly those pinned directories (no second lookup by path).
//!   A root that is one of them is refused with `ERR_INVALID_ARG` naming the field.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(target_os = "linux"))]
mod none;
#[cfg(not(target_os = "linux"))]
use none as imp;

pub use imp::OwnFile;
