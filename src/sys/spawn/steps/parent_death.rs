//! The parent-death step (Linux): `PR_SET_PDEATHSIG`, so a terminal's command is killed when
//! the thread that launched it (the launcher thread, which lives as long as Node) dies with
//! Node. The guardian is launched without it: it must outlive Node.

/// Arms `signal` as the child's parent-death signal, then checks the parent (`expected_ppid`:
/// our pid, or 0 inside a PID namespace) still lives: a parent gone before the signal was
/// armed would never send it. `Err(errno)` on that.
///
/// # Safety
/// Only in a child about to `execve` (raw system calls only).
pub unsafe fn arm(signal: i32, expected_ppid: libc::pid_t) -> Result<(), i32> {
    libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0);
    if libc::getppid() != expected_ppid {
        return Err(libc::ESRCH);
    }
    Ok(())
}
