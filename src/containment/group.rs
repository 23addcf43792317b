//! Targets made of plain process ids: a process group, and a shell's session tree.

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use super::Target;
use crate::sys::procs;
use crate::sys::signals::Stop;

/// A process group (a terminal's child leads one: pgid = its pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup(pub i32);

impl ProcessGroup {
    /// Sends `sig` to the group; false when the group no longer exists (or is pgid 0/1).
    pub fn send(&self, sig: Signal) -> bool {
        self.0 > 1 && !matches!(killpg(Pid::from_raw(self.0), sig), Err(Errno::ESRCH))
    }

    /// Pids of the live (non-zombie) members.
    pub fn live_members(&self) -> Vec<i32> {
        let pgid = self.0;
        procs::live_where(|p| p.pgrp == pgid)
    }
}

impl Target for ProcessGroup {
    fn signal(&self, stop: Stop) {
        self.send(stop.into());
    }

    fn alive(&self) -> bool {
        if self.0 <= 1 {
            return false;
        }
        // Cheap check first: an empty group answers ESRCH without a process table scan.
        if let Err(Errno::ESRCH) = killpg(Pid::from_raw(self.0), None) {
            return false;
        }
        // The group exists, but zombies answer signal 0 too: look for a live member.
        !self.live_members().is_empty()
    }
}

/// Every process of session `sid` (whatever its group: a shell's jobs have groups of their
/// own) and every descendant of those, even after `setsid`. Never this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTree(pub i32);

impl SessionTree {
    /// The live pids of the tree.
    pub fn pids(&self) -> Vec<i32> {
        procs::session_tree(self.0)
    }

    /// True while a live process has the session id (descendants elsewhere not counted).
    pub fn session_alive(&self) -> bool {
        let sid = self.0;
        sid > 1 && !procs::live_where(|p| p.sid == sid).is_empty()
    }

    /// SIGKILLs the whole tree, again while anything is left (a process may fork while the
    /// previous round is being killed), at most `rounds` times.
    pub fn kill_all(&self, rounds: usize) {
        for _ in 0..rounds {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            signal_pids(&pids, Signal::SIGKILL);
        }
    }
}

impl Target for SessionTree {
    fn signal(&self, stop: Stop) {
        signal_pids(&self.pids(), stop.into());
    }

    fn alive(&self) -> bool {
        !self.pids().is_empty()
    }
}

/// Sends `sig` to each pid (gone ones are skipped silently).
pub(crate) fn signal_pids(pids: &[i32], sig: Signal) {
    for &pid in pids {
        let _ = kill(Pid::from_raw(pid), sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::containment::escalate;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    fn wait_until(what: &str, cond: impl FnMut() -> bool) {
        crate::test_util::wait_until(what, Duration::from_secs(10), cond);
    }

    fn group(script: &str) -> (Child, ProcessGroup) {
        let child = Command::new("/bin/sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .unwrap();
        let g = ProcessGroup(child.id() as i32);
        (child, g)
    }

    /// Reaps the leader on a thread, so that it does not stay a zombie of ours.
    fn reap(mut child: Child) -> std::thread::JoinHandle<std::process::ExitStatus> {
        std::thread::spawn(move || child.wait().unwrap())
    }

    #[tokio::test]
    async fn term_ends_a_plain_group_without_kill() {
        let (child, g) = group("sleep 30 & sleep 30 & wait");
        wait_until("3 members", || g.live_members().len() == 3);
        let reaper = reap(child);
        assert!(!escalate(&g, Duration::from_secs(10), async {}).await);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(reaper.join().unwrap().signal(), Some(libc::SIGTERM));
        wait_until("the group gone", || !g.alive());
    }

    #[tokio::test]
    async fn a_child_that_traps_term_is_killed_after_the_grace() {
        let (child, g) = group("trap '' TERM; echo ready; while :; do sleep 0.05; done");
        wait_until("the trap", || g.live_members().len() >= 2);
        std::thread::sleep(Duration::from_millis(50));
        let reaper = reap(child);
        let start = Instant::now();
        assert!(escalate(&g, Duration::from_millis(300), async {}).await);
        assert!(start.elapsed() >= Duration::from_millis(300));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(reaper.join().unwrap().signal(), Some(libc::SIGKILL));
        wait_until("the group gone", || !g.alive());
    }

    #[tokio::test]
    async fn a_stopped_child_is_continued_so_term_ends_it() {
        let (child, g) = group("exec sleep 30");
        wait_until("the member", || g.alive());
        assert!(g.send(Signal::SIGSTOP));
        let pid = child.id() as i32;
        wait_until("stopped", || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.contains(") T "))
                .unwrap_or(false)
        });
        let reaper = reap(child);
        assert!(!escalate(&g, Duration::from_secs(10), async {}).await);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(reaper.join().unwrap().signal(), Some(libc::SIGTERM));
    }

    #[tokio::test]
    async fn kill_group_says_which_signal_ended_the_group() {
        use crate::containment::{kill_group, GroupEnd};
        let (child, g) = group("sleep 30 & wait");
        wait_until("2 members", || g.live_members().len() == 2);
        let reaper = reap(child);
        assert_eq!(
            kill_group(g.0, Duration::from_secs(10)).await,
            GroupEnd::Terminated
        );
        reaper.join().unwrap();
        let (child, g) = group("trap '' TERM; while :; do sleep 0.05; done");
        wait_until("the trap", || g.live_members().len() >= 2);
        let reaper = reap(child);
        assert_eq!(
            kill_group(g.0, Duration::from_millis(200)).await,
            GroupEnd::Killed
        );
        reaper.join().unwrap();
        assert_eq!(
            kill_group(g.0, Duration::from_secs(10)).await,
            GroupEnd::WasEmpty
        );
    }

    #[test]
    fn never_signals_pgid_0_or_1() {
        assert!(!ProcessGroup(1).send(Signal::SIGTERM));
        assert!(!ProcessGroup(0).alive() && !ProcessGroup(1).alive());
    }

    #[test]
    fn a_session_tree_includes_setsid_descendants_and_dies_whole() {
        // A job in its own group (set -m) and a grandchild in a new session.
        let child =
            crate::test_util::setsid_bash("set -m; sleep 30 & set +m; setsid sleep 30 & wait")
                .spawn()
                .unwrap();
        let tree = SessionTree(child.id() as i32);
        wait_until("3 processes", || tree.pids().len() == 3);
        assert!(tree.alive());
        let reaper = reap(child);
        tree.kill_all(10);
        reaper.join().unwrap();
        wait_until("the tree gone", || tree.pids().is_empty());
    }
}
