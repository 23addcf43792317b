//! Process management exported to JS: what contains terminals here, program resolution, the
//! key table, and the process tools ShellSessions uses (session trees, process groups).

use std::ffi::OsString;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use super::args::*;
use super::errors::{js_error, rejected, settle};
use crate::containment::{ProcessGroup, SessionTree};
use crate::error::TermError;
use crate::keys;
use crate::spawn;

/// What this process can use to contain terminals (see the README's guarantees).
#[napi(object, use_nullable = true)]
pub struct ContainmentInfo {
    /// Each terminal gets its own cgroup (v2), so even descendants that leave the process
    /// group (`setsid`, double fork) are killed with it.
    pub cgroups: bool,
    /// `limits.processes` is also a per-terminal pids cgroup (`pids.max`): it caps the
    /// processes alive at once and holds for root. Without it, `processes` is only
    /// `RLIMIT_NPROC`, counted per user and not enforced for root.
    pub pids_limit: bool,
    /// Pid of the guardian process that kills remaining terminals if Node dies without
    /// running any code (SIGKILL, default SIGINT/SIGTERM); null if it could not start, and
    /// on Windows, which needs none (see `jobObjects`).
    pub guardian_pid: Option<u32>,
    /// Each terminal is a Job Object (Windows): kill, timeout and release end its whole tree,
    /// detached processes included, and the tree ends when Node ends by any means (the job's
    /// `KILL_ON_JOB_CLOSE`); `limits.processes` caps the job's active processes. False on
    /// Unix, where process groups, sessions and cgroups hold a terminal.
    pub job_objects: bool,
    /// The kernel also SIGKILLs each command's direct child when Node dies (Linux
    /// `PR_SET_PDEATHSIG`). False on macOS, which has no such signal: there only the guardian
    /// acts when Node dies without running code.
    pub parent_death_signal: bool,
    /// `limits.addressSpaceBytes` is enforced (`RLIMIT_AS`). False on macOS, which does not
    /// enforce it: a request with it fails there with `ENOTSUP`.
    pub address_space_limit: bool,
    /// What `options.sandbox` can get here.
    pub sandbox: SandboxInfo,
}

/// Reports how terminals are contained in this process (starts the guardian if needed).
#[napi]
pub fn containment_info() -> ContainmentInfo {
    ContainmentInfo {
        cgroups: crate::sys::cgroup::base().is_some(),
        pids_limit: crate::sys::cgroup::pids_base().is_some(),
        guardian_pid: guardian_pid(),
        job_objects: crate::sys::contain::JOB_OBJECTS,
        parent_death_signal: crate::sys::spawn::PARENT_DEATH_SIGNAL,
        address_space_limit: crate::sys::spawn::ADDRESS_SPACE_LIMIT,
        sandbox: sandbox_info(),
    }
}

/// The guardian's pid (Unix; Windows has no guardian: the job's `KILL_ON_JOB_CLOSE` ends a
/// terminal's tree when Node dies).
fn guardian_pid() -> Option<u32> {
    crate::sys::guardian::guardian_pid().map(|p| p as u32)
}

/// The refusal of a tool by process group or session id where there are none (Windows: a
/// terminal's Job Object holds its tree, and `terminal.kill()` ends all of it): `sys`
/// refused the group or session.
fn no_process_groups(what: &str) -> TermError {
    TermError::new(
        "ENOTSUP",
        format!(
            "{what}: this platform has no process groups or sessions (Windows); a terminal's \
             job holds its whole tree, and terminal.kill() ends it"
        ),
    )
}

/// What this kernel and process provide for `options.sandbox` (`containmentInfo().sandbox`).
#[napi(object, use_nullable = true)]
pub struct SandboxInfo {
    /// A sandbox can be created here: every promise holds.
    pub available: bool,
    /// Each promise of the sandbox and whether it holds here.
    pub promises: SandboxPromises,
    /// Landlock ABI version (0: no Landlock). Writes are confined from ABI 3, TCP is also
    /// refused by Landlock from ABI 4, signals and abstract unix sockets are scoped from 6.
    pub landlock_abi: u32,
    /// Writes confined to the writable roots (Landlock ABI >= 3).
    pub filesystem: bool,
    /// How network access is refused: `'landlock+seccomp'` or `'seccomp'`; null: it cannot be.
    #[napi(ts_type = "'landlock+seccomp' | 'seccomp' | null")]
    pub network: Option<String>,
    /// How signals to processes outside the terminal are refused: `'landlock'` (ABI >= 6);
    /// null: only a PID namespace (isolateProcesses) hides them.
    #[napi(ts_type = "'landlock' | null")]
    pub signal_scoping: Option<String>,
    /// Abstract unix sockets outside the terminal are unreachable (Landlock ABI >= 6).
    pub abstract_unix_scoping: bool,
    /// How the namespaces (mount, PID, IPC) are made: `'pid-namespace'` (CAP_SYS_ADMIN) or
    /// `'user+pid-namespace'` (unprivileged user namespaces); null: they cannot be.
    #[napi(ts_type = "'pid-namespace' | 'user+pid-namespace' | null")]
    pub process_isolation: Option<String>,
    /// Why the missing parts are missing.
    pub reasons: Vec<String>,
}

