//! Descriptors in tokio's reactor (Unix: readiness of an owned descriptor through epoll or
//! kqueue). The terminal registers its output pipe and input end here, the reaper its exit
//! descriptor; neither layer reaches into the other for it.

use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;

/// Registers an owned fd with the runtime's reactor for readability.
pub fn register_readable(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the `OwnedFd` is moved into the `AsyncFd`, so the descriptor stays open and
    // refers to the same file description for the `AsyncFd`'s whole lifetime.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(std::io::Error::from)
}

/// Registers an owned fd with the runtime's reactor for writability.
pub fn register_writable(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: as in `register_readable`.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::WRITABLE) }
        .map_err(std::io::Error::from)
}
