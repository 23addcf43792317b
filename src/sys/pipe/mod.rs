//! Pipes: creating them close-on-exec (atomically where the platform can), growing one that
//! floods, and reading a command's output and writing its input ([`OutputReader`], [`InputWriter`]: the
//! same interface everywhere, readiness on Unix, a thread per pipe on Windows).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
mod outcome;
pub use outcome::ReadOutcome;
#[cfg(unix)]
mod pace;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
#[cfg(all(unix, test))]
pub use unix::gone_reader_error;
#[cfg(unix)]
pub use unix::{pipe_cloexec, reader_gone, InputWriter, OutputReader};
#[cfg(windows)]
mod windows;
#[cfg(all(windows, test))]
pub use windows::gone_reader_error;
#[cfg(windows)]
pub use windows::{null_input, pipe, reader_gone, InputWriter, OutputReader};

/// Our end of a command's pipe (or pseudo-terminal): a descriptor on Unix, a handle on
/// Windows. [`OutputReader::new`] and [`InputWriter::new`] take it.
#[cfg(unix)]
pub type OwnedEnd = std::os::fd::OwnedFd;
/// Our end of a command's pipe (or pseudo console): a descriptor on Unix, a handle on
/// Windows. [`OutputReader::new`] and [`InputWriter::new`] take it.
#[cfg(windows)]
pub type OwnedEnd = std::os::windows::io::OwnedHandle;
