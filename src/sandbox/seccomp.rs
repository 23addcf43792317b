//! The seccomp filter of a sandboxed terminal, compiled once per process with `seccompiler`
//! (as Codex's Linux sandbox does) and installed by the child with
//! `seccomp(SECCOMP_SET_MODE_FILTER)` after `no_new_privs`.
//!
//! Always: `ioctl` with `TIOCSTI` (push bytes into a terminal's input, which its reader takes
//! as typed) or `TIOCLINUX` fails with EPERM, a second wall behind the command's own session
//! (it has no controlling terminal but its own pty); the keyring calls (`add_key`,
//! `request_key`, `keyctl`) fail with EPERM, as in Docker's default profile (keyrings are the
//! host user's unless the sandbox has its own user namespace); `clone` with `CLONE_PARENT`
//! fails with EPERM (its child would be Node's, a zombie Node never reaps); `clone3` fails with ENOSYS (C libraries then fall back to `clone`), because its
//! `CLONE_INTO_CGROUP` would let a process start a child in another cgroup without writing a
//! `cgroup.procs` file. Without network: `socket` and `socketpair` of any family but
//! `AF_UNIX`, every `connect` (which also keeps host services behind pathname unix sockets out
//! of reach), and `io_uring_*` (which can open sockets without `socket`) fail with EPERM.
//!
//! Before seccompiler's program comes a short hand-written prologue: on x86-64, system call
//! numbers with the x32 bit set would otherwise slip past rules written for the 64-bit
//! numbers, and `clone3` needs another answer (ENOSYS) than the rules (EPERM).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    sock_filter, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The architecture the filter is compiled for, where seccompiler knows it.
fn target_arch() -> Option<TargetArch> {
    if cfg!(target_arch = "x86_64") {
        Some(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Some(TargetArch::riscv64)
    } else {
        None
    }
}

/// Whether this build can filter system calls on this architecture.
pub fn arch_supported() -> bool {
    target_arch().is_some()
}

/// What the network rules allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net {
    /// `network: false`: unix sockets only, no `connect`.
    Off,
    /// `network: true`: no network rule.
    On,
    /// Behind the host's proxy (a network namespace whose only way out is the proxy's listener):
    /// IP sockets and `connect`, but no `socket(AF_UNIX)` and no datagram `socketpair` (either
    /// could `connect` to a host service behind a pathname socket, e.g. `docker.sock`); stream
    /// and seqpacket socketpairs stay (pipes between processes).
    Proxy,
}

/// The rules (all answered EPERM): the terminal ioctls, and the network as `net` says.
fn rules(net: Net) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let e = |e: seccompiler::BackendError| e.to_string();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let ioctl = |request: u64| -> Result<SeccompRule, String> {
        SeccompRule::new(vec![SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            request,
        )
        .map_err(e)?])
        .map_err(e)
    };
    // (`Ioctl` is not u64 on every target)
    #[allow(clippy::unnecessary_cast)]
    rules.insert(
        libc::SYS_ioctl,
        vec![ioctl(libc::TIOCSTI as u64)?, ioctl(TIOCLINUX)?],
    );
    // The kernel's keyrings are not namespaced but by user namespace: without one (root's
    // sandbox) a key added inside would be root's, seen by later commands and by the host.
    for nr in [libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl] {
        rules.insert(nr, vec![]);
    }
    // `clone(CLONE_PARENT)` would make a process Node's child, which Node never reaps: zombies
    // that fill Node's process table (and keep the namespace's init from ending).
    rules.insert(
        libc::SYS_clone,
        vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(libc::CLONE_PARENT as u64),
            libc::CLONE_PARENT as u64,
        )
        .map_err(e)?])
        .map_err(e)?],
    );
    let cond = |arg: u8, op: SeccompCmpOp, v: u64| -> Result<SeccompCondition, String> {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, v).map_err(e)
    };
    if net == Net::Proxy {
        for nr in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            rules.insert(nr, vec![]);
        }
        let not_ip = SeccompRule::new(vec![
            cond(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?,
        ])
        .map_err(e)?;
        rules.insert(libc::SYS_socket, vec![not_ip]);
        let not_unix =
            SeccompRule::new(vec![cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?]).map_err(e)?;
        let dgram = SeccompRule::new(vec![cond(
            1,
            SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK),
            libc::SOCK_DGRAM as u64,
        )?])
        .map_err(e)?;
        rules.insert(libc::SYS_socketpair, vec![not_unix, dgram]);
    }
    if net == Net::Off {
        for nr in [
            libc::SYS_connect,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            rules.insert(nr, vec![]);
        }
        let not_unix = SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(e)?])
        .map_err(e)?;
        rules.insert(libc::SYS_socket, vec![not_unix.clone()]);
        rules.insert(libc::SYS_socketpair, vec![not_unix]);
    }
    Ok(rules)
}

