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

// The mapping is pure: every platform's unit tests run it.
#[cfg(any(windows, test))]
mod limits;
#[cfg(any(windows, test))]
pub use limits::{JobLimits, Unsupported};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{Job, TerminalJob};

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
