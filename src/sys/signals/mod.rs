//! Signal numbers the platform defines beyond the POSIX names `nix` knows: real-time signals.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;

/// The name of real-time signal `signo` (`SIGRTMIN`, `SIGRTMIN+2`), if it is one.
pub fn realtime_name(signo: i32) -> Option<String> {
    imp::realtime_name(signo)
}
