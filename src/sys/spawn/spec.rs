//! What a launch is made of: the [`LaunchSpec`] prepared in the parent, the higher layers'
//! steps it carries ([`ChildStep`], [`Isolation`]) and what it returns ([`Launched`]).

#[cfg(unix)]
use std::ffi::CString;
use std::marker::PhantomData;
#[cfg(unix)]
use std::os::fd::RawFd;

#[cfg(unix)]
/// How the child relates to sessions and process groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// Leader of a new process group in the caller's session.
    NewGroup,
    /// Leader of a new session; with `Some(fd)`, that terminal becomes its controlling tty.
    NewSession(Option<RawFd>),
}

#[cfg(unix)]
/// A resource limit applied in the child (soft and hard alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    /// `RLIMIT_*` resource.
    pub resource: i32,
    /// The limit.
    pub value: u64,
}

#[cfg(unix)]
/// A step of a higher layer run in the child: raw system calls only, on `arg` (valid until
/// the launch returns). `Err((code, errno))` fails the launch with [`Stage::Step`]`(code)`.
#[derive(Debug, Clone, Copy)]
// Only Linux's launch runs steps (the sandbox is Linux only).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct ChildStep {
    /// The step.
    pub run: unsafe fn(arg: *const libc::c_void) -> Result<(), (i32, i32)>,
    /// Its argument.
    pub arg: *const libc::c_void,
}

#[cfg(unix)]
/// New namespaces for the command (Linux): `enter` runs in an intermediate process C, in the
/// command's working directory, with a stack for the namespace's init; it makes the
/// namespaces, starts their init as a child of the launcher (writing its pid to `init_pid`
/// as soon as it exists) and leaves C in the working directory the command must get. C then
/// starts the command and exits.
#[derive(Debug, Clone, Copy)]
// Only Linux's launch makes namespaces.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Isolation {
    /// The step.
    #[allow(clippy::type_complexity)]
    pub enter: unsafe fn(
        arg: *const libc::c_void,
        init_stack: *mut u8,
        init_pid: &mut libc::pid_t,
    ) -> Result<(), (i32, i32)>,
    /// Its argument.
    pub arg: *const libc::c_void,
}

#[cfg(unix)]
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
    /// Group/session setup.
    pub session: SessionMode,
    /// Resource limits.
    pub rlimits: Vec<Rlimit>,
    /// Signal sent to the child when the launching thread dies (`None`: none), where the
    /// platform has one ([`PARENT_DEATH_SIGNAL`]; macOS has none and ignores it).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub parent_death_signal: Option<i32>,
    /// `cgroup.procs` files the child moves itself into (best effort), where the platform
    /// has cgroups.
    pub cgroup_procs: Vec<CString>,
    /// Namespaces to start the command in (Linux; elsewhere refused with `ENOTSUP`).
    pub isolate: Option<Isolation>,
    /// The last step before `execve` (Linux; elsewhere refused with `ENOTSUP`).
    pub confine: Option<ChildStep>,
}

#[cfg(unix)]
// SAFETY: the raw pointers of the steps point to data the launching caller keeps alive until
// the launch returned; the launcher thread only passes them to the steps.
unsafe impl Send for LaunchSpec {}

#[cfg(unix)]
/// A started child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launched {
    /// The command's pid (in our PID namespace).
    pub pid: i32,
    /// With a sandbox's PID namespace: the namespace's init, a child of ours that the caller
    /// must kill and reap when the terminal is done.
    pub init_pid: Option<i32>,
}

/// What a terminal's child is put into before it runs a single instruction of the command:
/// on Unix its cgroups (the `cgroup.procs` files it moves itself into; none where the system
/// has no cgroups), on Windows the terminal's Job Object (the child is created suspended,
/// assigned, then resumed). Made by the containment layer, consumed by the launch.
#[derive(Debug, Default)]
pub struct Join<'a> {
    /// `cgroup.procs` files, joined best effort.
    #[cfg(unix)]
    pub cgroup_procs: Vec<CString>,
    /// The job the child joins (always one for a terminal).
    #[cfg(windows)]
    pub job: Option<&'a crate::sys::job::Job>,
    /// Ties the borrow on platforms whose join holds no reference.
    pub _holder: PhantomData<&'a ()>,
}

/// A terminal's started leader, as the containment layer takes it.
#[derive(Debug)]
pub struct Leader {
    /// Its process id (on Unix also its process group id, and on a pty its session id).
    pub pid: i32,
    /// On Windows, a pty terminal's console input (a duplicate of our end): the graceful
    /// stop writes Ctrl+C (ETX) there, which the pseudo console turns into `CTRL_C_EVENT`
    /// for every process attached to it.
    #[cfg(windows)]
    pub console_input: Option<std::os::windows::io::OwnedHandle>,
}
