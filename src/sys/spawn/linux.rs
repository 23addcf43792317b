//! Linux: `clone(CLONE_VM | CLONE_VFORK)` with a small stack, as glibc's `posix_spawn` does, so
//! the cost does not grow with Node's heap. Unlike `posix_spawn`, the child can also set
//! resource limits, a parent-death signal (`prctl`), join a cgroup and take a controlling
//! terminal before `execve`.
//!
//! The child runs only async-signal-safe system calls on memory prepared by the parent, and
//! reports a failure through shared memory before `_exit(127)`; the parent thread is suspended
//! until the child has exec'd or exited, so the child's error is known when `launch` returns.
//!
//! With an [`Isolation`], the vfork child C changes into the working directory, runs the
//! isolation step (new namespaces and their init, a child of the launcher thread through
//! `CLONE_PARENT`), then starts the command, also with `CLONE_PARENT`, and exits.

use std::io;
use std::os::fd::RawFd;

use super::error::{
    STAGE_CWD, STAGE_EXEC, STAGE_PARENT_GONE, STAGE_RLIMIT, STAGE_SESSION, STAGE_START,
    STAGE_STDIO, STAGE_STEP,
};
use super::steps::rlimits::Rlimit;
use super::steps::session::SessionMode;
use super::steps::{cgroup, parent_death, rlimits};
use super::{LaunchError, LaunchSpec, Launched, Stage};

pub(super) const PARENT_DEATH_SIGNAL: bool = true;
pub(super) const ADDRESS_SPACE_LIMIT: bool = true;

/// A higher layer's steps in the child (a sandbox's): its namespaces, and its last step
/// before `execve`.
#[derive(Debug, Clone, Copy)]
pub struct ChildSteps {
    /// The new namespaces the command starts in.
    pub isolate: Option<Isolation>,
    /// The last step before `execve`.
    pub confine: Option<ChildStep>,
}

/// A step of a higher layer run in the child: raw system calls only, on `arg` (valid until
/// the launch returns). `Err((code, errno))` fails the launch with [`Stage::Step`]`(code)`.
#[derive(Debug, Clone, Copy)]
pub struct ChildStep {
    /// The step.
    pub run: unsafe fn(arg: *const libc::c_void) -> Result<(), (i32, i32)>,
    /// Its argument.
    pub arg: *const libc::c_void,
}

