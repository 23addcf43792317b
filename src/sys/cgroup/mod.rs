//! Per-terminal cgroups, where the platform has them (Linux, cgroup v2, writable): a
//! terminal's processes stay in its cgroup even after `setsid` or a double fork, so kill and
//! release reach all of them; a pids cgroup caps how many run at once (`limits.processes`).
//!
//! The interface: [`base`] / [`pids_base`] say whether (and where) they are available;
//! [`Cgroup::create`] and [`PidsCgroup::create`] answer `None` where they are not, and the
//! terminal is then contained by its process group (and session) alone. Only
//! [`crate::containment`] signals through them.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::{base, pids_base, Cgroup, PidsCgroup};
