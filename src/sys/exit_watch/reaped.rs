//! How a reaped child ended, in the platform's terms (the core maps it to the ACP status).

/// A child's end as the platform reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaped {
    /// A normal exit with this code (Unix: 0..=255; Windows: the full 32-bit code).
    Exited(u32),
    /// A death by this signal number (Unix only).
    #[cfg_attr(windows, allow(dead_code))]
    Signaled(i32),
    /// Not known (someone else reaped the child): never invented.
    Unknown,
}
