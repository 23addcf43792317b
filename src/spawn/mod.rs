//! Turning a request into a running child: [`plan`] checks and resolves it; [`spawn`] makes its
//! descriptors and launches it.
//!
//! The child gets stdin from /dev/null (or a pipe we write to), stdout and stderr on ONE pipe
//! (so the order of writes is kept), and its own process group. On a pty, the child instead
//! leads a new session with the pty's slave as its controlling terminal and as stdin, stdout
//! and stderr. It is started by [`crate::sys::spawn`] without forking Node, with resource
//! limits, a parent-death signal and the terminal's cgroups applied in the child before exec.
//!
//! With a sandbox ([`crate::sandbox`]), the launch composes its steps: the sandbox's
//! isolation (namespaces, mounts, the init) and confinement (capabilities, `no_new_privs`,
//! Landlock, seccomp) around the launch's own (session, rlimits, cgroup); the command leads a
//! new session, and TMPDIR is its private /tmp. A part the kernel cannot provide is
//! `ERR_SANDBOX_UNAVAILABLE`.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use crate::error::TermError;
use crate::sandbox::SandboxGuard;
use crate::sys::pty::{self, PtySize};
use crate::sys::spawn::{self as launch, LaunchSpec, SessionMode};

mod plan;

pub use plan::{
    cwd_in_roots, env_defaults, plan, resolve, Io, Limits, Shell, SpawnPlan, SpawnRequest,
};

/// A started child: its pid (also its process group id) and its descriptors.
#[derive(Debug)]
pub struct Spawned {
    /// Child pid; the child leads its own process group (on a pty: session) with the same id.
    pub pid: i32,
    /// Non-blocking read end of the merged stdout/stderr pipe, or the pty master.
    pub output: OwnedFd,
    /// Non-blocking descriptor we write the command's input to (the stdin pipe's write end,
    /// or a duplicate of the pty master); `None` when stdin is /dev/null.
    pub input: Option<OwnedFd>,
    /// On a pty: a duplicate of the master for window-size control, and the initial size.
    pub pty: Option<(OwnedFd, PtySize)>,
    /// The working directory the child got: where the descriptor it changed into is (symlinks
    /// resolved), whatever the checked path names by now.
    pub cwd: PathBuf,
    /// A sandboxed child's namespace init, ended when dropped (at release).
    pub sandbox: Option<SandboxGuard>,
}

fn dev_null() -> Result<&'static OwnedFd, TermError> {
    static NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd);
    }
    let f = std::fs::File::open("/dev/null")
        .map_err(|e| TermError::from_io(&e, "opening /dev/null"))?;
    Ok(NULL.get_or_init(|| f.into()))
}

/// The descriptors of a launch: (our output end, the child's stdin, the child's
/// stdout/stderr, our input end, the pty control fd and size).
type Ends = (
    OwnedFd,
    Option<OwnedFd>,
    OwnedFd,
    Option<OwnedFd>,
    Option<(OwnedFd, PtySize)>,
);

