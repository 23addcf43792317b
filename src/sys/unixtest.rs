//! Helpers of the Unix unit tests (the platform layer's and the core's): waiting for a
//! condition, a shell that leads a session of its own.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// Polls `cond` every 5 ms until it holds; fails the test naming `what` after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `bash -c script` as the leader of a new session (`setsid` before exec).
pub fn setsid_bash(script: &str) -> Command {
    let mut cmd = Command::new("bash");
    cmd.args(["-c", script]);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    cmd
}
