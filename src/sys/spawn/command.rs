//! What a terminal's launch is made of, in no platform's terms: the resolved [`Command`], its
//! standard I/O ([`Io`]: pipes or a pseudo-terminal), its resource [`Limits`], and what comes
//! back ([`Started`], and the [`super::Leader`] the containment takes). `open_ends` and
//! `start` (per platform: `start_unix.rs`, `start_windows.rs`) make the descriptors or
//! handles and launch it.

use std::ffi::OsString;
use std::path::Path;

use super::{ChildSteps, Join};
use crate::sys::cwd::Dir;
use crate::sys::pty::PtySize;

/// Resource limits for the command. Unix applies each as a soft and hard rlimit in the child;
/// Windows maps what it can onto the terminal's job (`sys::job::JobLimits`), the rest is
/// refused before anything starts.
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
    /// argv, argv[0] included. For a shell line: what `rules::shell_argv` made, the line last.
    pub argv: &'a [OsString],
    /// argv is a shell line's (Windows builds cmd's verbatim command line from it; Unix
    /// passes argv as it is either way).
    #[cfg_attr(unix, allow(dead_code))]
    pub shell_line: bool,
    /// The complete environment.
    pub env: &'a [(OsString, OsString)],
    /// The working directory, as opened (and checked) when planned.
    pub cwd: &'a Dir,
    /// Lead a new session even on pipes (Unix; a pty terminal's command always does): no
    /// controlling terminal to type into.
    #[cfg_attr(windows, allow(dead_code))] // a console of its own already (see windows.rs)
    pub own_session: bool,
    /// Resource limits (Unix: rlimits in the child; Windows: already the job's).
    #[cfg_attr(windows, allow(dead_code))] // the job holds them (the containment's `Holder`)
    pub limits: &'a Limits,
    /// What the child is put into before it runs.
    pub join: Join<'a>,
    /// A higher layer's steps in the child (a sandbox's namespaces and its last step before
    /// exec; only Linux has any).
    pub steps: Option<ChildSteps>,
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
    #[cfg_attr(windows, allow(dead_code))]
    NotExecutable,
    /// Nothing of that name.
    NotFound,
}
