//! Starting a process without forking Node.
//!
//! The interface: a [`LaunchSpec`] prepared in the parent (every string a C string, every
//! descriptor open) and [`launch`], which returns the child's pid once the child has exec'd
//! (or the error of the step that failed in the child). What the child does before `execve`,
//! in this order: default signal dispositions and an empty mask, a new process group or
//! session (with a controlling terminal), the parent-death signal, resource limits, joining
//! cgroups, stdio, the working directory, and last the caller's [`ChildStep`] (the sandbox's
//! confinement, see [`crate::sandbox`]). With an [`Isolation`] (Linux), the launch goes
//! through an intermediate process that runs it (new namespaces and their init, which
//! [`launch_with`] also returns) before starting the command. This layer knows no policy:
//! the steps are function pointers of a higher layer, and their failures come back as
//! [`Stage::Step`] codes that layer decodes.
//!
//! How is per platform (`linux.rs`: `clone(CLONE_VM | CLONE_VFORK)`; `macos.rs`:
//! `posix_spawn`, with a `fork` first for a controlling terminal or resource limits, and
//! neither a parent-death signal nor cgroups); the launcher thread and the error type are
//! shared. All launches happen on a dedicated thread that lives as long as the process: Linux
//! sends the parent-death signal when the *thread* that created the child exits.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "linux")]
pub use linux::{default_signals, errno};
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
// macOS launches through it; Linux compiles it for its unit tests only (glibc has the same
// calls), so the posix_spawn path runs in the Linux CI too.
#[cfg(any(target_os = "macos", all(test, target_os = "linux")))]
mod posix_spawn;

/// Whether [`LaunchSpec::parent_death_signal`] is applied: Linux's `PR_SET_PDEATHSIG`; macOS
/// has no such signal.
pub const PARENT_DEATH_SIGNAL: bool = imp::PARENT_DEATH_SIGNAL;
/// Whether an `RLIMIT_AS` limit is accepted and enforced; macOS accepts it but does not
/// enforce it, so its launcher refuses it with `ENOTSUP`.
pub const ADDRESS_SPACE_LIMIT: bool = imp::ADDRESS_SPACE_LIMIT;

/// How the child relates to sessions and process groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// Leader of a new process group in the caller's session.
    NewGroup,
    /// Leader of a new session; with `Some(fd)`, that terminal becomes its controlling tty.
    NewSession(Option<RawFd>),
}

/// A resource limit applied in the child (soft and hard alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    /// `RLIMIT_*` resource.
    pub resource: i32,
    /// The limit.
    pub value: u64,
}

/// A step of a higher layer run in the child: raw system calls only, on `arg` (valid until
/// the launch returns). `Err((code, errno))` fails the launch with [`Stage::Step`]`(code)`.
#[derive(Debug, Clone, Copy)]
pub struct ChildStep {
    /// The step.
    pub run: unsafe fn(arg: *const libc::c_void) -> Result<(), (i32, i32)>,
    /// Its argument.
    pub arg: *const libc::c_void,
}

/// New namespaces for the command (Linux): `enter` runs in an intermediate process C, in the
/// command's working directory, with a stack for the namespace's init; it makes the
/// namespaces, starts their init as a child of the launcher (writing its pid to `init_pid`
/// as soon as it exists) and leaves C in the working directory the command must get. C then
/// starts the command and exits.
#[derive(Debug, Clone, Copy)]
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

/// Converts an OS string to a C string (callers have already rejected NUL bytes).
pub fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Builds `NAME=value` entries.
pub fn envp(env: &[(OsString, OsString)]) -> io::Result<Vec<CString>> {
    env.iter()
        .map(|(k, v)| {
            let mut b = Vec::with_capacity(k.len() + v.len() + 1);
            b.extend_from_slice(k.as_bytes());
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
        })
        .collect()
}

/// Converts a path to a C string.
pub fn cpath(p: &Path) -> io::Result<CString> {
    cstring(p.as_os_str())
}

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
    /// Starting the command from the intermediate process of an [`Isolation`].
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Start,
    /// The parent exited before the parent-death signal was armed (Linux only).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    ParentGone,
    /// A step of the caller ([`Isolation`], [`ChildStep`]) failed with this code.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Step(i32),
}

impl Stage {
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
    err: io::Error,
    /// The step that failed.
    pub stage: Stage,
}

