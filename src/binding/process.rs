//! Process management exported to JS: what contains terminals here, program resolution, the
//! key table, and the process tools ShellSessions uses (session trees, process groups).

use std::ffi::OsString;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use super::args::*;
use super::errors::{js_error, rejected, settle};
use crate::error::TermError;
use crate::keys;
use crate::spawn;
use crate::terminal::DEFAULT_KILL_GRACE;

/// What this process can use to contain terminals (see the README's guarantees).
#[napi(object)]
pub struct ContainmentInfo {
    /// Each terminal gets its own cgroup (v2), so even descendants that leave the process
    /// group (`setsid`, double fork) are killed with it.
    pub cgroups: bool,
    /// `limits.processes` is also a per-terminal pids cgroup (`pids.max`): it caps the
    /// processes alive at once and holds for root. Without it, `processes` is only
    /// `RLIMIT_NPROC`, counted per user and not enforced for root.
    pub pids_limit: bool,
    /// Pid of the guardian process that kills remaining terminals if Node dies without
    /// running any code (SIGKILL, default SIGINT/SIGTERM); null if it could not start.
    pub guardian_pid: Option<u32>,
}

/// Reports how terminals are contained in this process (starts the guardian if needed).
#[napi]
pub fn containment_info() -> ContainmentInfo {
    ContainmentInfo {
        cgroups: crate::sys::cgroup::base().is_some(),
        pids_limit: crate::sys::cgroup::pids_base().is_some(),
        guardian_pid: crate::guardian::guardian_pid().map(|p| p as u32),
    }
}

/// Options of `resolveProgram()`.
#[napi(object, object_to_js = false)]
pub struct ResolveProgramOptions {
    /// Directory relative `PATH` entries and paths are resolved against (default: the Node
    /// process's cwd).
    #[napi(ts_type = "string | null")]
    pub cwd: Option<String>,
    /// The search path (default: `PATH` of the Node process's environment).
    #[napi(ts_type = "string | null")]
    pub path: Option<String>,
}

impl ResolveProgramOptions {
    fn read(o: &Object) -> Parsed<Self> {
        Ok(Self {
            cwd: opt_string(o, "cwd", "options.cwd")?,
            path: opt_string(o, "path", "options.path")?,
        })
    }
}

/// The absolute path `createTerminal` would execute for a direct (argv) request of `command`,
/// resolved exactly as it resolves it. Throws with `code` `ENOENT`, `EACCES` or
/// `ERR_INVALID_ARG`.
#[napi(ts_args_type = "command: string, options?: ResolveProgramOptions | null")]
pub fn resolve_program(env: &Env, command: Unknown, options: Option<Unknown>) -> Result<String> {
    let parsed = (|| -> Parsed<(String, Option<String>, Option<String>)> {
        let command = as_string(&command, "command")?;
        let Some(o) = options.filter(|o| !is_nullish(o).unwrap_or(true)) else {
            return Ok((command, None, None));
        };
        let o = ResolveProgramOptions::read(&as_object(&o, "options")?)?;
        Ok((command, o.cwd, o.path))
    })();
    let (command, cwd, path) = parsed.map_err(|e| js_error(env, e))?;
    let cwd = match cwd {
        Some(c) => std::path::PathBuf::from(c),
        None => std::env::current_dir().map_err(|e| {
            js_error(
                env,
                TermError::invalid_cwd(format!("the Node process's cwd: {e}")),
            )
        })?,
    };
    let path = path
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    spawn::resolve(&command, path.as_deref(), &cwd)
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| js_error(env, e))
}

