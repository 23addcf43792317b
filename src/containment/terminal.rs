//! A terminal's containment: its process group, on a pty its session, its cgroups where the
//! system has them, and its OS sandbox's leftovers (the PID namespace's init, the private
//! TMPDIR); registered with the guardian while anything of it may run.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::group::{signal_pids, ProcessGroup, SessionTree};
use super::Target;
use crate::guardian;
use crate::sandbox::SandboxGuard;
use crate::sys::cgroup::{Cgroup, PidsCgroup};
use crate::sys::procs;
use crate::sys::signals::Stop;
use crate::sys::spawn::{Join, Leader};

/// How long dropping a containment waits for its cgroups to empty after SIGKILL.
const CGROUP_EMPTY_WAIT: Duration = Duration::from_millis(200);

/// The cgroups of a terminal about to be spawned (none where cgroups are unavailable).
#[derive(Debug, Default)]
pub struct Prepared {
    cgroup: Option<Cgroup>,
    pids: Option<PidsCgroup>,
}

impl Prepared {
    /// Creates the terminal's cgroup and, for `max_processes`, a pids cgroup capping it.
    pub fn new(max_processes: Option<u64>) -> Self {
        let cgroup = Cgroup::create();
        let pids = max_processes.and_then(|max| PidsCgroup::create(max, cgroup.as_ref()));
        Self { cgroup, pids }
    }

    /// What the child joins before exec: the `cgroup.procs` files of its cgroups.
    pub fn join(&self) -> Join<'_> {
        let mut files: Vec<CString> = self.cgroup.iter().filter_map(|c| c.procs_path()).collect();
        if let Some(p) = self.pids.as_ref().and_then(|p| p.procs_path()) {
            if !files.contains(&p) {
                files.push(p);
            }
        }
        Join {
            cgroup_procs: files,
            ..Join::default()
        }
    }

    /// The containment of the started `leader` (which leads its own process group, and on
    /// a pty its own session, and may be sandboxed); the guardian lists it from now on.
    pub fn contain(
        self,
        leader: Leader,
        session: bool,
        sandbox: Option<SandboxGuard>,
    ) -> Containment {
        let pid = leader.pid;
        guardian::track(pid, self.cgroup.as_ref().map(|c| c.dir()));
        Containment {
            group: ProcessGroup(pid),
            session,
            cgroup: self.cgroup,
            pids: self.pids,
            sandbox: Mutex::new(sandbox),
            tracked: AtomicBool::new(true),
        }
    }
}

/// Everything a terminal's processes live in. The only owner of their signalling.
#[derive(Debug)]
pub struct Containment {
    group: ProcessGroup,
    /// A pty terminal leads a session whose jobs have groups of their own.
    session: bool,
    cgroup: Option<Cgroup>,
    pids: Option<PidsCgroup>,
    /// A sandboxed terminal's PID-namespace init and TMPDIR (ended at release or abandon, or
    /// when the containment is dropped).
    sandbox: Mutex<Option<SandboxGuard>>,
    /// The guardian still lists this terminal.
    tracked: AtomicBool,
}

impl Containment {
    /// The process group id (the child's pid).
    pub fn pgid(&self) -> i32 {
        self.group.0
    }

    /// SIGKILL to everything at once (a handle dropped, its environment going away), the
    /// sandbox's namespace included, whose cleanup finishes before this returns (Node may be
    /// about to exit).
    pub fn kill_now(&self) {
        self.signal(Stop::Kill);
        #[cfg(target_os = "linux")]
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

    fn take_sandbox(&self) -> Option<SandboxGuard> {
        self.sandbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Tells the guardian the terminal's processes are gone (only once).
    pub fn untrack(&self) {
        if self.tracked.swap(false, Ordering::AcqRel) {
            guardian::untrack(self.pgid(), self.cgroup.as_ref().map(|c| c.dir()));
        }
    }

    fn cgroups_populated(&self) -> bool {
        self.cgroup.as_ref().is_some_and(|c| c.populated())
            || self.pids.as_ref().is_some_and(|c| !c.pids().is_empty())
    }
}

impl Target for Containment {
    /// The pids cgroup's members, the cgroup (`cgroup.kill` for SIGKILL), the process group,
    /// and on a pty every process of the session.
    fn signal(&self, stop: Stop) {
        let sig = Signal::from(stop);
        if let Some(pc) = &self.pids {
            signal_pids(&pc.pids(), sig);
        }
        if let Some(cg) = &self.cgroup {
            if stop == Stop::Kill {
                cg.kill_all();
            } else {
                cg.signal_all(stop);
            }
        }
        self.group.signal(stop);
        if self.session {
            let sid = self.pgid();
            signal_pids(&procs::live_where(|p| p.sid == sid), sig);
        }
    }

    fn alive(&self) -> bool {
        self.cgroups_populated()
            || self.group.alive()
            || (self.session && SessionTree(self.pgid()).session_alive())
    }
}

impl Drop for Containment {
    /// A cgroup can only be removed (or reused) empty: what is still in it is killed first.
    /// The process group is not signalled here: its id may belong to someone else by now.
    fn drop(&mut self) {
        if !self.cgroups_populated() {
            return;
        }
        if let Some(pc) = &self.pids {
            signal_pids(&pc.pids(), Signal::SIGKILL);
        }
        if let Some(cg) = &self.cgroup {
            cg.kill_all();
        }
        let deadline = Instant::now() + CGROUP_EMPTY_WAIT;
        while self.cgroups_populated() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
