//! The guardian: one small `/bin/sh` process per Node process that kills every terminal still
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

use nix::fcntl::OFlag;

use crate::launch::{cstring, launch, LaunchSpec, SessionMode};

const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
live=' '
while IFS= read -r line; do
  case $line in
    +*) live="$live${line#+} " ;;
    -*) e=${line#-}; case $live in *" $e "*) live="${live%% $e *} ${live#* $e }" ;; esac ;;
  esac
done
base=$1
for e in $live; do
  pg=${e%%@*}; cg=${e#*@}
  kill -9 -"$pg" 2>/dev/null
  [ "$cg" = - ] || echo 1 > "$cg/cgroup.kill" 2>/dev/null
done
if [ "$live" != ' ' ]; then
  for f in /proc/[0-9]*/stat; do
    read -r s < "$f" 2>/dev/null || continue
    set -- ${s##*) }
    case $live in *" $4@"*) p=${f#/proc/}; kill -9 "${p%/stat}" 2>/dev/null ;; esac
  done
fi
if [ -n "$base" ]; then
  i=0
  while [ -d "$base" ] && [ $i -lt 50 ]; do
    for d in "$base"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
    rmdir "$base" 2>/dev/null || sleep 0.1
    i=$((i+1))
  done
fi
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
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).ok()?;
    let null: OwnedFd = File::options().write(true).open("/dev/null").ok()?.into();
    let base = crate::cgroup::base()
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
        ],
        envp: vec![
            cstring("PATH=/usr/bin:/bin".as_ref()).ok()?,
            cstring(format!("ACP_TERMINAL_GUARDIAN={SCRIPT}").as_ref()).ok()?,
        ],
        cwd: cstring("/".as_ref()).ok()?,
        stdio: [read.as_raw_fd(), null.as_raw_fd(), null.as_raw_fd()],
        session: SessionMode::NewSession(None),
        rlimits: Vec::new(),
        parent_death_signal: None,
        cgroup_procs: None,
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
