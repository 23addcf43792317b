//! The OS sandbox of a terminal: what a command and everything it starts may do.
//!
//! A [`SandboxSpec`] (`writable_roots`, `network`, `isolate_processes`) is turned into a
//! [`Prepared`] sandbox in the PARENT: the spec is validated, every promised part is checked
//! against what this kernel provides (a missing part is `ERR_SANDBOX_UNAVAILABLE` naming it:
//! the sandbox fails closed), the private TMPDIR is created, the Landlock ruleset is built (an
//! fd) and the seccomp BPF program compiled. The vfork child then only makes system calls
//! ([`Prepared::child`] gives it plain values and pointers): `no_new_privs`, dropping
//! capabilities, `landlock_restrict_self`, `seccomp(SECCOMP_SET_MODE_FILTER)`, and with
//! `isolate_processes` entering a PID namespace with its own `/proc` (see [`pidns`]).
//!
//! Invariants:
//! - Nothing here forks Node; nothing in the child allocates or takes a lock.
//! - A part the kernel cannot provide is never silently skipped.
//! - The [`SandboxGuard`] of a terminal owns what outlives the spawn (the TMPDIR, the
//!   namespace's init process) and cleans it up when dropped (at release).
//!
//! Linux only: elsewhere [`prepare`] rejects every sandbox with `ERR_SANDBOX_UNAVAILABLE`.

use std::path::PathBuf;

use crate::error::TermError;

#[cfg(target_os = "linux")]
pub mod child;
#[cfg(target_os = "linux")]
mod cleanup;
#[cfg(target_os = "linux")]
mod initprog;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
pub mod nspool;
#[cfg(target_os = "linux")]
pub mod pidns;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod support;
#[cfg(target_os = "linux")]
mod tmpdir;

#[cfg(target_os = "linux")]
pub use support::support;

#[cfg(target_os = "linux")]
pub use child::ChildSandbox;

/// Outside Linux no sandbox reaches a launch.
#[cfg(not(target_os = "linux"))]
#[derive(Debug, Clone, Copy)]
pub enum ChildSandbox {}

/// Error code of a sandbox part this kernel (or this process) cannot provide.
pub const ERR_SANDBOX_UNAVAILABLE: &str = "ERR_SANDBOX_UNAVAILABLE";

/// What the caller asks for (not yet validated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Directories the command may write under (absolute, existing).
    pub writable_roots: Vec<String>,
    /// Allow network connections (default false).
    pub network: bool,
    /// Hide the processes outside the terminal (a PID namespace with its own /proc; default
    /// true).
    pub isolate_processes: bool,
}

impl Default for SandboxSpec {
    fn default() -> Self {
        Self {
            writable_roots: Vec::new(),
            network: false,
            isolate_processes: true,
        }
    }
}

/// What this kernel and process provide for sandboxes (`containmentInfo().sandbox`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Support {
    /// Landlock ABI version (0: no Landlock).
    pub landlock_abi: u32,
    /// Writes limited to the writable roots (Landlock ABI >= 3, which also covers truncate).
    pub filesystem: bool,
    /// How network access is refused: `"landlock+seccomp"` (ABI >= 4: TCP rules too) or
    /// `"seccomp"`; `None` when seccomp filters are unavailable.
    pub network: Option<&'static str>,
    /// How signals to processes outside the terminal are refused: `"landlock"` (ABI >= 6);
    /// `None` otherwise (a PID namespace then stands in for it, see `process_isolation`).
    pub signal_scoping: Option<&'static str>,
    /// Abstract unix sockets outside the terminal unreachable (Landlock ABI >= 6).
    pub abstract_unix_scoping: bool,
    /// How processes outside the terminal are hidden: `"pid-namespace"` (with
    /// CAP_SYS_ADMIN) or `"user+pid-namespace"` (unprivileged user namespaces); `None`
    /// when namespaces are refused.
    pub process_isolation: Option<&'static str>,
    /// Why the missing parts are missing (empty when everything is there).
    pub reasons: Vec<String>,
}

/// A sandbox ready to be applied by a vfork child.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub struct Prepared {
    ruleset: std::os::fd::OwnedFd,
    fprogs: Vec<libc::sock_fprog>,
    ns: Option<Box<pidns::NsPlan>>,
    lock_root: bool,
    network: bool,
    tmpdir: tmpdir::TempDir,
}

