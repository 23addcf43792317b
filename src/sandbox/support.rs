//! What this kernel and process provide for sandboxes, detected once per process.
//!
//! Landlock's ABI comes from `landlock_create_ruleset(NULL, 0, VERSION)`; seccomp from
//! `prctl(PR_GET_SECCOMP)`; the namespaces from a probe that starts `true` through the very
//! path a sandboxed command takes (namespaces, mounts, init, /proc).
//!
//! Two environment variables, read once, make this process behave as if the kernel offered
//! less (tests of the fail-closed paths use them; they can only remove features):
//! `ACP_TERMINAL_LANDLOCK_ABI=<n>` caps the Landlock ABI used, and
//! `ACP_TERMINAL_NO_NAMESPACES=1` refuses namespaces.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::sync::OnceLock;

use super::namespaces::NsPlan;
use super::Support;

/// The Landlock ABI (0: none), capped by `ACP_TERMINAL_LANDLOCK_ABI`.
fn landlock_abi() -> u32 {
    // SAFETY: the documented version query: no ruleset, no pointer dereferenced.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let abi = v.max(0) as u32;
    match std::env::var("ACP_TERMINAL_LANDLOCK_ABI")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
    {
        Some(cap) => abi.min(cap),
        None => abi,
    }
}

fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP only reads the caller's mode (EINVAL without CONFIG_SECCOMP).
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    mode >= 0 && super::seccomp::arch_supported()
}

/// The cheap, kernel-only part of [`support`] (no probe).
pub fn kernel() -> &'static Support {
    static K: OnceLock<Support> = OnceLock::new();
    K.get_or_init(|| {
        let abi = landlock_abi();
        let mut reasons = Vec::new();
        if abi < 3 {
            reasons.push(format!(
                "Landlock ABI {abi}: writes cannot be confined (needs ABI >= 3, Linux 6.2)"
            ));
        }
        let seccomp = seccomp_available();
        if !seccomp {
            reasons.push("seccomp filters are unavailable".into());
        }
        if abi < 6 {
            reasons.push(format!(
                "Landlock ABI {abi}: no signal or abstract-socket scoping (needs ABI >= 6, \
                 Linux 6.12); a PID namespace stands in for signal scoping"
            ));
        }
        Support {
            landlock_abi: abi,
            filesystem: abi >= 3,
            network: seccomp.then_some(if abi >= 4 {
                "landlock+seccomp"
            } else {
                "seccomp"
            }),
            signal_scoping: (abi >= 6).then_some("landlock"),
            abstract_unix_scoping: abi >= 6,
            process_isolation: None,
            reasons,
        }
    })
}

/// Everything, the namespace probe included (it starts one short process, once).
pub fn support() -> &'static Support {
    static S: OnceLock<Support> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = kernel().clone();
        match namespaces() {
            Ok(kind) => s.process_isolation = Some(kind),
            Err(e) => s.reasons.push(format!(
                "no namespaces (so no read-only filesystem, private /tmp, process or IPC \
                 isolation): {e}"
            )),
        }
        s
    })
}

const CAP_SYS_ADMIN: u32 = 21;

/// Whether the caller may create PID and mount namespaces directly (CAP_SYS_ADMIN).
fn has_sys_admin() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|eff| eff & (1 << CAP_SYS_ADMIN) != 0)
}

fn dev_null() -> Option<&'static OwnedFd> {
    static NULL: OnceLock<Option<OwnedFd>> = OnceLock::new();
    NULL.get_or_init(|| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .ok()
            .map(OwnedFd::from)
    })
    .as_ref()
}

/// What a namespace plan depends on, looked up once: `sleep` for the init, /dev/null, and
/// whether this process creates namespaces directly (root with CAP_SYS_ADMIN) or through a
/// user namespace.
pub fn fixed() -> Result<(CString, RawFd, bool), String> {
    static FIXED: OnceLock<Result<(CString, RawFd, bool), String>> = OnceLock::new();
    if std::env::var_os("ACP_TERMINAL_NO_NAMESPACES").is_some() {
        return Err("namespaces are refused (ACP_TERMINAL_NO_NAMESPACES is set)".into());
    }
    FIXED
        .get_or_init(|| {
            let sleep = ["/bin/sleep", "/usr/bin/sleep"]
                .into_iter()
                .find(|p| {
                    std::fs::metadata(p)
                        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                })
                .ok_or("no `sleep` program (/bin/sleep, /usr/bin/sleep) to hold the namespace")?;
            let null = dev_null().ok_or("cannot open /dev/null")?;
            // SAFETY: geteuid has no preconditions.
            let root = unsafe { libc::geteuid() } == 0;
            Ok((
                CString::new(sleep).expect("literal"),
                null.as_raw_fd(),
                !(root && has_sys_admin()),
            ))
        })
        .clone()
}

/// Whether the namespaces work here (probed once), and how they are made.
pub fn namespaces() -> Result<&'static str, String> {
    static P: OnceLock<Result<&'static str, String>> = OnceLock::new();
    if std::env::var_os("ACP_TERMINAL_NO_NAMESPACES").is_some() {
        return Err("namespaces are refused (ACP_TERMINAL_NO_NAMESPACES is set)".into());
    }
    P.get_or_init(|| {
        let (_, _, userns) = fixed()?;
        probe().map(|()| {
            if userns {
                "user+pid-namespace"
            } else {
                "pid-namespace"
            }
        })
    })
    .clone()
}

/// Starts `true` in the namespaces and mounts of a sandbox without writable roots (no
/// Landlock, no seccomp) and checks it exits 0: only trying tells whether this kernel, its
/// sysctls, security modules and the container we may run in allow it.
fn probe() -> Result<(), String> {
    use crate::sys::spawn::{self as launch, Argv, ChildSteps, Command, Io, Isolation, Join};
    let program = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .ok_or("no `true` program to probe with")?;
    let root = crate::sys::cwd::open_dir(std::path::Path::new("/")).map_err(|e| e.to_string())?;
    let (sleep, null_fd, userns) = fixed()?;
    let mounts = super::mounts::MountPlan::new(&super::roots::Roots::default(), 1 << 20, None)?;
    let mut plan = NsPlan::new(userns, sleep, null_fd, mounts);
    plan.cwd_id = super::namespaces::fd_id(root.as_raw_fd()).map_err(|e| e.to_string())?;
    let ends = launch::open_ends(Io::Pipe).map_err(|e| e.to_string())?;
    let (started, leader) = launch::spawn(
        Command {
            program: program.as_ref(),
            argv: Argv::Program(&["true".into()]),
            env: &[],
            cwd: &root,
            join: Join {
                own_session: true,
                ..Join::default()
            },
            steps: Some(ChildSteps {
                isolate: Some(Isolation {
                    enter: super::namespaces::enter,
                    arg: &plan as *const NsPlan as *const libc::c_void,
                }),
                confine: None,
            }),
        },
        ends,
    )
    .map_err(|e| e.to_string())?;
    let _guard = super::SandboxGuard {
        init_pid: started.init_pid,
        listener: None,
    };
    let _ = leader;
    let mut child = started.child;
    match child.reap() {
        crate::sys::exit_watch::Reaped::Exited(0) => Ok(()),
        other => Err(format!("the probe process ended with {other:?}")),
    }
}
