//! Wait status → the ACP exit status: `exitCode` for a normal exit, `signal` (POSIX name such
//! as `"SIGTERM"`) with a null `exitCode` for a death by signal. Never both, never invented.

use nix::sys::signal::Signal;
use nix::sys::wait::WaitStatus;

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
            signal: Some(signal_name(signo)),
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

    /// Converts a final wait status; `None` for non-final ones (stopped, continued).
    pub fn from_wait_status(status: WaitStatus) -> Option<Self> {
        match status {
            WaitStatus::Exited(_, code) => Some(Self::code(code)),
            WaitStatus::Signaled(_, sig, _) => Some(Self::signaled(sig as i32)),
            _ => None,
        }
    }
}

/// POSIX name of a signal number: `SIGTERM`, `SIGKILL`, …; real-time signals as `SIGRTMIN+n`.
pub fn signal_name(signo: i32) -> String {
    match Signal::try_from(signo) {
        Ok(sig) => sig.as_str().to_string(),
        Err(_) => {
            crate::sys::signals::realtime_name(signo).unwrap_or_else(|| format!("SIG{signo}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::unistd::Pid;

    #[test]
    fn names() {
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGINT), "SIGINT");
        assert_eq!(signal_name(libc::SIGRTMIN()), "SIGRTMIN");
        assert_eq!(signal_name(libc::SIGRTMIN() + 2), "SIGRTMIN+2");
    }

    #[test]
    fn wait_statuses() {
        let p = Pid::from_raw(1);
        assert_eq!(
            ExitStatus::from_wait_status(WaitStatus::Exited(p, 3)),
            Some(ExitStatus {
                exit_code: Some(3),
                signal: None
            })
        );
        assert_eq!(
            ExitStatus::from_wait_status(WaitStatus::Signaled(p, Signal::SIGKILL, false)),
            Some(ExitStatus {
                exit_code: None,
                signal: Some("SIGKILL".into())
            })
        );
        assert_eq!(
            ExitStatus::from_wait_status(WaitStatus::Stopped(p, Signal::SIGSTOP)),
            None
        );
    }
}
