//! The process table from /proc.

use super::{ProcInfo, WaitState};

pub(super) fn list() -> Vec<ProcInfo> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(info)
        .collect()
}

fn info(pid: i32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

/// "pid (comm) state ppid pgrp session ...": comm may contain spaces and parentheses.
fn parse_stat(pid: i32, stat: &str) -> Option<ProcInfo> {
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut f = rest.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    Some(ProcInfo {
        pid,
        ppid: f.next()?.parse().ok()?,
        pgrp: f.next()?.parse().ok()?,
        sid: f.next()?.parse().ok()?,
        live: state != 'Z' && state != 'X',
    })
}

pub(super) fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

/// Field 22 of `/proc/<pid>/stat`: the start time in clock ticks since boot.
fn parse_start_time(stat: &str) -> Option<u64> {
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

pub(super) fn wait_state(pid: i32) -> WaitState {
    // Stopped (SIGSTOP, SIGTSTP) or traced: whatever call it sits in, it will not return.
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        if matches!(stat_field(&stat, 0), Some("T" | "t")) {
            return WaitState::Stopped;
        }
    }
    match std::fs::read_to_string(format!("/proc/{pid}/syscall")) {
        Ok(s) => parse_syscall(&s),
        Err(_) => WaitState::Unknown,
    }
}

pub(super) fn block_site(pid: i32) -> Option<String> {
    parse_block_site(&std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?)
}

/// `/proc/<pid>/syscall` of a process blocked in a call (9 fields: number, six arguments, stack
/// and instruction pointers): the number, the first three arguments and both pointers, joined by
/// spaces. `None` for `running`, a process blocked outside a call, or anything else.
fn parse_block_site(text: &str) -> Option<String> {
    let f: Vec<&str> = text.split_ascii_whitespace().collect();
    if f.len() != 9 {
        return None;
    }
    Some([f[0], f[1], f[2], f[3], f[7], f[8]].join(" "))
}

/// Field `n` of `/proc/<pid>/stat` counted from the state (field 3), after the comm.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    stat.get(stat.rfind(')')? + 2..)?
        .split_ascii_whitespace()
        .nth(n)
}

pub(super) fn exec_stamp(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_exec_stamp(&stat)
}

/// Fields 26-28 of `/proc/<pid>/stat` (startcode, endcode, startstack): where the program's
/// image was mapped, randomized by each `execve`. All zero when the process may not be
/// inspected (or is a kernel thread): no stamp.
fn parse_exec_stamp(stat: &str) -> Option<String> {
    let fields: Vec<&str> = (23..=25)
        .map(|n| stat_field(stat, n))
        .collect::<Option<_>>()?;
    if fields.iter().all(|f| *f == "0") {
        return None;
    }
    Some(fields.join(":"))
}

pub(super) fn with_environment_entry(entry: &[u8]) -> Vec<i32> {
    let me = std::process::id() as i32;
    list()
        .into_iter()
        .filter(|p| p.live && p.pid != me)
        .filter(|p| {
            std::fs::read(format!("/proc/{}/environ", p.pid))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == entry))
        })
        .map(|p| p.pid)
        .collect()
}

