//! The ACP exit status: `exitCode` for a normal exit, `signal` (POSIX name such
//! as `"SIGTERM"`) with a null `exitCode` for a death by signal. Never both, never invented.

/// How a process ended, in the shape of ACP's `TerminalExitStatus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitStatus {
    /// Exit code of a normal exit; `None` when a signal ended the process.
    pub exit_code: Option<u32>,
    /// POSIX signal name (`"SIGKILL"`) when a signal ended the process.
    pub signal: Option<String>,
}

impl ExitStatus {
    /// A normal exit with `code`.
    pub fn code(code: i32) -> Self {
        Self {
            exit_code: Some(code as u32 & 0xff),
            signal: None,
        }
    }

    /// A death by the signal numbered `signo`.
    pub fn signaled(signo: i32) -> Self {
        Self {
            exit_code: None,
            signal: Some(crate::sys::signals::name(signo)),
        }
    }

    /// Neither code nor signal: the status could not be known (someone else reaped the
    /// child). Never invented.
    pub fn unknown() -> Self {
        Self {
            exit_code: None,
            signal: None,
        }
    }
}
