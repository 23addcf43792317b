//! The guardian: what kills a terminal's processes when Node goes away without running our
//! code (SIGKILL, a crash). `track` lists a terminal's process group and cgroup while anything
//! of it may run, `untrack` unlists it, `guardian_pid` says which process guards.
//!
//! - Unix (`unix/`): a small process of its own (`sh` exec'ing `awk`) that SIGKILLs every
//!   listed process group and cgroup when its input, a pipe only Node writes to, ends.
//! - Windows (`none.rs`): nothing to do: every terminal is a Job Object with
//!   `KILL_ON_JOB_CLOSE`, which the system closes, killing the tree, when Node goes away.

#[cfg(windows)]
mod none;
#[cfg(windows)]
pub use none::{guardian_pid, start, track, untrack};
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{guardian_pid, start, track, untrack};
