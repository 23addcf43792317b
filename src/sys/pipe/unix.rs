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
/// The most one paced read takes (the size a paced wait aims at, [`super::pace::TARGET`], with
/// room): a larger batch leaves the pipe's pages cold in the cache and costs the flood more than
/// the reads it saves.
const PACED_READ: usize = 128 << 10;
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

/// A command's output: a non-blocking descriptor the runtime's reactor wakes us for; while a
/// flood is paced, out of the reactor (see [`OutputReader::read`]).
#[derive(Debug)]
pub struct OutputReader {
    /// The descriptor in the reactor (`None` while a flood is paced).
    fd: Option<AsyncFd<OwnedFd>>,
    /// The descriptor out of the reactor while a flood is paced (`None` otherwise).
    paced: Option<OwnedFd>,
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
            fd: Some(crate::sys::reactor::register_readable(fd)?),
            paced: None,
            grown: false,
            pacer: Pacer::default(),
            timer: None,
            #[cfg(test)]
            stats: ReadStats::default(),
        })
    }

    /// Waits until output can be read, then reads up to `max_reads` times, handing each chunk
    /// to `sink`; stops early (`More`) when `sink` answers false (its consumer is behind).
    /// While a flood is paced, the descriptor is out of the reactor (each write of the command
    /// would wake it, and a reader woken for every 8 KiB is what pacing avoids): the read waits
    /// on the timer alone, then reads what the pipe holds; a wait that found the pipe empty ends
    /// the pacing and puts the descriptor back. Cancel-safe: nothing is read before the waits
    /// are over, and the reads then happen without waiting.
    pub async fn read(
        &mut self,
        max_reads: usize,
        mut sink: impl FnMut(&[u8]) -> bool,
    ) -> ReadOutcome {
        if let Some(timer) = self.timer.as_mut() {
            timer.expired().await;
        }
        let mut bytes = 0;
        #[cfg(test)]
        let stats = &mut self.stats;
        let mut counted = |chunk: &[u8]| {
            bytes += chunk.len();
            #[cfg(test)]
            {
                stats.reads += 1;
                stats.bytes += chunk.len();
            }
            sink(chunk)
        };
        let outcome = if let Some(fd) = self.paced.as_ref() {
            read_some(fd, max_reads, &mut self.grown, PACED_READ, &mut counted)
        } else if let Some(afd) = self.fd.as_ref() {
            let mut guard = match afd.readable().await {
                Ok(guard) => guard,
                Err(_) => return ReadOutcome::Eof,
            };
            // Once the writers hung up, read until EOF rather than assume a short read drained.
            let drained_below = if guard.ready().is_read_closed() {
                0
            } else {
                SMALL_READ
            };
            let outcome = read_some(
                guard.get_inner(),
                max_reads,
                &mut self.grown,
                drained_below,
                &mut counted,
            );
            if outcome == ReadOutcome::Drained {
                guard.clear_ready();
            }
            outcome
        } else {
            ReadOutcome::Eof
        };
        if outcome != ReadOutcome::Eof {
            self.pace(bytes);
        }
        outcome
    }

    /// The descriptor, in the reactor or not.
    fn raw(&self) -> Option<&OwnedFd> {
        descriptor(&self.paced, &self.fd)
    }

    /// Asks the pacer whether the next read waits: arms the timer and takes the descriptor out
    /// of the reactor if so, puts it back if not.
    fn pace(&mut self, bytes: usize) {
        // The fields apart (not `raw()`): the pacer and `grown` are borrowed beside it.
        let wait = match descriptor(&self.paced, &self.fd) {
            Some(fd) => {
                let grown = &mut self.grown;
                self.pacer.after_wake(Instant::now(), bytes, || {
                    *grown = true;
                    grow(fd, FLOOD_PIPE_SIZE)
                })
            }
            None => None,
        };
        let Some(wait) = wait else {
            self.unpace();
            return;
        };
        if self.timer.is_none() {
            self.timer = imp::Timer::new().ok();
        }
        let armed = match self.timer.as_mut() {
            Some(timer) => timer.arm(wait).is_ok(),
            None => false,
        };
        if !armed {
            // No timer (descriptors exhausted): read this flood as any output.
            self.pacer.refuse();
            self.unpace();
            return;
        }
        #[cfg(test)]
        {
            self.stats.waits += 1;
        }
        if let Some(afd) = self.fd.take() {
            self.paced = Some(afd.into_inner());
        }
    }

    /// Puts a paced descriptor back in the reactor (a copy of it: should the registration fail,
    /// the descriptor stays out and the flood is read after the longest wait, never lost).
    fn unpace(&mut self) {
        let Some(fd) = self.paced.as_ref() else {
            return;
        };
        match fd
            .try_clone()
            .and_then(crate::sys::reactor::register_readable)
        {
            Ok(afd) => {
                self.fd = Some(afd);
                self.paced = None;
            }
            Err(_) => {
                if let Some(timer) = self.timer.as_mut() {
                    if timer.arm(super::pace::MAX_WAIT).is_err() {
                        self.timer = None;
                    }
                }
            }
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
        let Some(fd) = self.raw() else { return 0 };
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through the pointer, which outlives the call; the
        // descriptor stays open (we own it).
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
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
        match descriptor(&self.paced, &self.fd) {
            Some(fd) => read_some(fd, max_reads, &mut self.grown, 0, sink),
            None => ReadOutcome::Eof,
        }
    }
}

/// A reader's descriptor: out of the reactor while paced, else in it.
fn descriptor<'a>(
    paced: &'a Option<OwnedFd>,
    fd: &'a Option<AsyncFd<OwnedFd>>,
) -> Option<&'a OwnedFd> {
    paced.as_ref().or(fd.as_ref().map(AsyncFd::get_ref))
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
            // A paced read takes at most PACED_READ; any other, the whole buffer.
            let cap = if drained_below == PACED_READ {
                PACED_READ
            } else {
                buf.len()
            };
            match nix::unistd::read(fd.as_fd(), &mut buf[..cap]) {
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
