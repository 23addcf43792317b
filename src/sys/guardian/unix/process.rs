//! The guardian process itself: a shell exec'ing awk, which keeps the listed terminals in a
//! hash table and kills them all when its input (a pipe only Node writes to) ends.
//!
//! Protocol, one line each: `+<pgid>@<cgroup dir or ->` lists a terminal, `-…` unlists it,
//! `=` forgets everything (a full list follows). End of input: SIGKILL every listed process
//! group and cgroup, and what is left of those terminals' sessions (a pty terminal leads its
//! own session) with the platform's commands ([`GUARDIAN_KILL`]), in batches of 500
//! terminals, then kill what every cgroup directory of this Node process holds (a terminal
//! whose launch Node did not live to list is there too) and remove them.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;

use nix::errno::Errno;

use crate::sys::procs::GUARDIAN_KILL;
use crate::sys::spawn::{self, Argv, Io, Join};

/// awk keeps the live set in a hash table (O(1) a line; the shell's string matching was
/// quadratic and burned a core under 1,000 terminals). Ignored signals survive the exec.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
exec awk -v base="$1" -v pbase="$2" '
  /^=/ { split("", live); next }
  /^[+]/ { live[substr($0, 2)] = 1; next }
  /^-/ { delete live[substr($0, 2)]; next }
  # One shell command per batch of terminals: a single command line for thousands of them
  # would exceed the kernel limit for one argument (128 KiB) and kill nothing.
  function run(cmd, sids) {
    # A pty terminal leads its own session, whose jobs sit in other process groups: commands
    # of this platform (sys::procs::GUARDIAN_KILL) kill them, before or after the groups.
    if (sids != "") {
      cmd = "live=\"" sids " \"; " ENVIRON["ACP_TERMINAL_KILL_BEFORE"] cmd
      cmd = cmd ENVIRON["ACP_TERMINAL_KILL_AFTER"]
    }
    if (cmd != "") system(cmd)
  }
  END {
    cmd = ""; sids = ""; n = 0
    for (e in live) {
      at = index(e, "@"); pg = substr(e, 1, at - 1); cg = substr(e, at + 1)
      cmd = cmd "kill -9 -" pg " 2>/dev/null; "
      if (cg != "-") cmd = cmd "echo 1 > \"" cg "/cgroup.kill\" 2>/dev/null; "
      sids = sids " " pg
      if (++n % 500 == 0) { run(cmd, sids); cmd = ""; sids = "" }
    }
    run(cmd, sids); cmd = ""
    for (k = 1; k <= 2; k++) {
      b = (k == 1) ? base : pbase
      if (b == "") continue
      # Every terminal cgroup of this Node process, listed or not (a launch that Node did not
      # live to list): its cgroup.kill, then each process it still holds.
      cmd = cmd "for d in \"" b "\"/*/; do [ -d \"$d\" ] && { echo 1 > \"$d/cgroup.kill\"; for p in $(cat \"$d/cgroup.procs\"); do kill -9 $p; done; } 2>/dev/null; done; "
      cmd = cmd "i=0; while [ -d \"" b "\" ] && [ $i -lt 50 ]; do "
      cmd = cmd "for d in \"" b "\"/*/; do [ -d \"$d\" ] && rmdir \"$d\" 2>/dev/null; done; "
      cmd = cmd "rmdir \"" b "\" 2>/dev/null || sleep 0.1; i=$((i+1)); done; "
    }
    if (cmd != "") system(cmd)
  }'
"#;

/// A running guardian: its pid and the (non-blocking) write end of its input.
#[derive(Debug)]
pub(super) struct Process {
    /// Shared with the writer thread while it waits for the pipe to take more.
    pub(super) pipe: std::sync::Arc<OwnedFd>,
    pub(super) pid: i32,
    /// Reaped already (seen dead by [`Process::running`]): its pid may belong to another
    /// process by now, so it is neither signalled nor waited for again.
    pub(super) reaped: bool,
}

impl Process {
    /// False once it is stopped or has died (`waitpid(WUNTRACED | WNOHANG)`: it is our child;
    /// a dead one is reaped by this very call).
    pub(super) fn running(&mut self) -> bool {
        use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
        if self.reaped {
            return false;
        }
        let flags = WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED;
        match waitpid(nix::unistd::Pid::from_raw(self.pid), Some(flags)) {
            Ok(WaitStatus::StillAlive | WaitStatus::Continued(_)) => true,
            Ok(WaitStatus::Stopped(..)) => false,
            Err(Errno::EINTR) => true,
            // Exited, killed, or not ours to wait for: gone.
            _ => {
                self.reaped = true;
                false
            }
        }
    }

