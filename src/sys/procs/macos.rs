//! macOS: the process table from libproc. `proc_listallpids` for the pids,
//! `proc_pidinfo(PROC_PIDT_SHORTBSDINFO)` for parent, group and state (readable for every
//! user's processes, zombies included), and `getsid` for the session (libproc does not carry
//! it; the kernel answers for any pid).

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
    let sid = unsafe { libc::getsid(pid) };
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

/// The table entry from libproc's fields and `getsid`'s answer: a zombie is not live, and its
/// session may already be unknown (-1, reported as 0); a live process whose session cannot be
/// read has just exited and is left out.
fn entry(pid: i32, ppid: u32, pgid: u32, status: u32, sid: i32) -> Option<ProcInfo> {
    let live = status != libc::SZOMB;
    if live && sid < 0 {
        return None;
    }
    Some(ProcInfo {
        pid,
        ppid: ppid as i32,
        pgrp: pgid as i32,
        sid: sid.max(0),
        live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zombies_are_not_live_and_a_vanished_process_is_left_out() {
        let live = entry(10, 1, 10, 2, 10).unwrap();
        assert_eq!(
            (live.ppid, live.pgrp, live.sid, live.live),
            (1, 10, 10, true)
        );
        let zombie = entry(11, 10, 10, libc::SZOMB, -1).unwrap();
        assert_eq!((zombie.sid, zombie.live), (0, false));
        assert_eq!(entry(12, 1, 12, 2, -1), None);
    }

    #[test]
    fn lists_this_process_and_never_pid_0() {
        let me = std::process::id() as i32;
        assert!(all_pids().contains(&me));
        assert!(!all_pids().contains(&0));
        assert_eq!(info(0), None);
    }
}