/// True when `name`, as written, is a tmux key name that `sendKeys()` sends as a key: the
/// canonical spelling only (case-sensitive): optional `C-`, `M-`, `S-` prefixes, then a named
/// key exactly as tmux spells it (`Enter`, `Up`, `F5`, `PgUp`, `BSpace`, `DC`, …) or, after at
/// least one prefix, one printable ASCII character (`C-c`, `M-x`). A lone character (`q`),
/// another case (`enter`, `dc`), `^c` and unknown names (`F13`) are text. `sendKeys()` itself
/// is more lenient (case-insensitive, `^c`): every name this accepts, it accepts.
#[napi]
pub fn is_key_name(name: String) -> bool {
    keys::is_key_name(&name)
}

/// The live processes of a shell's session: every process whose session id is `shellPid`
/// (background jobs in process groups of their own too), `shellPid` itself, and every
/// descendant of those even after `setsid`. Zombies and the Node process itself are never
/// listed. Throws `ERR_INVALID_ARG` naming `shellPid` for anything but a positive integer.
#[napi(ts_args_type = "shellPid: number")]
pub fn session_tree_pids(env: &Env, shell_pid: Unknown) -> Result<Vec<u32>> {
    let sid = pid(&shell_pid, "shellPid").map_err(|e| js_error(env, e))?;
    Ok(crate::containment::SessionTree(sid)
        .pids()
        .into_iter()
        .map(|p| p as u32)
        .collect())
}

/// SIGKILLs every process of `sessionTreePids(shellPid)`, again while anything is left (a
/// process may fork while the previous round is being killed), at most 10 rounds. Never the
/// Node process itself. Throws `ERR_INVALID_ARG` naming `shellPid`.
#[napi(ts_args_type = "shellPid: number")]
pub fn kill_session_tree(env: &Env, shell_pid: Unknown) -> Result<()> {
    let sid = pid(&shell_pid, "shellPid").map_err(|e| js_error(env, e))?;
    crate::containment::SessionTree(sid).kill_all(10);
    Ok(())
}

/// Terminates process group `pgid`: SIGTERM (and SIGCONT, for stopped members) to the group,
/// then SIGKILL once `graceMs` (default 2000; an integer from 0 to 600000) has passed if any
/// member still runs. Resolves once the group is empty (zombies aside), with `true` when the
/// group had live members, `false` when there was nothing to kill. Rejects with
/// `ERR_INVALID_ARG` naming `pgid` (not a positive integer, 1, or the Node process's own
/// group) or `graceMs`.
#[napi(
    ts_args_type = "pgid: number, graceMs?: number | null",
    ts_return_type = "Promise<boolean>"
)]
pub fn kill_process_group<'env>(
    env: &'env Env,
    pgid: Unknown<'env>,
    grace_ms: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, bool>> {
    let parsed = (|| -> Parsed<(i32, Duration)> {
        let pgid = pid(&pgid, "pgid")?;
        if pgid <= 1 || pgid == nix::unistd::getpgrp().as_raw() {
            return Err(TermError::invalid_arg(format!(
                "pgid {pgid} is {}: refusing to signal it",
                if pgid <= 1 {
                    "init's group"
                } else {
                    "the Node process's own group"
                }
            )));
        }
        let grace = match &grace_ms {
            Some(g) => opt_grace(g, "graceMs")?,
            None => None,
        };
        Ok((pgid, grace.unwrap_or(DEFAULT_KILL_GRACE)))
    })();
    let (pgid, grace) = match parsed {
        Ok(v) => v,
        Err(e) => return rejected(env, e),
    };
    settle(
        env,
        async move { Ok(crate::containment::kill_group(pgid, grace).await) },
        |_env, had| Ok(had),
    )
}

/// The current working directory of process `pid` (absolute, symlinks resolved), or `null`
/// when it cannot be read (gone, or another user's). Throws `ERR_INVALID_ARG` naming `pid`.
#[napi(ts_args_type = "pid: number")]
pub fn process_cwd(env: &Env, pid: Unknown) -> Result<Option<String>> {
    let pid = self::pid(&pid, "pid").map_err(|e| js_error(env, e))?;
    Ok(crate::sys::cwd::process_cwd(pid).map(|p| p.to_string_lossy().into_owned()))
}
