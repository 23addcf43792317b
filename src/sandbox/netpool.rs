//! Network (and IPC) namespaces made ahead, off the launch path: creating a network namespace
//! costs about 0.9 ms of kernel work (its loopback device, its sysctl tables), more than the
//! rest of a sandbox's namespaces and mounts together; an IPC namespace's sysctl tables and
//! message-queue mount are work of the same kind. A background thread keeps up to [`DEPTH`]
//! fresh pairs ready; a launch takes one (its intermediate process joins both with `setns`
//! instead of `unshare(CLONE_NEWNET | CLONE_NEWIPC)`) and the thread makes the next while the
//! command runs. Where none is ready (the first launch, or a burst) the launch makes its own,
//! as before.
//!
//! Invariants: a namespace is given to one launch only, and nothing ever ran in it (the maker
//! is a `CLONE_VM | CLONE_VFORK` child that only opens its namespace files and exits); its
//! descriptors are close-on-exec and owned by the parent until the launch is over, then
//! closed (the command's namespace init holds it from then on). Without CAP_SYS_ADMIN the
//! network and IPC namespaces belong to a user namespace made with them (the same identity map a launch
//! writes), which the launch enters first, so that the namespaces it creates belong to it too:
//! one user namespace per command, as without the pool.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Condvar, Mutex, OnceLock};

/// A fresh network namespace and IPC namespace (and, for an unprivileged process, the user
/// namespace that owns them), for one launch.
#[derive(Debug)]
pub struct FreshNetns {
    /// The user namespace to enter first (`None` as root).
    pub user: Option<OwnedFd>,
    /// The network namespace.
    pub net: OwnedFd,
    /// The IPC namespace (made with it: its sysctl tables and message-queue mount are kernel
    /// work of the same kind, off the launch path too).
    pub ipc: OwnedFd,
}

/// How many namespaces are kept ready: two absorb a burst of launches (a host starting several
/// sandboxed commands at once, or one right after another) without any making its own.
const DEPTH: usize = 2;

#[derive(Default)]
struct Pool {
    ready: Vec<FreshNetns>,
    /// The maker failed once: the pool stays empty (launches make their own).
    failed: bool,
}

struct Shared {
    pool: Mutex<Pool>,
    wake: Condvar,
}

/// Takes the ready namespace, if any, and has the next one made. `userns` is how this
/// process makes namespaces (fixed for its lifetime: [`super::support::fixed`]).
pub fn take(userns: bool) -> Option<FreshNetns> {
    static SHARED: OnceLock<Option<&'static Shared>> = OnceLock::new();
    let shared = (*SHARED.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            pool: Mutex::new(Pool::default()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("acp-terminal-netns".into())
            .spawn(move || refill(shared, userns))
            .ok()
            .map(|_| shared)
    }))?;
    let mut pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
    let taken = pool.ready.pop();
    shared.wake.notify_one();
    taken
}

/// The pool's thread: makes a namespace whenever none is ready.
fn refill(shared: &'static Shared, userns: bool) {
    loop {
        {
            let mut pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
            while pool.ready.len() >= DEPTH || pool.failed {
                pool = shared.wake.wait(pool).unwrap_or_else(|p| p.into_inner());
            }
        }
        let made = make(userns);
        let mut pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
        match made {
            Some(p) => pool.ready.push(p),
            None => pool.failed = true,
        }
    }
}

/// What the maker child writes back.
struct MakeArgs {
    userns: bool,
    maps: [Vec<u8>; 2],
    user: RawFd,
    net: RawFd,
    ipc: RawFd,
}

/// Makes one namespace in a `CLONE_VM | CLONE_VFORK | CLONE_FILES` child (the descriptors it
/// opens are in our table); `None` if anything fails.
fn make(userns: bool) -> Option<FreshNetns> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mut args = MakeArgs {
        userns,
        maps: [
            format!("{uid} {uid} 1").into_bytes(),
            format!("{gid} {gid} 1").into_bytes(),
        ],
        user: -1,
        net: -1,
        ipc: -1,
    };
    let mut stack = vec![0u8; 64 << 10];
    // SAFETY: the top of our stack, rounded down to 16 bytes (stacks grow down on every Linux
    // architecture we build for).
    let top = unsafe { stack.as_mut_ptr().add(stack.len()) };
    let top = (top as usize & !15) as *mut libc::c_void;
    // SAFETY: the child runs `maker` on its own stack with system calls only and ends in
    // `_exit`; CLONE_VFORK suspends this thread until then, so `args` and `stack` outlive it.
    // All signals are blocked around the clone so that no handler runs in the child.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            maker,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD,
            &mut args as *mut MakeArgs as *mut libc::c_void,
        );
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        pid
    };
    // SAFETY: descriptors the child opened in our table and nobody else owns.
    let own = |fd: RawFd| (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
    let (user, net, ipc) = (own(args.user), own(args.net), own(args.ipc));
    if pid < 0 {
        return None;
    }
    let mut status = 0;
    // SAFETY: reaping our own child.
    while unsafe { libc::waitpid(pid, &mut status, libc::__WALL) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return None;
    }
    match (userns, user, net, ipc) {
        (false, None, Some(net), Some(ipc)) => Some(FreshNetns {
            user: None,
            net,
            ipc,
        }),
        (true, Some(user), Some(net), Some(ipc)) => Some(FreshNetns {
            user: Some(user),
            net,
            ipc,
        }),
        _ => None,
    }
}

/// The maker child: new network and IPC namespaces (in a new user namespace with the identity
/// maps when unprivileged), their namespace files opened close-on-exec, exit. System calls only.
extern "C" fn maker(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the suspended parent's `MakeArgs`; only system calls until `_exit`.
    unsafe {
        let a = &mut *(arg as *mut MakeArgs);
        let mut flags = libc::CLONE_NEWNET | libc::CLONE_NEWIPC;
        if a.userns {
            flags |= libc::CLONE_NEWUSER;
        }
        if libc::unshare(flags) != 0 {
            libc::_exit(1);
        }
        if a.userns {
            let files: [(&std::ffi::CStr, &[u8]); 3] = [
                (c"/proc/self/setgroups", b"deny"),
                (c"/proc/self/uid_map", &a.maps[0]),
                (c"/proc/self/gid_map", &a.maps[1]),
            ];
            for (path, data) in files {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    libc::_exit(2);
                }
                let n = libc::write(fd, data.as_ptr() as *const libc::c_void, data.len());
                libc::close(fd);
                if n != data.len() as isize {
                    libc::_exit(2);
                }
            }
            a.user = libc::open(
                c"/proc/self/ns/user".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            if a.user < 0 {
                libc::_exit(3);
            }
        }
        a.net = libc::open(
            c"/proc/self/ns/net".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if a.net < 0 {
            libc::_exit(3);
        }
        a.ipc = libc::open(
            c"/proc/self/ns/ipc".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if a.ipc < 0 {
            libc::_exit(3);
        }
        libc::_exit(0)
    }
}
