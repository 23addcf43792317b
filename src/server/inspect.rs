//! What a `ShellSessions` session needs to see and do to its shell from outside, answered at the
//! far end (where the shell's pids, `/proc` and pty are), so a session runs there unchanged:
//!
//! - `inspect {term}` -> `{foregroundProcessGroup, shellWait, foregroundWait, cwd, startTime,
//!   execStamp, shellSite}`: the pty's foreground process group (`tcgetpgrp`, null once the
//!   command exited), what the shell (the terminal's process) is blocked in, what the foreground
//!   group's leader is blocked in (null when the group is the shell's own or there is none), the
//!   shell's cwd, its start time, exec stamp and where it is blocked (`procs::block_site`: call,
//!   first arguments, stack and instruction pointers) (null when unreadable). Wait states are the core's names
//!   (`reading-stdin`, `waiting-for-child`, `running`, `elsewhere`, `stopped`, `unknown`).
//! - `continueShell {term}`: SIGCONT to the shell's process group (a `kill -STOP $$`).
//! - `killForeground {term, graceMs?}` -> `{pgid, signal}`: terminates the pty's foreground
//!   process group, when it is not the shell's own, TERM then KILL after `graceMs` (the core's
//!   `kill_group`); `signal` null when nothing was signalled.
//! - `sweep {term, entry, startTime?}` -> `{killed}`: SIGKILLs the shell's session tree (only
//!   while the shell's pid still has `startTime`, or no process) and every process whose initial
//!   environment holds `entry` (`NAME=value`), in rounds while any is left.
//!
//! Invariants: every pid and group comes from the terminal the server started (never from the
//! client), so nothing here reaches a process the connection could not already reach by running a
//! command; nothing blocks the connection's reader except `/proc` reads.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{now, Reply};
use crate::error::TermError;
use crate::sys::procs::{self, WaitState};
use crate::sys::signals::Stop;
use crate::terminal::{Terminal, DEFAULT_KILL_GRACE};

/// Longest grace `killForeground` takes (as `killProcessGroup`'s).
const MAX_GRACE_MS: u64 = 600_000;
/// Rounds of `sweep`'s session-tree kill (as the local session's close).
const SWEEP_ROUNDS: usize = 10;
/// How long `sweep` waits for what it killed to be gone before it answers.
const SWEEP_WAIT: Duration = Duration::from_secs(2);

fn wait_name(w: WaitState) -> &'static str {
    match w {
        WaitState::ReadingStdin => "reading-stdin",
        WaitState::WaitingForChild => "waiting-for-child",
        WaitState::Running => "running",
        WaitState::Elsewhere => "elsewhere",
        WaitState::Stopped => "stopped",
        WaitState::Unknown => "unknown",
    }
}

/// `inspect`: one look at the shell of terminal `t`.
pub(super) fn inspect(t: &Terminal) -> Result<Reply, TermError> {
    let pid = t.pid();
    let group = t.foreground_process_group()?;
    let foreground = group
        .filter(|g| *g != pid)
        .map(|g| wait_name(procs::wait_state(g)));
    now(json!({
        "foregroundProcessGroup": group,
        "shellWait": wait_name(procs::wait_state(pid)),
        "foregroundWait": foreground,
        "cwd": crate::sys::cwd::process_cwd(pid).map(|p| p.to_string_lossy().into_owned()),
        "startTime": procs::start_time(pid),
        "execStamp": procs::exec_stamp(pid),
        "shellSite": procs::block_site(pid),
    }))
}

/// `continueShell`: SIGCONT to the shell's group (it leads it), while the command runs.
pub(super) fn continue_shell(t: &Terminal) -> Result<Reply, TermError> {
    let continued = t.exit_status().is_none()
        && crate::containment::ProcessGroup::new(t.pid())
            .map(|g| g.signal(Stop::Continue))
            .unwrap_or(false);
    now(json!({ "continued": continued }))
}

/// `killForeground {graceMs?}`: the pty's foreground group, unless it is the shell's own.
pub(super) fn kill_foreground(t: &Terminal, req: &Map<String, Value>) -> Result<Reply, TermError> {
    let grace = match req.get("graceMs") {
        None | Some(Value::Null) => DEFAULT_KILL_GRACE,
        Some(v) => {
            Duration::from_millis(v.as_u64().filter(|g| *g <= MAX_GRACE_MS).ok_or_else(|| {
                TermError::invalid_arg(format!(
                    "graceMs must be an integer from 0 to {MAX_GRACE_MS}"
                ))
            })?)
        }
    };
    let pid = t.pid();
    let group = t
        .foreground_process_group()?
        .filter(|g| *g != pid && *g > 1);
    let Some(pgid) = group else {
        return now(json!({ "pgid": null, "signal": null }));
    };
    let target = crate::containment::ProcessGroup::new(pgid).map_err(|_| {
        TermError::new(
            "ENOTSUP",
            "killForeground: this platform has no process groups",
        )
    })?;
    if target.is_callers() {
        return Err(TermError::invalid_arg(format!(
            "the foreground group {pgid} is the server's own: refusing to signal it"
        )));
    }
    Ok(Box::pin(async move {
        use crate::containment::GroupEnd;
        let signal = match crate::containment::kill_group(target, grace).await {
            GroupEnd::WasEmpty => None,
            GroupEnd::Terminated => Some("SIGTERM"),
            GroupEnd::Killed => Some("SIGKILL"),
        };
        Ok(json!({ "pgid": pgid, "signal": signal }))
    }))
}

/// `sweep {entry, startTime?}`: the shell's session tree and every process tagged with `entry`.
pub(super) fn sweep(t: &Terminal, req: &Map<String, Value>) -> Result<Reply, TermError> {
    let entry = req
        .get("entry")
        .and_then(Value::as_str)
        .filter(|e| {
            e.split_once('=')
                .is_some_and(|(n, v)| !n.is_empty() && !v.is_empty() && !e.contains('\0'))
        })
        .ok_or_else(|| {
            TermError::invalid_arg(
                "entry must be NAME=value with a non-empty name and value, and no NUL",
            )
        })?
        .as_bytes()
        .to_vec();
    let start =
        match req.get("startTime") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                TermError::invalid_arg("startTime must be a non-negative integer")
            })?),
        };
    let pid = t.pid();
    // The pid names the shell still (or nothing): its session tree is the session's.
    let now_start = procs::start_time(pid);
    let tree = now_start.is_none() || now_start == start;
    Ok(Box::pin(async move {
        let killed = tokio::task::spawn_blocking(move || sweep_now(pid, tree, &entry))
            .await
            .unwrap_or(0);
        Ok(json!({ "killed": killed }))
    }))
}

/// SIGKILLs the tree of session `sid` (when `tree`) and the processes tagged `entry`, again
/// until none is left alive (a SIGKILLed process lives on until it is next scheduled) or
/// `SWEEP_WAIT` passes; returns how many distinct tagged processes were found.
fn sweep_now(sid: i32, tree: bool, entry: &[u8]) -> usize {
    let mut found = std::collections::HashSet::new();
    let deadline = std::time::Instant::now() + SWEEP_WAIT;
    loop {
        if tree {
            crate::containment::SessionTree::new(sid)
                .into_iter()
                .for_each(|t| t.kill_all(SWEEP_ROUNDS));
        }
        let tagged = procs::with_environment_entry(entry);
        if tagged.is_empty() || std::time::Instant::now() >= deadline {
            break;
        }
        found.extend(tagged.iter().copied());
        crate::sys::contain::kill_pids(&tagged);
        std::thread::sleep(Duration::from_millis(5));
    }
    found.len()
}
