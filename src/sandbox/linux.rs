//! Linux: the sandbox of this module's design, its launch steps and what outlives the launch
//! (the namespace's init, owned by a [`SandboxGuard`]).

use std::os::fd::AsFd;

use super::{
    child, cleanup, namespaces, proxy, roots, unavailable, SandboxSpec, ERR_SANDBOX_UNAVAILABLE,
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

/// The sandbox for one launch of a command in `cwd` on `ends` (the pty slave, if any, is
/// the command's terminal): see [`super::prepare`].
pub fn prepare_launch(
    spec: &SandboxSpec,
    cwd: &Dir,
    ends: &Ends,
    field: &str,
) -> Result<SandboxLaunch, TermError> {
    super::prepare(spec, cwd.as_fd(), ends.tty(), field)
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
    pub(super) _netns: Option<super::netpool::Prepared>,
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

    /// The guard that owns the namespace's init (`init_pid` from the launch) and, with a
    /// proxy, the namespace's listener, received from the launch. A listener that cannot be
    /// received is `ERR_SANDBOX_UNAVAILABLE` (the guard, dropped, ends the namespace).
    pub fn into_guard(self, init_pid: Option<i32>) -> Result<SandboxGuard, TermError> {
        let mut guard = SandboxGuard {
            init_pid,
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

    /// Kills the namespace and reaps its init before returning (for a process about to exit,
    /// where a background thread would not get to it).
    pub fn finish_now(mut self) {
        if let Some(pid) = self.init_pid.take() {
            cleanup::kill_init(pid);
            cleanup::reap(pid);
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
