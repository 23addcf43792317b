//! Linux: `clone(CLONE_VM | CLONE_VFORK)` with a small stack, as glibc's `posix_spawn` does, so
//! the cost does not grow with Node's heap. Unlike `posix_spawn`, the child can also set
//! resource limits, a parent-death signal (`prctl`), join a cgroup and take a controlling
//! terminal before `execve`.
//!
//! The child runs only async-signal-safe system calls on memory prepared by the parent, and
//! reports a failure through shared memory before `_exit(127)`; the parent thread is suspended
//! until the child has exec'd or exited, so the child's error is known when `launch` returns.
//!
//! With a sandbox whose plan has a PID namespace, the vfork child C instead enters the
//! namespace and starts the namespace's init and then the command, both as children of the
//! launcher thread (`CLONE_PARENT`), before exiting (see [`crate::sandbox::pidns`]).

use std::io;
use std::os::fd::RawFd;

use super::{LaunchError, LaunchSpec, Launched, Rlimit, SessionMode, Stage};
use crate::sandbox::child::Step;
use crate::sandbox::{pidns, ChildSandbox};

pub(super) const PARENT_DEATH_SIGNAL: bool = true;
pub(super) const ADDRESS_SPACE_LIMIT: bool = true;

/// Failure stages reported by the child.
const STAGE_SESSION: i32 = 1;
const STAGE_RLIMIT: i32 = 2;
const STAGE_STDIO: i32 = 3;
const STAGE_CWD: i32 = 4;
const STAGE_EXEC: i32 = 5;
const STAGE_PARENT_GONE: i32 = 6;
/// Sandbox steps are reported as this plus their [`Step`] number.
const STAGE_SANDBOX: i32 = 100;

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
    /// Our pid (C checks it is still its parent).
    parent_pid: libc::pid_t,
    /// What `getppid()` returns in the command while its parent lives: our pid, or 0 inside
    /// a PID namespace (the parent is outside it).
    expected_ppid: libc::pid_t,
    cgroup_procs: *const *const libc::c_char,
    n_cgroups: usize,
    /// The sandbox, or null.
    sandbox: *const ChildSandbox,
    /// A namespace launch (C sets up the working directory and the namespaces).
    namespace: bool,
    /// Namespace launches: stacks of the init and of the command (C uses the first stack).
    init_stack: *mut u8,
    cmd_stack: *mut u8,
    /// Namespace launches, written by C: the init's and the command's pids.
    init_pid: libc::pid_t,
    cmd_pid: libc::pid_t,
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
            if libc::getppid() != a.expected_ppid {
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
        // (In a namespace launch, C already did, before it unshared the mount namespace.)
        if !a.namespace && libc::fchdir(a.cwd) != 0 {
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
        // Last: a namespace's /proc is mounted, then the process locked down.
        if !a.sandbox.is_null() {
            if let Err((step, e)) = crate::sandbox::child::apply(&*a.sandbox) {
                *libc::__errno_location() = e;
                fail(a, STAGE_SANDBOX + step as i32);
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(a.program, a.argv, a.envp);
        fail(a, STAGE_EXEC)
    }
}

/// The vfork child C of a namespace launch: enters the namespaces, starts the init and then
/// the command (both as the launcher's children), and exits. Raw system calls only.
extern "C" fn namespace_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: as in `child_main`: `arg` is the suspended parent's `ChildArgs`; the sandbox and
    // its namespace plan outlive the launch; each stack is ours alone.
    unsafe {
        let a = &mut *(arg as *mut ChildArgs);
        let fail = |a: &mut ChildArgs, stage: i32, errno: i32| -> ! {
            a.errno = errno;
            a.stage = stage;
            libc::_exit(127)
        };
        let plan = match (*a.sandbox).ns {
            Some(p) => &*p,
            None => fail(a, STAGE_SANDBOX + Step::Namespaces as i32, libc::EINVAL),
        };
        // The command's working directory first: unsharing the mount namespace moves it to
        // the new namespace's copy of its mount, and the command inherits it.
        if libc::fchdir(a.cwd) != 0 {
            fail(a, STAGE_CWD, *libc::__errno_location());
        }
        if let Err(e) = pidns::enter(plan) {
            fail(a, STAGE_SANDBOX + Step::Namespaces as i32, e);
        }
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT | libc::SIGCHLD;
        let mut init = pidns::InitArgs { plan, errno: 0 };
        let pid = libc::clone(
            pidns::init_main,
            a.init_stack as *mut libc::c_void,
            flags,
            &mut init as *mut pidns::InitArgs as *mut libc::c_void,
        );
        if pid < 0 {
            fail(
                a,
                STAGE_SANDBOX + Step::Init as i32,
                *libc::__errno_location(),
            );
        }
        a.init_pid = pid;
        if std::ptr::read_volatile(&init.errno) != 0 {
            fail(a, STAGE_SANDBOX + Step::Init as i32, init.errno);
        }
        let pid = libc::clone(child_main, a.cmd_stack as *mut libc::c_void, flags, arg);
        if pid < 0 {
            fail(
                a,
                STAGE_SANDBOX + Step::Init as i32,
                *libc::__errno_location(),
            );
        }
        a.cmd_pid = pid;
        // Both children took the launcher as parent (and its death as their SIGKILL) only
        // if it was still our parent after they were created.
        if std::ptr::read_volatile(&a.stage) == 0 && libc::getppid() != a.parent_pid {
            fail(a, STAGE_PARENT_GONE, libc::ESRCH);
        }
        libc::_exit(0)
    }
}

/// Size of the child's stack (it only makes system calls).
const CHILD_STACK: usize = 64 * 1024;

/// Launches `spec` from the calling thread (the shared launcher thread).
pub(super) fn launch_here(spec: &LaunchSpec) -> io::Result<Launched> {
    let mut argv: Vec<*const libc::c_char> = spec.argv.iter().map(|s| s.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = spec.envp.iter().map(|s| s.as_ptr()).collect();
    envp.push(std::ptr::null());
    let cgroups: Vec<*const libc::c_char> = spec.cgroup_procs.iter().map(|s| s.as_ptr()).collect();
    let namespace = spec.sandbox.as_ref().is_some_and(|sb| sb.has_namespace());
    // One stack per process that runs on our memory: the child (C), then the init and the
    // command of a namespace launch.
    let mut stack = vec![0u8; CHILD_STACK * if namespace { 3 } else { 1 }];
    let base = stack.as_mut_ptr();
    let stack_top = |i: usize| -> *mut u8 {
        // SAFETY: in bounds of `stack`; the top is 16-byte aligned as every ABI wants.
        unsafe { (base.add(CHILD_STACK * (i + 1)) as usize & !15) as *mut u8 }
    };
    let (top, init_stack, cmd_stack) = if namespace {
        (stack_top(0), stack_top(1), stack_top(2))
    } else {
        (stack_top(0), std::ptr::null_mut(), std::ptr::null_mut())
    };
    // SAFETY: getpid has no preconditions.
    let parent_pid = unsafe { libc::getpid() };
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
        parent_pid,
        expected_ppid: if namespace { 0 } else { parent_pid },
        cgroup_procs: cgroups.as_ptr(),
        n_cgroups: cgroups.len(),
        sandbox: spec
            .sandbox
            .as_ref()
            .map_or(std::ptr::null(), |s| s as *const ChildSandbox),
        namespace,
        init_stack,
        cmd_stack,
        init_pid: 0,
        cmd_pid: 0,
        errno: 0,
        stage: 0,
    };
    let entry: extern "C" fn(*mut libc::c_void) -> libc::c_int = if namespace {
        namespace_main
    } else {
        child_main
    };
    // SAFETY: the stack grows down on every Linux architecture we build for; the top is
    // 16-byte aligned. All signals are blocked around clone so that no handler of Node runs
    // in the child before it resets them; the previous mask is restored right after.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            entry,
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
    let (errno, stage, init_pid, cmd_pid) = unsafe {
        (
            std::ptr::read_volatile(&args.errno),
            std::ptr::read_volatile(&args.stage),
            std::ptr::read_volatile(&args.init_pid),
            std::ptr::read_volatile(&args.cmd_pid),
        )
    };
    let reap = |pid: i32| {
        let mut status = 0;
        // SAFETY: reaping our own child (C, or a namespace launch's init or command).
        unsafe { libc::waitpid(pid, &mut status, 0) };
    };
    if namespace {
        // C has exited (we run again once it released our memory, early in its exit). On
        // success its reaping, which would wait for the rest of its exit, happens on the
        // sandbox's cleanup thread, off the spawn path. On failure, also end what it started.
        if stage == 0 {
            crate::sandbox::reap_later(pid);
        } else {
            reap(pid);
        }
        if stage != 0 {
            for p in [cmd_pid, init_pid] {
                if p > 0 {
                    // SAFETY: our own unreaped child.
                    unsafe { libc::kill(p, libc::SIGKILL) };
                    reap(p);
                }
            }
        }
    }
    if stage != 0 {
        if !namespace {
            reap(pid);
        }
        let stage = match stage {
            STAGE_SESSION => Stage::Session,
            STAGE_RLIMIT => Stage::Rlimit,
            STAGE_STDIO => Stage::Stdio,
            STAGE_CWD => Stage::Cwd,
            STAGE_PARENT_GONE => Stage::ParentGone,
            s => match Step::from_i32(s - STAGE_SANDBOX) {
                Some(step) => Stage::Sandbox(step),
                None => Stage::Exec,
            },
        };
        return Err(LaunchError::io_error(stage, errno));
    }
    Ok(if namespace {
        Launched {
            pid: cmd_pid,
            init_pid: Some(init_pid),
        }
    } else {
        Launched {
            pid,
            init_pid: None,
        }
    })
}
