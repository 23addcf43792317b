//! Platforms without cgroups (macOS): none is ever available, so [`Cgroup`] and
//! [`PidsCgroup`] have no values (their `create` answers `None`) and every terminal is
//! contained by its process group and session alone. `limits.processes` is `RLIMIT_NPROC`
//! only (per user, and not enforced for root).

use std::ffi::CString;
use std::path::Path;

/// One terminal's cgroup: never exists here.
#[derive(Debug)]
pub enum Cgroup {}

/// A per-terminal process-count cgroup: never exists here.
#[derive(Debug)]
pub enum PidsCgroup {}

/// Where this process may create terminal cgroups: nowhere.
pub fn base() -> Option<&'static Path> {
    None
}

/// Where per-terminal process-count cgroups can be created: nowhere.
pub fn pids_base() -> Option<&'static Path> {
    None
}

impl Cgroup {
    /// Always `None`: no cgroups on this platform.
    pub fn create() -> Option<Cgroup> {
        None
    }

    /// The directory (no value of this type exists).
    pub fn dir(&self) -> &Path {
        match *self {}
    }

    /// `cgroup.procs` (no value of this type exists).
    pub fn procs_path(&self) -> Option<CString> {
        match *self {}
    }

    /// True while some process is in the cgroup (no value of this type exists).
    pub fn populated(&self) -> bool {
        match *self {}
    }

    /// SIGKILLs every process in the cgroup (no value of this type exists).
    pub fn kill_all(&self) -> bool {
        match *self {}
    }

    /// Pids of the processes in the cgroup (no value of this type exists).
    pub fn pids(&self) -> Vec<i32> {
        match *self {}
    }
}

impl PidsCgroup {
    /// Always `None`: no cgroups on this platform.
    pub fn create(_max: u64, _v2: Option<&Cgroup>) -> Option<PidsCgroup> {
        None
    }

    /// `cgroup.procs` (no value of this type exists).
    pub fn procs_path(&self) -> Option<CString> {
        match *self {}
    }

    /// Pids of the processes in it (no value of this type exists).
    pub fn pids(&self) -> Vec<i32> {
        match *self {}
    }
}
