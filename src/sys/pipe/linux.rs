//! Linux: `pipe2(O_CLOEXEC)`, `F_SETPIPE_SZ`, and a precise timer for paced reads (`timerfd`,
//! which wakes the reactor to the microsecond where tokio's own timer rounds to milliseconds).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use nix::fcntl::OFlag;
use nix::sys::timerfd::{ClockId, TimerFd, TimerFlags};
use tokio::io::unix::AsyncFd;

pub(super) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(io::Error::from)
}

/// Asks for a pipe buffer of `bytes` and answers the capacity the pipe has afterwards (0 when
/// `fd` is no pipe, e.g. a pty master). Limits may refuse the growth; the pipe keeps its size.
pub(super) fn grow(fd: BorrowedFd<'_>, bytes: i32) -> usize {
    // SAFETY: fcntl on a descriptor the caller keeps open; failure (limits) is ignored.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes);
    }
    // SAFETY: as above; F_GETPIPE_SZ only reads the pipe's size.
    let size = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
    size.max(0) as usize
}

/// A one-shot timer in the reactor, precise to the microsecond.
#[derive(Debug)]
pub(super) struct Timer {
    fd: AsyncFd<OwnedFd>,
    armed: bool,
}

impl Timer {
    /// A timer (not armed). Must run inside a runtime.
    pub(super) fn new() -> io::Result<Timer> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        Ok(Timer {
            fd: crate::sys::reactor::register_readable(OwnedFd::from(fd))?,
            armed: false,
        })
    }

    /// Arms the timer to expire `after` from now (at least a nanosecond).
    pub(super) fn arm(&mut self, after: Duration) -> io::Result<()> {
        let after = after.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            // nix's conversion: `time_t`'s width differs between the C libraries.
            it_value: *nix::sys::time::TimeSpec::from_duration(after).as_ref(),
        };
        // SAFETY: `spec` outlives the call, the old value is not asked for (null), and the
        // descriptor is our open timerfd.
        let r = unsafe {
            libc::timerfd_settime(
                self.fd.get_ref().as_raw_fd(),
                0,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = true;
        Ok(())
    }

    /// Resolves once the armed timer expired (at once when it is not armed). Cancel-safe: the
    /// expiry is consumed only by a call that completes. The expiry count is not read: the
    /// next [`Timer::arm`] resets it, and the reactor is told of each expiry (epoll is
    /// edge-triggered), so one syscall per wait is saved.
    pub(super) async fn expired(&mut self) {
        if !self.armed {
            return;
        }
        // An error means the reactor is gone (the runtime shuts down): nothing to wait for.
        if let Ok(mut guard) = self.fd.readable().await {
            guard.clear_ready();
        }
        self.armed = false;
    }
}
