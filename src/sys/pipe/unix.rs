//! Unix (Linux and macOS): a command's output read from a non-blocking descriptor (a pipe's
//! read end or a pty master) registered with the runtime's reactor.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use super::imp;

use nix::errno::Errno;
use tokio::io::unix::AsyncFd;

use super::ReadOutcome;

/// Pipe capacity a reader switches to once the command floods (a read found the pipe full).
const FLOOD_PIPE_SIZE: i32 = 1 << 20;
/// A read smaller than this (the default pipe capacity) is taken to have drained the pipe.
const SMALL_READ: usize = 64 * 1024;
/// Size of the per-thread read buffer.
const READ_BUF_SIZE: usize = 1 << 20;

thread_local! {
    static READ_BUF: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_BUF_SIZE]);
}

/// A pipe `(read end, write end)`, both close-on-exec: from the start on Linux (`pipe2`); on
/// macOS right after `pipe`, where our own launches cannot inherit them in between anyway
/// (`POSIX_SPAWN_CLOEXEC_DEFAULT`).
pub fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    imp::pipe_cloexec()
}

/// Asks for a larger pipe buffer (best effort; a no-op where the platform cannot).
fn grow(fd: &impl AsFd, bytes: i32) {
    imp::grow(fd.as_fd(), bytes)
}

/// A command's output: a non-blocking descriptor the runtime's reactor wakes us for.
#[derive(Debug)]
pub struct OutputReader {
    fd: AsyncFd<OwnedFd>,
    /// The pipe was grown once (see [`FLOOD_PIPE_SIZE`]).
    grown: bool,
}

impl OutputReader {
    /// Registers `fd` (non-blocking) with the runtime's reactor. Must run inside a runtime.
    pub fn new(fd: OwnedFd) -> io::Result<OutputReader> {
        Ok(OutputReader {
            fd: crate::sys::reactor::register_readable(fd)?,
            grown: false,
        })
    }

    /// Waits until output can be read, then reads up to `max_reads` times, handing each chunk
    /// to `sink`; stops early (`More`) when `sink` answers false (its consumer is behind).
    /// Cancel-safe: nothing is read before the wait is over, and the reads then happen
    /// without waiting.
    pub async fn read(&mut self, max_reads: usize, sink: impl FnMut(&[u8]) -> bool) -> ReadOutcome {
        let mut guard = match self.fd.readable().await {
            Ok(guard) => guard,
            Err(_) => return ReadOutcome::Eof,
        };
        let short_read_drains = !guard.ready().is_read_closed();
        let outcome = read_some(
            guard.get_inner(),
            max_reads,
            &mut self.grown,
            short_read_drains,
            sink,
        );
        if outcome == ReadOutcome::Drained {
            guard.clear_ready();
        }
        outcome
    }

    /// Bytes waiting in the pipe (or pty) now, not yet read (`FIONREAD`; 0 if unknown). After
    /// the command exited, that is what it wrote and the pump has still to read.
    pub fn queued(&self) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through the pointer, which outlives the call; the
        // descriptor stays open (we own it).
        let r = unsafe { libc::ioctl(self.fd.get_ref().as_raw_fd(), libc::FIONREAD, &mut n) };
        if r == 0 {
            n.max(0) as usize
        } else {
            0
        }
    }

    /// Reads what is there now, up to `max_reads` times, without waiting (after the command
    /// exited, everything it wrote is already in the pipe); stops early (`More`) when `sink`
    /// answers false.
    pub fn read_now(&mut self, max_reads: usize, sink: impl FnMut(&[u8]) -> bool) -> ReadOutcome {
        read_some(self.fd.get_ref(), max_reads, &mut self.grown, false, sink)
    }
}

/// A command's input: a non-blocking descriptor (a pipe's write end or a pty master) the
/// runtime's reactor wakes us for once it is writable.
#[derive(Debug)]
pub struct InputWriter {
    fd: AsyncFd<OwnedFd>,
}

impl InputWriter {
    /// Registers `fd` (non-blocking) with the runtime's reactor. Must run inside a runtime.
    pub fn new(fd: OwnedFd) -> io::Result<InputWriter> {
        Ok(InputWriter {
            fd: crate::sys::reactor::register_writable(fd)?,
        })
    }

    /// One non-blocking write: how many bytes were taken, `WouldBlock` when none can be now.
    pub fn try_write(&self, data: &[u8]) -> io::Result<usize> {
        nix::unistd::write(self.fd.get_ref(), data).map_err(io::Error::from)
    }

    /// Resolves once the descriptor may be writable again.
    pub async fn writable(&self) -> io::Result<()> {
        let mut guard = self.fd.writable().await?;
        guard.clear_ready();
        Ok(())
    }
}

/// Whether a failed write means nothing reads the input any more: EPIPE (a pipe's read end
/// closed) or EIO (every process closed a pty's slave).
pub fn reader_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPIPE | libc::EIO))
}

/// The error a write gets once nothing reads the other end (`EPIPE`; the kernel's own on
/// Unix, so only the tests make it).
#[cfg(test)]
pub fn gone_reader_error() -> io::Error {
    io::Error::from_raw_os_error(libc::EPIPE)
}

/// Reads up to `max_reads` times into the thread's buffer, handing each chunk to `sink`, and
/// stops (`More`) as soon as `sink` answers false: its consumer is behind, and what is not read
/// stays in the pipe, whose writer blocks once it is full (backpressure, not loss).
///
/// With `short_read_drains`, a small read (under [`SMALL_READ`]) is taken to have emptied the
/// pipe, which saves the extra read that would only answer EAGAIN: on a flood of small writes
/// (`head` writes 4 KiB at a time) a third of all read calls. After a large read, reading again
/// at once often finds the next large write already there, so the loop goes on. That is safe
/// with tokio's readiness ticks (readiness that arrives after the guard was taken is not
/// cleared), but not once the writers hung up: the caller passes false then, so EOF is read
/// rather than assumed. Any error but EAGAIN/EINTR ends the output (on a pty, EIO on the master
/// means every process closed the slave).
fn read_some(
    fd: &OwnedFd,
    max_reads: usize,
    grown: &mut bool,
    short_read_drains: bool,
    mut sink: impl FnMut(&[u8]) -> bool,
) -> ReadOutcome {
    READ_BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        for _ in 0..max_reads {
            match nix::unistd::read(fd.as_fd(), &mut buf[..]) {
                Ok(0) => return ReadOutcome::Eof,
                Ok(n) => {
                    if !sink(&buf[..n]) {
                        return ReadOutcome::More;
                    }
                    if short_read_drains && n < SMALL_READ {
                        return ReadOutcome::Drained;
                    }
                    if !*grown && n >= 65536 {
                        // The pipe was full: this command floods. A larger pipe means fewer
                        // wake-ups for both sides (best effort; limits may refuse it).
                        *grown = true;
                        grow(fd, FLOOD_PIPE_SIZE);
                    }
                }
                Err(Errno::EAGAIN) => return ReadOutcome::Drained,
                Err(Errno::EINTR) => continue,
                Err(_) => return ReadOutcome::Eof,
            }
        }
        ReadOutcome::More
    })
}
