//! What a terminal's launch is made of, in no platform's terms: the resolved [`Command`] (its
//! [`Argv`], and the platform's [`Join`] the containment made), its standard I/O ([`Io`]:
//! pipes or a pseudo-terminal), the resource [`Limits`] the containment turns into steps, and
//! what comes back ([`Started`], and the [`Leader`] the containment takes). `open_ends` and
//! `spawn` (per platform: `start_unix.rs`, `start_windows.rs`) make the descriptors or
//! handles and launch it.

use std::ffi::OsString;
use std::path::Path;

use super::{ChildSteps, Join};
use crate::sys::cwd::Dir;
use crate::sys::pty::PtySize;

/// Resource limits for the command, given to the containment (`sys::contain::Holder::new`):
/// Unix applies each as a soft and hard rlimit in the child (the rlimits step); Windows maps
/// what it can onto the terminal's job (`sys::job::JobLimits`), the rest is refused before
/// anything starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// CPU seconds (`RLIMIT_CPU`; Windows: user time per process).
    pub cpu_seconds: Option<u64>,
    /// Bytes of address space (`RLIMIT_AS`; Windows: committed memory per process).
    pub address_space_bytes: Option<u64>,
    /// Open files (`RLIMIT_NOFILE`; none on Windows).
    pub open_files: Option<u64>,
    /// Bytes a file may grow to (`RLIMIT_FSIZE`; none on Windows).
    pub file_size_bytes: Option<u64>,
    /// Processes (`RLIMIT_NPROC` of the user, or the pids cgroup; Windows: active processes
    /// of the job).
    pub processes: Option<u64>,
}

/// Where the command's input and output go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Io {
    /// stdin from the null device; stdout and stderr on one pipe.
    #[default]
    Pipe,
    /// stdin on a pipe the caller writes to; stdout and stderr on one pipe.
    PipeWithStdin,
    /// All three on a new pseudo-terminal (Windows: a pseudo console) of this size.
    Pty(PtySize),
}

/// A resolved command, ready to launch.
#[derive(Debug)]
pub struct Command<'a> {
    /// The executable (absolute; nothing is searched any more).
    pub program: &'a Path,
    /// argv, argv[0] included, as a program's or a shell line's.
    pub argv: Argv<'a>,
    /// The complete environment.
    pub env: &'a [(OsString, OsString)],
    /// The working directory, as opened (and checked) when planned.
    pub cwd: &'a Dir,
    /// What the child is put into before it runs (`sys::contain::Holder::join`): the values
    /// of the platform's steps (`steps/`: on Unix its session, rlimits and cgroups; on
    /// Windows its job).
    pub join: Join<'a>,
    /// A higher layer's steps in the child (a sandbox's namespaces and its last step before
    /// exec; only Linux has any).
    pub steps: Option<ChildSteps>,
}

/// A command's argv, argv[0] included.
#[derive(Debug, Clone, Copy)]
pub enum Argv<'a> {
    /// A program's arguments.
    Program(&'a [OsString]),
    /// A shell line, as `rules::shell_argv` made it (the line last): Windows gives cmd the
    /// line verbatim; Unix passes it as any argv.
    ShellLine(&'a [OsString]),
}

impl<'a> Argv<'a> {
    /// Every argument, argv[0] included.
    pub fn all(&self) -> &'a [OsString] {
        match *self {
            Argv::Program(a) | Argv::ShellLine(a) => a,
        }
    }
}

/// A launched terminal command: the child to watch, our ends of its I/O.
#[derive(Debug)]
pub struct Started {
    /// The child (its pid, or on Windows its process handle), for the exit watch.
    pub child: crate::sys::exit_watch::Child,
    /// Our end of its output (stdout and stderr on one pipe, or the pty's output).
    pub output: crate::sys::pipe::OwnedEnd,
    /// Our end of its input (`None`: stdin is the null device).
    pub input: Option<crate::sys::pipe::OwnedEnd>,
    /// On a pty: the window-size control and the initial size.
    pub pty: Option<(crate::sys::pty::Control, PtySize)>,
    /// With a sandbox's PID namespace (Linux): its init, for the sandbox's guard; `None`
    /// without one.
    pub init_pid: Option<i32>,
}

/// What a program lookup found ([`super::rules`]'s `find_program`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The file that would run.
    Found(std::path::PathBuf),
    /// A file of that name exists but cannot be executed (Unix permissions).
    // Windows' lookup (`rules_windows.rs`) has no execute permission to find missing.
    #[cfg_attr(windows, allow(dead_code))]
    NotExecutable,
    /// Nothing of that name.
    NotFound,
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
