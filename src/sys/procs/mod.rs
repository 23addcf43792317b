//! Listing processes: the one place that knows how to enumerate the system's processes and
//! read their ids. Everything above (containment, session trees, the guardian's fallbacks) asks
//! this module; a new platform is a new file beside `linux.rs`.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(windows)]
mod windows;

/// What the process table says about one process (Unix: Windows lists no process table; the
/// job holds the tree).
#[cfg(unix)]
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
/// is read is simply missing). Unix: Windows has no process groups or sessions to list by.
#[cfg(unix)]
pub fn list() -> Vec<ProcInfo> {
    imp::list()
}

/// When process `pid` started, as a number that stays the same for the life of the process and
/// differs for a later process that reuses its pid (Linux: clock ticks since boot; macOS:
/// microseconds since the epoch; Windows: the creation time in 100 ns units since 1601).
/// `None` when there is no such process.
pub fn start_time(pid: i32) -> Option<u64> {
    #[cfg(unix)]
    {
        imp::start_time(pid)
    }
    #[cfg(windows)]
    {
        u32::try_from(pid).ok().and_then(windows::start_time)
    }
}

/// A stamp of the program image process `pid` runs: it changes when the process calls
/// `execve` (Linux: where the image and stack were mapped, which address-space randomization
/// moves on every exec; a system with randomization off gives the same stamp to the same
/// program). `None` when there is no such process, it may not be inspected, or this platform
/// has no reader (macOS).
pub fn exec_stamp(pid: i32) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        linux::exec_stamp(pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The live processes (never this one) whose initial environment holds `entry`
/// (`NAME=value`, exactly) and that we may inspect. Linux reads `/proc/<pid>/environ`; other
/// platforms list none.
pub fn with_environment_entry(entry: &[u8]) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        linux::with_environment_entry(entry)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = entry;
        Vec::new()
    }
}

/// The live (non-zombie) processes matching `keep`.
#[cfg(unix)]
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
#[cfg(unix)]
pub fn session_tree(sid: i32) -> Vec<i32> {
    if sid <= 1 {
        return Vec::new();
    }
    let procs: Vec<ProcInfo> = list().into_iter().filter(|p| p.live).collect();
    tree_of(&procs, |p| p.sid == sid || p.pid == sid)
}

/// The processes of `procs` that match `root` plus all their descendants (by ppid), except
/// this process. Pure, so it is tested on a made-up table.
#[cfg(unix)]
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

/// What a process is doing, seen from outside (for a shell: is it at its prompt?).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Only Linux has a reader yet; elsewhere every answer is `Unknown`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub enum WaitState {
    /// Blocked reading its standard input: `read(0, ..)`, or `pselect6` on fd 0 alone (what
    /// readline waits with).
    ReadingStdin,
    /// Blocked waiting for a child to change state (`wait4`, `waitid`).
    WaitingForChild,
    /// On a CPU or runnable right now: ask again.
    Running,
    /// Blocked in another system call, or stopped outside one: ask again.
    Elsewhere,
    /// Stopped by a signal (`SIGSTOP`, `SIGTSTP`) or traced: it runs again only on `SIGCONT`.
    Stopped,
    /// This platform cannot tell, or the process cannot be inspected (gone, another user's).
    Unknown,
}

