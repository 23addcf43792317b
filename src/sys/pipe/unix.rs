//! Unix (Linux and macOS): a command's output read from a non-blocking descriptor (a pipe's
//! read end or a pty master) registered with the runtime's reactor.
//!
//! A flood is read in large reads: once output arrives faster than [`FLOOD_RATE`] bytes per
//! [`FLOOD_WINDOW`], the pipe grows (to [`FLOOD_PIPE_SIZE`], or 1 MiB where limits refuse
//! that) and, while the flood lasts, the
//! reader lets the pipe fill for [`FLOOD_PAUSE`] before it reads again (instead of waking for
//! every 4 KiB write), then reads on at once while reads come back large. Both sides then make
//! far fewer system calls and wake-ups, which leaves the CPU to the rest of the process (Node's
//! event loop). A window slower than the rate ends the flood. A command that writes less (and
//! every pty, whose buffer cannot grow) is read as soon as output arrives.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use super::imp;

use nix::errno::Errno;
use tokio::io::unix::AsyncFd;

use super::ReadOutcome;

/// Pipe capacity a reader asks for once the command floods: what a fast writer (4 GB/s) writes
/// during a [`FLOOD_PAUSE`]. Above `/proc/sys/fs/pipe-max-size` (1 MiB by default) only with
/// `CAP_SYS_RESOURCE`; otherwise [`FLOOD_PIPE_SIZE_UNPRIVILEGED`].
const FLOOD_PIPE_SIZE: i32 = 4 << 20;
/// Pipe capacity a flood gets when [`FLOOD_PIPE_SIZE`] is refused.
const FLOOD_PIPE_SIZE_UNPRIVILEGED: i32 = 1 << 20;
/// A read smaller than this (the default pipe capacity) is taken to have drained the pipe.
const SMALL_READ: usize = 64 * 1024;
/// While a flood lasts: how long the pipe fills before the next read.
const FLOOD_PAUSE: Duration = Duration::from_millis(1);
/// While a flood lasts, reads take at most this much (it stays in the CPU's cache on its way
/// to the retained output); a read that fills it is followed by another one at once, a
/// shorter one by a pause.
const FLOOD_READ: usize = 128 * 1024;
/// The reader measures the output's rate over windows of this length ...
const FLOOD_WINDOW: Duration = Duration::from_millis(4);
/// ... and a window that brought at least this many bytes (64 MB/s) is a flood.
const FLOOD_RATE: u128 = 256 * 1024;
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

/// Asks for a larger pipe buffer (best effort): the capacity the pipe has now, `None` where it
/// cannot be sized (macOS, a pty) or limits refused it.
fn grow(fd: &impl AsFd, bytes: i32) -> Option<usize> {
    imp::grow(fd.as_fd(), bytes)
}

/// A command's output: a non-blocking descriptor the runtime's reactor wakes us for.
#[derive(Debug)]
pub struct OutputReader {
    fd: AsyncFd<OwnedFd>,
    /// How the reads go: grown pipe, flood pacing.
    pace: Pace,
}

/// The reader's state across reads.
#[derive(Debug, Default)]
struct Pace {
    /// The pipe was grown once (see [`FLOOD_PIPE_SIZE`]).
    grown: bool,
    /// Growing it worked (the capacity it got): floods through it can be paced.
    capacity: Option<usize>,
    /// A flood is going on through a grown pipe: reads are paced.
    flooding: bool,
    /// The next wait for output pauses [`FLOOD_PAUSE`] first.
    pause: bool,
    /// Start of the current rate window (at the first read).
    window_start: Option<Instant>,
    /// Bytes read in the current window.
    window_bytes: usize,
}

