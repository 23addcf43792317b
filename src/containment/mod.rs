//! Containment: what holds a command's processes, and the ONE place that signals them.
//!
//! A [`Target`] is something that can be signalled as a whole and asked whether anything of
//! it still runs: a process group ([`ProcessGroup`]), a shell's session tree
//! ([`SessionTree`]) (Windows has neither: there `sys` never makes one), or a terminal's full
//! containment ([`Containment`]: on Unix its process group, pty session and cgroups, on
//! Windows its Job Object; the platform's part is [`crate::sys::contain`]). [`escalate`] is the only implementation of
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

pub use escalate::escalate;
pub use group::{kill_group, GroupEnd, ProcessGroup, SessionTree};
pub use terminal::{hold, Containment};

use crate::sys::signals::Stop;

/// Something whose processes are signalled together.
pub trait Target: Send + Sync {
    /// Sends `stop` to every process of the target (best effort: some may be gone).
    fn signal(&self, stop: Stop);
    /// True while some process of the target is alive (not a zombie).
    fn alive(&self) -> bool;
}
