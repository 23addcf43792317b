//! The steps a launch puts the child through before it runs the command, one concern per
//! file, as process-wrap composes its wrappers; each platform's launcher (`linux.rs`,
//! `macos.rs`, `windows.rs`) applies the ones it has, in this order:
//!
//! | step | file | Linux | macOS | Windows |
//! |---|---|---|---|---|
//! | a new process group, or a session (a pty's, with its controlling terminal) | `session.rs` | in the child | a `posix_spawn` attribute, or in the forked child | none: a console of its own |
//! | the parent-death signal | `parent_death.rs` | in the child | none (the guardian) | none (the job's `KILL_ON_JOB_CLOSE`) |
//! | resource limits | `rlimits.rs` | in the child | in the forked child | none: the job's limits |
//! | the terminal's cgroups | `cgroup.rs` | in the child (a sandbox's: in its intermediate process) | none (no cgroups) | none |
//! | the terminal's Job Object | `job.rs` | none | none | joined while suspended |
//!
//! What a step applies comes from the containment (`sys::contain::Holder::join`: the
//! session, the rlimits, the cgroups, or the job), so each value exists only on the platforms
//! whose launch reads it. The child's side of every step is raw system calls only, on memory
//! the parent prepared (it runs between `clone`/`fork` and `execve`).

#[cfg(target_os = "linux")]
pub mod cgroup;
#[cfg(windows)]
pub mod job;
#[cfg(target_os = "linux")]
pub mod parent_death;
#[cfg(unix)]
pub mod rlimits;
#[cfg(unix)]
pub mod session;
