//! Windows: a terminal's Job Object. Its limits come from the request; the command is put in
//! it suspended (the launch's [`Join`]); stopping is the job's, since Windows has no signals.

use windows_sys::Win32::Foundation::ERROR_NOT_SUPPORTED;

use super::PrepareError;
/// A started terminal's job (`sys::job`, where the Windows layer's own tests reach it).
pub use crate::sys::job::TerminalJob as Held;
use crate::sys::job::{Job, JobLimits, Unsupported};
use crate::sys::spawn::{Join, Leader, Limits};

/// Whether a terminal is a Job Object: always on Windows (`containmentInfo().jobObjects`).
pub const JOB_OBJECTS: bool = true;

/// The job of a terminal about to be spawned.
#[derive(Debug)]
pub struct Prepared {
    job: Job,
}

impl Prepared {
    /// Creates the job with the request's limits as job limits (`limits.processes`: active
    /// processes; `addressSpaceBytes`: committed memory per process; `cpuSeconds`: user time
    /// per process). `openFiles` and `fileSizeBytes` have no job limit: `ENOTSUP` naming
    /// the field.
    pub fn new(limits: &Limits) -> Result<Prepared, PrepareError> {
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
        Ok(Prepared { job })
    }

    /// The job, which the launch puts the child in before it runs.
    pub fn join(&self) -> Join<'_> {
        Join {
            job: Some(&self.job),
            ..Join::default()
        }
    }

    /// The job of the started `leader` (the pty-ness is its console input: `session` adds
    /// nothing on Windows).
    pub fn contain(self, leader: Leader, _session: bool) -> Held {
        Held::new(self.job, leader.pid, leader.console_input)
    }
}
