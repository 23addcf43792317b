//! Unix: a terminal's process group (its leader's pid), on a pty its session, and its cgroups
//! where the system has them; every `Stop` is the signal of that name.

use std::ffi::CString;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use super::PrepareError;
use crate::sys::cgroup::{Cgroup, PidsCgroup};
use crate::sys::procs;
use crate::sys::signals::Stop;
use crate::sys::spawn::{rlimits, Join, Leader, Limits, Rlimit, ADDRESS_SPACE_LIMIT};

/// Whether a terminal is a Job Object: not on Unix (`containmentInfo().jobObjects`).
pub const JOB_OBJECTS: bool = false;

/// How long dropping a containment waits for its cgroups to empty after SIGKILL.
const CGROUP_EMPTY_WAIT: Duration = Duration::from_millis(200);

/// The cgroups of a terminal about to be spawned (none where cgroups are unavailable), and
/// the rlimits its command gets.
#[derive(Debug, Default)]
pub struct Holder {
    cgroup: Option<Cgroup>,
    pids: Option<PidsCgroup>,
    rlimits: Vec<Rlimit>,
}

impl Holder {
    /// Creates the terminal's cgroup and, for `limits.processes`, a pids cgroup capping it;
    /// every limit is also an rlimit of the command. Refuses `limits.addressSpaceBytes` where
    /// the system does not enforce `RLIMIT_AS` (macOS: [`ADDRESS_SPACE_LIMIT`]) with `ENOTSUP`.
    pub fn new(limits: &Limits) -> Result<Holder, PrepareError> {
        if !ADDRESS_SPACE_LIMIT && limits.address_space_bytes.is_some() {
            return Err(PrepareError::Unsupported {
                field: "limits.addressSpaceBytes",
                errno: libc::ENOTSUP,
                why: "this system accepts RLIMIT_AS but does not enforce it",
            });
        }
        let cgroup = Cgroup::create();
        let pids = limits
            .processes
            .and_then(|max| PidsCgroup::create(max, cgroup.as_ref()));
        Ok(Self {
            cgroup,
            pids,
            rlimits: rlimits(limits),
        })
    }

    /// What the child is put into before exec: a session of its own when `own_session` (else
    /// a new process group; a pty's session either way), its rlimits, the `cgroup.procs`
    /// files of its cgroups.
    pub fn join(&self, own_session: bool) -> Join<'_> {
        let mut files: Vec<CString> = self.cgroup.iter().filter_map(|c| c.procs_path()).collect();
        if let Some(p) = self.pids.as_ref().and_then(|p| p.procs_path()) {
            if !files.contains(&p) {
                files.push(p);
            }
        }
        Join {
            own_session,
            rlimits: self.rlimits.clone(),
            cgroup_procs: files,
            ..Join::default()
        }
    }

    /// The tree of the started `leader`, which leads its own process group, and with
    /// `session` (a pty) its own session.
    pub fn contain(self, leader: Leader, session: bool) -> Held {
        Held {
            group: ProcessGroup(leader.pid),
            session,
            cgroup: self.cgroup,
            pids: self.pids,
        }
    }
}

/// A started terminal's process group, session and cgroups.
#[derive(Debug)]
pub struct Held {
    group: ProcessGroup,
    /// A pty terminal leads a session whose jobs have groups of their own.
    session: bool,
    cgroup: Option<Cgroup>,
    pids: Option<PidsCgroup>,
}

impl Held {
    /// The process group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.group.0
    }

    /// The terminal's cgroup directory, if it has one (what the guardian empties).
    pub fn cgroup_dir(&self) -> Option<&Path> {
        self.cgroup.as_ref().map(|c| c.dir())
    }

    /// Every process of the terminal, each once: the process group (one `killpg`), then the
    /// members of the cgroups and, on a pty, of the session that are not in the group.
    /// SIGKILL also writes `cgroup.kill` (it reaches what forks meanwhile; a second SIGKILL
    /// changes nothing). A process that traps SIGTERM sees one per kill.
    pub fn signal(&self, stop: Stop) {
        let sig = Signal::from(stop);
        if stop == Stop::Kill {
            if let Some(cg) = &self.cgroup {
                cg.kill_all();
            }
        }
        self.group.send(sig);
        let others = self.outside_group();
        signal_pids(&others, sig);
    }

    /// The live members of the cgroups and, on a pty, of the session whose process group is
    /// not the terminal's (the group's members are signalled by `killpg`).
    fn outside_group(&self) -> Vec<i32> {
        let mut members: Vec<i32> = Vec::new();
        if let Some(pc) = &self.pids {
            members.extend(pc.pids());
        }
        if let Some(cg) = &self.cgroup {
            members.extend(cg.pids());
        }
        if members.is_empty() && !self.session {
            return members;
        }
        members.sort_unstable();
        let pgid = self.pgid();
        let session = self.session;
        procs::live_where(|p| {
            p.pgrp != pgid && ((session && p.sid == pgid) || members.binary_search(&p.pid).is_ok())
        })
    }

    /// True while a process of the cgroups, the group, or on a pty the session is alive.
    pub fn alive(&self) -> bool {
        self.cgroups_populated()
            || self.group.any_alive()
            || (self.session && SessionTree(self.pgid()).session_alive())
    }

    /// Unix tells a signalled end by the wait status: always `None`.
    pub fn stopped_by(&self) -> Option<Stop> {
        None
    }

    fn cgroups_populated(&self) -> bool {
        self.cgroup.as_ref().is_some_and(|c| c.populated())
            || self.pids.as_ref().is_some_and(|c| !c.pids().is_empty())
    }
}

