//! The namespaces of a sandboxed command, made by the launch's intermediate process C (a vfork
//! child of the launcher thread, see [`crate::sys::spawn::Isolation`]) with system calls only:
//!
//! 1. `unshare` of the mount, PID, IPC and (without `network: true`) network namespaces,
//!    inside a new user namespace where the caller lacks CAP_SYS_ADMIN (an identity map of its
//!    uid and gid: files keep their owner; the command keeps no capability once it execs); a
//!    new network namespace has only its loopback interface: no route leaves it, and the
//!    host's abstract unix sockets (which live in the host's network namespace) are
//!    unreachable from it, both ways; with a proxy, the loopback is brought up and the proxy's
//!    listener made there and sent to the parent ([`super::proxy`]) (without one it stays
//!    down: seccomp leaves the command no socket but unix ones); the network and IPC
//!    namespaces are a pair made ahead ([`super::netpool`], joined with `setns`) when one is
//!    ready;
//! 2. the filesystem ([`super::mounts`]), then the Landlock rule for the new /tmp (the
//!    ruleset is the terminal's own, built in the parent);
//! 3. the working directory looked up again by its path in the new tree and used only if it is
//!    the very directory that was checked (the descriptor C changed into belongs to the host's
//!    tree, which `..` would walk back into);
//! 4. the namespace's init, started with `CLONE_VM | CLONE_VFORK | CLONE_PARENT` ([`init_main`]):
//!    pid 1 of the namespace, a child of the launcher thread with SIGKILL as its parent-death
//!    signal, in a session of its own, SIGCHLD ignored (the kernel then reaps every orphan
//!    reparented to it; the setting survives `execve`). It mounts the namespace's own read-only
//!    `/proc` and execs a program that waits forever ([`super::init`]: a static one of 189
//!    bytes on x86-64, else `sleep`) with an empty environment: it holds the namespaces until the
//!    terminal is released; when it dies, the kernel kills everything left in the namespace and
//!    frees its tmpfs and IPC objects.

use std::ffi::CString;
use std::os::fd::RawFd;

use super::child::Step;
use super::mounts::MountPlan;

/// What C needs, prepared in the parent.
#[derive(Debug)]
pub struct NsPlan {
    /// `Some((uid_map, gid_map))`: create a user namespace and write these maps.
    maps: Option<(CString, CString)>,
    /// Create a network namespace (loopback only).
    pub net: bool,
    /// A network namespace made ahead ([`super::netpool`]) to join instead of creating one
    /// (-1: none), and the user namespace that owns it, entered first (-1: none).
    pub net_fd: RawFd,
    pub user_fd: RawFd,
    /// The IPC namespace made ahead with it, joined instead of creating one (-1: none).
    pub ipc_fd: RawFd,
    /// A whole sandbox made ahead ([`super::premade`]): the pid of its init (the launcher's
    /// process's unreaped child), whose namespaces (user, mount, PID, IPC and, without
    /// `network: true`, network) C joins instead of making its own, mounts and init included
    /// (0: none).
    pub premade_pid: libc::pid_t,
    /// C's end of the proxy's channel (-1: no proxy): the namespace's listener is sent over it
    /// ([`super::proxy::listen_and_send`]).
    pub proxy_sock: RawFd,
    /// The filesystem.
    pub mounts: MountPlan,
    /// The terminal's Landlock ruleset (-1: none), which gets the rule for the new /tmp.
    pub ruleset_fd: RawFd,
    /// The access the new /tmp gets in that ruleset.
    pub tmp_access: u64,
    /// The working directory as checked: its path...
    pub cwd_path: CString,
    /// ...and its identity (device, inode).
    pub cwd_id: (u64, u64),
    /// The init's program: the static one of [`super::init`] (-1: none), else `sleep`; its
    /// argv and empty environment.
    init_fd: RawFd,
    init_program: CString,
    _init_args: Vec<CString>,
    init_argv: Vec<*const libc::c_char>,
    init_envp: [*const libc::c_char; 1],
    /// /dev/null, for the init's stdio.
    null_fd: RawFd,
}

