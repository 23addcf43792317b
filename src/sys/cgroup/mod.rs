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
#[cfg(not(target_os = "linux"))]
// Windows asks only whether cgroups exist (a terminal is a Job Object there: `sys::contain`).
#[cfg_attr(windows, allow(dead_code))]
mod none;
#[cfg(not(target_os = "linux"))]
pub use none::{base, pids_base};
// Windows holds a terminal in a Job Object (`sys::contain`), not in these.
#[cfg(all(unix, not(target_os = "linux")))]
pub use none::{Cgroup, PidsCgroup};
