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
mod landlock;
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

#[cfg(not(target_os = "linux"))]
impl ChildSandbox {
    /// Never called: the type has no value.
    pub fn has_namespace(&self) -> bool {
        match *self {}
    }
}

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
/// namespace, the namespace's init process. Dropping it SIGKILLs the init at once (the kernel
/// then kills every process still in the namespace); reaping the init and removing the TMPDIR
/// (after the namespace is gone, so nothing writes there any more) happen on a background
/// thread, off the release path. [`SandboxGuard::finish_now`] does it all before returning.
#[derive(Debug, Default)]
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
        if let Some(pid) = pid {
            cleanup::kill_init(pid);
        }
        cleanup::reap_and_remove_later(pid, self.tmpdir.take());
    }
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

/// Starts `true` with only the namespace part of the sandbox and checks it exits 0: whether
/// process isolation works here (see `support`).
#[cfg(target_os = "linux")]
fn probe_namespace(plan: pidns::NsPlan) -> Result<(), String> {
    use crate::sys::spawn::{self as launch, LaunchSpec, SessionMode};
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    let program = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .ok_or("no `true` program to probe with")?;
    let null = std::fs::File::open("/dev/null").map_err(|e| e.to_string())?;
    let root = crate::sys::cwd::open_dir(std::path::Path::new("/")).map_err(|e| e.to_string())?;
    let sb = child::ChildSandbox {
        ruleset_fd: -1,
        fprogs: std::ptr::null(),
        n_fprogs: 0,
        lock_root: lock_root(Some(&plan)),
        network: false,
        ns: Some(&plan as *const pidns::NsPlan),
    };
    let spec = LaunchSpec {
        program: CString::new(program).expect("literal"),
        argv: vec![CString::new("true").expect("literal")],
        envp: Vec::new(),
        cwd: root.as_raw_fd(),
        stdio: [null.as_raw_fd(); 3],
        session: SessionMode::NewGroup,
        rlimits: Vec::new(),
        parent_death_signal: Some(libc::SIGKILL),
        cgroup_procs: Vec::new(),
        sandbox: Some(sb),
    };
    let launched = launch::launch_with(spec).map_err(|e| e.to_string())?;
    let _guard = SandboxGuard {
        tmpdir: None,
        init_pid: launched.init_pid,
    };
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(launched.pid, &mut status, 0) };
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(format!("the probe process ended with status {status:#x}"))
    }
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
mod tests {
    use super::*;

