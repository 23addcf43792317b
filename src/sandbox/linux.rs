//! Linux: the sandbox of this module's design, its launch steps and what outlives the launch
//! (the namespace's init, owned by a [`SandboxGuard`]).

use std::os::fd::{AsFd, AsRawFd};

use super::{
    child, cleanup, landlock, mounts, namespaces, proxy, roots, seccomp, unavailable, SandboxSpec,
    ERR_SANDBOX_UNAVAILABLE, PROXY_ADDR,
};
use crate::error::TermError;
use crate::sys::cwd::Dir;
use crate::sys::spawn::{ChildStep, ChildSteps, Ends, Isolation};

pub use super::support::support;

/// Every sandboxed command leads a session of its own (`containmentInfo().sandbox.promises`).
pub const NEW_SESSION: bool = true;

/// Writable roots pinned by [`super::pin`] ([`roots::Roots`]), shared by every create of the
/// configuration; equal only to itself.
#[derive(Debug, Clone)]
pub struct Pinned(pub std::sync::Arc<roots::Roots>);

impl PartialEq for Pinned {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Pinned {}

impl Pinned {
    /// The writable roots as pinned: resolved, nested ones merged into their parent.
    pub fn paths(&self) -> Vec<String> {
        self.0
            .roots
            .iter()
            .map(|r| r.path.to_string_lossy().into_owned())
            .collect()
    }
}

/// Pins the validated roots `resolved` (see [`roots`]).
pub(super) fn pin(resolved: &[std::path::PathBuf], field: &str) -> Result<Pinned, TermError> {
    Ok(Pinned(std::sync::Arc::new(roots::pin(resolved, field)?)))
}

/// Builds the sandbox for one launch of a command in the checked working directory `cwd` on
/// `ends` (the pty slave, if any, is the command's terminal), in the parent; `field` names the
/// option in errors. Fails closed with `ERR_SANDBOX_UNAVAILABLE` naming the part the kernel
/// cannot provide.
pub fn prepare_launch(
    spec: &SandboxSpec,
    cwd: &Dir,
    ends: &Ends,
    field: &str,
) -> Result<SandboxLaunch, TermError> {
    let (cwd, tty) = (cwd.as_fd(), ends.tty());
    let pinned_now;
    let roots: &roots::Roots = match &spec.pinned {
        Some(p) => &p.0,
        None => {
            pinned_now = super::pin(spec, field)?;
            &pinned_now.0
        }
    };
    let s = super::support::kernel();
    if !s.filesystem {
        return Err(unavailable(
            "the filesystem part (Landlock ABI >= 3)",
            format_args!(
                "Landlock ABI {} (Linux 6.2 or later with Landlock enabled, e.g. lsm=landlock \
                 on the kernel command line, provides it)",
                s.landlock_abi
            ),
        ));
    }
    if s.network.is_none() {
        return Err(unavailable(
            "the network and terminal part (seccomp)",
            s.reasons.join("; "),
        ));
    }
    let (sleep, null_fd, userns) = super::support::fixed()
        .and_then(|f| super::support::namespaces().map(|_| f))
        .map_err(|why| {
            unavailable(
                "the namespaces (mount, PID and IPC; unprivileged callers need user \
                 namespaces: allow them, e.g. Ubuntu's kernel.apparmor_restrict_unprivileged_userns=0 \
                 or an AppArmor profile for node, or run without a sandbox)",
                why,
            )
        })?;
    let cwd_path = crate::sys::cwd::fd_path(&cwd)
        .map_err(|e| TermError::from_io(&e, "sandbox: the working directory's path"))?;
    let hidden = ["/tmp", "/dev", "/proc"].into_iter().find(|h| {
        cwd_path.starts_with(h) && !roots.roots.iter().any(|r| cwd_path.starts_with(&r.path))
    });
    if let Some(h) = hidden {
        return Err(TermError::invalid_cwd(format!(
            "cwd `{}` is under {h}, which the sandbox replaces with its own: start the \
             command elsewhere or make a directory containing it a writable root",
            cwd_path.display()
        )));
    }
    let tty_path = tty
        .map(|t| crate::sys::cwd::fd_path(&t))
        .transpose()
        .map_err(|e| TermError::from_io(&e, "sandbox: the pty's path"))?;
    let mounts = mounts::MountPlan::new(roots, spec.tmp_bytes, tty_path.as_deref())
        .map_err(|e| unavailable("the mounts", e))?;
    let proxy_port = spec.proxy.as_ref().map(|_| PROXY_ADDR.1);
    let (ruleset, tmp_access) =
        landlock::ruleset(s.landlock_abi, roots, tty, spec.network, proxy_port)
            .map_err(|e| unavailable("the filesystem part (Landlock)", e))?;
    let net_mode = match (spec.network, &spec.proxy) {
        (true, _) => seccomp::Net::On,
        (false, Some(_)) => seccomp::Net::Proxy,
        (false, None) => seccomp::Net::Off,
    };
    let program = seccomp::program(net_mode)
        .map_err(|e| unavailable("the network and terminal part (seccomp)", e))?;
    let fprogs = vec![libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    }];
    let mut ns = Box::new(namespaces::NsPlan::new(userns, sleep, null_fd, mounts));
    ns.net = !spec.network;
    // A sandbox made ahead for this shape, if one is ready (pipe launches: a pty's /dev holds
    // its terminal); else the launch makes its own, joining a network namespace made ahead.
    let (premade, in_flight) = match tty {
        None => super::premade::take(
            super::premade::Shape::of(roots, spec.tmp_bytes, ns.net),
            userns,
        ),
        Some(_) => (None, None),
    };
    if let Some(p) = &premade {
        ns.premade_pid = p.pid();
    }
    let netns = (ns.net && premade.is_none())
        .then(|| super::netpool::take(userns))
        .flatten();
    if let Some(p) = &netns {
        ns.net_fd = p.net.as_raw_fd();
        ns.ipc_fd = p.ipc.as_raw_fd();
        ns.user_fd = p.user.as_ref().map_or(-1, |u| u.as_raw_fd());
    }
    let proxy = spec
        .proxy
        .as_ref()
        .map(|_| proxy::Channel::new())
        .transpose()
        .map_err(|e| unavailable("the network proxy's channel (socketpair)", e))?;
    ns.proxy_sock = proxy.as_ref().map_or(-1, proxy::Channel::child_fd);
    ns.ruleset_fd = ruleset.as_raw_fd();
    ns.tmp_access = tmp_access;
    ns.cwd_path = crate::sys::spawn::cpath(&cwd_path)
        .map_err(|e| TermError::from_io(&e, "sandbox: the working directory's path"))?;
    ns.cwd_id = namespaces::fd_id(cwd.as_raw_fd())
        .map_err(|e| TermError::from_io(&e, "sandbox: the working directory"))?;
    let child = Box::new(child::ChildSandbox {
        ruleset_fd: ruleset.as_raw_fd(),
        fprogs: fprogs.as_ptr(),
        n_fprogs: fprogs.len(),
        // Root, or a process with a user namespace (where it holds every capability until it
        // execs), locks root's capabilities away.
        // SAFETY: geteuid has no preconditions.
        lock_root: userns || unsafe { libc::geteuid() } == 0,
    });
    Ok(SandboxLaunch {
        _ruleset: ruleset,
        _fprogs: fprogs,
        ns,
        child,
        proxy,
        _netns: netns,
        premade,
        _in_flight: in_flight,
    })
}

