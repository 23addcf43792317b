//! The output pump: the one task per terminal that reads the command's output, notices its
//! exit, drains what was written before the exit, publishes the exit status, and cleans up.
//!
//! Invariants:
//! - Nothing polls while the command is idle: the task sleeps on the pipe (or pty master) and
//!   on the child's exit watch ([`crate::reap`]).
//! - The exit status is published only after the child was reaped AND its output was drained:
//!   every byte written before exit is in the buffer when `waitForExit` resolves. A descendant
//!   that keeps the pipe open delays publication by at most [`DRAIN_AFTER_EXIT`].
//! - The timeout kills through [`Terminal::kill`] (the containment's escalation) on a task of
//!   its own, so reading goes on meanwhile.
//! - On a pty, EIO on the master is the end of the output (every process closed the slave).

use std::cell::RefCell;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use nix::errno::Errno;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

use super::Terminal;
use crate::containment::Target;
use crate::exit::ExitStatus;
use crate::reap::{ExitWatch, Wait};

/// How long to keep waiting for EOF after the child exited (a background descendant may hold
/// the pipe open); what was written before the exit is read at once regardless.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(50);
/// Pipe capacity a terminal switches to once it floods (a read found the pipe full).
const FLOOD_PIPE_SIZE: i32 = 1 << 20;
/// A read smaller than this (the default pipe capacity) is taken to have drained the pipe.
const SMALL_READ: usize = 64 * 1024;
/// Size of the per-thread read buffer.
const READ_BUF_SIZE: usize = 1 << 20;
/// Reads per wake-up before yielding to other tasks.
const READS_PER_WAKE: usize = 16;

thread_local! {
    static READ_BUF: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_BUF_SIZE]);
}

enum ReadOutcome {
    /// The pipe is empty for now.
    Drained,
    /// Budget used up; more may be waiting.
    More,
    /// All writers closed the pipe.
    Eof,
}

/// Reads up to `max_reads` times into the thread's buffer, appending to the terminal.
///
/// With `short_read_drains`, a small read (under [`SMALL_READ`]) is taken to have emptied the
/// pipe, which saves the extra read that would only answer EAGAIN: on a flood of small writes
/// (`head` writes 4 KiB at a time) a third of all read calls. After a large read, reading again
/// at once often finds the next large write already there, so the loop goes on. That is safe with tokio's readiness ticks (readiness that arrives after the
/// guard was taken is not cleared), but not once the writers hung up: the caller passes false
/// then, so EOF is read rather than assumed.
fn read_some(
    term: &Terminal,
    fd: &OwnedFd,
    max_reads: usize,
    grown: &mut bool,
    short_read_drains: bool,
) -> ReadOutcome {
    READ_BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        for _ in 0..max_reads {
            match nix::unistd::read(fd.as_fd(), &mut buf[..]) {
                Ok(0) => return ReadOutcome::Eof,
                Ok(n) => {
                    term.append(&buf[..n]);
                    if short_read_drains && n < SMALL_READ {
                        return ReadOutcome::Drained;
                    }
                    if !*grown && n >= 65536 {
                        // The pipe was full: this command floods. A larger pipe means fewer
                        // wake-ups for both sides (best effort; limits may refuse it).
                        *grown = true;
                        crate::sys::pipe::grow(fd, FLOOD_PIPE_SIZE);
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

/// The terminal's single task: read output, notice the exit, drain, publish, clean up.
pub(super) async fn drive<W: Wait>(
    term: Arc<Terminal>,
    pipe: AsyncFd<OwnedFd>,
    mut child: ExitWatch<W>,
) {
    let mut exit: Option<ExitStatus> = None;
    let mut published = false;
    let mut eof = false;
    let mut grown = false;
    let mut drain_deadline = Instant::now();
    let timeout_at = term.config.timeout.map(|t| Instant::now() + t);
    let mut timed_out = false;
    let mut holding = term.holding.subscribe();
    loop {
        // A full hold of the first output pauses reading until the hold is released.
        let paused = !eof && term.hold_full();
        if !published && eof {
            if let Some(st) = exit.clone() {
                term.publish(st);
                published = true;
            }
        }
        if published && (eof || term.detached.load(Ordering::Acquire)) {
            break;
        }
        tokio::select! {
            _ = term.shutdown.notified(), if published => break,
            _ = tokio::time::sleep_until(timeout_at.unwrap_or_else(Instant::now)),
                if timeout_at.is_some() && !timed_out && exit.is_none() => {
                // The command ran too long: kill it as kill() does, without blocking this loop.
                timed_out = true;
                term.timed_out.store(true, Ordering::Release);
                let t = term.clone();
                tokio::spawn(async move { t.kill().await });
            },
            _ = holding.changed(), if paused => {},
            ready = pipe.readable(), if !eof && !paused => match ready {
                Ok(mut guard) => match read_some(
                    &term,
                    guard.get_inner(),
                    READS_PER_WAKE,
                    &mut grown,
                    !guard.ready().is_read_closed(),
                ) {
                    ReadOutcome::Drained => guard.clear_ready(),
                    ReadOutcome::More => tokio::task::yield_now().await,
                    ReadOutcome::Eof => eof = true,
                },
                Err(_) => eof = true,
            },
            status = child.wait(), if exit.is_none() => {
                // Everything written before the exit is in the pipe now: take it at once.
                if !eof && matches!(read_some(&term, pipe.get_ref(), 64, &mut grown, false), ReadOutcome::Eof) {
                    eof = true;
                }
                exit = Some(status);
                drain_deadline = Instant::now() + DRAIN_AFTER_EXIT;
            },
            _ = tokio::time::sleep_until(drain_deadline), if exit.is_some() && !published => {
                // A descendant holds the pipe open: publish what the child wrote, keep reading.
                if !eof && matches!(read_some(&term, pipe.get_ref(), 64, &mut grown, false), ReadOutcome::Eof) {
                    eof = true;
                }
                if let Some(st) = exit.clone() {
                    term.publish(st);
                    published = true;
                }
            },
        }
    }
    let sinks = {
        let mut inner = term.lock();
        inner.closed = true;
        std::mem::take(&mut inner.sinks)
    };
    for (_, s) in sinks {
        s.close();
    }
    if term.detached.load(Ordering::Acquire) || !term.containment.alive() {
        // Nothing left for the guardian to kill (or abandon() already killed it all).
        term.containment.untrack();
    }
    drop(pipe);
    drop(child);
    term.closed_tx.send_replace(true);
}
