//! The child's half of the sandbox: system calls only, on values the parent prepared
//! ([`ChildSandbox`]). Runs in the vfork child right before `execve`, after its session,
//! limits, cgroup, stdio and working directory are set up.
//!
//! Order matters: `/proc` is mounted while the child still has its capabilities (namespace
//! case); descriptors other than 0-2 are marked close-on-exec; capabilities are dropped;
//! `no_new_privs` is set (required by both of the next calls for an unprivileged process);
//! then the Landlock domain and the seccomp filters are entered. Each is checked: a failure is
//! reported with its step and errno and the child exits without running the command.

use std::os::fd::RawFd;

use super::pidns::{self, NsPlan};

/// The steps of [`apply`], as reported on failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Step {
    /// Creating the namespaces (user, PID, mount) or writing the id maps.
    Namespaces = 1,
    /// Starting the namespace's init process.
    Init = 2,
    /// Mounting the namespace's own /proc.
    Proc = 3,
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
        ]
        .into_iter()
        .find(|s| *s as i32 == n)
    }

    /// The promised part this step provides, for `ERR_SANDBOX_UNAVAILABLE`.
    pub fn part(self) -> &'static str {
        match self {
            Step::Namespaces | Step::Init | Step::Proc => {
                "process isolation (a PID namespace with its own /proc)"
            }
            Step::Descriptors => "descriptor hygiene (close_range)",
            Step::Capabilities => "dropping capabilities",
            Step::NoNewPrivs => "no_new_privs",
            Step::Landlock => "the filesystem, ptrace and signal part (Landlock)",
            Step::Seccomp => "the network and cgroup part (seccomp)",
        }
    }
}

/// What the child needs, as plain values and pointers into the parent's [`super::Prepared`]
/// (alive while the parent waits for the vfork child).
#[derive(Debug, Clone, Copy)]
pub struct ChildSandbox {
    /// The Landlock ruleset (close-on-exec); -1 only for the namespace probe.
    pub ruleset_fd: RawFd,
    /// The seccomp filters, in installation order.
    pub fprogs: *const libc::sock_fprog,
    /// How many filters.
    pub n_fprogs: usize,
    /// Highest capability number of this kernel.
    pub last_cap: i32,
    /// Empty the capability bounding set (root, or a process with a user namespace).
    pub drop_bounding: bool,
    /// The namespace plan, with `isolate_processes`.
    pub ns: Option<*const NsPlan>,
}

impl ChildSandbox {
    /// Whether the launch goes through a PID namespace (and so reports an init pid).
    pub fn has_namespace(&self) -> bool {
        self.ns.is_some()
    }
}

// SAFETY: the pointers refer to data owned by the `Prepared` the launching caller keeps alive
// until the launch returned; the launcher thread only reads them.
unsafe impl Send for ChildSandbox {}

fn errno() -> i32 {
    // SAFETY: reading the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Applies the sandbox to the calling vfork child (with a namespace plan, the caller is the
/// command's process inside the new PID namespace: its /proc is mounted first).
///
/// # Safety
/// Call only in a vfork child about to `execve`, with `sb` valid.
pub unsafe fn apply(sb: &ChildSandbox) -> Result<(), (Step, i32)> {
    let check = |r: libc::c_long, step: Step| -> Result<(), (Step, i32)> {
        if r < 0 {
            Err((step, errno()))
        } else {
            Ok(())
        }
    };
    if sb.ns.is_some() {
        check(pidns::mount_proc() as libc::c_long, Step::Proc)?;
    }
    check(
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ),
        Step::Descriptors,
    )?;
    if sb.drop_bounding {
        for cap in 0..=sb.last_cap {
            check(
                libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) as _,
                Step::Capabilities,
            )?;
        }
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

/// Every signal back to its default action (Node handles or ignores several). The raw system
/// call also resets the signals glibc reserves (32, 33). All-zero is SIG_DFL, no flags and an
/// empty mask in the kernel's layout.
///
/// # Safety
/// Call only in a child about to `execve`.
pub unsafe fn default_signals() {
    let dfl = [0u64; 4];
    for sig in 1..=64 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::syscall(libc::SYS_rt_sigaction, sig, dfl.as_ptr(), 0usize, 8usize);
        }
    }
}
