//! Windows: no guardian process. A terminal's Job Object has `KILL_ON_JOB_CLOSE`, and the
//! system closes Node's handles when it goes away, however it does: the job ends the tree.

use std::path::Path;

/// Nothing to start: the jobs end with Node.
pub fn start() {}

/// Nothing to list: the terminal's job ends with Node.
pub fn track(_pgid: i32, _cgroup: Option<&Path>) {}

/// Nothing to unlist.
pub fn untrack(_pgid: i32, _cgroup: Option<&Path>) {}

/// No guardian process runs.
pub fn guardian_pid() -> Option<i32> {
    None
}
