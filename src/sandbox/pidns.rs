//! Process isolation: the command runs in a new PID namespace with its own `/proc`, so it
//! neither sees nor reads (`/proc/<pid>/environ`, `cmdline`) any process outside its
//! terminal. Unprivileged callers get the namespace through a user namespace that maps only
//! their own uid and gid (identity: files keep their owner; the command keeps no capability
//! once it execs).
//!
//! A namespace is made without forking Node, by system calls only:
//! 1. a vfork child C (in Node's namespaces) calls [`enter`]: `unshare` of the user (if
//!    unprivileged), PID and mount namespaces, the id maps, mounts made slaves;
//! 2. C starts the namespace's init P1 with `CLONE_VM | CLONE_VFORK | CLONE_PARENT`
//!    ([`init_main`]): P1 is pid 1 of the namespace, a child of the thread that started C
//!    with SIGKILL as its parent-death signal, in a session of its own, SIGCHLD ignored (so
//!    the kernel reaps every orphan reparented to it). It mounts the namespace's own `/proc`
//!    and execs a program that waits forever (see [`super::initprog`]; `sleep` where there is
//!    none) with an empty environment: it holds the namespace until the terminal is released.
//!    When it dies, the kernel kills everything left in the namespace.
//!
//! Namespaces are made ahead, off the spawn path ([`super::nspool`]): there C is a child of
//! the pool's thread and exits once the init runs. A launch then only joins one ([`join`]):
//! the launcher's vfork child C `setns`es into the init's namespaces, changes into the
//! command's working directory as found there (checked to be the very directory that was
//! opened and checked, see [`join`]), and starts the command D with `CLONE_PARENT` (pid 2,
//! Node's child, so Node waits for it and signals its group exactly as without a namespace).
//!
//! Without a ready namespace (the first launch, a burst, a refusal), the launch makes its own
//! (steps 1 and 2 in its C, after changing into the working directory: unsharing the mount
//! namespace moves the working directory along), then starts D the same way. Measured costs:
//! see `bench/limits.js`.

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
    /// Join a namespace made ahead when one is ready (see [`super::nspool`]).
    pooled: bool,
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
            pooled: true,
        }
    }

    /// The same plan, but every launch makes its own namespace (the probe, and tests of that
    /// path).
    pub fn unpooled(mut self) -> NsPlan {
        self.pooled = false;
        self
    }

    /// Whether a launch joins a namespace made ahead when one is ready.
    pub fn pooled(&self) -> bool {
        self.pooled
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

/// Step 1, in C (without a ready namespace, after changing into the command's working
/// directory; in the pool's C, wherever it is): new user
/// (optional), PID and mount namespaces (the PID namespace applies to C's next children; the
/// working directory moves to the new mount namespace's copy of its mount, and the command
/// inherits it), the id maps, and every mount made a slave (nothing propagates back to the
/// host; mounts the host makes later still arrive). The init and the command share the mount
/// namespace, so the command's exit does not tear it down (that waits for an RCU grace
/// period): the init's death at release does, off the path of anyone waiting.
///
/// # Safety
/// Call only in C.
unsafe fn enter(plan: &NsPlan) -> Result<(), i32> {
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

/// What a launch needs to join a namespace made ahead, prepared in the parent (the launcher
/// thread) from a [`super::nspool::Slot`] and the command's working directory.
#[derive(Debug)]
pub struct Join {
    /// A pidfd of the namespace's init.
    pub pidfd: RawFd,
    /// The namespaces [`join`] joins: user, PID and mount through C, or only the mount
    /// namespace in a direct join (see [`Join::direct`]).
    pub flags: libc::c_int,
    /// Where the working directory was when the launch began (`/proc/self/fd/N`).
    pub cwd_path: CString,
    /// The working directory's identity (device, inode): the directory that was checked.
    pub cwd_id: (u64, u64),
    /// The identity of Node's root directory: joining a namespace sets the root to the
    /// namespace's, which must be the same (a chroot'ed Node joins nothing).
    pub root_id: (u64, u64),
}

impl Join {
    /// A direct join (we have CAP_SYS_ADMIN, no user namespace): the launcher thread itself
    /// joins the PID namespace for its next child, which joins the mount namespace; no
    /// intermediate C.
    pub fn direct(&self) -> bool {
        self.flags & libc::CLONE_NEWPID == 0
    }
}

/// Why [`join`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinFailure {
    /// `setns` was refused, or the namespace's root is not Node's root: namespaces made ahead
    /// cannot be used in this process.
    Refused,
    /// The working directory is not found by its path in the namespace, or something else is
    /// found there (it was moved, replaced or deleted since it was checked, or is under a
    /// mount the namespace lacks): this launch makes its own namespace instead.
    Cwd,
}

fn id_of(st: &libc::stat) -> (u64, u64) {
    #[allow(clippy::unnecessary_cast)] // dev_t and ino_t are not u64 everywhere
    (st.st_dev as u64, st.st_ino as u64)
}

/// The (device, inode) of an open descriptor, in the parent.
pub fn fd_id(fd: RawFd) -> std::io::Result<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes the buffer on success only, which is checked.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded.
    Ok(id_of(unsafe { &st.assume_init() }))
}

