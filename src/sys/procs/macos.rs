//! macOS: the process table from libproc. `proc_listallpids` for the pids,
//! `proc_pidinfo(PROC_PIDT_SHORTBSDINFO)` for parent, group and state (readable for every
//! user's processes, zombies included), and `getsid` for the session (libproc does not carry
//! it; xnu answers for any pid, whatever its session).

use std::mem::MaybeUninit;

use super::ProcInfo;

pub(super) fn list() -> Vec<ProcInfo> {
    all_pids().into_iter().filter_map(info).collect()
}

/// Every pid but 0 (the kernel, which `getsid(0)` would take for ourselves).
fn all_pids() -> Vec<i32> {
    // SAFETY: with no buffer, proc_listallpids only answers how many pids there are.
    let estimate = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    let mut cap = estimate.max(0) as usize + 64;
    loop {
        let mut pids = vec![0 as libc::pid_t; cap];
        let bytes = (cap * std::mem::size_of::<libc::pid_t>()) as libc::c_int;
        // SAFETY: the buffer holds `cap` pids and `bytes` is its size; returns the count.
        let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
        if n < 0 {
            return Vec::new();
        }
        let n = n as usize;
        if n < cap {
            pids.truncate(n);
            pids.retain(|&p| p > 0);
            return pids;
        }
        // The table grew past the estimate: try again with room to spare.
        cap *= 2;
    }
}

fn info(pid: i32) -> Option<ProcInfo> {
    if pid <= 0 {
        return None;
    }
    let mut bsd = MaybeUninit::<libc::proc_bsdshortinfo>::zeroed();
    let size = std::mem::size_of::<libc::proc_bsdshortinfo>() as libc::c_int;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `bsd` and returns how many.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDT_SHORTBSDINFO,
            0,
            bsd.as_mut_ptr().cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    // SAFETY: fully written (n == size); all-integer fields, any bit pattern is valid.
    let bsd = unsafe { bsd.assume_init() };
    // SAFETY: getsid only reads the process table.
    let sid = match unsafe { libc::getsid(pid) } {
        s if s >= 0 => Ok(s),
        _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)),
    };
    entry(pid, bsd.pbsi_ppid, bsd.pbsi_pgid, bsd.pbsi_status, sid)
}

pub(super) fn start_time(pid: i32) -> Option<u64> {
    let mut bsd = MaybeUninit::<libc::proc_bsdinfo>::zeroed();
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `bsd` and returns how many.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            bsd.as_mut_ptr().cast(),
            size,
        )
    };
    if pid <= 0 || n != size {
        return None;
    }
    // SAFETY: fully written (n == size); all-integer fields, any bit pattern is valid.
    let bsd = unsafe { bsd.assume_init() };
    Some(bsd.pbi_start_tvsec * 1_000_000 + bsd.pbi_start_tvusec)
}

/// The table entry from libproc's fields and `getsid`'s answer (a session id, or an errno).
/// A zombie is not live, and its session may be unknown already. A live process that `getsid`
/// no longer finds (`ESRCH`) has just exited and is left out; one whose session it will not
/// tell (any other error) is kept with session -1, which matches no session: its ancestry
/// still places it in a session tree.
fn entry(pid: i32, ppid: u32, pgid: u32, status: u32, sid: Result<i32, i32>) -> Option<ProcInfo> {
    let live = status != libc::SZOMB;
    let sid = match sid {
        Ok(sid) => sid,
        Err(libc::ESRCH) if live => return None,
        Err(_) => -1,
    };
    Some(ProcInfo {
        pid,
        ppid: ppid as i32,
        pgrp: pgid as i32,
        sid,
        live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zombies_are_not_live_and_a_vanished_process_is_left_out() {
        let live = entry(10, 1, 10, 2, Ok(10)).unwrap();
        assert_eq!(
            (live.ppid, live.pgrp, live.sid, live.live),
            (1, 10, 10, true)
        );
        let zombie = entry(11, 10, 10, libc::SZOMB, Err(libc::ESRCH)).unwrap();
        assert_eq!((zombie.sid, zombie.live), (-1, false));
        assert_eq!(entry(12, 1, 12, 2, Err(libc::ESRCH)), None);
        let unknown = entry(13, 1, 13, 2, Err(libc::EPERM)).unwrap();
        assert_eq!((unknown.sid, unknown.live), (-1, true));
    }

    #[test]
    fn lists_this_process_and_never_pid_0() {
        let me = std::process::id() as i32;
        assert!(all_pids().contains(&me));
        assert!(!all_pids().contains(&0));
        assert_eq!(info(0), None);
    }
}
