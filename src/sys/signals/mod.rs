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

/// What containment asks of a command's processes, in no platform's terms: Unix sends the
/// signal of that name (`SIGTERM`, `SIGCONT`, `SIGKILL`); Windows has no signals and maps
/// them onto its job (a graceful stop where it has one, `TerminateJobObject` for `Kill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Asks to terminate (SIGTERM).
    Term,
    /// Resumes a stopped process, so it acts on `Term` (SIGCONT).
    Continue,
    /// Ends at once, cannot be refused (SIGKILL).
    Kill,
}
