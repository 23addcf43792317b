//! How a launch fails: the child-side [`Stage`] that failed, with its errno, carried inside an
//! `io::Error` as a [`LaunchError`]. Decoded once, by the caller of the launch.

use std::io;

/// The step of the child's setup that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// New process group / session / controlling terminal.
    Session,
    /// `setrlimit`.
    Rlimit,
    /// `dup2` of stdio.
    Stdio,
    /// Changing directory.
    Cwd,
    /// `execve`.
    Exec,
    /// Starting the command from the intermediate process of a namespace launch (Linux).
    Start,
    /// The parent exited before the parent-death signal was armed (Linux).
    ParentGone,
    /// A step of the caller ([`super::ChildSteps`]) failed with this code.
    Step(i32),
}

// The codes a launch's child reports its failed stage under (0: none), the same for every
// Unix launcher, decoded once by [`Stage::from_code`].
pub(super) const STAGE_SESSION: i32 = 1;
pub(super) const STAGE_RLIMIT: i32 = 2;
pub(super) const STAGE_STDIO: i32 = 3;
pub(super) const STAGE_CWD: i32 = 4;
pub(super) const STAGE_EXEC: i32 = 5;
pub(super) const STAGE_PARENT_GONE: i32 = 6;
pub(super) const STAGE_START: i32 = 7;
/// A caller's step reports its code as this plus the code.
pub(super) const STAGE_STEP: i32 = 100;

impl Stage {
    /// The stage a child reported as `code` (nonzero).
    pub(super) fn from_code(code: i32) -> Stage {
        match code {
            STAGE_SESSION => Stage::Session,
            STAGE_RLIMIT => Stage::Rlimit,
            STAGE_STDIO => Stage::Stdio,
            STAGE_CWD => Stage::Cwd,
            STAGE_PARENT_GONE => Stage::ParentGone,
            STAGE_EXEC => Stage::Exec,
            STAGE_START => Stage::Start,
            s => Stage::Step(s - STAGE_STEP),
        }
    }

    fn what(self) -> &'static str {
        match self {
            Stage::Session => "setting up the session",
            Stage::Rlimit => "applying resource limits",
            Stage::Stdio => "setting up stdio",
            Stage::Cwd => "changing directory",
            Stage::ParentGone => "starting (the parent exited)",
            Stage::Exec => "executing",
            Stage::Start => "starting the command in its namespaces",
            Stage::Step(_) => "entering the sandbox",
        }
    }
}

/// A child-side failure: which step failed, with its errno.
#[derive(Debug)]
pub struct LaunchError {
    /// errno reported by the child.
    pub errno: i32,
    /// The step that failed.
    pub what: &'static str,
    /// The error itself (the platform launches build it directly).
    pub(super) err: io::Error,
    /// The step that failed.
    pub stage: Stage,
}

impl LaunchError {
    /// The error of a child that failed at `stage` with `errno` (0: unknown, reported as EIO).
    pub(super) fn io_error(stage: Stage, errno: i32) -> io::Error {
        let err = io::Error::from_raw_os_error(if errno == 0 { libc::EIO } else { errno });
        io::Error::new(
            err.kind(),
            LaunchError {
                errno,
                what: stage.what(),
                err,
                stage,
            },
        )
    }
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.err)
    }
}

/// The child-side failure of a launch error, if it is one.
fn launch_failure(e: &io::Error) -> Option<&LaunchError> {
    e.get_ref()?.downcast_ref::<LaunchError>()
}

/// The code a higher layer's step ([`Stage::Step`]) failed the launch with, if it did.
pub fn failed_step(e: &io::Error) -> Option<i32> {
    match launch_failure(e)?.stage {
        Stage::Step(code) => Some(code),
        _ => None,
    }
}

/// The errno the child reported, for a child-side failure.
pub fn child_errno(e: &io::Error) -> Option<i32> {
    launch_failure(e).map(|f| f.errno)
}

impl std::error::Error for LaunchError {}

/// The errno of a launch failure, wherever it came from (tests).
#[cfg(test)]
pub fn launch_errno(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<LaunchError>())
            .map(|l| l.errno)
    })
}
