//! Starting a process without forking Node.
//!
//! The interface, for every caller (a terminal, the guardian, the sandbox's probe): a
//! [`Command`] on the [`Ends`] that `open_ends` made, given to `spawn` (Unix also has
//! `spawn_detached`, without the parent-death signal), which returns the [`Started`] child and
//! its [`Leader`] once the child has exec'd (or the error of the step that failed in the
//! child; [`failed_step`] and [`child_errno`] decode it). The command's [`Join`] (made by the
//! containment, `sys::contain::Holder::join`) holds the values of the platform's steps
//! (`steps/`, one concern per file): on Unix its session, rlimits and cgroups, on Windows its
//! job. On Unix it becomes a `LaunchSpec` prepared in the parent (every string a C string,
//! every descriptor open) for the launcher thread's private `launch`. What the child does
//! before `execve`, in this order: default signal dispositions and an empty mask, the session
//! step (a new process group or session, with a controlling terminal), the parent-death
//! signal, the rlimits, the cgroups, stdio, the working directory, and last the caller's
//! [`ChildSteps`] confinement (e.g. a sandbox's). With its isolation (Linux), the launch goes
//! through an intermediate process that runs it (new namespaces and their init, returned as
//! [`Started::init_pid`]) before starting the command. This layer knows no policy: the
//! steps are function pointers of a higher layer, and their failures come back as
//! [`failed_step`] codes that layer decodes.
//!
//! How is per platform (`linux.rs`: `clone(CLONE_VM | CLONE_VFORK)`; `macos.rs`:
//! `posix_spawn`, with a `fork` first for a controlling terminal or resource limits, and
//! neither a parent-death signal nor cgroups; `windows.rs`: `CreateProcessW` suspended, then
//! the job step); the launcher thread and the error type are shared by the Unix launchers.
//! All Unix launches happen on a dedicated thread that lives as long as the process: Linux
//! sends the parent-death signal when the *thread* that created the child exits.

#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::sync::mpsc;
#[cfg(unix)]
use std::sync::{Mutex, OnceLock};

mod command;
#[cfg(unix)]
mod cstr;
#[cfg(unix)]
mod error;
#[cfg(unix)]
mod spec;
mod steps;

pub use command::{Argv, Command, Io, Leader, Limits, Lookup, Started};
#[cfg(unix)]
pub use cstr::{cpath, cstring, envp};
#[cfg(all(test, unix))]
pub use error::launch_errno;
#[cfg(unix)]
pub use error::{child_errno, failed_step, LaunchError, Stage};
#[cfg(unix)]
use spec::{LaunchSpec, Launched};
#[cfg(unix)]
pub use steps::rlimits::{rlimits, Rlimit};

// A terminal's launch (its ends, the containment's join, then the launch) and the rules a
// request is planned by.
#[cfg(unix)]
#[path = "rules_unix.rs"]
pub mod rules;
#[cfg(unix)]
mod start_unix;
#[cfg(unix)]
pub use start_unix::{open_ends, spawn, spawn_detached, Ends, Join};
#[cfg(windows)]
#[path = "rules_windows.rs"]
pub mod rules;
#[cfg(windows)]
mod start_windows;
#[cfg(windows)]
pub use start_windows::{child_errno, failed_step, open_ends, spawn, ChildSteps, Ends, Join};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "linux")]
pub use linux::{default_signals, errno, ChildStep, ChildSteps, Isolation};
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(target_os = "macos")]
pub use macos::ChildSteps;
// macOS launches through it; Linux compiles it for its unit tests only (glibc has the same
// calls), so the posix_spawn path runs in the Linux CI too.
#[cfg(any(target_os = "macos", all(test, target_os = "linux")))]
mod posix_spawn;
// Windows' command-line, lookup and environment rules: pure, so every platform's unit tests
// run them.
#[cfg(any(windows, test))]
pub mod wincmd;
#[cfg(windows)]
mod windows;
#[cfg(all(windows, test))]
pub use windows::{launch as windows_launch, WinChild, WinLaunch, WinStdio};

/// Whether a terminal's command dies with Node through a parent-death signal (Linux's
/// `PR_SET_PDEATHSIG`). macOS has none (the guardian covers it); Windows has none either
/// (the job's `KILL_ON_JOB_CLOSE` covers it).
#[cfg(unix)]
pub const PARENT_DEATH_SIGNAL: bool = imp::PARENT_DEATH_SIGNAL;
/// Whether a terminal's command dies with Node through a parent-death signal: Windows has
/// none (the job's `KILL_ON_JOB_CLOSE` covers it).
#[cfg(windows)]
pub const PARENT_DEATH_SIGNAL: bool = false;
/// Whether an address-space limit is accepted and enforced; macOS accepts `RLIMIT_AS` but
/// does not enforce it, so its launcher refuses it with `ENOTSUP`.
#[cfg(unix)]
pub const ADDRESS_SPACE_LIMIT: bool = imp::ADDRESS_SPACE_LIMIT;
/// Whether an address-space limit is accepted and enforced: Windows' job limits each
/// process's committed memory.
#[cfg(windows)]
pub const ADDRESS_SPACE_LIMIT: bool = true;

/// A launch for the launcher thread: the spec, the parent-death signal (the step Linux has),
/// where to reply.
#[cfg(unix)]
type Job = (
    LaunchSpec,
    Option<i32>,
    mpsc::SyncSender<io::Result<Launched>>,
);

#[cfg(unix)]
/// Starts the launcher thread.
fn launcher() -> Option<Mutex<mpsc::Sender<Job>>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("acp-terminal-launcher".into())
        .spawn(move || {
            for (spec, parent_death, reply) in rx {
                let _ = reply.send(imp::launch_here(&spec, parent_death));
            }
        })
        .ok()?;
    Some(Mutex::new(tx))
}

#[cfg(unix)]
/// Starts `spec` on the launcher thread, with `parent_death` as its parent-death signal where
/// the platform has one, and returns the child (and a namespace's init).
fn launch(spec: LaunchSpec, parent_death: Option<i32>) -> io::Result<Launched> {
    static LAUNCHER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    let tx = LAUNCHER
        .get_or_init(launcher)
        .as_ref()
        .ok_or_else(|| io::Error::other("cannot start the acp-terminal launcher thread"))?;
    let (reply_tx, reply_rx) = mpsc::sync_channel(1);
    tx.lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((spec, parent_death, reply_tx))
        .map_err(|_| io::Error::other("the launcher thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| io::Error::other("the launcher thread is gone"))?
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::fd::RawFd;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::path::Path;

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
            session: steps::session::SessionMode::NewGroup,
            rlimits: vec![],
            cgroup_procs: Vec::new(),
            steps: None,
        }
    }

    /// Launches, waits, then reads everything the child wrote (the write end is closed first).
    fn run(s: LaunchSpec, out: std::fs::File, w: std::fs::File) -> (i32, String) {
        use std::io::Read;
        let pid = launch(s, None).unwrap().pid;
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
        let e = launch(s, None).unwrap_err();
        assert_eq!(launch_errno(&e), Some(libc::ENOENT));
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut s = spec("/bin/true", &[], 1, &root);
        s.cwd = file.as_raw_fd();
        let e = launch(s, None).unwrap_err();
        assert_eq!(launch_errno(&e), Some(libc::ENOTDIR));
        assert!(e.to_string().contains("changing directory"), "{e}");
    }
}
