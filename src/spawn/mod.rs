//! Turning a request into a running child: [`plan`] checks and resolves it; [`spawn`] makes its
//! descriptors and launches it.
//!
//! The child gets stdin from the null device (or a pipe we write to), stdout and stderr on
//! ONE pipe (so the order of writes is kept), and its own process group. On a pty, the child
//! instead leads a new session with the pty's slave as its controlling terminal and as stdin,
//! stdout and stderr (Windows: a pseudo console). It is started by [`crate::sys::spawn`]
//! without forking Node: Unix applies resource limits, a parent-death signal and the
//! terminal's cgroups in the child before exec; Windows puts it in the terminal's job.
//!
//! With a sandbox ([`crate::sandbox`]), the launch composes its steps: the sandbox's
//! isolation (namespaces, mounts, the init) and confinement (capabilities, `no_new_privs`,
//! Landlock, seccomp) around the launch's own (session, rlimits, cgroup); the command leads a
//! new session, and TMPDIR is its private /tmp. A part the kernel cannot provide is
//! `ERR_SANDBOX_UNAVAILABLE`.

use std::path::PathBuf;

use crate::error::TermError;
use crate::sandbox::SandboxGuard;
use crate::sys::pty::{Control, PtySize};
use crate::sys::spawn::{self as launch, Command, Ends, Join, Leader};

mod plan;

pub use crate::sys::spawn::{Io, Limits};
pub use plan::{
    canonical_roots, check_env_name, check_text, cwd_in_roots, env_defaults, plan, resolve, Shell,
    SpawnPlan, SpawnRequest,
};

/// A started child: its exit watch, its containment's leader and our ends of its I/O.
#[derive(Debug)]
pub struct Spawned {
    /// The child (its pid, or on Windows its process handle), for the exit watch.
    pub child: crate::sys::exit_watch::Child,
    /// Our end of the merged stdout/stderr pipe (non-blocking on Unix), or the pty's output.
    pub output: crate::sys::pipe::OwnedEnd,
    /// Our end of the command's input (the stdin pipe's write end, or the pty's input);
    /// `None` when stdin is the null device.
    pub input: Option<crate::sys::pipe::OwnedEnd>,
    /// On a pty: its control (window size, modes) and the initial size.
    pub pty: Option<(Control, PtySize)>,
    /// The working directory the child got: where the directory it changed into is (symlinks
    /// resolved), whatever the checked path names by now.
    pub cwd: PathBuf,
    /// A sandboxed child's namespace init, ended when dropped (at release).
    pub sandbox: Option<SandboxGuard>,
}

/// Starts the planned child in what `join` names (its cgroups; on Windows its job): its own
/// process group (a new session on a pty, or with a sandbox), stdin on the null device (or
/// a pipe), stdout and stderr on one pipe, or all three on a pty ([`crate::sys::spawn`]).
/// With it, the [`Leader`] its containment takes.
pub fn spawn(plan: &SpawnPlan, join: Join<'_>) -> Result<(Spawned, Leader), TermError> {
    // Control characters escaped; paths (backslashes) and non-ASCII names as they are.
    let argv0: String = plan.argv[0]
        .to_string_lossy()
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    let ctx = || format!("spawning `{argv0}`");
    let ends = launch::open_ends(plan.io).map_err(|e| TermError::from_io(&e, &ctx()))?;
    let sandbox = prepare_sandbox(plan, &ends)?;
    // A sandbox gives the command its private /tmp as TMPDIR.
    let env_override = sandbox.as_ref().map(|_| {
        let mut env = plan.env.clone();
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".into(), "/tmp".into()));
        env
    });
    let started = launch::start(
        Command {
            program: &plan.program,
            argv: &plan.argv,
            shell_line: plan.shell_line,
            env: env_override.as_deref().unwrap_or(&plan.env),
            cwd: &plan.cwd_dir,
            // A sandboxed command leads a session of its own even on pipes: no controlling
            // terminal (Node's would let it type into the user's shell with TIOCSTI).
            own_session: sandbox.is_some(),
            limits: &plan.limits,
            join,
            #[cfg(target_os = "linux")]
            isolate: sandbox.as_ref().map(|s| s.isolation()),
            #[cfg(target_os = "linux")]
            confine: sandbox.as_ref().map(|s| s.confinement()),
        },
        ends,
    )
    .map_err(|e| launch_error(e, &ctx()))?;
    let cwd = crate::sys::cwd::dir_path(&plan.cwd_dir).unwrap_or_else(|_| plan.cwd.clone());
    #[cfg(target_os = "linux")]
    let sandbox = sandbox.map(|s| s.into_guard(started.init_pid));
    #[cfg(not(target_os = "linux"))]
    let sandbox: Option<SandboxGuard> = sandbox.map(|never| match never {});
    let spawned = Spawned {
        child: started.child,
        output: started.output,
        input: started.input,
        pty: started.pty,
        cwd,
        sandbox,
    };
    Ok((spawned, started.leader))
}

#[cfg(target_os = "linux")]
fn prepare_sandbox(
    plan: &SpawnPlan,
    ends: &Ends,
) -> Result<Option<crate::sandbox::Prepared>, TermError> {
    use std::os::fd::AsFd;
    plan.sandbox
        .as_ref()
        .map(|sb| crate::sandbox::prepare(sb, plan.cwd_dir.as_fd(), ends.tty(), "options.sandbox"))
        .transpose()
}

#[cfg(not(target_os = "linux"))]
fn prepare_sandbox(
    plan: &SpawnPlan,
    _ends: &Ends,
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

// Unix paths and processes; Windows is tested through the package (`__test__/windows`).
#[cfg(all(test, unix))]
mod tests;