// SAFETY: the raw pointers inside the `sock_fprog`s point into programs that live as long as
// the process (see `seccomp::programs`); nothing in them is ever written after creation.
#[cfg(target_os = "linux")]
unsafe impl Send for Prepared {}

/// Owns what a sandboxed terminal leaves behind: its private TMPDIR and, with a PID
/// namespace, the namespace's init process. Dropping it gives a namespace made ahead back to
/// its pool (which ends it at once if any process is left in it, see [`nspool`]) and
/// SIGKILLs the init of any other at once (the kernel then kills every process still in the
/// namespace); reaping the init and removing the TMPDIR (after the namespace is gone or
/// found empty, so nothing writes there any more) happen on background threads, off the
/// release path. [`SandboxGuard::finish_now`] ends it all before returning.
#[derive(Debug, Default)]
// Outside Linux no sandbox is ever created, so nothing reads these.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct SandboxGuard {
    tmpdir: Option<PathBuf>,
    init_pid: Option<i32>,
}

impl SandboxGuard {
    /// Kills the namespace, reaps its init and removes the TMPDIR before returning (for a
    /// process about to exit, where a background thread would not get to it).
    #[cfg(target_os = "linux")]
    pub fn finish_now(mut self) {
        if let Some(pid) = self.init_pid.take() {
            nspool::forget(pid);
            cleanup::kill_init(pid);
            cleanup::reap(pid);
        }
        if let Some(dir) = self.tmpdir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for SandboxGuard {
    fn drop(&mut self) {
        let pid = self.init_pid.take();
        let tmpdir = self.tmpdir.take();
        let tmpdir = match pid {
            Some(pid) => match nspool::give_back(pid, tmpdir) {
                Ok(()) => return,
                Err(tmpdir) => tmpdir,
            },
            None => tmpdir,
        };
        if let Some(pid) = pid {
            cleanup::kill_init(pid);
        }
        cleanup::reap_and_remove_later(pid, tmpdir);
    }
}

/// Reaps our exited child `pid` on the sandbox's cleanup thread (for the short-lived
/// intermediate process of a namespace launch).
#[cfg(target_os = "linux")]
pub fn reap_later(pid: i32) {
    cleanup::reap_and_remove_later(Some(pid), None);
}

fn unavailable(part: &str, why: impl std::fmt::Display) -> TermError {
    TermError::new(
        ERR_SANDBOX_UNAVAILABLE,
        format!("sandbox: {part} is not available here: {why}"),
    )
}

/// Directories no writable root may be, contain, or lie inside: writing there would undo the
/// sandbox (cgroup moves, sysctls, raw devices).
const FORBIDDEN: &[&str] = &["/proc", "/sys", "/dev"];

/// Checks the writable roots: absolute paths of existing directories, resolved through
/// symlinks, none of them `/` nor in or around /proc, /sys or /dev. `field` names the option
/// in errors (e.g. `options.sandbox`).
pub fn validate_roots(spec: &SandboxSpec, field: &str) -> Result<Vec<PathBuf>, TermError> {
    let mut out = Vec::with_capacity(spec.writable_roots.len());
    for (i, root) in spec.writable_roots.iter().enumerate() {
        let name = format!("{field}.writableRoots[{i}]");
        if root.contains('\0') {
            return Err(TermError::invalid_arg(format!(
                "{name} contains a NUL byte"
            )));
        }
        let path = std::path::Path::new(root);
        if !path.is_absolute() {
            return Err(TermError::invalid_arg(format!(
                "{name} must be an absolute path, got `{root}`"
            )));
        }
        let real = std::fs::canonicalize(path)
            .map_err(|e| TermError::invalid_arg(format!("{name} `{root}`: {e}")))?;
        if !real.is_dir() {
            return Err(TermError::invalid_arg(format!(
                "{name} `{root}` is not a directory"
            )));
        }
        for f in FORBIDDEN {
            let f = std::path::Path::new(f);
            if real.starts_with(f) || f.starts_with(&real) {
                return Err(TermError::invalid_arg(format!(
                    "{name} `{root}` (resolved `{}`) may not be, contain or lie inside {}: \
                     writing there would undo the sandbox",
                    real.display(),
                    f.display()
                )));
            }
        }
        out.push(real);
    }
    Ok(out)
}

#[cfg(target_os = "linux")]
impl Prepared {
    /// Values for the vfork child; valid while `self` lives.
    pub fn child(&self) -> child::ChildSandbox {
        use std::os::fd::AsRawFd;
        child::ChildSandbox {
            ruleset_fd: self.ruleset.as_raw_fd(),
            fprogs: self.fprogs.as_ptr(),
            n_fprogs: self.fprogs.len(),
            lock_root: self.lock_root,
            network: self.network,
            ns: self.ns.as_deref().map(|n| n as *const pidns::NsPlan),
        }
    }

    /// The private temporary directory the command gets as TMPDIR.
    pub fn tmpdir(&self) -> &std::path::Path {
        self.tmpdir.path()
    }

    /// The guard that owns the TMPDIR and the namespace's init (`init_pid` from the launch).
    pub fn into_guard(self, init_pid: Option<i32>) -> SandboxGuard {
        SandboxGuard {
            tmpdir: Some(self.tmpdir.keep()),
            init_pid,
        }
    }
}

/// Builds the sandbox for one terminal in the parent: `tty` is the pty slave the command gets
/// (it may reopen it), `field` names the option in errors. Fails closed with
/// `ERR_SANDBOX_UNAVAILABLE` naming the part the kernel cannot provide.
#[cfg(target_os = "linux")]
pub fn prepare(
    spec: &SandboxSpec,
    tty: Option<std::os::fd::BorrowedFd<'_>>,
    field: &str,
) -> Result<Prepared, TermError> {
    let roots = validate_roots(spec, field)?;
    let s = support::kernel();
    if !s.filesystem {
        return Err(unavailable(
            "the filesystem part (Landlock ABI >= 3)",
            format_args!("Landlock ABI {}", s.landlock_abi),
        ));
    }
    if s.network.is_none() {
        return Err(unavailable(
            "the network and cgroup part (seccomp)",
            s.reasons.join("; "),
        ));
    }
    let ns = if spec.isolate_processes {
        match support::isolation() {
            Ok(plan) => Some(Box::new(plan)),
            Err(why) => {
                return Err(unavailable(
                    "process isolation (a PID namespace with its own /proc; set \
                     isolateProcesses: false to run without it)",
                    why,
                ))
            }
        }
    } else {
        None
    };
    if s.signal_scoping.is_none() && ns.is_none() {
        return Err(unavailable(
            "signal scoping (Landlock ABI >= 6, or a PID namespace with isolateProcesses)",
            format_args!("Landlock ABI {}", s.landlock_abi),
        ));
    }
    let tmpdir = tmpdir::TempDir::take()
        .map_err(|e| TermError::from_io(&e, "sandbox: creating the private temporary directory"))?;
    let ruleset = landlock::ruleset(s.landlock_abi, &roots, tmpdir.path(), tty, spec.network)
        .map_err(|e| unavailable("the filesystem part (Landlock)", e))?;
    let program = seccomp::program(spec.network)
        .map_err(|e| unavailable("the network and cgroup part (seccomp)", e))?;
    let fprogs = vec![libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    }];
    Ok(Prepared {
        ruleset,
        fprogs,
        lock_root: lock_root(ns.as_deref()),
        network: spec.network,
        ns,
        tmpdir,
    })
}

/// Whether the child can and should lock root's capabilities away: as root, or with a user
/// namespace (where it holds every capability until it execs).
#[cfg(target_os = "linux")]
fn lock_root(ns: Option<&pidns::NsPlan>) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    root || ns.is_some_and(|n| n.userns())
}

/// Elsewhere than Linux there is no sandbox: every request is refused, naming the part.
#[cfg(not(target_os = "linux"))]
pub fn prepare(spec: &SandboxSpec, field: &str) -> Result<std::convert::Infallible, TermError> {
    validate_roots(spec, field)?;
    Err(unavailable(
        "the sandbox (Landlock, seccomp and namespaces)",
        "it needs Linux",
    ))
}

/// What this platform provides: nothing, outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn support() -> &'static Support {
    static S: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
    S.get_or_init(|| Support {
        reasons: vec!["the sandbox needs Linux (Landlock, seccomp, namespaces)".into()],
        ..Default::default()
    })
}

#[cfg(test)]
mod tests;

#[cfg(all(test, target_os = "linux"))]
mod pool_tests;
