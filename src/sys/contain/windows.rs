//! Windows: a terminal's Job Object. Its limits come from the request; the command is put in
//! it suspended (the launch's [`Join`]); stopping is the job's, since Windows has no signals.

use std::fs::File;
use std::io::Write;
use std::os::windows::io::OwnedHandle;
use std::sync::atomic::{AtomicU8, Ordering};

use windows_sys::Win32::Foundation::ERROR_NOT_SUPPORTED;

use super::PrepareError;
use crate::sys::job::{Job, JobLimits, Unsupported};
use crate::sys::signals::Stop;
use crate::sys::spawn::{Join, Leader, Limits};

/// Whether a terminal is a Job Object: always on Windows (`containmentInfo().jobObjects`).
pub const JOB_OBJECTS: bool = true;

/// The exit code `TerminateJobObject` gives every process it ends: 1, as libuv's (Node's)
/// kill on Windows (`TerminateProcess(process, 1)`).
const TERMINATED_EXIT_CODE: u32 = 1;

/// Ctrl+C as console input: a pseudo console turns it into `CTRL_C_EVENT` for every process
/// attached to it.
const ETX: u8 = 0x03;

/// `stopped_by`'s states.
const NOT_STOPPED: u8 = 0;
const STOPPED_BY_TERM: u8 = 1;
const STOPPED_BY_KILL: u8 = 2;

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

/// A started terminal's job: every process of the command, detached ones included.
/// Dropping it closes the job's handle, and `KILL_ON_JOB_CLOSE` ends whatever is left.
#[derive(Debug)]
pub struct Held {
    job: Job,
    /// The leader's pid (what `pgid` answers: there are no process groups).
    pid: i32,
    /// A pty terminal's console input, where `Term` writes Ctrl+C.
    console_input: Option<File>,
    /// Which `Stop` terminated the job ([`NOT_STOPPED`] until one did).
    stopped_by: AtomicU8,
}

impl Held {
    /// The job `job` of leader `pid`; `console_input` is a pty terminal's (`None` on pipes).
    pub fn new(job: Job, pid: i32, console_input: Option<OwnedHandle>) -> Held {
        Held {
            job,
            pid,
            console_input: console_input.map(File::from),
            stopped_by: AtomicU8::new(NOT_STOPPED),
        }
    }

    /// The leader's pid (Windows has no process groups; the job holds the tree).
    pub fn pgid(&self) -> i32 {
        self.pid
    }

    /// `Term`: Ctrl+C on a pty's console; on pipes, which have no graceful stop on Windows,
    /// the job is terminated. `Kill`: the job is terminated. `Continue`: nothing (there is
    /// no stopped state to leave).
    pub fn signal(&self, stop: Stop) {
        match (stop, &self.console_input) {
            (Stop::Continue, _) => {}
            (Stop::Term, Some(input)) => {
                if !self.alive() {
                    return;
                }
                // A command that ends on this Ctrl+C was ended by the terminal's kill: it
                // reports SIGTERM, as a TerminateJobObject would.
                let _ = self.stopped_by.compare_exchange(
                    NOT_STOPPED,
                    STOPPED_BY_TERM,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                let mut input: &File = input;
                // Best effort, like a signal to a process that is gone: the escalation
                // terminates the job after the grace whatever happened here.
                let _ = input.write_all(&[ETX]);
            }
            (Stop::Term, None) | (Stop::Kill, _) => self.terminate(stop),
        }
    }

    /// `TerminateJobObject`, remembered as `stop`'s doing when something was alive (the
    /// first such stop only: a later `Kill` finds the job already ended by `Term`).
    fn terminate(&self, stop: Stop) {
        if !self.alive() {
            return;
        }
        let state = if stop == Stop::Kill {
            STOPPED_BY_KILL
        } else {
            STOPPED_BY_TERM
        };
        // Recorded before the termination, so whoever sees the leader's exit sees it too.
        let _ = self.stopped_by.compare_exchange(
            NOT_STOPPED,
            state,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        let _ = self.job.terminate(TERMINATED_EXIT_CODE);
    }

    /// True while the job has an active process.
    pub fn alive(&self) -> bool {
        self.job.counts().is_ok_and(|c| c.active > 0)
    }

    /// The `Stop` that ended the job, if one did: `TerminateJobObject`, or on a pty the
    /// Ctrl+C of `Term`.
    pub fn stopped_by(&self) -> Option<Stop> {
        match self.stopped_by.load(Ordering::Acquire) {
            STOPPED_BY_TERM => Some(Stop::Term),
            STOPPED_BY_KILL => Some(Stop::Kill),
            _ => None,
        }
    }
}
