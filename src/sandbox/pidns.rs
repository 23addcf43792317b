//! Process isolation: the command runs in a new PID namespace with its own `/proc`, so it
//! neither sees nor reads (`/proc/<pid>/environ`, `cmdline`) any process outside its
//! terminal. Unprivileged callers get the namespace through a user namespace that maps only
//! their own uid and gid (identity: files keep their owner; the command keeps no capability
//! once it execs).
//!
//! Without forking Node, in three system-call-only steps (see `launch`):
//! 1. the vfork child C (in Node's namespaces) changes into the command's working directory and
//!    calls [`enter`]: `unshare` of the user (if unprivileged), PID and mount namespaces (the
//!    working directory moves along), the id maps, mounts made slaves;
//! 2. C starts the namespace's init P1 with `CLONE_VM | CLONE_VFORK | CLONE_PARENT`
//!    ([`init_main`]): P1 is pid 1 of the namespace, a child of Node's launcher thread with
//!    SIGKILL as its parent-death signal, in a session of its own, SIGCHLD ignored (so the
//!    kernel reaps every orphan reparented to it), and it execs a program that waits forever
//!    (see [`super::initprog`]; `sleep` where there is none) with an empty environment: it holds the namespace until the terminal is released. When it dies, the
//!    kernel kills everything left in the namespace;
//! 3. C starts the command D the same way (pid 2, also Node's child, so Node waits for it and
//!    signals its group exactly as without a namespace; its exit status is its own); D keeps
//!    C's working directory and mounts the namespace's `/proc` ([`mount_proc`]) before the rest
//!    of the sandbox.
//!
//! C then exits; the launcher reaps it. Measured cost: see `bench/limits.js`.

use std::ffi::CString;
use std::os::fd::RawFd;

/// What the namespace child steps need, prepared in the parent.
#[derive(Debug)]
pub struct NsPlan {
    /// `Some((uid_map, gid_map))`: create a user namespace and write these maps.
    maps: Option<(CString, CString)>,
    /// The init's program: a memfd of [`super::initprog`] (-1: none), with its argv
    /// (NULL-terminated pointer array).
    init_fd: RawFd,
    init_fd_argv: [*const libc::c_char; 2],
    /// The fallback, `sleep` (also where the memfd cannot be executed), and its argv.
    init_program: CString,
    _init_args: Vec<CString>,
    init_argv: Vec<*const libc::c_char>,
    init_envp: [*const libc::c_char; 1],
    /// /dev/null, for the init's stdio.
    null_fd: RawFd,
}

// SAFETY: the raw pointers point into `_init_args`, owned by the same struct and never
// changed after construction, or into a static string.
unsafe impl Send for NsPlan {}
// SAFETY: as above; the plan is only read.
unsafe impl Sync for NsPlan {}

impl NsPlan {
    /// A plan: with `userns`, an identity map of the caller's uid and gid. `init_fd` is the
    /// init program's memfd ([`super::initprog::fd`]) and `sleep` its fallback (an absolute
    /// path); `null_fd` is an open /dev/null. Both descriptors outlive the plan.
    pub fn new(userns: bool, init_fd: Option<RawFd>, sleep: CString, null_fd: RawFd) -> NsPlan {
        // SAFETY: geteuid/getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let maps = userns.then(|| {
            (
                CString::new(format!("{uid} {uid} 1")).expect("digits"),
                CString::new(format!("{gid} {gid} 1")).expect("digits"),
            )
        });
        let args = vec![
            CString::new("sleep").expect("literal"),
            CString::new("2147483647").expect("literal"),
        ];
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        /// `argv[0]` of the memfd program, NUL-terminated.
        const NAME: &std::ffi::CStr = c"acp-terminal-init";
        debug_assert_eq!(NAME.to_str(), Ok(super::initprog::NAME));
        NsPlan {
            maps,
            init_fd: init_fd.unwrap_or(-1),
            init_fd_argv: [NAME.as_ptr(), std::ptr::null()],
            init_program: sleep,
            _init_args: args,
            init_argv: argv,
            init_envp: [std::ptr::null()],
            null_fd,
        }
    }

    /// Whether a user namespace is created.
    pub fn userns(&self) -> bool {
        self.maps.is_some()
    }
}

