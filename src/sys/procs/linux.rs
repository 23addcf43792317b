//! The process table from /proc.

use super::ProcInfo;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_comm_with_spaces_and_parens() {
        let i = parse_stat(7, "7 (a b) (c)) Z 3 4 5 0 0").unwrap();
        assert_eq!((i.ppid, i.pgrp, i.sid, i.live), (3, 4, 5, false));
        assert!(parse_stat(7, "garbage").is_none());
    }
}