/// Starts the planned child as leader of a new process group (a new session on a pty), in
/// the given cgroups (their `cgroup.procs` files), with SIGKILL as its parent-death signal. Pipes: stdin on /dev/null (or a
/// pipe), stdout+stderr on one pipe. Pty: the slave is its controlling terminal and 0, 1, 2.
/// Our copies of the child's ends are closed before returning, so EOF (EIO on a pty) arrives
/// when the child's copies are gone.
pub fn spawn(plan: &SpawnPlan, join: launch::Join<'_>) -> Result<Spawned, TermError> {
    let argv0 = plan.argv[0].as_bytes().escape_ascii().to_string();
    let ctx = || format!("spawning `{argv0}`");
    let io = |e: std::io::Error| TermError::from_io(&e, &ctx());
    let nonblock = |fd: &OwnedFd| -> Result<(), TermError> {
        fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(|e| io(e.into()))?;
        Ok(())
    };
    // (read end for us, the child's stdin, the child's stdout/stderr, our input, pty control)
    let (output, child_in, child_out, input, pty): Ends = match plan.io {
        Io::Pipe | Io::PipeWithStdin => {
            let (read, write) = crate::sys::pipe::pipe_cloexec().map_err(io)?;
            nonblock(&read)?;
            let (child_in, input) = if plan.io == Io::PipeWithStdin {
                let (r, w) = crate::sys::pipe::pipe_cloexec().map_err(io)?;
                nonblock(&w)?;
                (Some(r), Some(w))
            } else {
                (None, None)
            };
            (read, child_in, write, input, None)
        }
        Io::Pty(size) => {
            let p = pty::open(size).map_err(io)?;
            let input = pty::dup(&p.master).map_err(io)?;
            let control = pty::dup(&p.master).map_err(io)?;
            (p.master, None, p.slave, Some(input), Some((control, size)))
        }
    };
    let null = dev_null()?;
    let stdin_fd = match (&child_in, &pty) {
        (Some(r), _) => r.as_raw_fd(),
        (None, Some(_)) => child_out.as_raw_fd(),
        (None, None) => null.as_raw_fd(),
    };
    // A sandboxed command leads a session of its own even on pipes: no controlling terminal
    // (Node's would let it type into the user's shell with TIOCSTI).
    let session = match (&pty, plan.sandbox.is_some()) {
        (Some(_), _) => SessionMode::NewSession(Some(child_out.as_raw_fd())),
        (None, true) => SessionMode::NewSession(None),
        (None, false) => SessionMode::NewGroup,
    };
    let tty = pty.is_some().then(|| child_out.as_fd());
    let sandbox = prepare_sandbox(plan, tty)?;
    // A sandbox gives the command its private /tmp as TMPDIR.
    let env_override = sandbox.as_ref().map(|_| {
        let mut env = plan.env.clone();
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".into(), "/tmp".into()));
        env
    });
    let spec = LaunchSpec {
        program: launch::cpath(&plan.program).map_err(io)?,
        argv: plan
            .argv
            .iter()
            .map(|a| launch::cstring(a))
            .collect::<Result<_, _>>()
            .map_err(io)?,
        envp: launch::envp(env_override.as_deref().unwrap_or(&plan.env)).map_err(io)?,
        cwd: plan.cwd_dir.as_raw_fd(),
        stdio: [stdin_fd, child_out.as_raw_fd(), child_out.as_raw_fd()],
        session,
        rlimits: plan.limits.rlimits(),
        parent_death_signal: Some(libc::SIGKILL),
        cgroup_procs: join.cgroup_procs,
        #[cfg(target_os = "linux")]
        isolate: sandbox.as_ref().map(|s| s.isolation()),
        #[cfg(target_os = "linux")]
        confine: sandbox.as_ref().map(|s| s.confinement()),
        #[cfg(not(target_os = "linux"))]
        isolate: None,
        #[cfg(not(target_os = "linux"))]
        confine: None,
    };
    let launched = launch::launch_with(spec).map_err(|e| launch_error(e, &ctx()))?;
    let pid = launched.pid;
    // Close our copies of the child's ends now, so EOF / EIO arrives when its copies are gone.
    drop(child_out);
    drop(child_in);
    let cwd = crate::sys::cwd::dir_path(&plan.cwd_dir).unwrap_or_else(|_| plan.cwd.clone());
    #[cfg(target_os = "linux")]
    let sandbox = sandbox.map(|s| s.into_guard(launched.init_pid));
    #[cfg(not(target_os = "linux"))]
    let sandbox: Option<SandboxGuard> = sandbox.map(|never| match never {});
    Ok(Spawned {
        pid,
        output,
        input,
        pty,
        cwd,
        sandbox,
    })
}

#[cfg(target_os = "linux")]
fn prepare_sandbox(
    plan: &SpawnPlan,
    tty: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<Option<crate::sandbox::Prepared>, TermError> {
    plan.sandbox
        .as_ref()
        .map(|sb| crate::sandbox::prepare(sb, plan.cwd_dir.as_fd(), tty, "options.sandbox"))
        .transpose()
}

#[cfg(not(target_os = "linux"))]
fn prepare_sandbox(
    plan: &SpawnPlan,
    _tty: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<Option<std::convert::Infallible>, TermError> {
    plan.sandbox
        .as_ref()
        .map(|sb| crate::sandbox::prepare(sb, "options.sandbox"))
        .transpose()
}

/// A launch failure as a core error, decoded once here: a failed sandbox step is
/// `ERR_SANDBOX_UNAVAILABLE` naming the part (the kernel refused it), anything else keeps its
/// errno as the code.
fn launch_error(e: std::io::Error, context: &str) -> TermError {
    let Some(failure) = launch::launch_failure(&e) else {
        return TermError::from_io(&e, context);
    };
    #[cfg(target_os = "linux")]
    if let launch::Stage::Step(code) = failure.stage {
        return crate::sandbox::step_error(code, context, &e);
    }
    TermError::from_errno(failure.errno, format!("{context}: {e}"))
}

#[cfg(test)]
mod tests;
