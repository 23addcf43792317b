//! The guardian: one small process (`sh` exec'ing `awk`) per Node process that kills every terminal still
//! tracked when Node goes away in a way that runs no code of ours (SIGKILL, SIGINT or SIGTERM
//! with default handling, a crash). It reads `+<pgid>@<cgroup dir>` / `-<pgid>@<cgroup dir>`
//! lines from a pipe whose write end only Node holds; end-of-file means Node is gone, and it
//! SIGKILLs every process group and cgroup still listed, and every process whose session is
//! one of those groups' ids (a pty terminal leads its own session; a shell's jobs live there in
//! groups of their own), then removes the cgroup directories.
//!
//! It runs in its own session (a Ctrl-C to Node's terminal does not reach it) and ignores the
//! usual termination signals, so it outlives Node long enough to do its job.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};

use crate::sys::spawn::{cstring, launch, LaunchSpec, SessionMode};

/// awk keeps the live set in a hash table (O(1) a line; the shell's string matching was
/// quadratic and burned a core under 1,000 terminals). Ignored signals survive the exec.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
exec awk -v base="$1" -v pbase="$2" '
  /^[+]/ { live[substr($0, 2)] = 1; next }
  /^-/ { delete live[substr($0, 2)]; next }
  END {
    cmd = ""; sids = ""
    for (e in live) {
      at = index(e, "@"); pg = substr(e, 1, at - 1); cg = substr(e, at + 1)
      cmd = cmd "kill -9 -" pg " 2>/dev/null; "
      if (cg != "-") cmd = cmd "echo 1 > \"" cg "/cgroup.kill\" 2>/dev/null; "
      sids = sids " " pg
    }
    # A pty terminal leads its own session, whose jobs sit in other process groups:
    # kill every process whose session id is a listed terminal.
    if (sids != "") {
      cmd = cmd "live=\"" sids " \"; for f in /proc/[0-9]*/stat; do "
      cmd = cmd "read -r s < \"$f\" 2>/dev/null || continue; set -- ${s##*) }; "
      cmd = cmd "case $live in *\" $4 \"*) p=${f#/proc/}; kill -9 \"${p%/stat}\" 2>/dev/null ;; esac; done; "
    }
    for (k = 1; k <= 2; k++) {
      b = (k == 1) ? base : pbase
      if (b == "") continue
      if (k == 2) cmd = cmd "for d in \"" b "\"/*/; do [ -d \"$d\" ] && for p in $(cat \"$d/cgroup.procs\"); do kill -9 $p; done 2>/dev/null; done; "
      cmd = cmd "i=0; while [ -d \"" b "\" ] && [ $i -lt 50 ]; do "
      cmd = cmd "for d in \"" b "\"/*/; do [ -d \"$d\" ] && rmdir \"$d\" 2>/dev/null; done; "
      cmd = cmd "rmdir \"" b "\" 2>/dev/null || sleep 0.1; i=$((i+1)); done; "
    }
    if (cmd != "") system(cmd)
  }'
"#;

struct Guardian {
    pipe: Mutex<Option<File>>,
    pid: i32,
}

fn guardian() -> Option<&'static Guardian> {
    static G: OnceLock<Option<Guardian>> = OnceLock::new();
    G.get_or_init(start).as_ref()
}

fn start() -> Option<Guardian> {
    let (read, write) = crate::sys::pipe::pipe_cloexec().ok()?;
    let root = crate::sys::cwd::open_dir("/".as_ref()).ok()?;
    let null: OwnedFd = File::options().write(true).open("/dev/null").ok()?.into();
    let base = crate::sys::cgroup::base()
        .map(|p| p.as_os_str().to_owned())
        .unwrap_or_default();
    let pids_base = crate::sys::cgroup::pids_base()
        .filter(|p| Some(*p) != crate::sys::cgroup::base())
        .map(|p| p.as_os_str().to_owned())
        .unwrap_or_default();
    let spec = LaunchSpec {
        program: cstring("/bin/sh".as_ref()).ok()?,
        argv: vec![
            cstring("sh".as_ref()).ok()?,
            cstring("-c".as_ref()).ok()?,
            // The script travels in the environment so `ps` shows a short command line.
            cstring("eval \"$ACP_TERMINAL_GUARDIAN\"".as_ref()).ok()?,
            cstring("acp-terminal-guardian".as_ref()).ok()?,
            cstring(&base).ok()?,
            cstring(&pids_base).ok()?,
        ],
        envp: vec![
            cstring("PATH=/usr/bin:/bin".as_ref()).ok()?,
            cstring(format!("ACP_TERMINAL_GUARDIAN={SCRIPT}").as_ref()).ok()?,
        ],
        cwd: root.as_raw_fd(),
        stdio: [read.as_raw_fd(), null.as_raw_fd(), null.as_raw_fd()],
        session: SessionMode::NewSession(None),
        rlimits: Vec::new(),
        parent_death_signal: None,
        cgroup_procs: Vec::new(),
    };
    let pid = launch(spec).ok()?;
    drop(read);
    Some(Guardian {
        pipe: Mutex::new(Some(File::from(write))),
        pid,
    })
}

fn send(line: String) {
    let Some(g) = guardian() else { return };
    let mut pipe = g.pipe.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = pipe.as_mut() {
        if f.write_all(line.as_bytes()).is_err() {
            // The guardian is gone (someone killed it): stop writing to it.
            *pipe = None;
        }
    }
}

fn entry(pgid: i32, cgroup: Option<&std::path::Path>) -> String {
    let cg = cgroup.map_or("-".to_string(), |p| p.display().to_string());
    format!("{pgid}@{cg}")
}

/// Starts watching a terminal's process group (and cgroup).
pub fn track(pgid: i32, cgroup: Option<&std::path::Path>) {
    send(format!("+{}\n", entry(pgid, cgroup)));
}

/// Stops watching it (its processes are gone).
pub fn untrack(pgid: i32, cgroup: Option<&std::path::Path>) {
    send(format!("-{}\n", entry(pgid, cgroup)));
}

/// Pid of the guardian process, if it runs.
pub fn guardian_pid() -> Option<i32> {
    guardian().map(|g| g.pid)
}