fn errno() -> i32 {
    // SAFETY: reading the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Writes `data` to the file at `path` (a /proc/self file); raw system calls only.
unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> Result<(), i32> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(errno());
    }
    let n = libc::write(fd, data.as_ptr() as *const libc::c_void, data.len());
    let e = errno();
    libc::close(fd);
    if n != data.len() as isize {
        return Err(if n < 0 { e } else { libc::EIO });
    }
    Ok(())
}

/// Step 1, in C, which has already changed into the command's working directory: new user
/// (optional), PID and mount namespaces (the PID namespace applies to C's next children; the
/// working directory moves to the new mount namespace's copy of its mount, and the command
/// inherits it), the id maps, and every mount made a slave (nothing propagates back to the
/// host; mounts the host makes later still arrive). The init and the command share the mount
/// namespace, so the command's exit does not tear it down (that waits for an RCU grace
/// period): the init's death at release does, off the path of anyone waiting.
///
/// # Safety
/// Call only in C.
pub unsafe fn enter(plan: &NsPlan) -> Result<(), i32> {
    let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
    if plan.maps.is_some() {
        flags |= libc::CLONE_NEWUSER;
    }
    if libc::unshare(flags) != 0 {
        return Err(errno());
    }
    if let Some((uid_map, gid_map)) = &plan.maps {
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", uid_map.as_bytes())?;
        write_file(c"/proc/self/gid_map", gid_map.as_bytes())?;
    }
    let r = libc::mount(
        std::ptr::null(),
        c"/".as_ptr(),
        std::ptr::null(),
        libc::MS_REC | libc::MS_SLAVE,
        std::ptr::null(),
    );
    if r != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Arguments of [`init_main`].
#[derive(Debug)]
pub struct InitArgs {
    /// The plan.
    pub plan: *const NsPlan,
    /// Written by the init on failure (before `_exit(127)`).
    pub errno: i32,
}

/// Step 2: the namespace's init (pid 1). `arg` is an [`InitArgs`].
///
/// # Safety
/// Entry point of a `clone(CLONE_VM | CLONE_VFORK | CLONE_PARENT)` child only.
pub extern "C" fn init_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `InitArgs` of the suspended C; the plan outlives the launch.
    unsafe {
        let a = &mut *(arg as *mut InitArgs);
        let plan = &*a.plan;
        super::child::default_signals();
        let fail = |a: &mut InitArgs| -> ! {
            a.errno = errno();
            libc::_exit(127)
        };
        // Orphans reparented to pid 1 are reaped by the kernel.
        if libc::signal(libc::SIGCHLD, libc::SIG_IGN) == libc::SIG_ERR {
            fail(a);
        }
        if libc::setsid() < 0 {
            fail(a);
        }
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            fail(a);
        }
        for fd in 0..3 {
            if libc::dup2(plan.null_fd, fd) < 0 {
                fail(a);
            }
        }
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) != 0
        {
            fail(a);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        if plan.init_fd >= 0 {
            // Returns only on failure (e.g. memfds made non-executable): then `sleep`.
            libc::syscall(
                libc::SYS_execveat,
                plan.init_fd,
                c"".as_ptr(),
                plan.init_fd_argv.as_ptr(),
                plan.init_envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            );
        }
        libc::execve(
            plan.init_program.as_ptr(),
            plan.init_argv.as_ptr(),
            plan.init_envp.as_ptr(),
        );
        fail(a)
    }
}

/// Step 3, in the command's process (inside the namespace, before the rest of the sandbox):
/// mounts a `/proc` that shows only the namespace's processes (in the mount namespace C
/// created, which only the namespace's processes share).
///
/// # Safety
/// Call only in the vfork child D.
pub unsafe fn mount_proc() -> i32 {
    libc::mount(
        c"proc".as_ptr(),
        c"/proc".as_ptr(),
        c"proc".as_ptr(),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        std::ptr::null(),
    )
}