/// The promises of `options.sandbox` (`containmentInfo().sandbox.promises`).
#[napi(object)]
pub struct SandboxPromises {
    /// Everything outside the writable roots is a read-only, nosuid mount (writes, chmod,
    /// utimes, xattrs fail with EROFS): the mount namespace.
    pub read_only_filesystem: bool,
    /// Writes beneath the writable roots and /tmp only, also by Landlock (ABI >= 3): the
    /// second wall.
    pub writes_confined: bool,
    /// A private tmpfs of `tmpBytes` as /tmp and TMPDIR, gone with the namespace.
    pub private_tmp: bool,
    /// /dev holds only null, zero, full, random, urandom (and tty on a pty).
    pub minimal_dev: bool,
    /// No host process is visible or reachable (PID namespace, own /proc).
    pub process_isolation: bool,
    /// No host SysV IPC object is reachable; its own go with it (IPC namespace).
    pub ipc_isolation: bool,
    /// A session of its own: no controlling terminal but its own pty.
    pub new_session: bool,
    /// `TIOCSTI` and `TIOCLINUX` refused (seccomp).
    pub no_terminal_injection: bool,
    /// Network refused unless `network: true` (seccomp).
    pub network_off: bool,
}

fn sandbox_info() -> SandboxInfo {
    let s = crate::sandbox::support();
    let ns = s.process_isolation.is_some();
    let seccomp = s.network.is_some();
    let promises = SandboxPromises {
        read_only_filesystem: ns,
        writes_confined: s.filesystem,
        private_tmp: ns,
        minimal_dev: ns,
        process_isolation: ns,
        ipc_isolation: ns,
        new_session: crate::sandbox::NEW_SESSION,
        no_terminal_injection: seccomp,
        network_off: seccomp,
    };
    SandboxInfo {
        available: s.filesystem && seccomp && ns,
        promises,
        landlock_abi: s.landlock_abi,
        filesystem: s.filesystem,
        network: s.network.map(String::from),
        signal_scoping: s.signal_scoping.map(String::from),
        abstract_unix_scoping: s.abstract_unix_scoping,
        process_isolation: s.process_isolation.map(String::from),
        reasons: s.reasons.clone(),
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

/// A variable `createTerminal` gives every command unless the request's env sets it.
#[napi(object)]
pub struct EnvDefault {
    /// The variable's name (`PAGER`).
    pub name: String,
    /// Its value (`cat`).
    pub value: String,
}

/// The variables `createTerminal` sets over the inherited environment unless the request's
/// env sets them: `PAGER=cat`, `GIT_PAGER=cat`, and with `pty` true `TERM=xterm-256color`. A
/// caller that passes its own copy of the environment with `inheritEnv: false` leaves these
/// names out of it, so the same defaults apply as to an inherited environment.
#[napi]
pub fn env_defaults(pty: Option<bool>) -> Vec<EnvDefault> {
    spawn::env_defaults(pty.unwrap_or(false))
        .into_iter()
        .map(|(name, value)| EnvDefault {
            name: name.into(),
            value: value.into(),
        })
        .collect()
}

/// Where a working directory really is and whether `createTerminal` would accept it under
/// `allowedRoots`.
#[napi(object)]
pub struct CwdInRoots {
    /// The directory `cwd` names, resolved (symlinks and `..` followed).
    pub resolved: String,
    /// True when `resolved` is one of the (resolved) roots or below one.
    pub inside: bool,
}

/// Checks `cwd` against `allowedRoots` by the rule `createTerminal` applies to
/// `options.allowedRoots`, for a caller that checks a request before starting it (the check at
/// the start is still made, on the directory the command starts in). The file system is read
/// off the JS thread. Rejects with `code` `ERR_INVALID_CWD` (missing, relative, not a
/// directory) or `ERR_INVALID_ARG` naming the field.
#[napi(
    ts_args_type = "cwd: string, allowedRoots: string[]",
    ts_return_type = "Promise<CwdInRoots>"
)]
pub fn cwd_in_roots<'env>(
    env: &'env Env,
    cwd: Unknown<'env>,
    allowed_roots: Unknown<'env>,
) -> Result<PromiseRaw<'env, CwdInRoots>> {
    let parsed = (|| -> Parsed<(String, Vec<String>)> {
        let cwd = as_string(&cwd, "cwd")?;
        let roots = as_array(&allowed_roots, "allowedRoots")?
            .iter()
            .enumerate()
            .map(|(i, r)| as_string(r, &format!("allowedRoots[{i}]")))
            .collect::<Parsed<Vec<_>>>()?;
        Ok((cwd, roots))
    })();
    let (cwd, roots) = match parsed {
        Ok(v) => v,
        Err(e) => return rejected(env, e),
    };
    settle(
        env,
        async move { spawn::cwd_in_roots(&cwd, &roots) },
        |_env, (resolved, inside)| {
            Ok(CwdInRoots {
                resolved: resolved.to_string_lossy().into_owned(),
                inside,
            })
        },
    )
}

