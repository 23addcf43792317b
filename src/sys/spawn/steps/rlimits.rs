//! The resource-limits step (Unix): the request's `limits` as `setrlimit` calls, each soft and
//! hard alike, applied in the child. (`limits.processes` is also a pids cgroup where there is
//! one: `sys::contain`.)

use crate::sys::spawn::Limits;

/// A resource limit applied in the child (soft and hard alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    /// `RLIMIT_*` resource.
    pub resource: i32,
    /// The limit.
    pub value: u64,
}

/// The limits as `setrlimit` calls.
// `RLIMIT_*` are u32 on glibc and i32 on macOS and musl: the cast is needed on one only.
#[allow(clippy::unnecessary_cast)]
pub fn rlimits(limits: &Limits) -> Vec<Rlimit> {
    [
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_AS, limits.address_space_bytes),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_FSIZE, limits.file_size_bytes),
        (libc::RLIMIT_NPROC, limits.processes),
    ]
    .into_iter()
    .filter_map(|(r, v)| {
        v.map(|value| Rlimit {
            resource: r as i32,
            value,
        })
    })
    .collect()
}

/// Applies `limits`, in the child. `Err(())` leaves the failed call's errno in place.
///
/// # Safety
/// Only in a child about to `execve` (raw system calls only).
pub unsafe fn apply(limits: &[Rlimit]) -> Result<(), ()> {
    for r in limits {
        let lim = libc::rlimit {
            rlim_cur: r.value as libc::rlim_t,
            rlim_max: r.value as libc::rlim_t,
        };
        if libc::setrlimit(r.resource as _, &lim) != 0 {
            return Err(());
        }
    }
    Ok(())
}