/// The socket type's bits of `socket`/`socketpair`'s second argument (without the flags).
const SOCK_TYPE_MASK: u64 = 0xf;

/// `TIOCLINUX` (not in the libc crate).
const TIOCLINUX: u64 = 0x541C;

/// Classic BPF opcodes: `BPF_LD | BPF_W | BPF_ABS`, `BPF_JMP | BPF_JGE | BPF_K`,
/// `BPF_JMP | BPF_JEQ | BPF_K`, `BPF_RET | BPF_K`.
const LD_W_ABS: u16 = 0x20;
const JGE_K: u16 = 0x35;
const JEQ_K: u16 = 0x15;
const RET_K: u16 = 0x06;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// `SECCOMP_RET_ERRNO | errno`.
fn ret_errno(n: i32) -> u32 {
    0x0005_0000 | (n as u32 & 0xffff)
}

/// One filter (one `seccomp` call, one JIT compilation in the kernel): a hand-written
/// prologue answering ENOSYS (x32 numbers, `clone3`), then seccompiler's program, which checks
/// the architecture (any other is killed) and answers EPERM to the network rules.
fn compile(net: Net) -> Result<Vec<sock_filter>, String> {
    let arch = target_arch().ok_or("no seccomp filter for this architecture")?;
    let rules = rules(net)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let body: seccompiler::BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let mut prog = vec![
        // A = seccomp_data.nr
        ins(LD_W_ABS, 0, 0, 0),
        // x32 numbers would slip past rules written for the 64-bit ones.
        ins(JGE_K, 0, 1, X32_SYSCALL_BIT),
        ins(RET_K, 0, 0, ret_errno(libc::ENOSYS)),
        // clone3's CLONE_INTO_CGROUP would start a child in another cgroup; C libraries fall
        // back to clone on ENOSYS. (Same number on every architecture.)
        ins(JEQ_K, 0, 1, libc::SYS_clone3 as u32),
        ins(RET_K, 0, 0, ret_errno(libc::ENOSYS)),
    ];
    prog.extend(body);
    Ok(prog)
}

/// The compiled filter for `net` (compiled once per process, then shared).
pub fn program(net: Net) -> Result<&'static [sock_filter], String> {
    static CACHE: [OnceLock<Result<Vec<sock_filter>, String>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CACHE[net as usize]
        .get_or_init(|| compile(net))
        .as_deref()
        .map_err(|e| e.clone())
}