/// The roots of `options.allowedRoots` as `createTerminal` compares a working directory with
/// them: each absolute, opened as a directory and resolved (symlinks, `..`) now, in the form the
/// opened cwd is read back in. Synchronous, for a caller that pins its roots once, when it is
/// configured. Throws with `code` `ERR_INVALID_ARG` naming `options.allowedRoots[i]` (relative,
/// a NUL byte, missing, not a directory).
#[napi(ts_args_type = "allowedRoots: string[]")]
pub fn canonical_roots(env: &Env, allowed_roots: Unknown) -> Result<Vec<String>> {
    let roots = as_array(&allowed_roots, "options.allowedRoots")
        .and_then(|items| {
            items
                .iter()
                .enumerate()
                .map(|(i, r)| as_string(r, &format!("options.allowedRoots[{i}]")))
                .collect::<Parsed<Vec<_>>>()
        })
        .map_err(|e| js_error(env, e))?;
    let resolved = spawn::canonical_roots(Some(&roots)).map_err(|e| js_error(env, e))?;
    Ok(resolved
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}

/// Throws `ERR_INVALID_ARG` naming `field` when `value` holds a NUL byte: the rule
/// `createTerminal` applies to every string it passes to the OS, for a caller that checks a
/// request before starting it.
#[napi]
pub fn check_text(env: &Env, value: String, field: String) -> Result<()> {
    spawn::check_text(&value, &field).map_err(|e| js_error(env, e))
}

/// Throws `ERR_INVALID_ARG` naming `field` unless `name` is a variable name `createTerminal`
/// accepts (non-empty, no `=`, no NUL byte), for a caller that checks a request before
/// starting it.
#[napi]
pub fn check_env_name(env: &Env, name: String, field: String) -> Result<()> {
    spawn::check_env_name(&name, &field).map_err(|e| js_error(env, e))
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
/// listed. Throws `ERR_INVALID_ARG` naming `shellPid` for anything but a positive integer,
/// and `ENOTSUP` on Windows, which has no sessions (a terminal's job holds its tree).
#[napi(ts_args_type = "shellPid: number")]
pub fn session_tree_pids(env: &Env, shell_pid: Unknown) -> Result<Vec<u32>> {
    let tree = session_tree(&shell_pid, "sessionTreePids").map_err(|e| js_error(env, e))?;
    Ok(tree.pids().into_iter().map(|p| p as u32).collect())
}

/// The session tree of the pid in `shell_pid` (`ERR_INVALID_ARG` naming `shellPid`), or
/// `what`'s `ENOTSUP` where there are no sessions.
fn session_tree(shell_pid: &Unknown, what: &str) -> Parsed<SessionTree> {
    let sid = pid(shell_pid, "shellPid")?;
    SessionTree::new(sid).map_err(|_| no_process_groups(what))
}

/// The bash a `ShellSessions` session runs unless `options.shell` names one: `'bash'` on Unix
/// (looked up in the session's `PATH` when it starts); on Windows the path of Git for
/// Windows' (or MSYS2's) `bash.exe`, found through `PATH`, then in Git's install directories
/// (never WSL's launcher `System32\bash.exe`). Throws `ERR_BASH_NOT_FOUND` where there is
/// none, saying where it looked and what to do.
#[napi]
pub fn session_bash(env: &Env) -> Result<String> {
    crate::sys::bash::session_bash().map_err(|missing| {
        js_error(
            env,
            TermError::new(
                crate::error::ERR_BASH_NOT_FOUND,
                format!(
                    "options.shell: ShellSessions runs bash, and no bash.exe was found in {}: \
                     install Git for Windows (https://git-scm.com/download/win) or set \
                     options.shell to the path of a bash.exe",
                    missing.searched
                ),
            ),
        )
    })
}

/// SIGKILLs every process of `sessionTreePids(shellPid)`, again while anything is left (a
/// process may fork while the previous round is being killed), at most 10 rounds. Never the
/// Node process itself. Throws `ERR_INVALID_ARG` naming `shellPid`, and `ENOTSUP` on
/// Windows (no sessions there: releasing the shell's terminal ends its whole job).
#[napi(ts_args_type = "shellPid: number")]
pub fn kill_session_tree(env: &Env, shell_pid: Unknown) -> Result<()> {
    let tree = session_tree(&shell_pid, "killSessionTree").map_err(|e| js_error(env, e))?;
    tree.kill_all(10);
    Ok(())
}

/// What `killProcessGroup()` did to a process group.
#[napi(object)]
pub struct ProcessGroupKill {
    /// True when the group had live members (zombies aside), which were then signalled;
    /// false when there was nothing to kill (no signal was sent).
    pub had_members: bool,
    /// The signal that ended the group: `'SIGTERM'` when the group was empty before `graceMs`
    /// ran out, `'SIGKILL'` when a member outlived the grace; null exactly when `hadMembers`
    /// is false.
    #[napi(ts_type = "'SIGTERM' | 'SIGKILL' | null")]
    pub signal: Either<String, Null>,
}

impl From<crate::containment::GroupEnd> for ProcessGroupKill {
    fn from(end: crate::containment::GroupEnd) -> Self {
        use crate::containment::GroupEnd;
        let signal = match end {
            GroupEnd::WasEmpty => None,
            GroupEnd::Terminated => Some("SIGTERM"),
            GroupEnd::Killed => Some("SIGKILL"),
        };
        Self {
            had_members: signal.is_some(),
            signal: signal.map_or(Either::B(Null), |s| Either::A(s.to_owned())),
        }
    }
}

/// What process `pid` is blocked in, seen from outside (`ShellSessions` asks whether a shell
/// sits at its prompt): `'reading-stdin'` (blocked reading fd 0: `read(0, ..)`, or readline's
/// `pselect6` on fd 0 alone), `'waiting-for-child'` (`wait4`/`waitid`), `'running'` (on a CPU:
/// ask again), `'elsewhere'` (blocked in another call: ask again), `'stopped'` (stopped by a
/// signal or traced: it runs again only on `SIGCONT`), or `'unknown'` when this
/// platform cannot tell (every platform but Linux) or the process cannot be inspected (gone,
/// another user's). Throws `ERR_INVALID_ARG` naming `pid`.
#[napi(
    ts_args_type = "pid: number",
    ts_return_type = "'reading-stdin' | 'waiting-for-child' | 'running' | 'elsewhere' | 'stopped' | 'unknown'"
)]
pub fn process_wait_state(env: &Env, pid: Unknown) -> Result<&'static str> {
    use crate::sys::procs::WaitState;
    let pid = self::pid(&pid, "pid").map_err(|e| js_error(env, e))?;
    Ok(match crate::sys::procs::wait_state(pid) {
        WaitState::ReadingStdin => "reading-stdin",
        WaitState::WaitingForChild => "waiting-for-child",
        WaitState::Running => "running",
        WaitState::Elsewhere => "elsewhere",
        WaitState::Stopped => "stopped",
        WaitState::Unknown => "unknown",
    })
}

