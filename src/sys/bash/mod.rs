//! The bash a `ShellSessions` session runs unless `options.shell` names one: on Unix `bash`,
//! looked up in the session's `PATH` when it starts; Windows has none of its own, so it is Git
//! for Windows' (or MSYS2's) `bash.exe`, found through `PATH` or in Git's install directories
//! (`spawn::wincmd::find_bash`: never WSL's launcher `System32\bash.exe`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::session_bash;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::session_bash;

/// No bash was found: where it was looked for, for the error message.
#[derive(Debug, Clone, PartialEq, Eq)]
// Unix always has an answer (`bash`, looked up when the session starts).
#[cfg_attr(unix, allow(dead_code))]
pub struct NotFound {
    /// The places searched, as the message shows them.
    pub searched: String,
}