#[cfg(test)]
impl From<bool> for Net {
    fn from(network: bool) -> Net {
        if network {
            Net::On
        } else {
            Net::Off
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Installs the filter in a forked child, runs `probe` there (system calls only) and
    /// returns its exit code.
    fn in_filtered_child(network: impl Into<Net>, probe: fn() -> i32) -> i32 {
        let prog = program(network.into()).unwrap();
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: the child only makes system calls before `_exit`.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::syscall(libc::SYS_seccomp, 1u32, 0u32, &fprog) != 0
                {
                    libc::_exit(200);
                }
                libc::_exit(probe());
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert!(libc::WIFEXITED(status), "status {status:#x}");
            libc::WEXITSTATUS(status)
        }
    }

    /// errno of a failed raw system call, or 0 when it succeeded.
    fn err_of(r: libc::c_long) -> i32 {
        if r < 0 {
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(255)
        } else {
            0
        }
    }

    /// The tenth attack: `clone(CLONE_PARENT)` made processes Node's children, zombies Node never
    /// reaps (383 of them made every later launch fail with EAGAIN).
    #[test]
    fn clone_parent_is_eperm_and_fork_still_works() {
        for network in [Net::Off, Net::On, Net::Proxy] {
            // SAFETY: clone without a new stack (fork semantics); a child that the filter let
            // through exits at once.
            let code = in_filtered_child(network, || unsafe {
                let r = libc::syscall(
                    libc::SYS_clone,
                    (libc::CLONE_PARENT | libc::SIGCHLD) as libc::c_ulong,
                    0usize,
                    0usize,
                    0usize,
                    0usize,
                );
                if r == 0 {
                    libc::_exit(0);
                }
                let parent = err_of(r);
                let pid = libc::fork();
                if pid == 0 {
                    libc::_exit(0);
                }
                let mut status = 0;
                let forked = pid > 0 && libc::waitpid(pid, &mut status, 0) == pid;
                if parent == libc::EPERM && forked {
                    0
                } else {
                    1
                }
            });
            assert_eq!(code, 0, "network {network:?}");
        }
    }

    /// The ninth attack: a root sandbox's `add_key` to the user keyring was read back by a later
    /// sandboxed command and by the host.
    #[test]
    fn the_keyring_calls_are_eperm_with_or_without_network() {
        for network in [Net::Off, Net::On, Net::Proxy] {
            // SAFETY: keyring calls with valid C strings or none; refused before they act.
            let code = in_filtered_child(network, || unsafe {
                const KEY_SPEC_USER_KEYRING: libc::c_long = -4;
                const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
                let add = err_of(libc::syscall(
                    libc::SYS_add_key,
                    c"user".as_ptr(),
                    c"acp-seccomp-test".as_ptr(),
                    c"x".as_ptr(),
                    1usize,
                    KEY_SPEC_USER_KEYRING,
                ));
                let request = err_of(libc::syscall(
                    libc::SYS_request_key,
                    c"user".as_ptr(),
                    c"acp-seccomp-test".as_ptr(),
                    std::ptr::null::<libc::c_char>(),
                    0,
                ));
                let ctl = err_of(libc::syscall(
                    libc::SYS_keyctl,
                    KEYCTL_GET_KEYRING_ID,
                    KEY_SPEC_USER_KEYRING,
                    0,
                ));
                if add == libc::EPERM && request == libc::EPERM && ctl == libc::EPERM {
                    0
                } else {
                    1
                }
            });
            assert_eq!(code, 0, "network {network:?}");
        }
    }

    #[test]
    fn without_network_only_unix_sockets_and_no_connect() {
        // SAFETY: plain system calls with valid or null arguments.
        let code = in_filtered_child(false, || unsafe {
            let inet = err_of(libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) as _);
            let inet6 = err_of(libc::socket(libc::AF_INET6, libc::SOCK_DGRAM, 0) as _);
            let netlink = err_of(libc::socket(libc::AF_NETLINK, libc::SOCK_RAW, 0) as _);
            let unix = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            let addr: libc::sockaddr_un = std::mem::zeroed();
            let connect =
                err_of(libc::connect(unix, &addr as *const _ as *const libc::sockaddr, 2) as _);
            let uring = err_of(libc::syscall(
                libc::SYS_io_uring_setup,
                1,
                std::ptr::null::<u8>(),
            ));
            let ok = inet == libc::EPERM
                && inet6 == libc::EPERM
                && netlink == libc::EPERM
                && unix >= 0
                && connect == libc::EPERM
                && uring == libc::EPERM;
            if ok {
                0
            } else {
                1
            }
        });
        assert_eq!(code, 0);
    }

    #[test]
    fn tiocsti_and_tioclinux_are_refused_other_ioctls_pass_with_or_without_network() {
        for network in [Net::Off, Net::On, Net::Proxy] {
            // SAFETY: ioctls on a pty this child opens; TIOCSTI's argument is a valid byte.
            let code = in_filtered_child(network, || unsafe {
                let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
                if master < 0 || libc::grantpt(master) != 0 || libc::unlockpt(master) != 0 {
                    return 2;
                }
                let byte = b'#';
                let sti = err_of(libc::ioctl(master, libc::TIOCSTI, &byte) as _);
                let linux = err_of(libc::ioctl(master, TIOCLINUX as _, &byte) as _);
                let mut ws: libc::winsize = std::mem::zeroed();
                let size = err_of(libc::ioctl(master, libc::TIOCGWINSZ, &mut ws) as _);
                if sti == libc::EPERM && linux == libc::EPERM && size == 0 {
                    0
                } else {
                    1
                }
            });
            assert_eq!(code, 0, "network {network:?}");
        }
    }

