//! The seccomp filter of a sandboxed terminal, compiled once per process with `seccompiler`
//! (as Codex's Linux sandbox does) and installed by the child with
//! `seccomp(SECCOMP_SET_MODE_FILTER)` after `no_new_privs`.
//!
//! Always: `clone3` fails with ENOSYS (C libraries then fall back to `clone`), because its
//! `CLONE_INTO_CGROUP` would let a process start a child in another cgroup without writing a
//! `cgroup.procs` file. Without network: `socket` and `socketpair` of any family but
//! `AF_UNIX`, every `connect` (which also keeps host services behind pathname unix sockets out
//! of reach), and `io_uring_*` (which can open sockets without `socket`) fail with EPERM.
//!
//! Before seccompiler's filter comes a two-instruction guard: on x86-64, system call numbers
//! with the x32 bit set would otherwise slip past rules written for the 64-bit numbers.

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

/// The network rules (all answered EPERM).
fn rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let e = |e: seccompiler::BackendError| e.to_string();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    {
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

/// `BPF_LD | BPF_W | BPF_ABS`, `BPF_JMP | BPF_JGE | BPF_K`, `BPF_RET | BPF_K`.
const LD_W_ABS: u16 = 0x20;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn bpf(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<Vec<sock_filter>, String> {
    let arch = target_arch().ok_or("no seccomp filter for this architecture")?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// `SECCOMP_RET_ERRNO | errno`.
fn ret_errno(n: i32) -> u32 {
    0x0005_0000 | (n as u32 & 0xffff)
}

/// The filters to install, in order. Each is a complete program; the kernel runs all of them
/// and takes the most restrictive answer, so the ENOSYS filter (x32 guard, clone3) and the
/// EPERM filter (network) can stay separate, as seccompiler gives one action per filter.
fn compile(network: bool) -> Result<Vec<Vec<sock_filter>>, String> {
    let mut first = vec![
        // A = seccomp_data.nr; if A >= the x32 bit, return ENOSYS; else go on.
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: ret_errno(libc::ENOSYS),
        },
    ];
    first.extend(bpf(
        BTreeMap::from([(libc::SYS_clone3, vec![])]),
        libc::ENOSYS,
    )?);
    let mut out = vec![first];
    if !network {
        out.push(bpf(rules()?, libc::EPERM)?);
    }
    Ok(out)
}

/// The compiled filters for `network` (compiled once per process, then shared).
pub fn programs(network: bool) -> Result<&'static [Vec<sock_filter>], String> {
    static CACHE: [OnceLock<Result<Vec<Vec<sock_filter>>, String>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    CACHE[network as usize]
        .get_or_init(|| compile(network))
        .as_deref()
        .map_err(|e| e.clone())
}