// SAFETY: the raw pointers point into `_init_args`, owned by the same struct and never changed
// after construction; the `Cell`s of the mount plan are written only by C while the owner of
// the plan waits for the launch.
unsafe impl Send for NsPlan {}

impl NsPlan {
    /// A plan: with `userns`, an identity map of the caller's uid and gid. `sleep` is an
    /// absolute path; `null_fd` an open /dev/null that outlives the plan.
    pub fn new(userns: bool, sleep: CString, null_fd: RawFd, mounts: MountPlan) -> NsPlan {
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
        NsPlan {
            maps,
            net: true,
            net_fd: -1,
            user_fd: -1,
            ipc_fd: -1,
            premade_pid: 0,
            proxy_sock: -1,
            mounts,
            ruleset_fd: -1,
            tmp_access: 0,
            cwd_path: CString::new("/").expect("literal"),
            cwd_id: (0, 0),
            init_fd: super::init::program_fd(),
            init_program: sleep,
            _init_args: args,
            init_argv: argv,
            init_envp: [std::ptr::null()],
            null_fd,
        }
    }
}

fn errno() -> i32 {
    crate::sys::spawn::errno()
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

pub(super) fn id_of(st: &libc::stat) -> (u64, u64) {
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

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;

/// Opens directory `path` (`O_PATH`), following no symlink on the way (`ELOOP` if one is
/// there); in the parent.
pub fn open_no_symlinks(path: &std::path::Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let c = crate::sys::spawn::cpath(path)?;
    // SAFETY: a NUL-terminated path and a valid `open_how`; the descriptor is owned at once.
    let fd = unsafe { open_beneath_none(libc::AT_FDCWD, &c) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nobody else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// `openat2(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS)`: a directory descriptor or -1 (errno set). Raw system call only.
pub(super) unsafe fn open_beneath_none(dirfd: RawFd, path: &std::ffi::CStr) -> RawFd {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    libc::syscall(
        libc::SYS_openat2,
        dirfd,
        path.as_ptr(),
        &how as *const OpenHow,
        std::mem::size_of::<OpenHow>(),
    ) as RawFd
}

/// Step 1, in a new network namespace: brings its loopback interface up (`SIOCSIFFLAGS`),
/// with the capabilities C holds there.
unsafe fn loopback_up() -> Result<(), i32> {
    let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if s < 0 {
        return Err(errno());
    }
    let mut ifr: libc::ifreq = std::mem::zeroed();
    for (d, &b) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
        *d = b as libc::c_char;
    }
    let r = if libc::ioctl(s, libc::SIOCGIFFLAGS as _, &mut ifr) != 0 {
        Err(errno())
    } else {
        ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(s, libc::SIOCSIFFLAGS as _, &ifr) != 0 {
            Err(errno())
        } else {
            Ok(())
        }
    };
    libc::close(s);
    r
}

/// Step 3: changes into the working directory as found in the new tree, if it is the one that
/// was checked.
unsafe fn enter_cwd(plan: &NsPlan) -> Result<(), i32> {
    let fd = open_beneath_none(libc::AT_FDCWD, &plan.cwd_path);
    if fd < 0 {
        return Err(errno());
    }
    let mut st: libc::stat = std::mem::zeroed();
    let r = if libc::fstat(fd, &mut st) != 0 {
        Err(errno())
    } else if id_of(&st) != plan.cwd_id {
        Err(libc::ESTALE)
    } else if libc::fchdir(fd) != 0 {
        Err(errno())
    } else {
        Ok(())
    };
    libc::close(fd);
    r
}

/// The isolation step of a sandboxed launch (steps 1-4), in C: `arg` is the [`NsPlan`]. The
/// init's pid is written to `init_pid` as soon as it exists, so that on a later failure the
/// caller can end it (a sandbox made ahead is joined instead, and its init stays its owner's:
/// `init_pid` is left as it is). Fails with the [`Step`] number and its errno.
///
/// # Safety
/// Call only in C, with `arg` a valid plan and `init_stack` the top of a stack only the init
/// uses.
pub unsafe fn enter(
    arg: *const libc::c_void,
    init_stack: *mut u8,
    init_pid: &mut libc::pid_t,
) -> Result<(), (i32, i32)> {
    let plan = &*(arg as *const NsPlan);
    let step = |s: Step| move |e: i32| (s as i32, e);
    if plan.premade_pid > 0 {
        join_premade(plan)?;
    } else {
        create(plan)?;
    }
    // The loopback interface is brought up only for the proxy's listener: with `network:
    // false` seccomp refuses every socket but unix ones, so nothing inside could use it.
    if plan.net && plan.proxy_sock >= 0 {
        loopback_up().map_err(step(Step::Loopback))?;
        super::proxy::listen_and_send(plan.proxy_sock).map_err(step(Step::Proxy))?;
    }
    if plan.premade_pid <= 0 {
        super::mounts::apply(&plan.mounts).map_err(step(Step::Mounts))?;
    }
    if plan.ruleset_fd >= 0 {
        let tmp = libc::open(c"/tmp".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if tmp < 0 {
            return Err((Step::Landlock as i32, errno()));
        }
        let rule = PathBeneath {
            allowed_access: plan.tmp_access,
            parent_fd: tmp,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            plan.ruleset_fd,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        );
        let e = errno();
        libc::close(tmp);
        if r != 0 {
            return Err((Step::Landlock as i32, e));
        }
    }
    enter_cwd(plan).map_err(step(Step::Cwd))?;
    if plan.premade_pid <= 0 {
        start_init(plan, init_stack, init_pid)?;
    }
    Ok(())
}

/// A whole sandbox ahead of its launch ([`super::premade`]), in a vfork child of the pool's
/// thread: the namespaces (step 1, without a proxy: a launch that wants one brings it up in
/// the network namespace it joins), the filesystem (step 2, without the Landlock rule, which
/// belongs to the launch's ruleset) and the init (step 4). Nothing else runs in them until a
/// launch joins them.
///
/// # Safety
/// As [`enter`], in the maker child.
pub unsafe fn make_ahead(
    plan: &NsPlan,
    init_stack: *mut u8,
    init_pid: &mut libc::pid_t,
) -> Result<(), (i32, i32)> {
    create(plan)?;
    super::mounts::apply(&plan.mounts).map_err(|e| (Step::Mounts as i32, e))?;
    start_init(plan, init_stack, init_pid)
}

/// Step 1 with a sandbox made ahead: joins all its namespaces at once (`setns` on a pidfd of
/// its init, opened here in C's own descriptor table; the user namespace first when there is
/// one), which also moves C to the root of its mount namespace.
unsafe fn join_premade(plan: &NsPlan) -> Result<(), (i32, i32)> {
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if plan.maps.is_some() {
        flags |= libc::CLONE_NEWUSER;
    }
    if plan.net {
        flags |= libc::CLONE_NEWNET;
    }
    let fd = libc::syscall(libc::SYS_pidfd_open, plan.premade_pid, 0) as RawFd;
    if fd < 0 {
        return Err((Step::Namespaces as i32, errno()));
    }
    let r = libc::setns(fd, flags);
    let e = errno();
    libc::close(fd);
    if r != 0 {
        return Err((Step::Namespaces as i32, e));
    }
    Ok(())
}

/// Step 1: the new namespaces (joining a network and IPC pair made ahead, if the plan has one).
unsafe fn create(plan: &NsPlan) -> Result<(), (i32, i32)> {
    let step = |s: Step| move |e: i32| (s as i32, e);
    // A user namespace made ahead with the network namespace is entered first, so that the
    // namespaces created next belong to it, as they would to one created here.
    let premade_user = plan.maps.is_some() && plan.user_fd >= 0;
    if premade_user && libc::setns(plan.user_fd, libc::CLONE_NEWUSER) != 0 {
        return Err((Step::Namespaces as i32, errno()));
    }
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if plan.ipc_fd < 0 {
        flags |= libc::CLONE_NEWIPC;
    }
    if plan.maps.is_some() && !premade_user {
        flags |= libc::CLONE_NEWUSER;
    }
    if plan.net && plan.net_fd < 0 {
        flags |= libc::CLONE_NEWNET;
    }
    if libc::unshare(flags) != 0 {
        return Err((Step::Namespaces as i32, errno()));
    }
    if let (Some((uid_map, gid_map)), false) = (&plan.maps, premade_user) {
        write_file(c"/proc/self/setgroups", b"deny").map_err(step(Step::Namespaces))?;
        write_file(c"/proc/self/uid_map", uid_map.as_bytes()).map_err(step(Step::Namespaces))?;
        write_file(c"/proc/self/gid_map", gid_map.as_bytes()).map_err(step(Step::Namespaces))?;
    }
    if plan.net && plan.net_fd >= 0 && libc::setns(plan.net_fd, libc::CLONE_NEWNET) != 0 {
        return Err((Step::Namespaces as i32, errno()));
    }
    if plan.ipc_fd >= 0 && libc::setns(plan.ipc_fd, libc::CLONE_NEWIPC) != 0 {
        return Err((Step::Namespaces as i32, errno()));
    }
    Ok(())
}

/// Step 4: starts the namespace's init and waits for its `execve` (`CLONE_VFORK`); its pid is
/// written to `init_pid` as soon as it exists.
unsafe fn start_init(
    plan: &NsPlan,
    init_stack: *mut u8,
    init_pid: &mut libc::pid_t,
) -> Result<(), (i32, i32)> {
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
        return Err((Step::Init as i32, errno()));
    }
    *init_pid = pid;
    if std::ptr::read_volatile(&init.errno) != 0 {
        return Err((init.step as i32, init.errno));
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
    step: Step,
}

/// Step 4: the namespace's init (pid 1). `arg` is an [`InitArgs`].
extern "C" fn init_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `InitArgs` of the suspended C; the plan outlives the launch. Only
    // system calls until `execve`.
    unsafe {
        let a = &mut *(arg as *mut InitArgs);
        let plan = &*a.plan;
        let fail = |a: &mut InitArgs| -> ! {
            a.errno = errno();
            libc::_exit(127)
        };
        // The namespace's own /proc, read-only, while the init still holds its capabilities in
        // the mount namespace; the command finds it mounted.
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
            std::ptr::null(),
        ) != 0
        {
            a.step = Step::Proc;
            fail(a);
        }
        if libc::chdir(c"/".as_ptr()) != 0
            // Orphans reparented to pid 1 are reaped by the kernel.
            || libc::signal(libc::SIGCHLD, libc::SIG_IGN) == libc::SIG_ERR
            || libc::setsid() < 0
            || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0
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
        // Every signal stays blocked (as the launch blocked them around the clone) through the
        // exec: no handler of Node can run here, and the exec resets them all; the program
        // unblocks them first thing ([`super::init`]).
        if plan.init_fd >= 0 {
            // Returns only if this kernel refuses to exec it: then `sleep`.
            libc::syscall(
                libc::SYS_execveat,
                plan.init_fd,
                c"".as_ptr(),
                plan.init_argv.as_ptr(),
                plan.init_envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            );
        }
        // `sleep` keeps the mask it is given: the handlers reset first, then unblocked.
        crate::sys::spawn::default_signals();
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(
            plan.init_program.as_ptr(),
            plan.init_argv.as_ptr(),
            plan.init_envp.as_ptr(),
        );
        fail(a)
    }
}
