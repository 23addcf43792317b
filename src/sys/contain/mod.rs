//! A terminal's containment, the platform's part: what holds every process of the command
//! and how they are stopped. A [`Holder`] exists before the launch (its [`Holder::join`]
//! is what the child is put into before it runs); [`Holder::contain`] takes the started
//! [`crate::sys::spawn::Leader`] and gives the [`Held`] tree, which the core's
//! `containment` signals with a platform-neutral [`crate::sys::signals::Stop`].
//!
//! - Unix (`unix.rs`): the leader's process group, on a pty its session, and its cgroups
//!   where the system has them (a pids cgroup for `limits.processes`); `Stop` is the signal
//!   of that name. Resource limits are the command's rlimits (the launch's rlimits step, from
//!   [`Holder::join`]); `RLIMIT_AS` where the system does not enforce it (macOS) is `ENOTSUP`.
//! - Windows (`windows.rs`): the terminal's Job Object ([`crate::sys::job`]), with the
//!   request's limits as job limits (`ENOTSUP` for those a job has none of). `Term` is
//!   Ctrl+C written to a pty's console input, and on pipes (no graceful stop there: Node's
//!   own kill is `TerminateProcess`) `TerminateJobObject`; `Kill` is `TerminateJobObject`;
//!   `Continue` is nothing. [`Held::stopped_by`] says which `Stop` ended the job, for the
//!   exit status (`signal` `SIGTERM` or `SIGKILL`, as Node reports a killed child there).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{kill_pids, Held, Holder, ProcessGroup, SessionTree, JOB_OBJECTS};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{kill_pids, Held, Holder, ProcessGroup, SessionTree, JOB_OBJECTS};

/// Why a terminal's containment could not be prepared.
#[derive(Debug)]
pub enum PrepareError {
    /// A requested limit the platform's containment cannot enforce.
    Unsupported {
        /// The request field (`limits.openFiles`).
        field: &'static str,
        /// The OS error code reported for it (named by [`crate::sys::errname`]: `ENOTSUP`).
        errno: i32,
        /// Why, in a few words.
        why: &'static str,
    },
    /// The system refused to make the containment.
    // Unix makes nothing that can fail here (its cgroups are best effort).
    #[cfg_attr(unix, allow(dead_code))]
    Os(std::io::Error),
}
