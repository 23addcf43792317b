//! The cgroup step (Linux): the child moves itself into the terminal's cgroups (their
//! `cgroup.procs` files, which the containment made) before it runs, so everything it starts
//! is in them from the first instruction. Elsewhere there are no cgroups (`sys::cgroup`).

use std::os::fd::RawFd;

/// At most this many cgroups are joined (a terminal has two at most: its cgroup, its pids
/// cgroup).
pub const MAX_CGROUPS: usize = 4;

/// Joins each of `procs` (`cgroup.procs` paths), best effort: without the cgroup, the process
/// group still contains the command.
///
/// # Safety
/// Only in a child about to `execve`; every pointer is a C string that outlives the call.
pub unsafe fn join_best_effort(procs: &[*const libc::c_char]) {
    for &path in procs {
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, b"0".as_ptr() as *const libc::c_void, 1);
            libc::close(fd);
        }
    }
}

/// Opens each of `procs` for a join later ([`join_opened`]), here, in the host's mount
/// namespace (in a sandbox's, /sys is read-only). Not best effort: `Err(errno)` (E2BIG for
/// more than [`MAX_CGROUPS`]).
///
/// # Safety
/// As [`join_best_effort`].
pub unsafe fn open(procs: &[*const libc::c_char]) -> Result<[RawFd; MAX_CGROUPS], i32> {
    let mut fds: [RawFd; MAX_CGROUPS] = [-1; MAX_CGROUPS];
    if procs.len() > MAX_CGROUPS {
        return Err(libc::E2BIG);
    }
    for (slot, &path) in fds.iter_mut().zip(procs) {
        *slot = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
        if *slot < 0 {
            return Err(*libc::__errno_location());
        }
    }
    Ok(fds)
}

/// Joins (and closes) the cgroups [`open`] opened. (A write checks the opener's credentials,
/// so it works after the caller entered a user namespace too.) `Err(errno)`.
///
/// # Safety
/// As [`join_best_effort`]; `fds` came from [`open`].
pub unsafe fn join_opened(fds: &[RawFd; MAX_CGROUPS]) -> Result<(), i32> {
    for &fd in fds.iter().take_while(|&&fd| fd >= 0) {
        let n = libc::write(fd, b"0".as_ptr() as *const libc::c_void, 1);
        let e = *libc::__errno_location();
        libc::close(fd);
        if n != 1 {
            return Err(e);
        }
    }
    Ok(())
}