/// Terminates process group `pgid`: SIGTERM (and SIGCONT, for stopped members) to the group,
/// then SIGKILL once `graceMs` (default 2000; an integer from 0 to 600000) has passed if any
/// member still runs. Resolves once the group is empty (zombies aside), saying whether it had
/// live members and which signal ended it (`{ hadMembers: false, signal: null }` when there
/// was nothing to kill). Rejects with `ERR_INVALID_ARG` naming `pgid` (not a positive
/// integer, 1, or the Node process's own group) or `graceMs`; on Windows, which has no
/// process groups, with `ENOTSUP` (`terminal.kill()` ends a terminal's whole tree there).
#[napi(
    ts_args_type = "pgid: number, graceMs?: number | null",
    ts_return_type = "Promise<ProcessGroupKill>"
)]
pub fn kill_process_group<'env>(
    env: &'env Env,
    pgid: Unknown<'env>,
    grace_ms: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, ProcessGroupKill>> {
    use crate::terminal::DEFAULT_KILL_GRACE;
    let parsed = (|| -> Parsed<(ProcessGroup, std::time::Duration)> {
        let pgid = pid(&pgid, "pgid")?;
        let group = ProcessGroup::new(pgid).map_err(|_| no_process_groups("killProcessGroup"))?;
        if pgid <= 1 || group.is_callers() {
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
        Ok((group, grace.unwrap_or(DEFAULT_KILL_GRACE)))
    })();
    let (group, grace) = match parsed {
        Ok(v) => v,
        Err(e) => return rejected(env, e),
    };
    settle(
        env,
        async move { Ok(crate::containment::kill_group(group, grace).await) },
        |_env, end| Ok(ProcessGroupKill::from(end)),
    )
}

/// The current working directory of process `pid` (absolute, symlinks resolved), or `null`
/// when it cannot be read (gone, or another user's), and always on Windows, where one process
/// cannot read another's working directory through a public API. Throws `ERR_INVALID_ARG`
/// naming `pid`.
#[napi(ts_args_type = "pid: number")]
pub fn process_cwd(env: &Env, pid: Unknown) -> Result<Option<String>> {
    let pid = self::pid(&pid, "pid").map_err(|e| js_error(env, e))?;
    Ok(crate::sys::cwd::process_cwd(pid).map(|p| p.to_string_lossy().into_owned()))
}

/// When process `pid` started, as a number that stays the same for the life of the process
/// and differs for a later process that reuses its pid (to tell that a pid was reused; Linux:
/// clock ticks since boot, macOS: microseconds since the epoch, Windows: its creation time in
/// 100 ns units since 1601). `null` when there is no such
/// process. Throws `ERR_INVALID_ARG` naming `pid`.
#[napi(ts_args_type = "pid: number")]
pub fn process_start_time(env: &Env, pid: Unknown) -> Result<Option<f64>> {
    let pid = self::pid(&pid, "pid").map_err(|e| js_error(env, e))?;
    Ok(crate::sys::procs::start_time(pid).map(|t| t as f64))
}

/// Where process `pid` is blocked in a system call (`/proc/<pid>/syscall` on Linux: the call,
/// its first three arguments, the user stack and instruction pointers): `ShellSessions` takes
/// it at the shell's first prompt, and a marker completes a command only when the shell blocks
/// at that same site again (a `read` of the command's blocks elsewhere). `null` when it is not
/// blocked in a call, may not be inspected, or on platforms without the reader. Throws
/// `ERR_INVALID_ARG` naming `pid`.
#[napi(ts_args_type = "pid: number")]
pub fn process_block_site(env: &Env, pid: Unknown) -> Result<Option<String>> {
    let pid = self::pid(&pid, "pid").map_err(|e| js_error(env, e))?;
    Ok(crate::sys::procs::block_site(pid))
}

/// A stamp of the program process `pid` runs, which changes when it calls `execve` (so
/// `ShellSessions` sees a shell replaced by `exec`): Linux, where its image and stack were
/// mapped (randomized on each exec; with address-space randomization off, the same program
/// gets the same stamp). `null` when there is no such process, it may not be inspected, or on
/// macOS. Throws `ERR_INVALID_ARG` naming `pid`.
#[napi(ts_args_type = "pid: number")]
pub fn process_exec_stamp(env: &Env, pid: Unknown) -> Result<Option<String>> {
    let pid = self::pid(&pid, "pid").map_err(|e| js_error(env, e))?;
    Ok(crate::sys::procs::exec_stamp(pid))
}

/// The live processes (never the Node process) whose initial environment holds `entry`
/// exactly (`NAME=value`) and that this process may inspect: what `ShellSessions` kills at
/// close beside the shell's session tree, as every process it started inherits its session's
/// tag unless it clears its environment. Linux only (`/proc/<pid>/environ`); empty elsewhere.
/// Throws `ERR_INVALID_ARG` naming `entry` unless it is `NAME=value` with a non-empty value.
#[napi(ts_args_type = "entry: string")]
pub fn processes_with_environment(env: &Env, entry: Unknown) -> Result<Vec<u32>> {
    let entry = as_string(&entry, "entry").map_err(|e| js_error(env, e))?;
    match entry.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() && !entry.contains('\0') => {}
        _ => {
            return Err(js_error(
                env,
                TermError::invalid_arg(
                    "entry must be NAME=value with a non-empty name and value, and no NUL",
                ),
            ))
        }
    }
    Ok(crate::sys::procs::with_environment_entry(entry.as_bytes())
        .into_iter()
        .map(|p| p as u32)
        .collect())
}
