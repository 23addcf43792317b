//! Linux: `clone(CLONE_VM | CLONE_VFORK)` with a small stack, as glibc's `posix_spawn` does, so
//! the cost does not grow with Node's heap. Unlike `posix_spawn`, the child can also set
//! resource limits, a parent-death signal (`prctl`), join a cgroup and take a controlling
//! terminal before `execve`.
//!
//! The child runs only async-signal-safe system calls on memory prepared by the parent, and
//! reports a failure through shared memory before `_exit(127)`; the parent thread is suspended
//! until the child has exec'd or exited, so the child's error is known when `launch` returns.

use std::io;
use std::os::fd::RawFd;

use super::{LaunchError, LaunchSpec, Rlimit, SessionMode, Stage};

/// Failure stages reported by the child.
const STAGE_SESSION: i32 = 1;
const STAGE_RLIMIT: i32 = 2;
const STAGE_STDIO: i32 = 3;
const STAGE_CWD: i32 = 4;
const STAGE_EXEC: i32 = 5;
const STAGE_PARENT_GONE: i32 = 6;

struct ChildArgs {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: RawFd,
    stdio: [RawFd; 3],
    session: SessionMode,
    rlimits: *const Rlimit,
    n_rlimits: usize,
    pdeathsig: i32,
    parent_pid: libc::pid_t,
    cgroup_procs: *const *const libc::c_char,
    n_cgroups: usize,
    /// Written by the child on failure.
    errno: i32,
    stage: i32,
}

/// The child: raw system calls only, then `execve`.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points to the parent's `ChildArgs`, alive and untouched while the parent
    // thread is suspended by CLONE_VFORK. Every pointer in it is valid for that time.
    unsafe {
        let a = &mut *(arg as *mut ChildArgs);
        let fail = |a: &mut ChildArgs, stage: i32| -> ! {
            a.errno = *libc::__errno_location();
            a.stage = stage;
            libc::_exit(127)
        };
        // Default dispositions for every signal (Node ignores SIGPIPE and handles others).
        // The raw system call also resets the signals glibc reserves (32, 33), which its
        // `sigaction` refuses to touch. All-zero is SIG_DFL with no flags and an empty mask in
        // the kernel's layout on every architecture.
        let dfl = [0u64; 4];
        for sig in 1..=64 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::syscall(libc::SYS_rt_sigaction, sig, dfl.as_ptr(), 0usize, 8usize);
            }
        }
        match a.session {
            SessionMode::NewGroup => {
                if libc::setpgid(0, 0) != 0 {
                    fail(a, STAGE_SESSION);
                }
            }
            SessionMode::NewSession(tty) => {
                if libc::setsid() < 0 {
                    fail(a, STAGE_SESSION);
                }
                if let Some(fd) = tty {
                    if libc::ioctl(fd, libc::TIOCSCTTY as _, 0) != 0 {
                        fail(a, STAGE_SESSION);
                    }
                }
            }
        }
        if a.pdeathsig != 0 {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                a.pdeathsig as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != a.parent_pid {
                *libc::__errno_location() = libc::ESRCH;
                fail(a, STAGE_PARENT_GONE);
            }
        }
        for i in 0..a.n_rlimits {
            let r = &*a.rlimits.add(i);
            let lim = libc::rlimit {
                rlim_cur: r.value as libc::rlim_t,
                rlim_max: r.value as libc::rlim_t,
            };
            if libc::setrlimit(r.resource as _, &lim) != 0 {
                fail(a, STAGE_RLIMIT);
            }
        }
        for i in 0..a.n_cgroups {
            // Best effort: without the cgroup, the process group still contains the command.
            let fd = libc::open(*a.cgroup_procs.add(i), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd >= 0 {
                libc::write(fd, b"0".as_ptr() as *const libc::c_void, 1);
                libc::close(fd);
            }
        }
        // Before stdio: the directory descriptor is never one of 0, 1, 2 we overwrite.
        if libc::fchdir(a.cwd) != 0 {
            fail(a, STAGE_CWD);
        }
        for (target, &src) in a.stdio.iter().enumerate() {
            let target = target as RawFd;
            if src == target {
                if libc::fcntl(src, libc::F_SETFD, 0) != 0 {
                    fail(a, STAGE_STDIO);
                }
            } else if libc::dup2(src, target) < 0 {
                fail(a, STAGE_STDIO);
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(a.program, a.argv, a.envp);
        fail(a, STAGE_EXEC)
    }
}

/// Size of the child's stack (it only makes system calls).
const CHILD_STACK: usize = 64 * 1024;

/// Launches `spec` from the calling thread (the shared launcher thread).
pub(super) fn launch_here(spec: &LaunchSpec) -> io::Result<i32> {
    let mut argv: Vec<*const libc::c_char> = spec.argv.iter().map(|s| s.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = spec.envp.iter().map(|s| s.as_ptr()).collect();
    envp.push(std::ptr::null());
    let cgroups: Vec<*const libc::c_char> = spec.cgroup_procs.iter().map(|s| s.as_ptr()).collect();
    let mut args = ChildArgs {
        program: spec.program.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: spec.cwd,
        stdio: spec.stdio,
        session: spec.session,
        rlimits: spec.rlimits.as_ptr(),
        n_rlimits: spec.rlimits.len(),
        pdeathsig: spec.parent_death_signal.unwrap_or(0),
        // SAFETY: getpid has no preconditions.
        parent_pid: unsafe { libc::getpid() },
        cgroup_procs: cgroups.as_ptr(),
        n_cgroups: cgroups.len(),
        errno: 0,
        stage: 0,
    };
    let mut stack = vec![0u8; CHILD_STACK];
    // SAFETY: the stack grows down on every Linux architecture we build for; the top is
    // 16-byte aligned. All signals are blocked around clone so that no handler of Node runs
    // in the child before it resets them; the previous mask is restored right after.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(CHILD_STACK) as usize & !15;
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child_main,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &mut args as *mut ChildArgs as *mut libc::c_void,
        );
        let clone_errno = *libc::__errno_location();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(io::Error::from_raw_os_error(clone_errno));
        }
        pid
    };
    drop(stack);
    // SAFETY: the child has exec'd or exited, so it no longer writes to `args`.
    let (errno, stage) = unsafe {
        (
            std::ptr::read_volatile(&args.errno),
            std::ptr::read_volatile(&args.stage),
        )
    };
    if stage != 0 {
        let mut status = 0;
        // SAFETY: reaping our own failed child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let stage = match stage {
            STAGE_SESSION => Stage::Session,
            STAGE_RLIMIT => Stage::Rlimit,
            STAGE_STDIO => Stage::Stdio,
            STAGE_CWD => Stage::Cwd,
            STAGE_PARENT_GONE => Stage::ParentGone,
            _ => Stage::Exec,
        };
        return Err(LaunchError::io_error(stage, errno));
    }
    Ok(pid)
}
