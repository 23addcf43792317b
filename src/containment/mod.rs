//! Containment: what holds a command's processes, and the ONE place that signals them.
//!
//! A [`Target`] is something that can be signalled as a whole and asked whether anything of
//! it still runs: a process group ([`ProcessGroup`]), a shell's session tree
//! ([`SessionTree`]), or a terminal's full containment (process group, pty session and
//! cgroups: [`TerminalContainment`]). [`escalate`] is the only implementation of
//! TERM -> grace -> KILL; `kill()`, the timeout, `release()`, `killProcessGroup()` all call it,
//! and the immediate SIGKILL paths (a handle dropped, the environment going away, a session
//! tree) call [`Target::signal`] with SIGKILL.
//!
//! Invariants:
//! - A stopped process gets SIGCONT right after SIGTERM (it acts on the TERM only once running).
//! - Zombies count as gone: they hold nothing but a pid, and reaping them is their parent's job.
//! - The escalation is bounded: it returns at most `grace` (plus one poll) after it started,
//!   having sent SIGKILL if anything was still alive then.

mod escalate;
mod group;
mod terminal;

pub use escalate::{escalate, GROUP_POLL};
pub use group::{ProcessGroup, SessionTree};
pub use terminal::{Containment, Prepared};

use crate::sys::signals::Stop;

/// Something whose processes are signalled together.
pub trait Target: Send + Sync {
    /// Sends `stop` to every process of the target (best effort: some may be gone).
    fn signal(&self, stop: Stop);
    /// True while some process of the target is alive (not a zombie).
    fn alive(&self) -> bool;
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

/// Terminates process group `pgid` with [`escalate`] (no leader to wait for: its membership
/// is polled), then waits (bounded) until no live member is left. Says which signal ended
/// the group, if any was needed.
pub async fn kill_group(pgid: i32, grace: std::time::Duration) -> GroupEnd {
    let group = Signalled::new(ProcessGroup(pgid));
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