/// A sandbox ready for one launch: the namespace plan (with the mounts) and the command's
/// confinement.
#[derive(Debug)]
pub struct SandboxLaunch {
    pub(super) _ruleset: std::os::fd::OwnedFd,
    pub(super) _fprogs: Vec<libc::sock_fprog>,
    pub(super) ns: Box<namespaces::NsPlan>,
    pub(super) child: Box<child::ChildSandbox>,
    /// With a proxy: the socketpair the launch passes the namespace's listener over.
    pub(super) proxy: Option<proxy::Channel>,
    /// The network namespace made ahead that the launch joins (closed with the launch).
    pub(super) _netns: Option<super::netpool::FreshNetns>,
    /// The sandbox made ahead that the launch joins: its init goes to the guard (a failed
    /// launch drops it, which ends it).
    pub(super) premade: Option<super::premade::Premade>,
    /// Holds the pool back until the launch is done (dropped with it).
    pub(super) _in_flight: Option<super::premade::InFlight>,
}

// SAFETY: the raw pointers inside the `sock_fprog`s point into programs that live as long as
// the process (see `seccomp::program`); nothing in them is ever written after creation.
unsafe impl Send for SandboxLaunch {}

impl SandboxLaunch {
    /// The launch's two steps: the isolation (namespaces) and the confinement before exec
    /// (valid while `self` lives).
    pub fn steps(&self) -> ChildSteps {
        ChildSteps {
            isolate: Some(Isolation {
                enter: namespaces::enter,
                arg: &*self.ns as *const namespaces::NsPlan as *const libc::c_void,
            }),
            confine: Some(ChildStep {
                run: child::confine,
                arg: &*self.child as *const child::ChildSandbox as *const libc::c_void,
            }),
        }
    }

