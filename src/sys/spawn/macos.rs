//! macOS: `posix_spawn` ([`super::posix_spawn`]) with a new process group or session, signals
//! reset, the working directory and stdio as file actions, and `POSIX_SPAWN_CLOEXEC_DEFAULT`
//! so that no other descriptor reaches the child. Node is never forked for these.
//!
//! Two things `posix_spawn` cannot express; a launch that needs one forks, and the child does
//! it with async-signal-safe calls before finishing with the same prepared `posix_spawn`
//! under Apple's `POSIX_SPAWN_SETEXEC` ("exec with spawn attributes"):
//! - a controlling terminal: `TIOCSCTTY` must be called by the new session's leader itself,
//!   and macOS runs `POSIX_SPAWN_SETSID` after the file actions, so a pty slave opened or
//!   dup'd there never becomes the controlling terminal;
//! - resource limits (`setrlimit` in the child; `posix_spawn` has no attribute for them).
//!
//! `fork` copies Node's page tables (and is slow for a process with many `MAP_JIT` pages), so
//! only pty terminals and terminals with `limits` pay for it. The forked child reports a
//! failure as (stage, errno) through a close-on-exec pipe before `_exit(127)`; the pipe closes
//! without a report when the exec succeeded.
//!
//! Not on macOS: the parent-death signal (the guardian kills a Node's terminals when Node dies
//! without running code), cgroups (none are passed here), and `RLIMIT_AS`, which macOS accepts
//! but does not enforce: a launch with it fails with `ENOTSUP` rather than pretend.

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::posix_spawn::{failed_stage, flags, Grouping, Prepared};
use super::{LaunchError, LaunchSpec, SessionMode, Stage};

/// Apple's `POSIX_SPAWN_SETEXEC`: `posix_spawn` replaces the calling process, like `execve`.
const POSIX_SPAWN_SETEXEC: c_int = 0x0040;

/// Stages the forked child reports (the exec's own failure is classified by the parent).
const STAGE_SESSION: i32 = 1;
const STAGE_RLIMIT: i32 = 2;
const STAGE_SPAWN: i32 = 3;

pub(super) fn launch_here(spec: &LaunchSpec) -> io::Result<i32> {
    debug_assert!(spec.cgroup_procs.is_empty(), "macOS has no cgroups");
    if spec.rlimits.iter().any(|r| r.resource == libc::RLIMIT_AS) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            LaunchError {
                errno: libc::ENOTSUP,
                what: "applying resource limits (limits.addressSpaceBytes: macOS does not enforce RLIMIT_AS)",
                err: io::Error::from_raw_os_error(libc::ENOTSUP),
            },
        ));
    }
    let (grouping, tty) = match spec.session {
        SessionMode::NewGroup => (Grouping::NewGroup, None),
        SessionMode::NewSession(tty) => (Grouping::NewSession, tty),
    };
    if tty.is_none() && spec.rlimits.is_empty() {
        return Prepared::new(spec, flags(grouping, 0))?
            .spawn()
            .map_err(|errno| LaunchError::io_error(failed_stage(spec), errno));
    }
    launch_forked(spec)
}

/// The `fork` path: the child sets up its group or session (taking the terminal as its
/// controlling terminal) and its limits, then execs through `POSIX_SPAWN_SETEXEC`.
fn launch_forked(spec: &LaunchSpec) -> io::Result<i32> {
    let prepared = Prepared::new(spec, flags(Grouping::AsIs, POSIX_SPAWN_SETEXEC))?;
    let limits: Vec<(c_int, libc::rlimit)> = spec
        .rlimits
        .iter()
        .map(|r| {
            let v = r.value as libc::rlim_t;
            let lim = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            (r.resource, lim)
        })
        .collect();
    let (report_r, report_w) = crate::sys::pipe::pipe_cloexec()?;
    // SAFETY: every signal is blocked around fork so that no handler of Node runs in the child
    // before its exec resets them (POSIX_SPAWN_SETSIGDEF / SETSIGMASK); the parent restores
    // its mask right after. The child only makes async-signal-safe calls on memory prepared
    // above and never returns.
    let pid = unsafe {
        let mut all = std::mem::zeroed::<libc::sigset_t>();
        let mut old = std::mem::zeroed::<libc::sigset_t>();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::fork();
        if pid == 0 {
            child(spec.session, &limits, &prepared, report_w.as_raw_fd());
        }
        let fork_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(fork_error);
        }
        pid
    };
    drop(report_w);
    let Some((stage, errno)) = read_report(&report_r) else {
        return Ok(pid);
    };
    let mut status = 0;
    // SAFETY: reaping our own child, which reported its failure and exits.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    let stage = match stage {
        STAGE_SESSION => Stage::Session,
        STAGE_RLIMIT => Stage::Rlimit,
        _ => failed_stage(spec),
    };
    Err(LaunchError::io_error(stage, errno))
}

/// The forked child: session or group, limits, then the exec. Never returns.
///
/// # Safety
/// Only in the child of `fork`, with `prepared` and `limits` built before the fork.
unsafe fn child(
    session: SessionMode,
    limits: &[(c_int, libc::rlimit)],
    prepared: &Prepared<'_>,
    report: c_int,
) -> ! {
    let fail = |stage: i32, errno: i32| -> ! {
        let mut msg = [0u8; 8];
        msg[..4].copy_from_slice(&stage.to_ne_bytes());
        msg[4..].copy_from_slice(&errno.to_ne_bytes());
        libc::write(report, msg.as_ptr().cast(), msg.len());
        libc::_exit(127)
    };
    let errno = || *libc::__error();
    match session {
        SessionMode::NewGroup => {
            if libc::setpgid(0, 0) != 0 {
                fail(STAGE_SESSION, errno());
            }
        }
        SessionMode::NewSession(tty) => {
            if libc::setsid() < 0 {
                fail(STAGE_SESSION, errno());
            }
            if let Some(fd) = tty {
                if libc::ioctl(fd, libc::TIOCSCTTY as _, 0) != 0 {
                    fail(STAGE_SESSION, errno());
                }
            }
        }
    }
    for (resource, lim) in limits {
        if libc::setrlimit(*resource, lim) != 0 {
            fail(STAGE_RLIMIT, errno());
        }
    }
    // With POSIX_SPAWN_SETEXEC this returns only on failure.
    let e = match prepared.spawn() {
        Err(e) => e,
        Ok(_) => libc::EIO,
    };
    fail(STAGE_SPAWN, e)
}

/// The forked child's (stage, errno), or `None` once the pipe closed without one (the exec
/// succeeded and closed the child's write end).
fn read_report(fd: &OwnedFd) -> Option<(i32, i32)> {
    let mut buf = [0u8; 8];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reads into the unfilled rest of our buffer.
        let n = unsafe {
            libc::read(
                fd.as_raw_fd(),
                buf[got..].as_mut_ptr().cast(),
                buf.len() - got,
            )
        };
        if n > 0 {
            got += n as usize;
        } else if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        } else {
            break;
        }
    }
    let word = |b: &[u8]| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    (got == buf.len()).then(|| (word(&buf[..4]), word(&buf[4..])))
}
