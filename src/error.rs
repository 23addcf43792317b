//! Error codes of the core. Every failure the library reports carries a stable `code`
//! (a string a program can branch on) and a message that names the offending field.
//! No napi types here: the binding layer turns a [`TermError`] into a JS `Error` with `code`.

use std::fmt;
use std::io;

/// A failure with a stable machine-readable code and a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermError {
    /// Stable code, e.g. `ERR_INVALID_ARG`, `ERR_INVALID_CWD`, `ENOENT`.
    pub code: String,
    /// Message naming the field or the operation that failed.
    pub message: String,
    /// Structured details kept out of the message (the JS error's `details`), such as the
    /// `PATH` a program was searched in: what a caller may log, not what an agent must read.
    pub details: Vec<(&'static str, String)>,
}

/// Code for a request that failed validation (NUL bytes, bad env names, bad limits).
pub const ERR_INVALID_ARG: &str = "ERR_INVALID_ARG";
/// Code for a `cwd` that is relative, missing or not a directory.
pub const ERR_INVALID_CWD: &str = "ERR_INVALID_CWD";
/// Code for any call on a handle after `release()`.
pub const ERR_TERMINAL_RELEASED: &str = "ERR_TERMINAL_RELEASED";
/// Code for a working directory outside `allowedRoots`.
pub const ERR_CWD_OUTSIDE_ROOTS: &str = "ERR_CWD_OUTSIDE_ROOTS";
/// Code for a `ShellSessions` session without a bash to run (Windows without Git for Windows).
pub const ERR_BASH_NOT_FOUND: &str = "ERR_BASH_NOT_FOUND";

impl TermError {
    /// Builds an error from a code and a message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// Adds a structured detail (`details[key]` on the JS error).
    pub fn with_detail(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.details.push((key, value.into()));
        self
    }

    /// `ERR_INVALID_ARG` with the given message.
    pub fn invalid_arg(message: impl Into<String>) -> Self {
        Self::new(ERR_INVALID_ARG, message)
    }

    /// `ERR_INVALID_CWD` with the given message.
    pub fn invalid_cwd(message: impl Into<String>) -> Self {
        Self::new(ERR_INVALID_CWD, message)
    }

    /// `ERR_TERMINAL_RELEASED` for the named terminal.
    pub fn released(id: &str) -> Self {
        Self::new(
            ERR_TERMINAL_RELEASED,
            format!("terminal {id} has been released"),
        )
    }

    /// Maps an OS error to its errno name (`ENOENT`, `EACCES`, …), prefixing `context`; an
    /// error without an errno is `ERR_SPAWN`. (Launch failures are decoded by the spawn layer,
    /// which calls [`TermError::from_errno`].)
    pub fn from_io(err: &io::Error, context: &str) -> Self {
        match err.raw_os_error() {
            Some(errno) => Self::from_errno(errno, format!("{context}: {err}")),
            None => Self::new("ERR_SPAWN", format!("{context}: {err}")),
        }
    }

    /// An error coded by the name of `errno` (`ENOENT`, …; 0 is `ERR_SPAWN`).
    pub fn from_errno(errno: i32, message: impl Into<String>) -> Self {
        let code = if errno == 0 {
            "ERR_SPAWN".to_string()
        } else {
            crate::sys::errname::name(errno)
        };
        Self::new(code, message)
    }
}

impl fmt::Display for TermError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for TermError {}

// errno numbers (Windows' codes are named by sys::errname's own tests).
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn io_errors_get_errno_names() {
        let e = TermError::from_io(&io::Error::from_raw_os_error(libc::ENOENT), "command `x`");
        assert_eq!(e.code, "ENOENT");
        assert!(e.message.starts_with("command `x`: "));
        let e = TermError::from_io(&io::Error::from_raw_os_error(libc::EACCES), "c");
        assert_eq!(e.code, "EACCES");
        let e = TermError::from_io(&io::Error::other("boom"), "c");
        assert_eq!(e.code, "ERR_SPAWN");
    }
}
