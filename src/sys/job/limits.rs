//! A request's `limits` as a Job Object's ([`JobLimits::from_request`]).

/// The limits a job enforces, from a request's `limits` (each `None`: no limit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
pub struct Unsupported(pub &'static str);

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