impl Pace {
    /// Counts a read of `n` bytes; at the end of a window, decides whether a flood is going on
    /// (from the bytes per [`FLOOD_WINDOW`] of the window, however long it was).
    fn count(&mut self, n: usize, fd: &OwnedFd) {
        let now = Instant::now();
        let start = *self.window_start.get_or_insert(now);
        self.window_bytes += n;
        let elapsed = now.duration_since(start);
        if elapsed < FLOOD_WINDOW {
            return;
        }
        let per_window = self.window_bytes as u128 * FLOOD_WINDOW.as_nanos() / elapsed.as_nanos();
        let fast = per_window >= FLOOD_RATE;
        if fast && !self.grown {
            // A larger pipe means fewer wake-ups for both sides (best effort: limits may
            // refuse it, and then reads are not paced: a small pipe would cap the rate).
            self.grown = true;
            let got = grow(fd, FLOOD_PIPE_SIZE).or_else(|| grow(fd, FLOOD_PIPE_SIZE_UNPRIVILEGED));
            self.capacity = got.filter(|&got| got >= FLOOD_PIPE_SIZE_UNPRIVILEGED as usize);
        }
        self.flooding = fast && self.capacity.is_some();
        self.window_start = Some(now);
        self.window_bytes = 0;
    }
}

impl OutputReader {
    /// Registers `fd` (non-blocking) with the runtime's reactor. Must run inside a runtime.
    pub fn new(fd: OwnedFd) -> io::Result<OutputReader> {
        Ok(OutputReader {
            fd: crate::sys::reactor::register_readable(fd)?,
            pace: Pace::default(),
        })
    }

    /// Waits until output can be read (during a flood, a pause longer), then reads up to
    /// `max_reads` times, handing each chunk to `sink`. Cancel-safe: nothing is read before
    /// the wait is over, and the reads then happen without waiting.
    pub async fn read(&mut self, max_reads: usize, sink: impl FnMut(&[u8])) -> ReadOutcome {
        if self.pace.pause {
            tokio::time::sleep(FLOOD_PAUSE).await;
            self.pace.pause = false;
        }
        let mut guard = match self.fd.readable().await {
            Ok(guard) => guard,
            Err(_) => return ReadOutcome::Eof,
        };
        let short_read_drains = !guard.ready().is_read_closed();
        let outcome = read_some(
            guard.get_inner(),
            max_reads,
            &mut self.pace,
            short_read_drains,
            sink,
        );
        if outcome == ReadOutcome::Drained {
            guard.clear_ready();
        }
        outcome
    }

    /// Reads what is there now, up to `max_reads` times, without waiting (after the command
    /// exited, everything it wrote is already in the pipe).
    pub fn read_now(&mut self, max_reads: usize, sink: impl FnMut(&[u8])) -> ReadOutcome {
        let outcome = read_some(self.fd.get_ref(), max_reads, &mut self.pace, false, sink);
        self.pace.pause = false;
        outcome
    }

