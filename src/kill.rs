//! Signalling a terminal's process group, and telling whether anything of it still runs.
//!
//! A terminal's child leads its own process group (pgid = its pid), so one `killpg` reaches the
//! child and every descendant that stayed in the group. Zombies count as gone: they hold no
//! resources but a pid, and reaping orphans is their new parent's job.
//!
//! A pty terminal's child leads its own *session* (sid = its pid); a shell with job control
//! puts each job in a group of its own inside that session, so such terminals are also
//! signalled process by process across the session.

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Sends `sig` to the process group `pgid`. Returns false when the group no longer exists.
pub fn signal_group(pgid: i32, sig: Signal) -> bool {
    if pgid <= 1 {
        return false;
    }
    !matches!(killpg(Pid::from_raw(pgid), sig), Err(Errno::ESRCH))
}

/// True while some process of group `pgid` is alive (not a zombie).
pub fn group_has_live_members(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // Cheap check first: an empty group answers ESRCH without a /proc scan.
    if let Err(Errno::ESRCH) = killpg(Pid::from_raw(pgid), None) {
        return false;
    }
    // The group exists, but zombies answer signal 0 too: look for a live member.
    live_members(pgid).next().is_some()
}

/// Pids of the live (non-zombie) processes of group `pgid`, read from /proc.
pub fn live_members(pgid: i32) -> impl Iterator<Item = i32> {
    live_processes(move |pgrp, _| pgrp == pgid)
}

/// Pids of the live (non-zombie) processes whose `(pgrp, session)` match `keep`.
fn live_processes(keep: impl Fn(i32, i32) -> bool) -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(move |&pid| {
            matches!(proc_ids(pid), Some((state, pgrp, sid))
                if state != 'Z' && state != 'X' && keep(pgrp, sid))
        })
}

/// `(state, pgrp, session)` of a process from /proc/<pid>/stat.
fn proc_ids(pid: i32) -> Option<(char, i32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp session ...": comm may contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some((state, pgrp, session))
}

/// Pids of the live (non-zombie) processes of session `sid`, read from /proc.
pub fn session_members(sid: i32) -> impl Iterator<Item = i32> {
    live_processes(move |_, s| sid > 1 && s == sid)
}

/// Sends `sig` to every live process of session `sid` (whatever its group).
pub fn signal_session(sid: i32, sig: Signal) {
    for pid in session_members(sid) {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn signals_a_whole_group_and_sees_it_gone() {
        let mut child = Command::new("/bin/sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while live_members(pgid).count() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(live_members(pgid).count(), 3);
        assert!(group_has_live_members(pgid));
        assert!(signal_group(pgid, Signal::SIGKILL));
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while group_has_live_members(pgid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!group_has_live_members(pgid));
    }

    #[test]
    fn reads_state_and_group() {
        let me = std::process::id() as i32;
        let (state, pgrp, _) = proc_ids(me).unwrap();
        assert!(state == 'R' || state == 'S');
        assert_eq!(pgrp, nix::unistd::getpgrp().as_raw());
        assert!(!signal_group(1, Signal::SIGTERM), "never signals pgid 1");
        assert_eq!(session_members(1).count(), 0, "never lists session 1");
        // The test runner's own session may be 0 (started by an init that never called
        // setsid), which is never listed either: look at a session of our own making.
        assert_eq!(session_members(0).count(), 0, "never lists session 0");
    }

    #[test]
    fn lists_and_signals_a_whole_session_across_groups() {
        // A session leader whose shell puts a job in a process group of its own.
        // bash (unlike dash) keeps job control without a tty.
        let mut child = Command::new("bash");
        child.args(["-c", "set -m; sleep 30 & sleep 30 & wait"]);
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
        unsafe {
            child.pre_exec(|| {
                nix::unistd::setsid()
                    .map(drop)
                    .map_err(std::io::Error::from)
            });
        }
        let mut child = child.spawn().unwrap();
        let sid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while session_members(sid).count() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let members: Vec<i32> = session_members(sid).collect();
        assert_eq!(members.len(), 3, "{members:?}");
        assert!(members.contains(&sid));
        let groups: std::collections::HashSet<i32> = members
            .iter()
            .filter_map(|&p| proc_ids(p).map(|i| i.1))
            .collect();
        assert!(
            groups.len() > 1,
            "the jobs have groups of their own: {groups:?}"
        );
        signal_session(sid, Signal::SIGKILL);
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while session_members(sid).next().is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(session_members(sid).count(), 0);
    }
}
