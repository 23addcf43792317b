//! Turning a request into a running child: [`plan`] checks and resolves it; [`spawn`] makes its
//! descriptors and launches it.
//!
//! The child gets stdin from the null device (or a pipe we write to), stdout and stderr on
//! ONE pipe (so the order of writes is kept), and its own process group. On a pty, the child
//! instead leads a new session with the pty's slave as its controlling terminal and as stdin,
//! stdout and stderr (Windows: a pseudo console). It is started by [`crate::sys::spawn`]
//! without forking Node, through the launch's steps (`sys/spawn/steps/`): on Unix a new
//! group or session, a parent-death signal (Linux), resource limits and the terminal's
//! cgroups in the child before exec; on Windows the terminal's job.
//!
//! With a sandbox ([`crate::sandbox`]), the launch composes its steps: the sandbox's
//! isolation (namespaces, mounts, the init) and confinement (capabilities, `no_new_privs`,
//! Landlock, seccomp) around the launch's own (session, rlimits, cgroup); the command leads a
//! new session, and TMPDIR is its private /tmp. A part the kernel cannot provide is
//! `ERR_SANDBOX_UNAVAILABLE`.

use crate::error::TermError;
use crate::sandbox::SandboxGuard;
use crate::sys::contain::Holder;
use crate::sys::spawn::{self as launch, Argv, Command, Leader, Started};

mod plan;

pub use crate::sys::spawn::{Io, Limits};
pub use plan::{
    canonical_roots, check_env_name, check_text, cwd_in_roots, env_defaults, plan, resolve, Shell,
    SpawnPlan, SpawnRequest,
};

/// Starts the planned child in what `holder` puts it into ([`Holder::join`]: its rlimits and
/// cgroups; on Windows its job): its own process group (a new session on a pty, or with a
/// sandbox), stdin on the null device (or a pipe), stdout and stderr on one pipe, or all
/// three on a pty ([`crate::sys::spawn`]). With it, the [`Leader`] its containment takes and,
/// when sandboxed, the guard of what the sandbox leaves running (its namespace's init).
pub fn spawn(
    plan: &SpawnPlan,
    holder: &Holder,
) -> Result<(Started, Leader, Option<SandboxGuard>), TermError> {
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
    let sandbox = plan
        .sandbox
        .as_ref()
        .map(|sb| crate::sandbox::prepare_launch(sb, &plan.cwd_dir, &ends, "options.sandbox"))
        .transpose()?;
    // A sandbox gives the command its private /tmp as TMPDIR (and behind the network proxy,
    // the proxy variables).
    let env_override = sandbox.as_ref().map(|_| {
        let mut env = plan.env.clone();
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".into(), "/tmp".into()));
        if plan.sandbox.as_ref().is_some_and(|sb| sb.proxy.is_some()) {
            let (set, removed) = crate::sandbox::proxy_env();
            env.retain(|(k, _)| {
                !removed.iter().any(|n| k == *n) && !set.iter().any(|(n, _)| k == n.as_str())
            });
            env.extend(set.into_iter().map(|(k, v)| (k.into(), v.into())));
        }
        env
    });
    let (started, leader) = launch::spawn(
        Command {
            program: &plan.program,
            argv: if plan.shell_line {
                Argv::ShellLine(&plan.argv)
            } else {
                Argv::Program(&plan.argv)
            },
            env: env_override.as_deref().unwrap_or(&plan.env),
            cwd: &plan.cwd_dir,
            // A sandboxed command leads a session of its own even on pipes: no controlling
            // terminal (Node's would let it type into the user's shell with TIOCSTI).
            join: holder.join(sandbox.is_some()),
            steps: sandbox.as_ref().map(|s| s.steps()),
        },
        ends,
    )
    .map_err(|e| launch_error(e, &ctx()))?;
    let guard = sandbox
        .map(|s| s.into_guard(started.init_pid))
        .transpose()?;
    Ok((started, leader, guard))
}

/// A launch failure as a core error, decoded once here: a failed sandbox step is
/// `ERR_SANDBOX_UNAVAILABLE` naming the part (the kernel refused it), anything else keeps its
/// errno as the code.
fn launch_error(e: std::io::Error, context: &str) -> TermError {
    if let Some(code) = launch::failed_step(&e) {
        return crate::sandbox::step_error(code, context, &e);
    }
    match launch::child_errno(&e) {
        Some(errno) => TermError::from_errno(errno, format!("{context}: {e}")),
        None => TermError::from_io(&e, context),
    }
}

// Unix paths and processes; Windows is tested through the package (`__test__/windows`).
#[cfg(all(test, unix))]
mod tests;