    /// Behind the proxy: IP sockets and `connect` work (the namespace bounds where they go);
    /// nothing can make a socket that would `connect` to a pathname unix socket of the host
    /// (`socket(AF_UNIX)`, a datagram socketpair); stream socketpairs and io_uring as before.
    #[test]
    fn behind_the_proxy_ip_sockets_connect_but_no_unix_socket_can() {
        // SAFETY: plain system calls with valid or null arguments.
        let code = in_filtered_child(Net::Proxy, || unsafe {
            let inet = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            let inet6 = err_of(libc::socket(libc::AF_INET6, libc::SOCK_DGRAM, 0) as _);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_port = 1u16.to_be();
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            // Allowed by the filter: the kernel answers (nothing listens on port 1).
            let connect = err_of(libc::connect(
                inet,
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as _,
            ) as _);
            let unix = err_of(libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) as _);
            let unix_dgram = err_of(libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0) as _);
            let netlink = err_of(libc::socket(libc::AF_NETLINK, libc::SOCK_RAW, 0) as _);
            let mut sv = [0; 2];
            let pair = err_of(libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                sv.as_mut_ptr(),
            ) as _);
            let dgram_pair = err_of(libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                sv.as_mut_ptr(),
            ) as _);
            let uring = err_of(libc::syscall(
                libc::SYS_io_uring_setup,
                1,
                std::ptr::null::<u8>(),
            ));
            let ok = inet >= 0
                && inet6 == 0
                && connect == libc::ECONNREFUSED
                && unix == libc::EPERM
                && unix_dgram == libc::EPERM
                && netlink == libc::EPERM
                && pair == 0
                && dgram_pair == libc::EPERM
                && uring == libc::EPERM;
            if ok {
                0
            } else {
                1
            }
        });
        assert_eq!(code, 0);
    }

    #[test]
    fn the_prologue_answers_x32_numbers_and_clone3_before_anything_else() {
        for network in [Net::Off, Net::On, Net::Proxy] {
            let p = program(network).unwrap();
            assert_eq!((p[0].code, p[0].k), (LD_W_ABS, 0));
            assert_eq!((p[1].code, p[1].k), (JGE_K, X32_SYSCALL_BIT));
            assert_eq!((p[2].code, p[2].k), (RET_K, ret_errno(libc::ENOSYS)));
            assert_eq!((p[3].code, p[3].k), (JEQ_K, libc::SYS_clone3 as u32));
            assert_eq!((p[4].code, p[4].k), (RET_K, ret_errno(libc::ENOSYS)));
        }
    }

    /// (On kernels built without x32 the kernel answers ENOSYS to x32 numbers by itself; the
    /// test above pins the filter's own answer.)
    #[test]
    fn clone3_and_x32_numbers_are_enosys_with_or_without_network() {
        for network in [Net::Off, Net::On, Net::Proxy] {
            // SAFETY: clone3 with a null argument fails before doing anything unless
            // filtered; the x32 number of socket(AF_INET) must not create a socket.
            let code = in_filtered_child(network, || unsafe {
                let clone3 = err_of(libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0));
                let x32 = err_of(libc::syscall(
                    X32_SYSCALL_BIT as libc::c_long | libc::SYS_socket,
                    libc::AF_INET,
                    libc::SOCK_STREAM,
                    0,
                ));
                let fork_still_works = libc::syscall(libc::SYS_getpid) > 0;
                if clone3 == libc::ENOSYS && x32 == libc::ENOSYS && fork_still_works {
                    0
                } else {
                    1
                }
            });
            assert_eq!(code, 0, "network {network:?}");
        }
        // SAFETY: a plain socket call.
        let code = in_filtered_child(true, || unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            if fd >= 0 {
                0
            } else {
                1
            }
        });
        assert_eq!(code, 0, "network: true leaves sockets alone");
    }
}