impl LaunchError {
    /// The error of a child that failed at `stage` with `errno` (0: unknown, reported as EIO).
    fn io_error(stage: Stage, errno: i32) -> io::Error {
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
pub fn launch_failure(e: &io::Error) -> Option<&LaunchError> {
    e.get_ref()?.downcast_ref::<LaunchError>()
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

type Job = (LaunchSpec, mpsc::SyncSender<io::Result<Launched>>);

/// Starts `spec` on the launcher thread and returns the child's pid.
pub fn launch(spec: LaunchSpec) -> io::Result<i32> {
    launch_with(spec).map(|l| l.pid)
}

/// Starts the launcher thread.
fn launcher() -> Option<Mutex<mpsc::Sender<Job>>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("acp-terminal-launcher".into())
        .spawn(move || {
            for (spec, reply) in rx {
                let _ = reply.send(imp::launch_here(&spec));
            }
        })
        .ok()?;
    Some(Mutex::new(tx))
}

/// Starts `spec` on the launcher thread and returns the child (and a namespace's init).
pub fn launch_with(spec: LaunchSpec) -> io::Result<Launched> {
    static LAUNCHER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    let tx = LAUNCHER
        .get_or_init(launcher)
        .as_ref()
        .ok_or_else(|| io::Error::other("cannot start the acp-terminal launcher thread"))?;
    let (reply_tx, reply_rx) = mpsc::sync_channel(1);
    tx.lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((spec, reply_tx))
        .map_err(|_| io::Error::other("the launcher thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| io::Error::other("the launcher thread is gone"))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, OwnedFd};

    fn root() -> OwnedFd {
        crate::sys::cwd::open_dir(Path::new("/")).unwrap()
    }

    fn spec(program: &str, args: &[&str], stdout: RawFd, cwd: &OwnedFd) -> LaunchSpec {
        let null = std::fs::File::open("/dev/null").unwrap();
        let fd = null.as_raw_fd();
        std::mem::forget(null);
        LaunchSpec {
            program: CString::new(program).unwrap(),
            argv: std::iter::once(program)
                .chain(args.iter().copied())
                .map(|s| CString::new(s).unwrap())
                .collect(),
            envp: vec![CString::new("PATH=/usr/bin:/bin").unwrap()],
            cwd: cwd.as_raw_fd(),
            stdio: [fd, stdout, stdout],
            session: SessionMode::NewGroup,
            rlimits: vec![],
            parent_death_signal: None,
            cgroup_procs: Vec::new(),
            isolate: None,
            confine: None,
        }
    }

    /// Launches, waits, then reads everything the child wrote (the write end is closed first).
    fn run(s: LaunchSpec, out: std::fs::File, w: std::fs::File) -> (i32, String) {
        use std::io::Read;
        let pid = launch(s).unwrap();
        drop(w);
        let mut status = 0;
        // SAFETY: reaping our own child into a local.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let mut text = String::new();
        let mut out = out;
        out.read_to_string(&mut text).unwrap();
        (status, text)
    }

    fn pipe() -> (std::fs::File, std::fs::File) {
        let (r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
        (std::fs::File::from(r), std::fs::File::from(w))
    }

    #[test]
    // `RLIMIT_*` are u32 on glibc and i32 on macOS and musl: the cast is needed on one only.
    #[allow(clippy::unnecessary_cast)]
    fn runs_in_its_own_group_with_limits_default_signals_and_the_cwd_fd() {
        let (r, w) = pipe();
        let tmp = std::env::temp_dir();
        let dir = crate::sys::cwd::open_dir(&tmp).unwrap();
        let mut s = spec(
            "/bin/sh",
            &[
                "-c",
                if cfg!(target_os = "linux") {
                    "ulimit -n; pwd -P; cat /proc/self/status | grep -E '^(SigIgn|SigBlk)'"
                } else {
                    "ulimit -n; pwd -P"
                },
            ],
            w.as_raw_fd(),
            &dir,
        );
        s.rlimits.push(Rlimit {
            resource: libc::RLIMIT_NOFILE as i32,
            value: 77,
        });
        let (status, text) = run(s, r, w);
        assert_eq!(status, 0);
        let real = std::fs::canonicalize(&tmp).unwrap();
        assert!(
            text.starts_with(&format!("77\n{}\n", real.display())),
            "{text}"
        );
        // Node ignores SIGPIPE; the child starts with every signal at its default, unblocked.
        if cfg!(target_os = "linux") {
            assert!(text.contains("SigIgn:\t0000000000000000"), "{text}");
            assert!(text.contains("SigBlk:\t0000000000000000"), "{text}");
        }
    }

    #[test]
    fn reports_exec_and_cwd_failures() {
        let root = root();
        let s = spec("/no/such/program", &[], 1, &root);
        let e = launch(s).unwrap_err();
        assert_eq!(launch_errno(&e), Some(libc::ENOENT));
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut s = spec("/bin/true", &[], 1, &root);
        s.cwd = file.as_raw_fd();
        let e = launch(s).unwrap_err();
        assert_eq!(launch_errno(&e), Some(libc::ENOTDIR));
        assert!(e.to_string().contains("changing directory"), "{e}");
    }
}