    /// The guard that owns the namespace's init (`init_pid` from the launch, or the init of
    /// the sandbox made ahead that it joined) and, with a proxy, the namespace's listener,
    /// received from the launch. A listener that cannot be received is
    /// `ERR_SANDBOX_UNAVAILABLE` (the guard, dropped, ends the namespace).
    pub fn into_guard(mut self, init_pid: Option<i32>) -> Result<SandboxGuard, TermError> {
        let premade = self.premade.take().map(super::premade::Premade::into_init);
        let mut guard = SandboxGuard {
            init_pid: init_pid.or(premade),
            listener: None,
        };
        if let Some(channel) = &self.proxy {
            let fd = channel
                .receive()
                .map_err(|e| unavailable("the network proxy's listener", e))?;
            guard.listener = Some(NetworkListener(fd));
        }
        Ok(guard)
    }
}

/// Owns the namespace's init of a sandboxed terminal. Dropping it (at release) SIGKILLs the
/// init at once (the kernel then kills every process still in the namespace and frees its
/// tmpfs and IPC objects) and reaps it on a background thread, off the release path.
/// [`SandboxGuard::finish_now`] reaps before returning.
#[derive(Debug)]
pub struct SandboxGuard {
    pub(super) init_pid: Option<i32>,
    /// The proxy's listener in the namespace, until the host takes it (closed with the guard).
    pub(super) listener: Option<NetworkListener>,
}

/// The listening TCP socket of a sandbox's network namespace ([`super::PROXY_ADDR`]), for the
/// host's proxy. Its owner closes it; while it is open it keeps the namespace's network alive.
#[derive(Debug)]
pub struct NetworkListener(std::os::fd::OwnedFd);

impl NetworkListener {
    /// The descriptor number, owned by the caller from now on.
    pub fn into_raw_fd(self) -> i32 {
        std::os::fd::IntoRawFd::into_raw_fd(self.0)
    }
}

impl SandboxGuard {
    /// Takes the proxy's listener (once; `None` without `network: { allow }`).
    pub fn take_listener(&mut self) -> Option<NetworkListener> {
        self.listener.take()
    }

    /// Kills the namespace and reaps its init before returning if it ends within 50 ms (for a
    /// process about to exit, where a background thread may not get to it; the kernel ends the
    /// namespace's processes either way).
    pub fn finish_now(mut self) {
        if let Some(pid) = self.init_pid.take() {
            cleanup::kill_init(pid);
            cleanup::reap_soon(pid, std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for SandboxGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.init_pid.take() {
            cleanup::kill_init(pid);
            cleanup::reap_later(pid);
        }
    }
}

/// The sandbox's answer to an error of its launch steps: `ERR_SANDBOX_UNAVAILABLE` naming the
/// part the kernel refused (`code` is the failed [`child::Step`]).
pub fn step_error(code: i32, context: &str, e: &dyn std::fmt::Display) -> TermError {
    if code == child::Step::Cwd as i32 {
        // Not the kernel's refusal: the directory that was checked is not found at its path in
        // the new tree (moved, replaced or swapped for a symlink since): nothing is started.
        return TermError::invalid_cwd(format!(
            "{context}: the working directory is no longer the one that was checked at its \
             path (it was moved or replaced): {e}"
        ));
    }
    let part = child::Step::from_i32(code).map_or("an unknown step", child::Step::part);
    TermError::new(
        ERR_SANDBOX_UNAVAILABLE,
        format!("{context}: sandbox: {part} was refused by the kernel: {e}"),
    )
}
