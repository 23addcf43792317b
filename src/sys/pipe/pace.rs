//! When to read a command's output: at once, or after a short wait that lets a flooding pipe
//! fill, so that a flood is read in a few large reads rather than one read per write of the
//! command (a reader as fast as `head` wakes for every 4 KiB it writes, keeps a core busy and
//! leaves Node's event loop waiting for a CPU).
//!
//! Invariants:
//! - The first output after a silence is never delayed: the policy only decides whether to
//!   wait after a read, and it waits only once output came at [`FLOOD_RATE`] from one wake to
//!   the next for [`FLOOD_BYTES`]; otherwise (and after a wait that found the pipe empty) the
//!   reader waits for readiness and reads as soon as anything arrives. A quiet command's
//!   output (a prompt, an `echo`, a line now and then) is read at once.
//! - Only a flood is paced, and only on a pipe that holds at least [`MIN_CAPACITY`] (a pty, or
//!   a pipe the platform cannot grow, is never paced: its writer would block on a small
//!   buffer while we wait).
//! - A paced wait is bounded by [`MAX_WAIT`], and is sized to let the pipe fill about half
//!   way at the rate of the last wait; a read that found the pipe full halves the next wait
//!   (the writer may have been blocked for room). Pacing stops once a wait brought less than
//!   [`FLOOD_RATE`] worth of output.
//!
//! The policy is pure (it is given the time and the bytes each wake read) so that it can be
//! checked against a model of a pipe; `unix.rs` applies it with a precise timer.

use std::time::{Duration, Instant};

/// Output is a flood once this much (the default pipe capacity) arrived...
pub(super) const FLOOD_BYTES: usize = 64 * 1024;
/// ...at least this fast (bytes per second) from each wake to the next.
pub(super) const FLOOD_RATE: f64 = 64.0 * 1024.0 * 1024.0;
/// What a paced wait lets into the pipe before the next read: about 100 KiB, the batch that a
/// reader of `head -c 512M /dev/zero` on this machine took no slower than an eager one (larger
/// batches were slower: the pipe's pages go cold in the cache before they are read).
pub(super) const TARGET: usize = 96 * 1024;
/// The smallest pipe capacity worth pacing.
pub(super) const MIN_CAPACITY: usize = 256 * 1024;
/// The longest a flood's next read waits; also the most latency pacing adds to any byte.
pub(super) const MAX_WAIT: Duration = Duration::from_millis(1);
/// The shortest wait (below it the timer's own cost dominates).
pub(super) const MIN_WAIT: Duration = Duration::from_micros(20);

/// The pacing policy of one output reader.
#[derive(Debug, Default)]
pub(super) struct Pacer {
    /// The pipe's capacity, once asked (when a stream first qualifies as a flood).
    capacity: Option<usize>,
    /// When the last wake that read anything read it.
    last: Option<Instant>,
    /// What the wakes since output began to arrive at [`FLOOD_RATE`] read.
    stream_bytes: usize,
    /// The wait before the next read, while pacing.
    wait: Option<Duration>,
}

impl Pacer {
    /// Whether the reader is pacing a flood (it then stops reading after a read that did not
    /// fill its buffer, and waits before the next).
    #[cfg(test)]
    pub(super) fn pacing(&self) -> bool {
        self.wait.is_some()
    }

    /// Stops pacing for good (no timer could be made): floods are read as any output.
    pub(super) fn refuse(&mut self) {
        self.wait = None;
        self.capacity = Some(0);
    }

    /// Called after each wake with the bytes it read (0: the pipe was empty); answers how long
    /// to wait before reading again (`None`: read as soon as the pipe is readable).
    /// `capacity` is asked once, when a stream first qualifies as a flood: it may grow the
    /// pipe and answers the capacity it has then.
    pub(super) fn after_wake(
        &mut self,
        now: Instant,
        bytes: usize,
        capacity: impl FnOnce() -> usize,
    ) -> Option<Duration> {
        if bytes == 0 {
            // The pipe was empty: the flood paused (or ended). Back to readiness.
            self.wait = None;
            self.stream_bytes = 0;
            return None;
        }
        let since_last = self.last.map(|l| now.saturating_duration_since(l));
        self.last = Some(now);
        if let Some(wait) = self.wait {
            // Pacing: what arrived since the last read says how fast the flood is now.
            let rate = rate(bytes, since_last.unwrap_or(wait));
            let capacity = self.capacity.unwrap_or(0);
            if rate < FLOOD_RATE {
                self.wait = None;
                self.stream_bytes = 0;
                return None;
            }
            let mut next = fill_time(TARGET.min(capacity / 2), rate);
            if bytes >= capacity {
                // The pipe was full: the writer may have waited for room; wait less.
                next = next.min(wait / 2);
            }
            let next = next.clamp(MIN_WAIT, MAX_WAIT);
            self.wait = Some(next);
            return Some(next);
        }
        // Not pacing: a flood is output arriving at FLOOD_RATE wake after wake (the first read
        // after a silence measures the silence, so it starts no flood).
        let rate = since_last.map_or(0.0, |gap| rate(bytes, gap));
        if rate < FLOOD_RATE {
            self.stream_bytes = 0;
            return None;
        }
        self.stream_bytes += bytes;
        if self.stream_bytes < FLOOD_BYTES {
            return None;
        }
        let capacity = *self.capacity.get_or_insert_with(capacity);
        if capacity < MIN_CAPACITY {
            return None;
        }
        let next = fill_time(TARGET.min(capacity / 2), rate).clamp(MIN_WAIT, MAX_WAIT);
        self.wait = Some(next);
        Some(next)
    }
}

/// Bytes per second (`bytes` over `over`; a zero duration counts as a microsecond).
fn rate(bytes: usize, over: Duration) -> f64 {
    bytes as f64 / over.as_secs_f64().max(1e-6)
}

/// How long `bytes` take to arrive at `rate` bytes per second.
fn fill_time(bytes: usize, rate: f64) -> Duration {
    Duration::from_secs_f64(bytes as f64 / rate)
}

#[cfg(test)]
mod tests;
