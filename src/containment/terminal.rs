//! A terminal's containment: what holds its processes ([`crate::sys::contain`]: on Unix its
//! process group, on a pty its session, its cgroups where the system has them; on Windows its
//! Job Object) and its OS sandbox's leftovers (the PID namespace's init, the private TMPDIR);
//! on Unix registered with the guardian while anything of it may run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::Target;
use crate::error::TermError;
use crate::sandbox::SandboxGuard;
use crate::spawn::Limits;
use crate::sys::contain::{self, PrepareError};
use crate::sys::guardian;
use crate::sys::signals::Stop;

/// Makes what will hold a terminal's command (cgroups, or a job), with the request's
/// `limits` that the containment enforces (a pids cgroup for `limits.processes` on Linux;
/// job limits on Windows). A limit the platform cannot enforce fails with its `ENOTSUP`
/// naming the field. Its [`contain::Holder::join`] is what the child is put into before it
/// runs; [`contain::Holder::contain`] takes the started leader for [`Containment::new`].
pub fn hold(limits: &Limits) -> Result<contain::Holder, TermError> {
    // The guardian runs before anything is launched (what it will hold may outlive Node).
    guardian::start();
    contain::Holder::new(limits).map_err(prepare_error)
}

/// The error a refused containment is reported with: a limit the platform cannot enforce is
/// coded by its errno's name (`ENOTSUP`), as macOS's launch refuses `RLIMIT_AS`.
fn prepare_error(e: PrepareError) -> TermError {
    match e {
        PrepareError::Unsupported { field, errno, why } => {
            TermError::from_errno(errno, format!("applying resource limits ({field}: {why})"))
        }
        PrepareError::Os(e) => TermError::from_io(&e, "containing the command"),
    }
}

/// Everything a terminal's processes live in. The only owner of their signalling.
#[derive(Debug)]
pub struct Containment {
    held: contain::Held,
    /// A sandboxed terminal's PID-namespace init and TMPDIR (ended at release or abandon, or
    /// when the containment is dropped).
    sandbox: Mutex<Option<SandboxGuard>>,
    /// The guardian still lists this terminal.
    tracked: AtomicBool,
}

impl Containment {
    /// The containment of a started terminal: what holds its processes (`held`, which on Unix
    /// leads its own process group, and on a pty its own session) and, when sandboxed, what
    /// its sandbox leaves running. The guardian lists it from now on.
    pub fn new(held: contain::Held, sandbox: Option<SandboxGuard>) -> Self {
        guardian::track(held.pgid(), held.cgroup_dir());
        Self {
            held,
            sandbox: Mutex::new(sandbox),
            tracked: AtomicBool::new(true),
        }
    }

    /// The process group id (the child's pid; on Windows, which has no groups, the leader's
    /// pid).
    pub fn pgid(&self) -> i32 {
        self.held.pgid()
    }

    /// Which stop ended the command by the containment's own hand (Windows:
    /// `TerminateJobObject` for `Term` on pipes or for `Kill`), so its exit is reported as
    /// that signal; `None` on Unix, where the wait status carries the signal.
    pub fn stopped_by(&self) -> Option<Stop> {
        self.held.stopped_by()
    }

    /// SIGKILL to everything at once (a handle dropped, its environment going away), the
    /// sandbox's namespace included, whose init is reaped before this returns if it ends within
    /// 50 ms (Node may be about to exit), else on the reaper thread.
    pub fn kill_now(&self) {
        self.signal(Stop::Kill);
        if let Some(g) = self.take_sandbox() {
            g.finish_now();
        }
    }

    /// Ends the sandbox's PID namespace (SIGKILL to its init: the kernel kills whatever is
    /// left in it, even processes that left the group) and has its init reaped and its TMPDIR
    /// removed in the background. For release, once the command is gone.
    pub fn end_sandbox(&self) {
        // Dropping the guard ends the namespace (Linux; elsewhere there is none).
        let _ended = self.take_sandbox();
    }

    /// The sandbox's network-proxy listener, once (see [`crate::sandbox::proxy`]).
    pub fn take_network_listener(&self) -> Option<crate::sandbox::NetworkListener> {
        self.sandbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .and_then(SandboxGuard::take_listener)
    }

    fn take_sandbox(&self) -> Option<SandboxGuard> {
        self.sandbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Tells the guardian the terminal's processes are gone (only once). Windows has no
    /// guardian (the job's `KILL_ON_JOB_CLOSE` does its work): nothing to tell there.
    pub fn untrack(&self) {
        if self.tracked.swap(false, Ordering::AcqRel) {
            guardian::untrack(self.pgid(), self.held.cgroup_dir());
        }
    }
}

impl Target for Containment {
    /// Unix: the pids cgroup's members, the cgroup (`cgroup.kill` for SIGKILL), the process
    /// group, and on a pty every process of the session. Windows: the job.
    fn signal(&self, stop: Stop) {
        self.held.signal(stop);
    }

    fn alive(&self) -> bool {
        self.held.alive()
    }
}
