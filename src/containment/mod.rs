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

use nix::sys::signal::Signal;

/// Something whose processes are signalled together.
pub trait Target: Send + Sync {
    /// Sends `sig` to every process of the target (best effort: some may be gone).
    fn signal(&self, sig: Signal);
    /// True while some process of the target is alive (not a zombie).
    fn alive(&self) -> bool;
}

/// How long, after SIGKILL, [`kill_group`] waits for the killed members to become zombies.
const AFTER_KILL: std::time::Duration = std::time::Duration::from_secs(2);

/// Terminates process group `pgid` with [`escalate`] (no leader to wait for: its membership
/// is polled), then waits (bounded) until no live member is left. Returns whether the group
/// had live members at all.
pub async fn kill_group(pgid: i32, grace: std::time::Duration) -> bool {
    let group = ProcessGroup(pgid);
    if !group.alive() {
        return false;
    }
    if escalate(&group, grace, async {}).await {
        let deadline = tokio::time::Instant::now() + AFTER_KILL;
        while group.alive() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(GROUP_POLL).await;
        }
    }
    true
}
