//! The output pump: the one task per terminal that reads the command's output, notices its
//! exit, drains what was written before the exit, publishes the exit status, and cleans up.
//!
//! Invariants:
//! - Nothing polls while the command is idle: the task sleeps on the pipe (or pty master) and
//!   on the child's exit watch ([`crate::reap`]).
//! - The exit status is published only after the child was reaped AND its output was drained:
//!   every byte written before exit is in the buffer (and handed to every listener) when
//!   `waitForExit` resolves. A descendant that keeps the pipe open delays publication by at
//!   most [`DRAIN_AFTER_EXIT`], or until the bytes that waited in the pipe at the exit are read.
//! - A listener behind the command pauses reading ([`super::OutputSink::behind`]) until it
//!   catches up: the pipe fills and the command blocks in its write, as under
//!   `cmd | slow_consumer`; no byte is dropped for it. A terminal without a listener is never
//!   paused this way; the timeout and kills work while reading is paused.
//! - The timeout kills through [`Terminal::kill`] (the containment's escalation) on a task of
//!   its own, so reading goes on meanwhile.
//! - On a pty, EIO on the master is the end of the output (every process closed the slave).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::Terminal;
use crate::containment::Target;
use crate::exit::ExitStatus;
use crate::reap::{ExitWatch, Wait};
use crate::sys::pipe::{OutputReader, ReadOutcome};

/// How long to keep waiting for EOF after the child exited (a background descendant may hold
/// the pipe open); what was written before the exit is read at once regardless.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(50);
/// Reads per wake-up before yielding to other tasks.
const READS_PER_WAKE: usize = 16;
/// Reads right after the exit (or at the drain deadline), without waiting.
const READS_AT_EXIT: usize = 64;

/// Reads what is in the pipe now, up to [`READS_AT_EXIT`] times, without waiting; stops early
/// when a listener is behind (what is not read stays in the pipe).
fn read_now(term: &Terminal, pipe: &mut OutputReader, eof: &mut bool) {
    if pipe.read_now(READS_AT_EXIT, |b| !term.append(b)) == ReadOutcome::Eof {
        *eof = true;
    }
}

/// The terminal's single task: read output, notice the exit, drain, publish, clean up.
pub(super) async fn drive<W: Wait>(
    term: Arc<Terminal>,
    mut pipe: OutputReader,
    mut child: ExitWatch<W>,
) {
    let mut exit: Option<ExitStatus> = None;
    let mut published = false;
    let mut eof = false;
    let mut drain_deadline = Instant::now();
    let mut deadline_passed = false;
    // What the pump will have read once everything written before the exit is read (set at
    // the exit: what was read then plus what waited in the pipe).
    let mut exit_mark = 0u64;
    let timeout_at = term.config.timeout.map(|t| Instant::now() + t);
    let mut timed_out = false;
    let mut holding = term.holding.subscribe();
    loop {
        // A listener behind the command pauses reading until it catches up (backpressure:
        // the command blocks on a full pipe, nothing is dropped); so does a full hold of the
        // first output, until the hold is released.
        let behind = !eof && term.listeners_behind();
        let hold_full = !eof && term.hold_full();
        if !published {
            if let Some(st) = exit.clone() {
                // Published at the end of the output, or at the drain deadline once what was
                // written before the exit is read (a descendant may hold the pipe open).
                if eof || (deadline_passed && term.bytes_written() >= exit_mark) {
                    term.publish(st);
                    published = true;
                }
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
            _ = holding.changed(), if hold_full => {},
            _ = term.listener_caught_up(), if behind => {},
            read = pipe.read(READS_PER_WAKE, |b| !term.append(b)), if !eof && !behind && !hold_full => match read {
                ReadOutcome::Drained => {}
                ReadOutcome::More => tokio::task::yield_now().await,
                ReadOutcome::Eof => eof = true,
            },
            status = child.wait(), if exit.is_none() => {
                // Everything written before the exit is in the pipe now: take it at once (as
                // much as the listeners take), and remember how much there is.
                exit_mark = term.bytes_written() + pipe.queued() as u64;
                if !eof && !behind {
                    read_now(&term, &mut pipe, &mut eof);
                }
                // Where the platform reports no signal (Windows), a command its terminal
                // stopped says which stop did (Unix: `None`, the wait status has the signal).
                exit = Some(match term.containment.stopped_by() {
                    Some(stop) => ExitStatus::stopped(stop),
                    None => status,
                });
                drain_deadline = Instant::now() + DRAIN_AFTER_EXIT;
            },
            _ = tokio::time::sleep_until(drain_deadline),
                if exit.is_some() && !published && !deadline_passed => {
                // A descendant holds the pipe open: publish what the child wrote (once it is
                // read), keep reading.
                deadline_passed = true;
                if !eof && !behind {
                    read_now(&term, &mut pipe, &mut eof);
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
