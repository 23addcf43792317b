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

    /// Ended by the terminal's own stop where the platform reports no signal (Windows: the
    /// job terminated, or a pty's Ctrl+C): as Node's child_process reports a kill there,
    /// `exitCode` null and the stop's signal name (`SIGTERM`, `SIGKILL`).
    pub fn stopped(stop: crate::sys::signals::Stop) -> Self {
        use crate::sys::signals::Stop;
        let name = match stop {
            Stop::Term => "SIGTERM",
            Stop::Kill => "SIGKILL",
            Stop::Continue => "SIGCONT",
        };
        Self {
            exit_code: None,
            signal: Some(name.into()),
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
