//! Job Objects: Windows' containment of a terminal's process tree (the role cgroups and
//! process groups play on Linux). One job per terminal, created before its command runs; the
//! command is put in it while still suspended, so every process it starts is in the job from
//! its first instruction, detached ones included. The job is created with
//! `KILL_ON_JOB_CLOSE` and without any breakaway permission: when the last handle closes
//! (release, or Node ending by any means) Windows ends the whole tree, so no guardian process
//! is needed there. Kill is `TerminateJobObject`.
//!
//! `limits` map to the job's limits where Windows has them ([`JobLimits::from_request`],
//! pure, tested on every platform); the rest are `ENOTSUP`, as on macOS.

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{Job, TerminalJob};

/// The limits a job enforces, from a request's `limits` (each `None`: no limit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(not(windows), allow(dead_code))]
pub struct JobLimits {
    /// Processes alive in the job at once (`limits.processes`; a further
    /// `CreateProcess` in the tree fails).
    pub active_processes: Option<u32>,
    /// Committed memory of each process, in bytes (`limits.addressSpaceBytes`).
    pub process_memory: Option<usize>,
    /// User-mode CPU time of each process, in 100 ns units (`limits.cpuSeconds`); Windows
    /// ends a process that exceeds it.
    pub process_user_time: Option<i64>,
}

/// The limit a job cannot enforce, by its request field name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(windows), allow(dead_code))]
pub struct Unsupported(pub &'static str);

#[cfg_attr(not(windows), allow(dead_code))]
impl JobLimits {
    /// Maps a request's limits (`cpu_seconds`, `address_space_bytes`, `open_files`,
    /// `file_size_bytes`, `processes`) to a job's. Open files and file size have no job
    /// limit: the first one given is refused (its field name, for an `ENOTSUP`); a value a
    /// job cannot hold (more than `u32::MAX` processes, more memory than the address space)
    /// is clamped to "no limit reachable" rather than refused.
    pub fn from_request(
        cpu_seconds: Option<u64>,
        address_space_bytes: Option<u64>,
        open_files: Option<u64>,
        file_size_bytes: Option<u64>,
        processes: Option<u64>,
    ) -> Result<Self, Unsupported> {
        if open_files.is_some() {
            return Err(Unsupported("limits.openFiles"));
        }
        if file_size_bytes.is_some() {
            return Err(Unsupported("limits.fileSizeBytes"));
        }
        Ok(Self {
            active_processes: processes.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            process_memory: address_space_bytes.map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
            process_user_time: cpu_seconds.map(|s| {
                i64::try_from(s)
                    .ok()
                    .and_then(|s| s.checked_mul(10_000_000))
                    .unwrap_or(i64::MAX)
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_limits_map_to_job_limits_and_the_rest_is_refused_by_name() {
        assert_eq!(
            JobLimits::from_request(Some(2), Some(1 << 30), None, None, Some(8)),
            Ok(JobLimits {
                active_processes: Some(8),
                process_memory: Some(1 << 30),
                process_user_time: Some(20_000_000),
            })
        );
        assert_eq!(
            JobLimits::from_request(None, None, None, None, None),
            Ok(JobLimits::default())
        );
        assert_eq!(
            JobLimits::from_request(None, None, Some(64), None, None),
            Err(Unsupported("limits.openFiles"))
        );
        assert_eq!(
            JobLimits::from_request(Some(1), None, None, Some(1), None),
            Err(Unsupported("limits.fileSizeBytes"))
        );
        let huge = JobLimits::from_request(Some(u64::MAX), None, None, None, Some(u64::MAX));
        assert_eq!(huge.unwrap().process_user_time, Some(i64::MAX));
        assert_eq!(huge.unwrap().active_processes, Some(u32::MAX));
    }
}
