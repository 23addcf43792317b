//! Windows: a terminal's Job Object. Its limits come from the request; the command is put in
//! it suspended (the launch's [`Join`]); stopping is the job's, since Windows has no signals.

use windows_sys::Win32::Foundation::ERROR_NOT_SUPPORTED;

use super::PrepareError;
/// A started terminal's job (`sys::job`, where the Windows layer's own tests reach it).
pub use crate::sys::job::TerminalJob as Held;
use crate::sys::job::{Job, JobLimits, Unsupported};
use crate::sys::signals::Stop;
use crate::sys::spawn::{Join, Leader, Limits};

/// Whether a terminal is a Job Object: always on Windows (`containmentInfo().jobObjects`).
pub const JOB_OBJECTS: bool = true;

/// The job of a terminal about to be spawned.
#[derive(Debug)]
pub struct Holder {
    job: Job,
}

impl Holder {
    /// Creates the job with the request's limits as job limits (`limits.processes`: active
    /// processes; `addressSpaceBytes`: committed memory per process; `cpuSeconds`: user time
    /// per process). `openFiles` and `fileSizeBytes` have no job limit: `ENOTSUP` naming
    /// the field.
    pub fn new(limits: &Limits) -> Result<Holder, PrepareError> {
        let job_limits = JobLimits::from_request(
            limits.cpu_seconds,
            limits.address_space_bytes,
            limits.open_files,
            limits.file_size_bytes,
            limits.processes,
        )
        .map_err(|Unsupported(field)| PrepareError::Unsupported {
            field,
            errno: ERROR_NOT_SUPPORTED as i32,
            why: "a Windows job has no such limit",
        })?;
        let job = Job::create(&job_limits).map_err(PrepareError::Os)?;
        Ok(Holder { job })
    }

    /// The job, which the launch puts the child in before it runs. `_own_session` asks
    /// nothing more here: the child has a console of its own already (`sys::spawn`'s
    /// `windows.rs`), and Windows has no sessions.
    pub fn join(&self, _own_session: bool) -> Join<'_> {
        Join { job: &self.job }
    }

    /// The job of the started `leader` (the pty-ness is its console input: `session` adds
    /// nothing on Windows).
    pub fn contain(self, leader: Leader, _session: bool) -> Held {
        Held::new(self.job, leader.pid, leader.console_input)
    }
}

/// Why there is no [`ProcessGroup`] or [`SessionTree`] here: Windows has neither (a
/// terminal's Job Object holds its tree, and `terminal.kill()` ends all of it). The binding
/// reports it as `ENOTSUP`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoProcessGroups;

/// A process group: none exist on Windows, so none is ever made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessGroup {}

impl ProcessGroup {
    /// Always refused: Windows has no process groups.
    pub fn new(_pgid: i32) -> Result<Self, NoProcessGroups> {
        Err(NoProcessGroups)
    }

    /// Never reached (no group exists).
    pub fn is_callers(&self) -> bool {
        match *self {}
    }

    /// Never reached (no group exists).
    pub fn signal(&self, _stop: Stop) -> bool {
        match *self {}
    }

    /// Never reached (no group exists).
    pub fn any_alive(&self) -> bool {
        match *self {}
    }
}

/// A session's tree: Windows has no sessions, so none is ever made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionTree {}

impl SessionTree {
    /// Always refused: Windows has no sessions.
    pub fn new(_sid: i32) -> Result<Self, NoProcessGroups> {
        Err(NoProcessGroups)
    }

    /// Never reached (no session exists).
    pub fn pids(&self) -> Vec<i32> {
        match *self {}
    }

    /// Never reached (no session exists).
    pub fn signal(&self, _stop: Stop) {
        match *self {}
    }

    /// Never reached (no session exists).
    pub fn kill_all(&self, _rounds: usize) {
        match *self {}
    }
}

/// Nothing: no process is found by its environment here (`procs::with_environment_entry` is
/// empty on Windows); a terminal's Job Object ends its whole tree.
pub fn kill_pids(_pids: &[i32]) {}