/// New namespaces for the command: `enter` runs in an intermediate process C, in the
/// command's working directory, with a stack for the namespace's init; it makes the
/// namespaces, starts their init as a child of the launcher (writing its pid to `init_pid`
/// as soon as it exists) and leaves C in the working directory the command must get. C then
/// starts the command and exits.
#[derive(Debug, Clone, Copy)]
pub struct Isolation {
    /// The step.
    #[allow(clippy::type_complexity)]
    pub enter: unsafe fn(
        arg: *const libc::c_void,
        init_stack: *mut u8,
        init_pid: &mut libc::pid_t,
    ) -> Result<(), (i32, i32)>,
    /// Its argument.
    pub arg: *const libc::c_void,
}

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
    /// Namespace launches: the cgroups C opened (in the host's mount namespace) and the command
    /// joins first thing, so that only the command's tree is counted (`-1`: none).
    cgroup_fds: [RawFd; cgroup::MAX_CGROUPS],
    /// The last step before `execve`.
    confine: Option<ChildStep>,
    /// The isolation step (C sets up the working directory and the namespaces).
    isolate: Option<Isolation>,
    /// Namespace launches: stacks of the init and of the command (C uses the first stack).
    init_stack: *mut u8,
    cmd_stack: *mut u8,
    /// Namespace launches, written by C: the init's and the command's pids.
    init_pid: libc::pid_t,
    cmd_pid: libc::pid_t,
    /// Launches through C: nonzero until the command has exec'd or exited (the kernel clears
    /// it, `CLONE_CHILD_CLEARTID`, and wakes a futex waiter on it).
    cmd_tid: libc::pid_t,
    /// Set by the command once its parent-death signal is armed (C checks its parent after).
    cmd_armed: i32,
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
        default_signals();
        // The steps (`steps/`), in order: session, parent-death signal, rlimits, cgroups.
        if a.session.enter().is_err() {
            fail(a, STAGE_SESSION);
        }
        if a.pdeathsig != 0 {
            if let Err(e) = parent_death::arm(a.pdeathsig, a.expected_ppid) {
                *libc::__errno_location() = e;
                fail(a, STAGE_PARENT_GONE);
            }
        }
        std::ptr::write_volatile(std::ptr::addr_of_mut!(a.cmd_armed), 1);
        if rlimits::apply(std::slice::from_raw_parts(a.rlimits, a.n_rlimits)).is_err() {
            fail(a, STAGE_RLIMIT);
        }
        // (A namespace launch's C opened them for the command: from inside the new mount
        // namespace, /sys is read-only.)
        if a.isolate.is_none() {
            cgroup::join_best_effort(std::slice::from_raw_parts(a.cgroup_procs, a.n_cgroups));
        } else if let Err(e) = cgroup::join_opened(&a.cgroup_fds) {
            *libc::__errno_location() = e;
            fail(a, STAGE_RLIMIT);
        }
        // Before stdio: the directory descriptor is never one of 0, 1, 2 we overwrite.
        // (In a namespace launch, C already did, and the isolation step may have moved it.)
        if a.isolate.is_none() && libc::fchdir(a.cwd) != 0 {
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
        // Last: the caller's confinement.
        if let Some(step) = a.confine {
            if let Err((code, e)) = (step.run)(step.arg) {
                *libc::__errno_location() = e;
                fail(a, STAGE_STEP + code);
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(a.program, a.argv, a.envp);
        fail(a, STAGE_EXEC)
    }
}

/// The vfork child C of a namespace launch: changes into the working directory, runs the
/// isolation step (which starts the init), then starts the command as the launcher's child,
/// and exits. Raw system calls only.
extern "C" fn namespace_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: as in `child_main`: `arg` is the suspended parent's `ChildArgs`; the step's data
    // outlives the launch; each stack is ours alone.
    unsafe {
        let a = &mut *(arg as *mut ChildArgs);
        // A failure ends what C started (the init, the command) itself: the launcher ends them
        // too, unless it is gone (Node SIGKILLed mid-launch), and then nobody else would.
        let fail = |a: &mut ChildArgs, stage: i32, errno: i32| -> ! {
            for pid in [a.cmd_pid, a.init_pid] {
                if pid > 0 {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            a.errno = errno;
            a.stage = stage;
            libc::_exit(127)
        };
        let Some(iso) = a.isolate else {
            fail(a, STAGE_START, libc::EINVAL)
        };
        // The command's working directory first: unsharing the mount namespace moves it to the
        // new namespace's copy of its mount.
        if libc::fchdir(a.cwd) != 0 {
            fail(a, STAGE_CWD, errno());
        }
        // The terminal's cgroups are opened here, in the host's mount namespace (in the new
        // one /sys is read-only), and joined by the command before anything else: it and
        // everything it starts are created in them, so the pids cgroup (`limits.processes`)
        // counts the whole tree inside the namespace and `cgroup.kill` reaches it, while C
        // (reaped later, off the spawn path) and the init (which outlives the command until
        // release, and ignores signals from outside) stay out of the terminal's count. Not
        // best effort here: a sandboxed tree that escaped its limit is refused. (A write checks
        // the opener's credentials, so it works after C entered a user namespace too.)
        a.cgroup_fds = match cgroup::open(std::slice::from_raw_parts(a.cgroup_procs, a.n_cgroups)) {
            Ok(fds) => fds,
            Err(e) => fail(a, STAGE_RLIMIT, e),
        };
        if let Err((code, e)) = (iso.enter)(iso.arg, a.init_stack, &mut a.init_pid) {
            fail(a, STAGE_STEP + code, e);
        }
        // The command without CLONE_VFORK: C exits at once instead of waiting to be woken
        // for its exit (on two CPUs that wakeup could queue behind the command's own start),
        // and the launcher waits for the command's exec itself: CLONE_CHILD_CLEARTID clears
        // `cmd_tid` and wakes it when the command execs or exits.
        let pid = libc::clone(
            child_main,
            a.cmd_stack as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_PARENT | libc::CLONE_CHILD_CLEARTID | libc::SIGCHLD,
            arg,
            std::ptr::null_mut::<libc::pid_t>(),
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::addr_of_mut!(a.cmd_tid),
        );
        if pid < 0 {
            fail(a, STAGE_START, errno());
        }
        a.cmd_pid = pid;
        // Both children took the launcher as parent, and its death as their SIGKILL, only if
        // it still lived once they had armed that signal: inside the PID namespace they cannot
        // tell (their parent is outside it), so C, outside it and the launcher's child as they
        // are, looks once the command armed it (or is gone; the init armed it before its exec,
        // which C's vfork waited for). A launcher gone by then (Node SIGKILLed mid-launch) will
        // end nothing: C ends both itself (the namespace's init takes whatever the command
        // started with it). One gone later sends the signal.
        while std::ptr::read_volatile(std::ptr::addr_of!(a.cmd_armed)) == 0
            && std::ptr::read_volatile(std::ptr::addr_of!(a.cmd_tid)) != 0
        {
            libc::sched_yield();
        }
        if libc::getppid() != a.parent_pid {
            fail(a, STAGE_PARENT_GONE, libc::ESRCH);
        }
        libc::_exit(0)
    }
}

/// The calling thread's errno.
pub fn errno() -> i32 {
    // SAFETY: reading the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Every signal back to its default action (Node handles or ignores several). The raw system
/// call also resets the signals glibc reserves (32, 33), which its `sigaction` refuses to
/// touch. All-zero is SIG_DFL with no flags and an empty mask in the kernel's layout on every
/// architecture.
///
/// # Safety
/// Call only in a child about to `execve`.
pub unsafe fn default_signals() {
    let dfl = [0u64; 4];
    for sig in 1..=64 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::syscall(libc::SYS_rt_sigaction, sig, dfl.as_ptr(), 0usize, 8usize);
        }
    }
}

/// Starts `entry(arg)` in a `clone(CLONE_VM | CLONE_VFORK | flags)` child on the stack whose
/// top is `top`, and returns once the child has exec'd or exited. All signals are blocked
/// around the clone so that no handler of Node runs in the child before it resets them; the
/// previous mask is restored right after.
///
/// # Safety
/// `top` is the 16-byte aligned top of a stack the child alone uses (it grows down on every
/// Linux architecture we build for); `entry` only makes system calls on memory that outlives
/// the call, and ends in `execve` or `_exit`.
pub unsafe fn clone_vfork(
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    top: *mut u8,
    flags: libc::c_int,
    arg: *mut libc::c_void,
) -> io::Result<libc::pid_t> {
    let mut all: libc::sigset_t = std::mem::zeroed();
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    let pid = libc::clone(
        entry,
        top as *mut libc::c_void,
        libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | flags,
        arg,
    );
    let clone_errno = *libc::__errno_location();
    libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    if pid < 0 {
        return Err(io::Error::from_raw_os_error(clone_errno));
    }
    Ok(pid)
}

/// Waits until the kernel cleared `word` (`CLONE_CHILD_CLEARTID`: at the child's exec or
/// exit).
fn wait_cleared(word: &libc::pid_t) {
    loop {
        // SAFETY: a plain read of a word another process sharing our memory clears.
        let v = unsafe { std::ptr::read_volatile(word) };
        if v == 0 {
            return;
        }
        // SAFETY: FUTEX_WAIT on a valid, aligned word; returns at once if it changed. The
        // kernel's wake for CLONE_CHILD_CLEARTID is a shared-futex wake, so the wait is too.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word as *const libc::pid_t,
                libc::FUTEX_WAIT,
                v,
                std::ptr::null::<libc::timespec>(),
            )
        };
    }
}

