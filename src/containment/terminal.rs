//! A terminal's containment: its process group, on a pty its session, and its cgroups where
//! the system has them; registered with the guardian while anything of it may run.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::group::{signal_pids, ProcessGroup, SessionTree};
use super::Target;
use crate::guardian;
use crate::sys::cgroup::{Cgroup, PidsCgroup};
use crate::sys::procs;

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

    /// The `cgroup.procs` files the child joins before exec.
    pub fn procs_files(&self) -> Vec<CString> {
        let mut files: Vec<CString> = self.cgroup.iter().filter_map(|c| c.procs_path()).collect();
        if let Some(p) = self.pids.as_ref().and_then(|p| p.procs_path()) {
            if !files.contains(&p) {
                files.push(p);
            }
        }
        files
    }

    /// The containment of the started child `pid` (which leads its own process group, and on
    /// a pty its own session); the guardian lists it from now on.
    pub fn contain(self, pid: i32, session: bool) -> Containment {
        guardian::track(pid, self.cgroup.as_ref().map(|c| c.dir()));
        Containment {
            group: ProcessGroup(pid),
            session,
            cgroup: self.cgroup,
            pids: self.pids,
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
    /// The guardian still lists this terminal.
    tracked: AtomicBool,
}

impl Containment {
    /// The process group id (the child's pid).
    pub fn pgid(&self) -> i32 {
        self.group.0
    }

    /// SIGKILL to everything at once (a handle dropped, its environment going away).
    pub fn kill_now(&self) {
        self.signal(Signal::SIGKILL);
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
    fn signal(&self, sig: Signal) {
        if let Some(pc) = &self.pids {
            signal_pids(&pc.pids(), sig);
        }
        if let Some(cg) = &self.cgroup {
            if sig == Signal::SIGKILL {
                cg.kill_all();
            } else {
                cg.signal_all(sig);
            }
        }
        self.group.signal(sig);
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
