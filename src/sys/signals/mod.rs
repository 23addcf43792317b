//! Signal names: the POSIX name of a signal number (`SIGTERM`), real-time signals included on
//! Linux; on Windows the numbers Node names there (`SIGTERM` is 15, `SIGKILL` 9).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::name;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::name;
