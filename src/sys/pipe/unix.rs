//! Unix (Linux and macOS): a command's output read from a non-blocking descriptor (a pipe's
//! read end or a pty master) registered with the runtime's reactor.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Instant;

use super::imp;
use super::pace::Pacer;

use nix::errno::Errno;
use tokio::io::unix::AsyncFd;

use super::ReadOutcome;

/// Pipe capacity a reader switches to once the command floods (a read found the pipe full, or
/// the output came fast enough to be paced).
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

/// Asks for a larger pipe buffer (best effort; a no-op where the platform cannot) and answers
/// the capacity the pipe has then (0 where unknown: a pty, macOS).
fn grow(fd: &impl AsFd, bytes: i32) -> usize {
    imp::grow(fd.as_fd(), bytes)
}

/// A command's output: a non-blocking descriptor the runtime's reactor wakes us for.
#[derive(Debug)]
pub struct OutputReader {
    fd: AsyncFd<OwnedFd>,
    /// The pipe was grown once (see [`FLOOD_PIPE_SIZE`]).
    grown: bool,
    /// Whether the next read waits for the pipe to fill (a flood, see [`Pacer`]).
    pacer: Pacer,
    /// The precise timer of those waits, made at the first one.
    timer: Option<imp::Timer>,
    /// Reads and paced waits so far (what the tests count).
    #[cfg(test)]
    stats: ReadStats,
}

/// What a reader did so far.
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadStats {
    /// Reads that returned output.
    pub reads: usize,
    /// Bytes they returned.
    pub bytes: usize,
    /// Waits for a flooding pipe to fill.
    pub waits: usize,
}

impl OutputReader {
    /// Registers `fd` (non-blocking) with the runtime's reactor. Must run inside a runtime.
    pub fn new(fd: OwnedFd) -> io::Result<OutputReader> {
        Ok(OutputReader {
            fd: crate::sys::reactor::register_readable(fd)?,
            grown: false,
            pacer: Pacer::default(),
            timer: None,
            #[cfg(test)]
            stats: ReadStats::default(),
        })
    }

    /// Waits until output can be read, then reads up to `max_reads` times, handing each chunk
    /// to `sink`; stops early (`More`) when `sink` answers false (its consumer is behind).
    /// While a flood is paced, waits first for the pipe to fill (at most a millisecond).
    /// Cancel-safe: nothing is read before the waits are over, and the reads then happen
    /// without waiting.
    pub async fn read(
        &mut self,
        max_reads: usize,
        mut sink: impl FnMut(&[u8]) -> bool,
    ) -> ReadOutcome {
        if let Some(timer) = self.timer.as_mut() {
            timer.expired().await;
        }
        let mut guard = match self.fd.readable().await {
            Ok(guard) => guard,
            Err(_) => return ReadOutcome::Eof,
        };
        // Once the writers hung up, read until EOF rather than assume a short read drained.
        let drained_below = if guard.ready().is_read_closed() {
            0
        } else if self.pacer.pacing() {
            READ_BUF_SIZE
        } else {
            SMALL_READ
        };
        let mut bytes = 0;
        #[cfg(test)]
        let stats = &mut self.stats;
        let outcome = read_some(
            guard.get_inner(),
            max_reads,
            &mut self.grown,
            drained_below,
            |chunk| {
                bytes += chunk.len();
                #[cfg(test)]
                {
                    stats.reads += 1;
                    stats.bytes += chunk.len();
                }
                sink(chunk)
            },
        );
        if outcome == ReadOutcome::Drained {
            guard.clear_ready();
        }
        drop(guard);
        if outcome != ReadOutcome::Eof {
            self.pace(bytes);
        }
        outcome
    }

    /// Asks the pacer whether the next read waits, and arms the timer if so.
    fn pace(&mut self, bytes: usize) {
        let (fd, grown) = (&self.fd, &mut self.grown);
        let wait = self.pacer.after_wake(Instant::now(), bytes, || {
            *grown = true;
            grow(fd.get_ref(), FLOOD_PIPE_SIZE)
        });
        let Some(wait) = wait else { return };
        if self.timer.is_none() {
            self.timer = imp::Timer::new().ok();
        }
        let armed = match self.timer.as_mut() {
            Some(timer) => timer.arm(wait).is_ok(),
            None => false,
        };
        if armed {
            #[cfg(test)]
            {
                self.stats.waits += 1;
            }
        } else {
            // No timer (descriptors exhausted): read this flood as any output.
            self.pacer.refuse();
        }
    }

    /// What this reader did so far.
    #[cfg(test)]
    pub fn stats(&self) -> ReadStats {
        self.stats
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
        read_some(self.fd.get_ref(), max_reads, &mut self.grown, 0, sink)
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
/// A read shorter than `drained_below` is taken to have emptied the pipe, which saves the
/// extra read that would only answer EAGAIN: on a flood of small writes (`head` writes 4 KiB at
/// a time) a third of all read calls. Eagerly ([`SMALL_READ`]): after a large read, reading
/// again at once often finds the next large write already there, so the loop goes on. Paced
/// (the buffer's size): any read that did not fill the buffer emptied the pipe, and the next
/// read waits for it to fill. That is safe with tokio's readiness ticks (readiness that arrives
/// after the guard was taken is not cleared), but not once the writers hung up: the caller
/// passes 0 then, so EOF is read rather than assumed. Any error but EAGAIN/EINTR ends the
/// output (on a pty, EIO on the master means every process closed the slave).
fn read_some(
    fd: &OwnedFd,
    max_reads: usize,
    grown: &mut bool,
    drained_below: usize,
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
                    if n < drained_below {
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

#[cfg(test)]
mod tests;