/// `/proc/<pid>/syscall`: `running`; `-1 sp pc` (blocked outside a system call); or the call's
/// number, its six arguments in hex, sp and pc. The numbers are this architecture's (`libc`).
fn parse_syscall(text: &str) -> WaitState {
    let mut f = text.split_ascii_whitespace();
    let Some(first) = f.next() else {
        return WaitState::Unknown;
    };
    if first == "running" {
        return WaitState::Running;
    }
    let Ok(nr) = first.parse::<libc::c_long>() else {
        return WaitState::Unknown;
    };
    let arg0 = f
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
    match (nr, arg0) {
        // read(0, ..): a shell without a line editor; pselect6(1, {0}, ..): readline.
        (libc::SYS_read, Some(0)) | (libc::SYS_pselect6, Some(1)) => WaitState::ReadingStdin,
        (libc::SYS_wait4 | libc::SYS_waitid, _) => WaitState::WaitingForChild,
        _ => WaitState::Elsewhere,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_exec_stamp_and_sees_a_new_one_after_exec() {
        use std::io::Write;
        let me = std::process::id() as i32;
        let mine = exec_stamp(me).expect("own stamp");
        assert_eq!(exec_stamp(me).as_deref(), Some(mine.as_str()));
        // A shell that execs `sleep` once it reads a line: same pid, another image.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x; exec sleep 30"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // Right after the spawn the kernel may still show no image fields (the exec is not
        // complete for /proc yet, seen on a loaded machine): wait for the first stamp.
        crate::sys::unixtest::wait_until("child stamp", std::time::Duration::from_secs(10), || {
            exec_stamp(pid).is_some()
        });
        let before = exec_stamp(pid).expect("child stamp");
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let comm = || std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        crate::sys::unixtest::wait_until("exec", std::time::Duration::from_secs(10), || {
            comm().trim() == "sleep"
        });
        assert_ne!(exec_stamp(pid).expect("stamp after exec"), before);
        child.kill().unwrap();
        child.wait().unwrap();
        let stat = "1 (a) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0 0 0 0 0 0";
        assert_eq!(parse_exec_stamp(stat), None);
        let stat = "1 (a b) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0 4096 8192 12288 0";
        assert_eq!(parse_exec_stamp(stat).as_deref(), Some("4096:8192:12288"));
    }

    #[test]
    fn a_stopped_process_reads_as_stopped() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // SAFETY: plain kill(2) on our own child.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        crate::sys::unixtest::wait_until("stopped", std::time::Duration::from_secs(10), || {
            wait_state(pid) == WaitState::Stopped
        });
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        crate::sys::unixtest::wait_until("continued", std::time::Duration::from_secs(10), || {
            wait_state(pid) != WaitState::Stopped
        });
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn finds_processes_by_an_environment_entry() {
        let tag = format!("ACP_TEST_TAG={}", std::process::id());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("ACP_TEST_TAG", std::process::id().to_string())
            .spawn()
            .unwrap();
        assert_eq!(
            with_environment_entry(tag.as_bytes()),
            vec![child.id() as i32]
        );
        assert!(with_environment_entry(b"ACP_TEST_TAG=").is_empty());
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn reads_the_start_time_field() {
        let stat = "7 (a b) (c)) S 3 4 5 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
        assert_eq!(parse_start_time(stat), Some(123456));
        assert_eq!(parse_start_time("7 (x) S 1"), None);
    }

    #[test]
    fn parses_the_block_site() {
        assert_eq!(
            parse_block_site("0 0x0 0x55d0 0x1 0x4 0x5 0x6 0x7ffc 0x7f12\n").as_deref(),
            Some("0 0x0 0x55d0 0x1 0x7ffc 0x7f12")
        );
        assert_eq!(parse_block_site("running\n"), None);
        assert_eq!(parse_block_site("-1 0x7ffc 0x7f12\n"), None);
    }

    #[test]
    fn parses_the_blocking_system_call() {
        let line =
            |nr: libc::c_long, arg0: &str| format!("{nr} {arg0} 0x1 0x2 0x3 0x4 0x5 0x7ff 0x40\n");
        assert_eq!(
            parse_syscall(&line(libc::SYS_read, "0x0")),
            WaitState::ReadingStdin
        );
        assert_eq!(
            parse_syscall(&line(libc::SYS_read, "0x3")),
            WaitState::Elsewhere
        );
        assert_eq!(
            parse_syscall(&line(libc::SYS_pselect6, "0x1")),
            WaitState::ReadingStdin
        );
        assert_eq!(
            parse_syscall(&line(libc::SYS_pselect6, "0x5")),
            WaitState::Elsewhere
        );
        assert_eq!(
            parse_syscall(&line(libc::SYS_wait4, "0xffffffffffffffff")),
            WaitState::WaitingForChild
        );
        assert_eq!(
            parse_syscall(&line(libc::SYS_waitid, "0x0")),
            WaitState::WaitingForChild
        );
        assert_eq!(parse_syscall("running\n"), WaitState::Running);
        assert_eq!(parse_syscall("-1 0x7ffd 0x4005\n"), WaitState::Elsewhere);
        assert_eq!(parse_syscall(""), WaitState::Unknown);
    }

    #[test]
    fn parses_a_comm_with_spaces_and_parens() {
        let i = parse_stat(7, "7 (a b) (c)) Z 3 4 5 0 0").unwrap();
        assert_eq!((i.ppid, i.pgrp, i.sid, i.live), (3, 4, 5, false));
        assert!(parse_stat(7, "garbage").is_none());
    }
}