    fn spec(roots: &[&str]) -> SandboxSpec {
        SandboxSpec {
            writable_roots: roots.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn roots_are_validated_and_named() {
        let dir = std::env::temp_dir();
        let ok = validate_roots(&spec(&[dir.to_str().unwrap()]), "options.sandbox").unwrap();
        assert_eq!(ok, vec![std::fs::canonicalize(&dir).unwrap()]);
        let cases: &[(&[&str], &str)] = &[
            (&["relative"], "writableRoots[0] must be an absolute path"),
            (
                &["/tmp", "/no/such/dir/x"],
                "writableRoots[1] `/no/such/dir/x`",
            ),
            (&["/bin/sh"], "not a directory"),
            (&["/"], "may not be, contain or lie inside /proc"),
            (&["/sys/fs/cgroup"], "lie inside /sys"),
            (&["/dev"], "/dev"),
            (&["/proc/self"], "/proc"),
            (&["/tmp\0x"], "NUL"),
        ];
        for (roots, needle) in cases {
            let e = validate_roots(&spec(roots), "options.sandbox").unwrap_err();
            assert_eq!(e.code, "ERR_INVALID_ARG", "{e}");
            assert!(e.message.contains(needle), "{e} should say {needle}");
            assert!(e.message.contains("options.sandbox.writableRoots["), "{e}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_symlink_to_a_forbidden_place_is_refused() {
        let dir = tmpdir::TempDir::new().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/sys", &link).unwrap();
        let e = validate_roots(&spec(&[link.to_str().unwrap()]), "sandbox").unwrap_err();
        assert!(e.message.contains("resolved `/sys`"), "{e}");
    }

    /// Runs `script` with `sh -c` in a sandbox with `root` writable and returns (exit code,
    /// output). Everything through the real launch path; the output through a pipe.
    #[cfg(target_os = "linux")]
    fn run_sandboxed(spec: &SandboxSpec, script: &str) -> (i32, String) {
        use crate::sys::spawn::{launch_with, LaunchSpec, SessionMode};
        use std::ffi::CString;
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let prepared = prepare(spec, None, "sandbox").unwrap();
        let (r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let root = crate::sys::cwd::open_dir(std::path::Path::new("/")).unwrap();
        let tmpdir = format!("TMPDIR={}", prepared.tmpdir().display());
        let launched = launch_with(LaunchSpec {
            program: CString::new("/bin/sh").unwrap(),
            argv: ["sh", "-c", script]
                .iter()
                .map(|a| CString::new(*a).unwrap())
                .collect(),
            envp: vec![
                CString::new("PATH=/usr/bin:/bin").unwrap(),
                CString::new(tmpdir).unwrap(),
            ],
            cwd: root.as_raw_fd(),
            stdio: [null.as_raw_fd(), w.as_raw_fd(), w.as_raw_fd()],
            session: SessionMode::NewGroup,
            rlimits: vec![],
            parent_death_signal: Some(libc::SIGKILL),
            cgroup_procs: vec![],
            sandbox: Some(prepared.child()),
        })
        .unwrap();
        drop(w);
        let mut out = String::new();
        std::fs::File::from(r).read_to_string(&mut out).unwrap();
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(launched.pid, &mut status, 0) };
        assert_eq!(launched.init_pid.is_some(), spec.isolate_processes);
        drop(prepared.into_guard(launched.init_pid));
        (libc::WEXITSTATUS(status), out)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn writes_outside_the_roots_are_refused_inside_allowed() {
        if !support::kernel().filesystem {
            return; // refused by `prepare`, which other tests pin
        }
        let inside = tmpdir::TempDir::new().unwrap();
        let outside = tmpdir::TempDir::new().unwrap();
        for isolate in [false, true] {
            if isolate && support().process_isolation.is_none() {
                continue;
            }
            let spec = SandboxSpec {
                writable_roots: vec![inside.path().to_str().unwrap().into()],
                network: false,
                isolate_processes: isolate,
            };
            let script = format!(
                "echo a > {in_}/f && echo in-ok; echo b > {out}/f || echo out-refused; \
                 echo c > \"$TMPDIR/t\" && echo tmp-ok; grep -E '^(NoNewPrivs|CapEff)' /proc/self/status",
                in_ = inside.path().display(),
                out = outside.path().display()
            );
            let (code, out) = run_sandboxed(&spec, &script);
            assert_eq!(code, 0, "{out}");
            assert!(out.contains("in-ok\n"), "{out}");
            assert!(out.contains("Permission denied"), "{out}");
            assert!(out.contains("out-refused\n"), "{out}");
            assert!(out.contains("tmp-ok\n"), "{out}");
            assert!(out.contains("NoNewPrivs:\t1"), "{out}");
            assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
            assert!(!outside.path().join("f").exists());
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pid_namespace_shows_only_the_terminal() {
        if support().process_isolation.is_none() || !support::kernel().filesystem {
            return;
        }
        let spec = SandboxSpec::default();
        // pid 1 is the init (`sleep`), the shell is pid 2, and nothing else exists.
        let (code, out) = run_sandboxed(
            &spec,
            // (the init may still be finishing its exec when the command starts: its
            // command line appears then)
            "echo $$; for i in $(seq 200); do c=$(tr '\\0' ' ' < /proc/1/cmdline); \
             [ -n \"$c\" ] && break; sleep 0.01; done; echo \"$c\"; ls /proc | grep -c '^[0-9]'",
        );
        assert_eq!(code, 0, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "2", "{out}");
        assert_eq!(lines[1], "sleep 2147483647 ", "{out}");
        // sleep, sh, and the pipeline's ls and grep
        assert!(lines[2].parse::<u32>().unwrap() <= 4, "{out}");
    }

    /// Where a sandboxed spawn's time goes (not a test: run it with
    /// `cargo test --release sandbox_cost -- --ignored --nocapture`).
    #[cfg(target_os = "linux")]
    #[test]
    #[ignore]
    fn sandbox_cost() {
        use crate::sys::spawn::{launch_with, LaunchSpec, SessionMode};
        use std::ffi::CString;
        use std::os::fd::AsRawFd;
        use std::time::Instant;
        let null = std::fs::File::open("/dev/null").unwrap();
        let root = crate::sys::cwd::open_dir(std::path::Path::new("/")).unwrap();
        let spec = || LaunchSpec {
            program: CString::new("/bin/true").unwrap(),
            argv: vec![CString::new("true").unwrap()],
            envp: vec![],
            cwd: root.as_raw_fd(),
            stdio: [null.as_raw_fd(); 3],
            session: SessionMode::NewGroup,
            rlimits: vec![],
            parent_death_signal: Some(libc::SIGKILL),
            cgroup_procs: vec![],
            sandbox: None,
        };
        let med = |mut xs: Vec<f64>| {
            xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
            (xs[xs.len() / 10], xs[xs.len() / 2])
        };
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
        for isolate in [false, true] {
            let sb = SandboxSpec {
                writable_roots: vec!["/tmp".into()],
                network: false,
                isolate_processes: isolate,
            };
            let mut v: [Vec<f64>; 5] = Default::default();
            for _ in 0..300 {
                let t = Instant::now();
                let l = launch_with(spec()).unwrap();
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(l.pid, std::ptr::null_mut(), 0) };
                v[0].push(ms(t));
                let t = Instant::now();
                let p = prepare(&sb, None, "sandbox").unwrap();
                v[1].push(ms(t));
                let mut s = spec();
                s.sandbox = Some(p.child());
                let t = Instant::now();
                let l = launch_with(s).unwrap();
                v[2].push(ms(t));
                let t = Instant::now();
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(l.pid, std::ptr::null_mut(), 0) };
                v[3].push(ms(t));
                let g = p.into_guard(l.init_pid);
                let t = Instant::now();
                drop(g);
                v[4].push(ms(t));
            }
            let [a, b, c, d, e] = v.map(med);
            println!(
                "isolate={isolate} (p10, median ms): plain launch+wait {a:.3?} | sandbox: \
                 prepare {b:.3?}, launch {c:.3?}, wait {d:.3?}, guard drop {e:.3?}"
            );
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod prepare_cost {
    /// Where `prepare` spends its time (`cargo test --release prepare_cost -- --ignored
    /// --nocapture`).
    #[test]
    #[ignore]
    fn prepare_cost() {
        use std::time::Instant;
        let spec = super::SandboxSpec {
            writable_roots: vec!["/tmp".into()],
            ..Default::default()
        };
        let mut t = [0f64; 4];
        let n = 2000;
        for _ in 0..n {
            let a = Instant::now();
            let roots = super::validate_roots(&spec, "s").unwrap();
            let b = Instant::now();
            let dir = super::tmpdir::TempDir::new().unwrap();
            let c = Instant::now();
            let fd = super::landlock::ruleset(7, &roots, dir.path(), None, false).unwrap();
            let d = Instant::now();
            drop(fd);
            drop(dir);
            let e = Instant::now();
            for (i, (x, y)) in [(a, b), (b, c), (c, d), (d, e)].into_iter().enumerate() {
                t[i] += (y - x).as_secs_f64() * 1e6 / n as f64;
            }
        }
        println!(
            "µs: validate {:.1} tmpdir {:.1} ruleset {:.1} drop (rmdir) {:.1}",
            t[0], t[1], t[2], t[3]
        );
    }
}