    /// Whether a flood is being read in paced, large reads (for tests).
    #[cfg(test)]
    pub fn flooding(&self) -> bool {
        self.pace.flooding
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

/// Reads up to `max_reads` times into the thread's buffer, handing each chunk to `sink`.
///
/// With `short_read_drains`, a small read (under [`SMALL_READ`]) is taken to have emptied the
/// pipe, which saves the extra read that would only answer EAGAIN: on a flood of small writes
/// (`head` writes 4 KiB at a time) a third of all read calls. After a large read, reading again
/// at once often finds the next large write already there, so the loop goes on. That is safe
/// with tokio's readiness ticks (readiness that arrives after the guard was taken is not
/// cleared), but not once the writers hung up: the caller passes false then, so EOF is read
/// rather than assumed. Any error but EAGAIN/EINTR ends the output (on a pty, EIO on the master
/// means every process closed the slave).
///
/// During a flood (`pace.flooding`) reads take at most [`FLOOD_READ`]; a shorter read, or
/// finding the pipe empty, asks for a pause before the next read unless this wake-up took a
/// whole pipe's worth (the writer was then waiting for room); after a short read the answer is
/// `More` (readiness is kept: the pause is followed by a read, whatever the reactor says).
fn read_some(
    fd: &OwnedFd,
    max_reads: usize,
    pace: &mut Pace,
    short_read_drains: bool,
    mut sink: impl FnMut(&[u8]),
) -> ReadOutcome {
    READ_BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        // A pause that let the pipe fill up kept the writer waiting: no pause after this one.
        let mut took = 0;
        let pause = |pace: &mut Pace, took: usize| {
            pace.pause =
                pace.flooding && short_read_drains && pace.capacity.is_some_and(|c| took < c);
        };
        for _ in 0..max_reads {
            let len = if pace.flooding { FLOOD_READ } else { buf.len() };
            match nix::unistd::read(fd.as_fd(), &mut buf[..len]) {
                Ok(0) => return ReadOutcome::Eof,
                Ok(n) => {
                    sink(&buf[..n]);
                    took += n;
                    pace.count(n, fd);
                    if pace.flooding && short_read_drains && n < FLOOD_READ {
                        pause(pace, took);
                        return ReadOutcome::More;
                    }
                    if short_read_drains && n < SMALL_READ {
                        return ReadOutcome::Drained;
                    }
                }
                Err(Errno::EAGAIN) => {
                    pause(pace, took);
                    return ReadOutcome::Drained;
                }
                Err(Errno::EINTR) => continue,
                Err(_) => return ReadOutcome::Eof,
            }
        }
        ReadOutcome::More
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A pipe whose read end is an `OutputReader` and whose write end is a blocking file, sized
    /// to `capacity` bytes (so the test can write a lot at once).
    fn reader_and_writer(capacity: i32) -> (OutputReader, std::fs::File) {
        let (r, w) = pipe_cloexec().unwrap();
        nix::fcntl::fcntl(
            &r,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        assert_eq!(grow(&w, capacity), Some(capacity as usize));
        (OutputReader::new(r).unwrap(), std::fs::File::from(w))
    }

    /// Writes `data`, then reads until it is all back; the time the reads took on the
    /// runtime's (paused) clock.
    async fn round_trip(reader: &mut OutputReader, w: &mut std::fs::File, data: &[u8]) -> Duration {
        w.write_all(data).unwrap();
        let start = tokio::time::Instant::now();
        let mut got = Vec::new();
        while got.len() < data.len() {
            reader.read(16, |b| got.extend_from_slice(b)).await;
        }
        assert_eq!(got, data);
        start.elapsed()
    }

    // Time is paused in these tests: a pause of the reader shows as exactly that much time on
    // the runtime's clock, and reading at once as none.

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn quiet_output_is_read_at_once() {
        let (mut reader, mut w) = reader_and_writer(64 << 10);
        for line in [&b"first\n"[..], b"second\n", &[b'x'; 60 << 10]] {
            assert_eq!(round_trip(&mut reader, &mut w, line).await, Duration::ZERO);
        }
        assert!(!reader.flooding());
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_flood_is_read_after_pauses_and_quiet_output_at_once_again() {
        let (mut reader, mut w) = reader_and_writer(1 << 20);
        // 2 MiB within a few milliseconds (real time): a flood.
        let mib = vec![b'f'; 1 << 20];
        assert_eq!(round_trip(&mut reader, &mut w, &mib).await, Duration::ZERO);
        std::thread::sleep(FLOOD_WINDOW);
        round_trip(&mut reader, &mut w, &mib).await;
        assert!(reader.flooding());
        // A pipe's worth in one go: the writer may have waited for room, so the next read
        // does not pause ...
        assert_eq!(
            round_trip(&mut reader, &mut w, b"at once\n").await,
            Duration::ZERO
        );
        // ... but after a short one it does: while the flood lasts, the reader lets the pipe
        // fill before it reads, and several small writes come back in one read.
        let mut sizes = Vec::new();
        for part in [&b"one "[..], b"two ", b"three\n"] {
            w.write_all(part).unwrap();
        }
        let start = tokio::time::Instant::now();
        reader.read(16, |b| sizes.push(b.len())).await;
        assert_eq!(start.elapsed(), FLOOD_PAUSE);
        assert_eq!(sizes, [14]);
        // Slow output ends the flood (the first read after it may still pause), nothing lost ...
        std::thread::sleep(4 * FLOOD_WINDOW);
        round_trip(&mut reader, &mut w, b"tail\n").await;
        assert!(!reader.flooding());
        // ... and then output is read at once again.
        assert_eq!(
            round_trip(&mut reader, &mut w, b"quiet\n").await,
            Duration::ZERO
        );
    }
}
