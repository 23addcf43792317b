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

/// How the guardian kills what is left of the listed terminals once Node is gone, as `sh`
/// commands (it runs without Node, so it cannot call this module). `$live` holds the
/// terminals' ids as `" id1 id2 "`: a terminal's process group id, which is also its session
/// id on a pty. `before_groups` runs before the guardian kills those process groups,
/// `after_groups` after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardianKill {
    /// Commands run before the process groups are killed.
    pub before_groups: &'static str,
    /// Commands run after the process groups were killed.
    pub after_groups: &'static str,
}

/// Linux: every process whose session id (field 6 of `/proc/<pid>/stat`) is listed. Sessions
/// survive their leader, so this runs after the groups are killed and also catches what they
/// forked meanwhile.
const PROC_SESSION_KILL: &str = concat!(
    r#"for f in /proc/[0-9]*/stat; do "#,
    r#"read -r s < "$f" 2>/dev/null || continue; set -- ${s##*) }; "#,
    r#"case $live in *" $4 "*) p=${f#/proc/}; kill -9 "${p%/stat}" 2>/dev/null ;; esac; done; "#,
);

/// Without `/proc` (macOS, whose `ps` shows no session id): every process of a listed group and
/// every descendant of those, from one `ps` snapshot. It runs before the groups are killed:
/// once a shell dies, its jobs are reparented and the tree is lost.
const PS_TREE_KILL: &str = concat!(
    r#"ps -A -o pid= -o ppid= -o pgid= 2>/dev/null | awk -v live="$live" '"#,
    r#"BEGIN { n = split(live, l, " "); for (i = 1; i <= n; i++) root[l[i]] = 1 } "#,
    r#"{ pid[NR] = $1; ppid[NR] = $2; if (($3 in root) || ($1 in root)) mark[$1] = 1 } "#,
    r#"END { do { grew = 0; for (i = 1; i <= NR; i++) "#,
    r#"if (!(pid[i] in mark) && (ppid[i] in mark)) { mark[pid[i]] = 1; grew = 1 } } while (grew); "#,
    r#"for (p in mark) print p }' | while read -r p; do kill -9 "$p" 2>/dev/null; done; "#,
);

/// This platform's [`GuardianKill`].
pub const GUARDIAN_KILL: GuardianKill = if cfg!(target_os = "linux") {
    GuardianKill {
        before_groups: "",
        after_groups: PROC_SESSION_KILL,
    }
} else {
    GuardianKill {
        before_groups: PS_TREE_KILL,
        after_groups: "",
    }
};

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
