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
//! but does not enforce ([`ADDRESS_SPACE_LIMIT`]: the containment refuses it with `ENOTSUP`
//! before anything starts, rather than pretend).

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::error::{STAGE_EXEC, STAGE_RLIMIT, STAGE_SESSION};
use super::posix_spawn::{failed_stage, flags, Grouping, Prepared};
use super::steps::rlimits::{self, Rlimit};
use super::steps::session::SessionMode;
use super::{LaunchError, LaunchSpec, Launched, Stage};

pub(super) const PARENT_DEATH_SIGNAL: bool = false;
pub(super) const ADDRESS_SPACE_LIMIT: bool = false;

/// A higher layer's steps in the child: macOS's launch runs none (no sandbox here), so none
/// is ever made.
#[derive(Debug, Clone, Copy)]
pub enum ChildSteps {}

/// Apple's `POSIX_SPAWN_SETEXEC`: `posix_spawn` replaces the calling process, like `execve`.
const POSIX_SPAWN_SETEXEC: c_int = 0x0040;

/// Launches `spec` from the calling thread (the launcher thread). macOS has no parent-death
/// signal (the guardian kills a Node's terminals when Node dies): `_parent_death` is unused.
pub(super) fn launch_here(spec: &LaunchSpec, _parent_death: Option<i32>) -> io::Result<Launched> {
    // No sandbox and so no namespaces here: the command is the only child.
    if let Some(steps) = spec.steps {
        match steps {}
    }
    launch_pid(spec).map(|pid| Launched {
        pid,
        init_pid: None,
    })
}

fn launch_pid(spec: &LaunchSpec) -> io::Result<i32> {
    debug_assert!(spec.cgroup_procs.is_empty(), "macOS has no cgroups");
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
            child(spec.session, &spec.rlimits, &prepared, report_w.as_raw_fd());
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
    // The child reports its `posix_spawn`'s failure as the exec's: classified here.
    let stage = match Stage::from_code(stage) {
        Stage::Exec => failed_stage(spec),
        s => s,
    };
    Err(LaunchError::io_error(stage, errno))
}

/// The forked child: the session and rlimits steps, then the exec. Never returns.
///
/// # Safety
/// Only in the child of `fork`, with `prepared` and `limits` built before the fork.
unsafe fn child(
    session: SessionMode,
    limits: &[Rlimit],
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
    if session.enter().is_err() {
        fail(STAGE_SESSION, errno());
    }
    if rlimits::apply(limits).is_err() {
        fail(STAGE_RLIMIT, errno());
    }
    // With POSIX_SPAWN_SETEXEC this returns only on failure.
    let e = match prepared.spawn() {
        Err(e) => e,
        Ok(_) => libc::EIO,
    };
    fail(STAGE_EXEC, e)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::spawn::launch_errno;
    use std::ffi::CString;
    use std::io::Read;
    use std::path::Path;

    fn spec(script: &str, stdio: [c_int; 3], cwd: &OwnedFd) -> LaunchSpec {
        LaunchSpec {
            program: CString::new("/bin/sh").unwrap(),
            argv: ["sh", "-c", script]
                .iter()
                .map(|s| CString::new(*s).unwrap())
                .collect(),
            envp: vec![CString::new("PATH=/usr/bin:/bin").unwrap()],
            cwd: cwd.as_raw_fd(),
            stdio,
            session: SessionMode::NewGroup,
            rlimits: Vec::new(),
            cgroup_procs: Vec::new(),
            steps: None,
        }
    }

    fn root() -> OwnedFd {
        crate::sys::cwd::open_dir(Path::new("/")).unwrap()
    }

    fn reap(pid: i32) -> i32 {
        let mut status = 0;
        // SAFETY: reaping our own child into a local.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        status
    }

    #[test]
    fn a_pty_child_leads_a_session_with_the_pty_as_controlling_terminal() {
        let pty = crate::sys::pty::open(Default::default()).unwrap();
        let slave = pty.slave.as_raw_fd();
        let root = root();
        let mut s = spec(
            // /dev/tty opens only for a process with a controlling terminal, which TIOCSCTTY
            // gives only to a session leader.
            "exec 3</dev/tty && echo ctty-ok",
            [slave; 3],
            &root,
        );
        s.session = SessionMode::NewSession(Some(slave));
        let pid = launch_pid(&s).unwrap();
        drop(pty.slave);
        let mut out = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: reads into our buffer from the master we own.
            let n = unsafe { libc::read(pty.master.as_raw_fd(), buf.as_mut_ptr().cast(), 256) };
            if n > 0 {
                out.extend_from_slice(&buf[..n as usize]);
            } else if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            } else {
                break;
            }
        }
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("ctty-ok"), "/dev/tty opens: {text}");
        assert_eq!(reap(pid), 0, "{text}");
    }

    #[test]
    fn limits_apply_through_the_fork_path() {
        let (r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
        let root = root();
        let mut s = spec("ulimit -n", [w.as_raw_fd(); 3], &root);
        s.rlimits.push(Rlimit {
            resource: libc::RLIMIT_NOFILE,
            value: 77,
        });
        let pid = launch_pid(&s).unwrap();
        drop(w);
        let mut text = String::new();
        std::fs::File::from(r).read_to_string(&mut text).unwrap();
        assert_eq!(reap(pid), 0);
        assert_eq!(text.trim(), "77");
    }

    #[test]
    fn a_failure_in_the_forked_child_names_its_stage() {
        let (_r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
        let root = root();
        let mut s = spec("true", [w.as_raw_fd(); 3], &root);
        // A pipe cannot be a controlling terminal: TIOCSCTTY fails in the child.
        s.session = SessionMode::NewSession(Some(w.as_raw_fd()));
        let e = launch_here(&s, None).unwrap_err();
        assert_eq!(launch_errno(&e), Some(libc::ENOTTY));
        assert!(e.to_string().contains("setting up the session"), "{e}");
    }
}