/// Where process `pid` is blocked: the system call's number, its first three arguments (for a
/// `read`: descriptor, buffer, count) and the user stack and instruction pointers, as one string
/// (Linux: from `/proc/<pid>/syscall`). A shell at its prompt reads its terminal from its main
/// loop into its own buffer; a `read` builtin or a function reads from elsewhere: the same call,
/// another site. `None` when it is not blocked in a call, cannot be inspected, or this platform
/// has no reader.
pub fn block_site(pid: i32) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        linux::block_site(pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// What process `pid` is blocked in. Linux reads `/proc/<pid>/syscall`; every other platform
/// answers [`WaitState::Unknown`] until it brings its own reader (callers must treat that
/// conservatively: it proves nothing).
pub fn wait_state(pid: i32) -> WaitState {
    #[cfg(target_os = "linux")]
    {
        linux::wait_state(pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        WaitState::Unknown
    }
}

#[cfg(unix)] // the guardian is Unix's (Windows: the job's KILL_ON_JOB_CLOSE)
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

#[cfg(unix)]
/// Linux: every process whose session id (field 6 of `/proc/<pid>/stat`) is listed. Sessions
/// survive their leader, so this runs after the groups are killed and also catches what they
/// forked meanwhile.
const PROC_SESSION_KILL: &str = concat!(
    r#"for f in /proc/[0-9]*/stat; do "#,
    r#"read -r s < "$f" 2>/dev/null || continue; set -- ${s##*) }; "#,
    r#"case $live in *" $4 "*) p=${f#/proc/}; kill -9 "${p%/stat}" 2>/dev/null ;; esac; done; "#,
);

#[cfg(unix)]
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

#[cfg(unix)]
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

#[cfg(all(test, unix))]
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
    fn a_start_time_is_stable_and_differs_for_another_process() {
        let me = std::process::id() as i32;
        let t = start_time(me).unwrap();
        assert_eq!(start_time(me), Some(t));
        assert_eq!(start_time(i32::MAX), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "read x"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let later = start_time(child.id() as i32);
        drop(child.stdin.take());
        child.wait().unwrap();
        assert!(later.unwrap() > t, "{later:?} after {t}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_reading_its_stdin_and_one_waiting_for_a_child_are_told_apart() {
        use std::process::{Command, Stdio};
        let settle = |pid: i32, want: WaitState| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                let got = wait_state(pid);
                if got == want || std::time::Instant::now() > deadline {
                    return got;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        use std::os::unix::process::CommandExt;
        let mut sh = Command::new("/bin/sh")
            .args(["-c", "sleep 100; :"])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let cat_state = settle(cat.id() as i32, WaitState::ReadingStdin);
        let sh_state = settle(sh.id() as i32, WaitState::WaitingForChild);
        drop(cat.stdin.take());
        cat.wait().unwrap();
        // SAFETY: plain kill(2) of the test's own process group (the shell and its sleep).
        unsafe { libc::kill(-(sh.id() as i32), libc::SIGKILL) };
        sh.wait().unwrap();
        assert_eq!(cat_state, WaitState::ReadingStdin);
        assert_eq!(sh_state, WaitState::WaitingForChild);
        assert_eq!(wait_state(i32::MAX), WaitState::Unknown);
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

    /// Starts `bash` leading a new session, with two jobs in process groups of their own and
    /// a grandchild that left for a session of its own; returns the leader and all pids.
    fn session_with_jobs() -> (std::process::Child, Vec<i32>) {
        // macOS has no setsid(1): there the grandchild stays in the session.
        let has_setsid = std::process::Command::new("/bin/sh")
            .args(["-c", "command -v setsid >/dev/null"])
            .status()
            .unwrap()
            .success();
        let grandchild = if has_setsid {
            "setsid sleep 100"
        } else {
            "sleep 100"
        };
        let child = crate::sys::unixtest::setsid_bash(&format!(
            "set -m; sleep 100 & sleep 100 & set +m; {grandchild} & wait"
        ))
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
        let sid = child.id() as i32;
        // Ready once all four run and the grandchild's setsid took effect (until then it is
        // still in the session, and a kill of the session would wrongly reach it).
        let ready = || {
            let pids = session_tree(sid);
            let moved = list()
                .iter()
                .filter(|i| pids.contains(&i.pid) && i.sid != sid)
                .count();
            (pids.len() == 4 && moved == usize::from(has_setsid)).then_some(pids)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut pids = ready();
        while pids.is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
            pids = ready();
        }
        let pids = pids.unwrap_or_else(|| panic!("session not set up: {:?}", session_tree(sid)));
        (child, pids)
    }

    fn run_guardian_kill(kill: &GuardianKill, sid: i32) {
        let script = format!(
            "live=\" {sid} \"; {} kill -9 -{sid} 2>/dev/null; {}",
            kill.before_groups, kill.after_groups
        );
        let status = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn is_live(pid: i32) -> bool {
        list().iter().any(|i| i.pid == pid && i.live)
    }

    fn all_gone(pids: &[i32]) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let left: Vec<i32> = pids.iter().copied().filter(|&p| is_live(p)).collect();
            if left.is_empty() {
                return true;
            }
            if std::time::Instant::now() > deadline {
                eprintln!("still alive: {left:?}");
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn the_ps_tree_kill_reaches_jobs_and_setsid_descendants() {
        // The macOS guardian's commands use only ps and awk, so they run here too.
        let (mut leader, pids) = session_with_jobs();
        let kill = GuardianKill {
            before_groups: PS_TREE_KILL,
            after_groups: "",
        };
        run_guardian_kill(&kill, leader.id() as i32);
        leader.wait().unwrap();
        assert!(all_gone(&pids));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_proc_session_kill_reaches_jobs_in_other_groups() {
        let (mut leader, pids) = session_with_jobs();
        run_guardian_kill(&GUARDIAN_KILL, leader.id() as i32);
        leader.wait().unwrap();
        // The setsid'd grandchild is in another session: only cgroups catch it on Linux.
        let leader_pid = leader.id() as i32;
        let escaped: Vec<i32> = list()
            .into_iter()
            .filter(|i| pids.contains(&i.pid) && i.live && i.sid != leader_pid)
            .map(|i| i.pid)
            .collect();
        let in_session: Vec<i32> = pids
            .iter()
            .copied()
            .filter(|p| !escaped.contains(p))
            .collect();
        assert_eq!(escaped.len(), 1, "{pids:?}");
        assert!(all_gone(&in_session));
        // SAFETY: plain kill(2) of the test's own escaped grandchild.
        unsafe { libc::kill(escaped[0], libc::SIGKILL) };
    }
}