    /// Kills it at once (it can no longer act on its list), then reaps it, unless it was
    /// reaped already. Only then is its pipe closed: a live guardian that saw end-of-file would
    /// kill every listed terminal.
    pub(super) fn discard(self) {
        if !self.reaped {
            let pid = nix::unistd::Pid::from_raw(self.pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            while nix::sys::wait::waitpid(pid, None) == Err(Errno::EINTR) {}
        }
        drop(self.pipe);
    }
}

/// Starts a guardian process; `None` where it cannot start. When it ends it removes this
/// process's cgroup directories.
pub(super) fn start() -> Option<Process> {
    let base = crate::sys::cgroup::base()
        .map(|p| p.as_os_str().to_owned())
        .unwrap_or_default();
    let pids_base = crate::sys::cgroup::pids_base()
        .filter(|p| Some(*p) != crate::sys::cgroup::base())
        .map(|p| p.as_os_str().to_owned())
        .unwrap_or_default();
    start_with(&base, &pids_base)
}

/// Starts a guardian that, when it ends, removes the cgroup directories `base` and
/// `pids_base` (empty: none). It is launched as every terminal is ([`spawn::Command`]), in a
/// session of its own and without the parent-death signal: it must outlive Node.
pub(super) fn start_with(base: &OsStr, pids_base: &OsStr) -> Option<Process> {
    let root = crate::sys::cwd::open_dir("/".as_ref()).ok()?;
    let argv: Vec<OsString> = [
        "sh".as_ref(),
        "-c".as_ref(),
        // The script travels in the environment so `ps` shows a short command line.
        "eval \"$ACP_TERMINAL_GUARDIAN\"".as_ref(),
        "acp-terminal-guardian".as_ref(),
        base,
        pids_base,
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    let env: Vec<(OsString, OsString)> = [
        ("PATH", "/usr/bin:/bin"),
        ("ACP_TERMINAL_GUARDIAN", SCRIPT),
        ("ACP_TERMINAL_KILL_BEFORE", GUARDIAN_KILL.before_groups),
        ("ACP_TERMINAL_KILL_AFTER", GUARDIAN_KILL.after_groups),
    ]
    .into_iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    // Its input is a pipe only we write to (non-blocking: a guardian that stops reading costs
    // a replacement, not a hang); its output is read by nobody.
    let ends = spawn::open_ends(Io::PipeWithStdin).ok()?;
    let (started, leader) = spawn::spawn_detached(
        spawn::Command {
            program: "/bin/sh".as_ref(),
            argv: Argv::Program(&argv),
            env: &env,
            cwd: &root,
            join: Join {
                own_session: true,
                ..Join::default()
            },
            steps: None,
        },
        ends,
    )
    .ok()?;
    // Reaped by `discard` (the exit watch's reaper must not wait for it too).
    let pid = started.child.into_pid();
    debug_assert_eq!(pid, leader.pid);
    Some(Process {
        pipe: std::sync::Arc::new(started.input?),
        pid,
        reaped: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};

    /// Runs the script on `input` with echoing platform commands; returns what they printed.
    fn run_script(input: &[u8]) -> String {
        let mut child = Command::new("/bin/sh")
            .args(["-c", SCRIPT, "acp-terminal-guardian", "", ""])
            .env("ACP_TERMINAL_KILL_BEFORE", "echo before $live;")
            .env("ACP_TERMINAL_KILL_AFTER", "echo after $live;")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).unwrap();
        drop(stdin);
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert!(child.wait().unwrap().success());
        out
    }

    /// The ninth attack: Node SIGKILLed while a plain launch was under way, after its cgroup
    /// was made but before it was listed: a child that left the process group lived on, since
    /// the script only tried to remove that cgroup. It now kills what every cgroup holds.
    #[test]
    fn the_script_kills_what_an_unlisted_cgroup_holds() {
        let own = crate::sys::cgroup::base();
        // A skip is a result: it says why, and fails in strict mode.
        if !crate::test_util::require("cgroups", own.is_some(), "no writable cgroup v2 here") {
            return;
        }
        let own = own.unwrap();
        let base = own.join(format!("guardian-test-{}", std::process::id()));
        let term = base.join("t1");
        std::fs::create_dir_all(&term).unwrap();
        let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
        std::fs::write(term.join("cgroup.procs"), sleeper.id().to_string()).unwrap();
        let status = Command::new("/bin/sh")
            .args(["-c", SCRIPT, "acp-terminal-guardian"])
            .arg(&base)
            .arg("")
            .env("ACP_TERMINAL_KILL_BEFORE", "")
            .env("ACP_TERMINAL_KILL_AFTER", "")
            .stdin(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let waited = sleeper.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(waited.signal(), Some(libc::SIGKILL));
        assert!(!base.exists(), "the cgroup directories are removed");
    }

    #[test]
    fn the_script_runs_the_platform_commands_around_the_group_kills_for_the_listed_ids() {
        // Ids no process group has, so the kills in between hit nothing.
        let out = run_script(b"+2147483001@-\n+2147483002@-\n-2147483001@-\n");
        assert_eq!(out, "before 2147483002\nafter 2147483002\n");
        // `=` forgets what was listed before it.
        let out = run_script(b"+2147483001@-\n=\n+2147483003@-\n");
        assert_eq!(out, "before 2147483003\nafter 2147483003\n");
        // Batches of 500: 1,200 listed ids take three rounds.
        let mut many = String::new();
        for i in 0..1200 {
            many.push_str(&format!("+{}@-\n", 2_000_000_000 + i));
        }
        assert_eq!(run_script(many.as_bytes()).matches("before").count(), 3);
    }
}