/// `struct open_how` of `openat2`.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// In C of a launch (or, in a direct join, the command's process): joins the namespaces of a
/// namespace made ahead and changes into the
/// command's working directory there. A mount namespace joined sets the working directory to
/// its root; the descriptor that was checked belongs to Node's mount namespace, and changing
/// into it would leave the command a way out (`..` from there walks Node's mounts: Node's
/// `/proc` included). So the directory is looked up again by its path, inside, without
/// following any symlink, and used only if it is the same directory (device and inode) as
/// the one checked; otherwise the launch makes its own namespace (where the checked descriptor
/// moves along with the unshare).
///
/// # Safety
/// Call only in C or the vfork child of a direct join, with `j` valid.
pub unsafe fn join(j: &Join) -> Result<(), (JoinFailure, i32)> {
    if libc::setns(j.pidfd, j.flags) != 0 {
        return Err((JoinFailure::Refused, errno()));
    }
    let mut st: libc::stat = std::mem::zeroed();
    if libc::stat(c"/".as_ptr(), &mut st) != 0 || id_of(&st) != j.root_id {
        return Err((JoinFailure::Refused, libc::EXDEV));
    }
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    let fd = libc::syscall(
        libc::SYS_openat2,
        libc::AT_FDCWD,
        j.cwd_path.as_ptr(),
        &how as *const OpenHow,
        std::mem::size_of::<OpenHow>(),
    ) as RawFd;
    if fd < 0 {
        return Err((JoinFailure::Cwd, errno()));
    }
    let same = libc::fstat(fd, &mut st) == 0 && id_of(&st) == j.cwd_id;
    let r = if !same {
        Err((JoinFailure::Cwd, libc::ESTALE))
    } else if libc::fchdir(fd) != 0 {
        Err((JoinFailure::Cwd, errno()))
    } else {
        Ok(())
    };
    libc::close(fd);
    r
}

/// Steps 1 and 2, in C: [`enter`], then the init started with `CLONE_VM | CLONE_VFORK |
/// CLONE_PARENT` on `init_stack` (so it is a child of C's parent). The init's pid is written to
/// `init_pid` as soon as it exists, so that on a later failure the caller can end it. Fails
/// with the step and its errno.
///
/// # Safety
/// Call only in C, with `init_stack` the top of a stack only the init uses.
pub unsafe fn create(
    plan: &NsPlan,
    init_stack: *mut u8,
    init_pid: &mut libc::pid_t,
) -> Result<(), (super::child::Step, i32)> {
    use super::child::Step;
    enter(plan).map_err(|e| (Step::Namespaces, e))?;
    let mut init = InitArgs {
        plan,
        errno: 0,
        step: Step::Init,
    };
    let pid = libc::clone(
        init_main,
        init_stack as *mut libc::c_void,
        libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT | libc::SIGCHLD,
        &mut init as *mut InitArgs as *mut libc::c_void,
    );
    if pid < 0 {
        return Err((Step::Init, errno()));
    }
    *init_pid = pid;
    if std::ptr::read_volatile(&init.errno) != 0 {
        return Err((init.step, init.errno));
    }
    Ok(())
}

/// Arguments of [`init_main`].
#[derive(Debug)]
struct InitArgs {
    /// The plan.
    plan: *const NsPlan,
    /// Written by the init on failure (before `_exit(127)`).
    errno: i32,
    /// Written with `errno`: the step that failed (`Step::Init` or `Step::Proc`).
    step: super::child::Step,
}

/// Step 2: the namespace's init (pid 1). `arg` is an [`InitArgs`].
///
/// # Safety
/// Entry point of a `clone(CLONE_VM | CLONE_VFORK | CLONE_PARENT)` child only.
extern "C" fn init_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `InitArgs` of the suspended C; the plan outlives the launch.
    unsafe {
        let a = &mut *(arg as *mut InitArgs);
        let plan = &*a.plan;
        crate::sys::spawn::default_signals();
        let fail = |a: &mut InitArgs| -> ! {
            a.errno = errno();
            libc::_exit(127)
        };
        // The namespace's own /proc, in its own mount namespace (made by C), while the init
        // still holds its capabilities there; the command finds it mounted.
        if mount_proc() != 0 {
            a.step = super::child::Step::Proc;
            fail(a);
        }
        // Hold no directory of the host (the command's working directory is its own).
        if libc::chdir(c"/".as_ptr()) != 0 {
            fail(a);
        }
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

/// Mounts a `/proc` that shows only the namespace's processes (in the mount namespace C
/// created, which only the namespace's processes share).
///
/// # Safety
/// Call only in the namespace's init, before it execs.
unsafe fn mount_proc() -> i32 {
    libc::mount(
        c"proc".as_ptr(),
        c"/proc".as_ptr(),
        c"proc".as_ptr(),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        std::ptr::null(),
    )
}
