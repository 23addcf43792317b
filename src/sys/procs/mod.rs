//! Listing processes: the one place that knows how to enumerate the system's processes and
//! read their ids. Everything above (containment, session trees, the guardian's fallbacks) asks
//! this module; a new platform is a new file beside `linux.rs`.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

/// What the process table says about one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    /// Process id.
    pub pid: i32,
    /// Parent's pid.
    pub ppid: i32,
    /// Process group id.
    pub pgrp: i32,
    /// Session id.
    pub sid: i32,
    /// False for zombies (and dead entries): they hold nothing but a pid.
    pub live: bool,
}

/// Every process visible to us, in no particular order (a process that exits while the table
/// is read is simply missing).
pub fn list() -> Vec<ProcInfo> {
    imp::list()
}

/// The live (non-zombie) processes matching `keep`.
pub fn live_where(keep: impl Fn(&ProcInfo) -> bool) -> Vec<i32> {
    list()
        .into_iter()
        .filter(|p| p.live && keep(p))
        .map(|p| p.pid)
        .collect()
}

/// The live processes of session `sid` and every live descendant of them, even those that
/// left the session (`setsid`). `sid` itself is included while alive. Never this process.
/// Sessions 0 and 1 (init's) are never listed.
pub fn session_tree(sid: i32) -> Vec<i32> {
    if sid <= 1 {
        return Vec::new();
    }
    let procs: Vec<ProcInfo> = list().into_iter().filter(|p| p.live).collect();
    tree_of(&procs, |p| p.sid == sid || p.pid == sid)
}

/// The processes of `procs` that match `root` plus all their descendants (by ppid), except
/// this process. Pure, so it is tested on a made-up table.
fn tree_of(procs: &[ProcInfo], root: impl Fn(&ProcInfo) -> bool) -> Vec<i32> {
    let mut members: std::collections::HashSet<i32> =
        procs.iter().filter(|p| root(p)).map(|p| p.pid).collect();
    let mut grew = true;
    while grew {
        grew = false;
        for p in procs {
            if !members.contains(&p.pid) && members.contains(&p.ppid) {
                members.insert(p.pid);
                grew = true;
            }
        }
    }
    members.remove(&(std::process::id() as i32));
    let mut out: Vec<i32> = members.into_iter().collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, sid: i32) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            pgrp: pid,
            sid,
            live: true,
        }
    }

    #[test]
    fn a_tree_follows_descendants_out_of_the_session() {
        let me = std::process::id() as i32;
        let table = [
            p(100, 1, 100),   // the shell, session leader
            p(101, 100, 100), // a job
            p(200, 101, 200), // setsid'd grandchild: another session, still a descendant
            p(201, 200, 200), // its child
            p(300, 1, 300),   // unrelated
            p(me, 100, 100),  // never ourselves
        ];
        assert_eq!(
            tree_of(&table, |p| p.sid == 100 || p.pid == 100),
            vec![100, 101, 200, 201]
        );
        assert!(tree_of(&table, |p| p.sid == 999).is_empty());
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id() as i32;
        let i = list().into_iter().find(|p| p.pid == me).unwrap();
        assert!(i.live);
        assert_eq!(i.pgrp, nix::unistd::getpgrp().as_raw());
        assert_eq!(i.ppid, nix::unistd::getppid().as_raw());
        assert!(session_tree(0).is_empty() && session_tree(1).is_empty());
    }
}
