//! Unix: the names `nix` knows, then the platform's real-time signals.

use nix::sys::signal::Signal;

/// POSIX name of a signal number: `SIGTERM`, `SIGKILL`, …; real-time signals as `SIGRTMIN+n`;
/// any other as `SIG<n>`.
pub fn name(signo: i32) -> String {
    match Signal::try_from(signo) {
        Ok(sig) => sig.as_str().to_string(),
        Err(_) => super::imp::realtime_name(signo).unwrap_or_else(|| format!("SIG{signo}")),
    }
}

impl From<super::Stop> for nix::sys::signal::Signal {
    fn from(stop: super::Stop) -> Self {
        match stop {
            super::Stop::Term => nix::sys::signal::Signal::SIGTERM,
            super::Stop::Continue => nix::sys::signal::Signal::SIGCONT,
            super::Stop::Kill => nix::sys::signal::Signal::SIGKILL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_are_the_posix_signals() {
        use super::super::Stop;
        assert_eq!(Signal::from(Stop::Term), Signal::SIGTERM);
        assert_eq!(Signal::from(Stop::Continue), Signal::SIGCONT);
        assert_eq!(Signal::from(Stop::Kill), Signal::SIGKILL);
    }

    #[test]
    fn names() {
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(name(libc::SIGKILL), "SIGKILL");
        assert_eq!(name(libc::SIGINT), "SIGINT");
        // A number no platform gives a name.
        assert_eq!(name(200), "SIG200");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn realtime_names() {
        assert_eq!(name(libc::SIGRTMIN()), "SIGRTMIN");
        assert_eq!(name(libc::SIGRTMIN() + 2), "SIGRTMIN+2");
    }
}
