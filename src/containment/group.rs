//! Targets made of plain process ids: a process group, and a shell's session tree (Windows
//! has neither, a terminal's job holds its tree: [`crate::sys::contain`] never makes one
//! there). What they are and how they are signalled is the platform's
//! ([`crate::sys::contain`]); here they become [`Target`]s.

use super::escalate::GROUP_POLL;
use super::{escalate, Target};
pub use crate::sys::contain::{ProcessGroup, SessionTree};
use crate::sys::signals::Stop;

impl Target for ProcessGroup {
    fn signal(&self, stop: Stop) {
        self.signal(stop);
    }

    fn alive(&self) -> bool {
        self.any_alive()
    }
}

impl Target for SessionTree {
    fn signal(&self, stop: Stop) {
        self.signal(stop);
    }

    fn alive(&self) -> bool {
        !self.pids().is_empty()
    }
}

/// How long, after SIGKILL, [`kill_group`] waits for the killed members to become zombies.
const AFTER_KILL: std::time::Duration = std::time::Duration::from_secs(2);

/// How [`kill_group`] ended a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupEnd {
    /// Nothing of the group was alive: no signal was sent.
    WasEmpty,
    /// SIGTERM (with SIGCONT) was enough: the group was empty before the grace ran out.
    Terminated,
    /// The group outlived the grace and got SIGKILL.
    Killed,
}

/// Terminates process `group` with [`escalate`] (no leader to wait for: its membership
/// is polled), then waits (bounded) until no live member is left. Says which signal ended
/// the group, if any was needed.
pub async fn kill_group(group: impl Target, grace: std::time::Duration) -> GroupEnd {
    let group = Signalled::new(group);
    if !escalate(&group, grace, async {}).await {
        return if group.any_sent() {
            GroupEnd::Terminated
        } else {
            GroupEnd::WasEmpty
        };
    }
    let deadline = tokio::time::Instant::now() + AFTER_KILL;
    while group.alive() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(GROUP_POLL).await;
    }
    GroupEnd::Killed
}

/// A target that remembers whether it was signalled at all (so "TERM was enough" is told from
/// "nothing was alive", which [`escalate`] answers alike).
struct Signalled<T> {
    target: T,
    sent: std::sync::atomic::AtomicBool,
}

impl<T: Target> Signalled<T> {
    fn new(target: T) -> Self {
        Self {
            target,
            sent: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn any_sent(&self) -> bool {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl<T: Target> Target for Signalled<T> {
    fn signal(&self, stop: Stop) {
        self.sent.store(true, std::sync::atomic::Ordering::Relaxed);
        self.target.signal(stop);
    }
    fn alive(&self) -> bool {
        self.target.alive()
    }
}

// Unix processes (Windows has no process groups).
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use nix::sys::signal::Signal;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    fn wait_until(what: &str, cond: impl FnMut() -> bool) {
        crate::sys::unixtest::wait_until(what, Duration::from_secs(10), cond);
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
        let (child, g) = group("sleep 30 & wait");
        wait_until("2 members", || g.live_members().len() == 2);
        let reaper = reap(child);
        assert_eq!(
            kill_group(g, Duration::from_secs(10)).await,
            GroupEnd::Terminated
        );
        reaper.join().unwrap();
        let (child, g) = group("trap '' TERM; while :; do sleep 0.05; done");
        wait_until("the trap", || g.live_members().len() >= 2);
        let reaper = reap(child);
        assert_eq!(
            kill_group(g, Duration::from_millis(200)).await,
            GroupEnd::Killed
        );
        reaper.join().unwrap();
        assert_eq!(
            kill_group(g, Duration::from_secs(10)).await,
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
            crate::sys::unixtest::setsid_bash("set -m; sleep 30 & set +m; setsid sleep 30 & wait")
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
