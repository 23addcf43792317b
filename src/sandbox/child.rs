//! The command's confinement: system calls only, on values the parent prepared
//! ([`ChildSandbox`]). Runs in the command's process right before `execve` (the launch's
//! [`crate::sys::spawn::ChildStep`]), after its session, limits, cgroup, stdio and working
//! directory are set up, inside the namespaces [`super::namespaces`] made.
//!
//! Order matters: descriptors other than 0-2 are marked close-on-exec; capabilities are dropped;
//! `no_new_privs` is set (required by both of the next calls for an unprivileged process);
//! then the Landlock domain and the seccomp filters are entered. Each is checked: a failure is
//! reported with its step and errno and the child exits without running the command.

use std::os::fd::RawFd;

/// The steps of [`apply`], as reported on failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Step {
    /// Creating the namespaces (user, mount, PID, IPC) or writing the id maps.
    Namespaces = 1,
    /// Starting the namespace's init process.
    Init = 2,
    /// Mounting the namespace's own /proc.
    Proc = 3,
    /// The read-only tree, /dev, /tmp and the writable roots.
    Mounts = 9,
    /// The working directory in the new tree.
    Cwd = 10,
    /// Marking inherited descriptors close-on-exec.
    Descriptors = 4,
    /// Dropping capabilities.
    Capabilities = 5,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs = 6,
    /// `landlock_restrict_self`.
    Landlock = 7,
    /// Installing the seccomp filters.
    Seccomp = 8,
    /// Bringing up the network namespace's loopback interface.
    Loopback = 11,
    /// The proxy's listener in the network namespace, sent to the host.
    Proxy = 12,
}

impl Step {
    /// The step numbered `n` (as stored by the child).
    pub fn from_i32(n: i32) -> Option<Step> {
        use Step::*;
        [
            Namespaces,
            Init,
            Proc,
            Descriptors,
            Capabilities,
            NoNewPrivs,
            Landlock,
            Seccomp,
            Mounts,
            Cwd,
            Loopback,
            Proxy,
        ]
        .into_iter()
        .find(|s| *s as i32 == n)
    }

    /// The promised part this step provides, for `ERR_SANDBOX_UNAVAILABLE`.
    pub fn part(self) -> &'static str {
        match self {
            Step::Namespaces | Step::Init | Step::Proc => {
                "the namespaces (mount, PID, IPC and network, in a user namespace when not root)"
            }
            Step::Loopback => "the network namespace's loopback interface",
            Step::Proxy => "the network proxy's listener in the network namespace",
            Step::Mounts => "the read-only filesystem, /dev and the private /tmp (mounts)",
            Step::Cwd => {
                "the working directory (it is not visible in the sandbox: under /tmp or moved?)"
            }
            Step::Descriptors => "descriptor hygiene (close_range)",
            Step::Capabilities => "dropping capabilities",
            Step::NoNewPrivs => "no_new_privs",
            Step::Landlock => "the filesystem, ptrace and signal part (Landlock)",
            Step::Seccomp => "the network and cgroup part (seccomp)",
        }
    }
}

/// What the child needs, as plain values and pointers into the parent's
/// [`super::linux::SandboxLaunch`] (alive while the parent waits for the vfork child).
#[derive(Debug, Clone, Copy)]
pub struct ChildSandbox {
    /// The Landlock ruleset (close-on-exec); -1 only for the namespace probe.
    pub ruleset_fd: RawFd,
    /// The seccomp filters, in installation order.
    pub fprogs: *const libc::sock_fprog,
    /// How many filters.
    pub n_fprogs: usize,
    /// Lock root's capabilities away (root, or a process with a user namespace, where it holds
    /// every capability until it execs): `SECBIT_NOROOT` and friends, locked, so that
    /// `execve` grants uid 0 nothing.
    pub lock_root: bool,
}

// SAFETY: the pointers refer to data owned by the `SandboxLaunch` the launching caller keeps
// alive until the launch returned; the launcher thread only reads them.
unsafe impl Send for ChildSandbox {}

/// The confinement step of a sandboxed launch: `arg` is a [`ChildSandbox`]. Fails with the
/// [`Step`] number and its errno.
///
/// # Safety
/// Call only in the command's process about to `execve`, with `arg` valid.
pub unsafe fn confine(arg: *const libc::c_void) -> Result<(), (i32, i32)> {
    apply(&*(arg as *const ChildSandbox)).map_err(|(step, e)| (step as i32, e))
}

/// Applies the confinement to the calling process.
///
/// # Safety
/// Call only in a child about to `execve`, with `sb` valid.
pub unsafe fn apply(sb: &ChildSandbox) -> Result<(), (Step, i32)> {
    let check = |r: libc::c_long, step: Step| -> Result<(), (Step, i32)> {
        if r < 0 {
            Err((step, crate::sys::spawn::errno()))
        } else {
            Ok(())
        }
    };
    check(
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ),
        Step::Descriptors,
    )?;
    if sb.lock_root {
        // One call instead of emptying the bounding set capability by capability (~3 µs each):
        // with no_new_privs below, nothing can raise a capability again, and these bits stop
        // execve from giving uid 0 the full set.
        check(
            libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS_LOCKED_NOROOT, 0, 0, 0) as _,
            Step::Capabilities,
        )?;
    }
    check(
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ) as _,
        Step::Capabilities,
    )?;
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData::default(); 2];
    check(
        libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()),
        Step::Capabilities,
    )?;
    check(
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) as _,
        Step::NoNewPrivs,
    )?;
    if sb.ruleset_fd >= 0 {
        check(
            libc::syscall(libc::SYS_landlock_restrict_self, sb.ruleset_fd, 0u32),
            Step::Landlock,
        )?;
    }
    for i in 0..sb.n_fprogs {
        check(
            libc::syscall(
                libc::SYS_seccomp,
                SECCOMP_SET_MODE_FILTER,
                0u32,
                sb.fprogs.add(i),
            ),
            Step::Seccomp,
        )?;
    }
    Ok(())
}

const SECCOMP_SET_MODE_FILTER: u32 = 1;
/// `SECBIT_NOROOT | SECBIT_NO_SETUID_FIXUP | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE`
/// and the locks of the first two and the last: root gains nothing at exec and nobody can turn
/// that off.
const SECUREBITS_LOCKED_NOROOT: libc::c_ulong =
    (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 6) | (1 << 7);
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
