//! What a terminal's output becomes: the retained tail (or, in text mode, the emulated
//! screen), snapshots of it, and the subscribers that get every chunk as it arrives.
//! Called by the output pump ([`Terminal::append`]) and by the handle.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{OutputSink, OutputVersion, Terminal};
use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::output::RawSnapshot;

impl Terminal {
    /// The raw material of a snapshot, with the [`Terminal::output_version`] it belongs to.
    /// In text mode, the rendered text (the limit is applied when decoding, on a character
    /// boundary, as for raw output).
    pub fn raw_output(&self) -> (RawSnapshot, Option<ExitStatus>, OutputVersion) {
        let mut inner = self.lock();
        let exit = inner.exit.clone();
        let version = (inner.output.total_bytes(), inner.resizes, exit.is_some());
        let limit = self.config.output_byte_limit;
        if let Some(screen) = inner.screen.as_mut() {
            let text = screen.text();
            let cut = screen.lines_dropped() || limit.is_some_and(|l| text.len() > l);
            inner.text_truncated |= cut;
            let raw = RawSnapshot::from_text(text.into_bytes(), limit, inner.text_truncated);
            return (raw, exit, version);
        }
        (inner.output.raw_snapshot(exit.is_some()), exit, version)
    }

    /// Changes whenever `current_output()` could return something else (bytes written,
    /// resizes, and whether the exit was published), so a caller can reuse its last snapshot.
    /// Reads counters only, never the lock the output pump needs: a client polling as fast as
    /// it can does not slow the command. The counters move before (bytes) or with (resizes,
    /// exit) the state a snapshot reads, so an unchanged version means an unchanged snapshot;
    /// once the exit is published the version differs from any snapshot taken before it.
    pub fn output_version(&self) -> OutputVersion {
        (
            self.bytes_read.load(Ordering::Acquire),
            self.resize_count.load(Ordering::Acquire),
            self.exit_tx.borrow().is_some(),
        )
    }

    /// Whether an answer to a terminal query should be sent now: only while the pty is in
    /// non-canonical mode without echo, as a program that reads the answer sets it. Otherwise
    /// (a program that queried and exited, a shell back in cooked mode) the answer would be
    /// echoed into the output or left as input for whatever reads next.
    pub(super) fn awaits_replies(&self) -> bool {
        let control = self.pty.lock().unwrap_or_else(|p| p.into_inner());
        control
            .as_ref()
            .is_some_and(crate::sys::pty::awaits_replies)
    }

    /// Subscribes to raw output from now on; with `replay`, the retained output is delivered
    /// first, with no gap or overlap with what follows. While the first output is held
    /// ([`Terminal::release_hold`] not called yet), the sink gets everything from the first
    /// byte instead, `replay` or not. Returns a key for [`Terminal::unsubscribe`].
    pub fn subscribe(&self, sink: Arc<dyn OutputSink>, replay: bool) -> Result<u64, TermError> {
        self.check_live()?;
        let mut inner = self.lock();
        if let Some(held) = inner.held.as_ref() {
            if !held.is_empty() {
                sink.push(held);
            }
        } else if replay {
            let retained = inner.output.raw_tail();
            if !retained.is_empty() {
                sink.push(&retained);
            }
        }
        sink.set_waker(self.caught_up.clone());
        let key = inner.next_sink;
        inner.next_sink += 1;
        if inner.closed {
            drop(inner);
            sink.close();
        } else {
            inner.sinks.push((key, sink));
        }
        Ok(key)
    }

    /// Ends the hold of the first output (see [`super::TerminalConfig::hold_first_output`]):
    /// later subscribers get what arrives from their subscription on (or the retained output
    /// with `replay`), and the pump reads on if the hold was full. Idempotent.
    pub fn release_hold(&self) {
        self.lock().held = None;
        self.holding.send_replace(false);
    }

    /// Whether the hold of the first output is full: the pump waits for its release.
    pub(super) fn hold_full(&self) -> bool {
        self.lock()
            .held
            .as_ref()
            .is_some_and(|h| h.len() >= super::HOLD_MAX)
    }

    /// Removes a subscriber; it receives no further chunks.
    pub fn unsubscribe(&self, key: u64) {
        let removed = {
            let mut inner = self.lock();
            let pos = inner.sinks.iter().position(|(k, _)| *k == key);
            pos.map(|i| inner.sinks.remove(i).1)
        };
        if let Some(s) = removed {
            s.close();
        }
        // The pump may be paused for this subscriber alone.
        self.caught_up.notify_one();
    }

    /// Whether a subscriber is so far behind that the pump should stop reading (see
    /// [`OutputSink::behind`]).
    pub(super) fn listeners_behind(&self) -> bool {
        self.lock().sinks.iter().any(|(_, s)| s.behind())
    }

    /// Resolves once a subscriber that was behind caught up (or one unsubscribed); may
    /// resolve spuriously, so the caller asks [`Terminal::listeners_behind`] again.
    pub(super) async fn listener_caught_up(&self) {
        self.caught_up.notified().await
    }

    /// Takes a chunk of output: retains it and hands it to every subscriber. Returns whether
    /// a subscriber is now behind (the pump then stops reading).
    pub(super) fn append(&self, chunk: &[u8]) -> bool {
        self.bytes_read
            .fetch_add(chunk.len() as u64, Ordering::Release);
        // Text mode: a program waiting for answers to its queries has the pty in raw mode (asked
        // before taking the lock: it locks the pty descriptor). Otherwise nobody needs an answer
        // now, and the screen renders in batches, skipping what scrolls off unseen.
        let eager = self.config.text_scrollback.is_some() && self.is_pty && self.awaits_replies();
        let mut inner = self.lock();
        inner.output.write(chunk);
        if let Some(held) = inner.held.as_mut() {
            held.extend_from_slice(chunk);
        }
        let replies = match inner.screen.as_mut() {
            Some(s) if eager => {
                s.feed(chunk);
                s.take_replies()
            }
            Some(s) => {
                s.defer(chunk);
                Vec::new()
            }
            None => Vec::new(),
        };
        let mut behind = false;
        for (_, s) in &inner.sinks {
            s.push(chunk);
            behind |= s.behind();
        }
        drop(inner);
        if !replies.is_empty() && self.awaits_replies() {
            // Answers to terminal queries go back as input; nobody waits for them.
            let _ = self
                .input
                .enqueue(replies, false, self.exit_status().is_some());
        }
        behind
    }
}