/// Size of the child's stack (it only makes system calls).
const CHILD_STACK: usize = 64 * 1024;

/// Launches `spec` from the calling thread (the launcher thread), with `parent_death` as the
/// child's parent-death signal.
pub(super) fn launch_here(spec: &LaunchSpec, parent_death: Option<i32>) -> io::Result<Launched> {
    let (isolate, confine) = spec.steps.map_or((None, None), |s| (s.isolate, s.confine));
    let mut argv: Vec<*const libc::c_char> = spec.argv.iter().map(|s| s.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = spec.envp.iter().map(|s| s.as_ptr()).collect();
    envp.push(std::ptr::null());
    let cgroups: Vec<*const libc::c_char> = spec.cgroup_procs.iter().map(|s| s.as_ptr()).collect();
    // Through C: C makes the namespaces and starts the command.
    let via_c = isolate.is_some();
    // One stack per process that runs on our memory: the child (C), then the init and the
    // command of a launch through C.
    let mut stack = vec![0u8; CHILD_STACK * if via_c { 3 } else { 1 }];
    let base = stack.as_mut_ptr();
    let stack_top = |i: usize| -> *mut u8 {
        // SAFETY: in bounds of `stack`; the top is 16-byte aligned as every ABI wants.
        unsafe { (base.add(CHILD_STACK * (i + 1)) as usize & !15) as *mut u8 }
    };
    let (top, init_stack, cmd_stack) = if via_c {
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
        pdeathsig: parent_death.unwrap_or(0),
        parent_pid,
        expected_ppid: if via_c { 0 } else { parent_pid },
        cgroup_procs: cgroups.as_ptr(),
        n_cgroups: cgroups.len(),
        cgroup_fds: [-1; cgroup::MAX_CGROUPS],
        confine,
        isolate,
        init_stack,
        cmd_stack,
        init_pid: 0,
        cmd_pid: 0,
        cmd_tid: -1,
        cmd_armed: 0,
        errno: 0,
        stage: 0,
    };
    let entry: extern "C" fn(*mut libc::c_void) -> libc::c_int =
        if via_c { namespace_main } else { child_main };
    // SAFETY: the child only makes system calls on `args`, which outlives the suspended
    // clone; `top` is the top of `stack`.
    let pid = unsafe {
        clone_vfork(
            entry,
            top,
            // (C gets a copy of our descriptor table: the descriptors its steps open are its
            // own, and go with it even when it fails half-way.)
            0,
            &mut args as *mut ChildArgs as *mut libc::c_void,
        )
    };
    let pid = pid?;
    if via_c {
        // C has exited; the command it started may still be on its way to `execve`, on our
        // memory (its stack, `args`): wait until it is past it.
        // SAFETY: reading a field the command's process or the kernel writes.
        if unsafe { std::ptr::read_volatile(&args.cmd_pid) } > 0 {
            wait_cleared(&args.cmd_tid);
        }
    }
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
    if via_c {
        // C has exited (we run again once it released our memory, early in its exit): reap
        // it. On failure, also end what it started.
        reap(pid);
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
        if !via_c {
            reap(pid);
        }
        let stage = Stage::from_code(stage);
        return Err(LaunchError::io_error(stage, errno));
    }
    Ok(if via_c {
        Launched {
            pid: cmd_pid,
            init_pid: (init_pid > 0).then_some(init_pid),
        }
    } else {
        Launched {
            pid,
            init_pid: None,
        }
    })
}
