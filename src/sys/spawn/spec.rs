//! What a Unix launch is made of: the [`LaunchSpec`] prepared in the parent (every string a C
//! string, every descriptor open) for the launcher thread, and what it returns
//! ([`Launched`]). The steps it carries are those of `steps/`.

use std::ffi::CString;
use std::os::fd::RawFd;

use super::steps::rlimits::Rlimit;
use super::steps::session::SessionMode;
use super::ChildSteps;

/// Everything the child needs, prepared in the parent.
#[derive(Debug)]
pub struct LaunchSpec {
    /// Absolute path of the executable.
    pub program: CString,
    /// argv, argv[0] included.
    pub argv: Vec<CString>,
    /// Complete environment as `NAME=value`.
    pub envp: Vec<CString>,
    /// Working directory, as an open directory descriptor the child `fchdir`s to: the
    /// directory that was checked, whatever its path names by then.
    pub cwd: RawFd,
    /// Descriptors that become the child's 0, 1 and 2.
    pub stdio: [RawFd; 3],
    /// The session step: a new group or session.
    pub session: SessionMode,
    /// The resource-limits step.
    pub rlimits: Vec<Rlimit>,
    /// The cgroup step: `cgroup.procs` files the child moves itself into (none where the
    /// system has no cgroups).
    pub cgroup_procs: Vec<CString>,
    /// A higher layer's steps (a sandbox's; Linux only, none is ever made elsewhere).
    pub steps: Option<ChildSteps>,
}

// SAFETY: the raw pointers of the steps point to data the launching caller keeps alive until
// the launch returned; the launcher thread only passes them to the steps.
unsafe impl Send for LaunchSpec {}

/// A started child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launched {
    /// The command's pid (in our PID namespace).
    pub pid: i32,
    /// With a sandbox's PID namespace: the namespace's init, a child of ours that the caller
    /// must kill and reap when the terminal is done.
    pub init_pid: Option<i32>,
}