impl Drop for Held {
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

/// A process group (a terminal's child leads one: pgid = its pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup(pub i32);

/// Process groups and sessions always exist on Unix: nothing is refused.
pub type NoProcessGroups = std::convert::Infallible;

impl ProcessGroup {
    /// Process group `pgid` (never refused here; Windows has none).
    pub fn new(pgid: i32) -> Result<Self, NoProcessGroups> {
        Ok(Self(pgid))
    }

    /// True when it is the group of this (Node's) process.
    pub fn is_callers(&self) -> bool {
        self.0 == nix::unistd::getpgrp().as_raw()
    }

    /// Sends `stop` to the group; false when the group no longer exists (or is pgid 0/1).
    pub fn signal(&self, stop: Stop) -> bool {
        self.send(stop.into())
    }

    /// Sends `sig` to the group; false when the group no longer exists (or is pgid 0/1).
    pub fn send(&self, sig: Signal) -> bool {
        self.0 > 1 && !matches!(killpg(Pid::from_raw(self.0), sig), Err(Errno::ESRCH))
    }

    /// Pids of the live (non-zombie) members.
    pub fn live_members(&self) -> Vec<i32> {
        let pgid = self.0;
        procs::live_where(|p| p.pgrp == pgid)
    }

    /// True while a member is alive (zombies do not count).
    pub fn any_alive(&self) -> bool {
        if self.0 <= 1 {
            return false;
        }
        // Cheap check first: an empty group answers ESRCH without a process table scan.
        if let Err(Errno::ESRCH) = killpg(Pid::from_raw(self.0), None) {
            return false;
        }
        // The group exists, but zombies answer signal 0 too: look for a live member.
        !self.live_members().is_empty()
    }
}

/// Every process of session `sid` (whatever its group: a shell's jobs have groups of their
/// own) and every descendant of those, even after `setsid`. Never this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTree(pub i32);

impl SessionTree {
    /// The tree of session `sid` (never refused here; Windows has no sessions).
    pub fn new(sid: i32) -> Result<Self, NoProcessGroups> {
        Ok(Self(sid))
    }

    /// Sends `stop` to every process of the tree (gone ones are skipped).
    pub fn signal(&self, stop: Stop) {
        signal_pids(&self.pids(), stop.into());
    }

    /// The live pids of the tree.
    pub fn pids(&self) -> Vec<i32> {
        procs::session_tree(self.0)
    }

    /// True while a live process has the session id (descendants elsewhere not counted).
    pub fn session_alive(&self) -> bool {
        let sid = self.0;
        sid > 1 && !procs::live_where(|p| p.sid == sid).is_empty()
    }

    /// SIGKILLs the whole tree, again while anything is left (a process may fork while the
    /// previous round is being killed), at most `rounds` times.
    pub fn kill_all(&self, rounds: usize) {
        for _ in 0..rounds {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            signal_pids(&pids, Signal::SIGKILL);
        }
    }
}

/// SIGKILLs each of `pids` (those already gone are skipped).
pub fn kill_pids(pids: &[i32]) {
    signal_pids(pids, Signal::SIGKILL);
}

/// Sends `sig` to each pid (gone ones are skipped silently).
pub fn signal_pids(pids: &[i32], sig: Signal) {
    for &pid in pids {
        let _ = kill(Pid::from_raw(pid), sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_space_limit_is_held_only_where_the_system_enforces_it() {
        let limits = Limits {
            address_space_bytes: Some(1 << 30),
            ..Limits::default()
        };
        let held = Holder::new(&limits);
        if ADDRESS_SPACE_LIMIT {
            let holder = held.unwrap();
            let join = holder.join(false);
            assert!(join
                .rlimits
                .iter()
                .any(|r| r.resource as i64 == libc::RLIMIT_AS as i64 && r.value == 1 << 30));
        } else {
            match held {
                Err(PrepareError::Unsupported { field, errno, .. }) => {
                    assert_eq!((field, errno), ("limits.addressSpaceBytes", libc::ENOTSUP))
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
