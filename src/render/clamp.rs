//! [`Emulator`]: feeds the emulator with every repeat count bounded by the screen, so that the
//! work and the text of `N` bytes of output are `O(N × cols)` whatever the counts say.
//!
//! Invariants:
//! - `vt100` already bounds the counts of ICH, DCH, ECH, IL, DL, SU, SD, CUF and the cursor
//!   moves by the screen (a count beyond it does what the whole row or screen does), has no
//!   tab-count sequences (CHT, CBT) and no DECALN. The one count it obeys as given is REP
//!   (`CSI Pn b`, repeat the last printed character, up to 65535 times, wrapping and
//!   scrolling): 8 bytes of output would print 65535 characters.
//! - Here REP repeats at most the columns left in the cursor's row (at least once), as VTE
//!   does: the row is filled, never more. A second `vte` parser (the one `vt100` uses, fed the
//!   same bytes) finds each REP exactly where the emulator's own parser would dispatch it; the
//!   emulator then gets CAN in place of its final byte (the sequence is dropped unexecuted, as
//!   CAN does anywhere) followed by the bounded REP. Every other byte reaches the emulator as
//!   it came.

/// REP as the emulator would dispatch it, found by the mirrored parser.
#[derive(Default)]
struct FindRep {
    /// The count of a REP just dispatched (0 and absent count as 1, as `vt100` reads it).
    count: Option<u16>,
}

impl vte::Perform for FindRep {
    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], _: bool, c: char) {
        // `vt100` dispatches REP for final `b` without intermediates (a private marker is one).
        if c == 'b' && intermediates.is_empty() {
            let first = params.iter().next().map_or(0, |p| *p.first().unwrap_or(&0));
            self.count = Some(first.max(1));
        }
    }
}

/// A `vt100` emulator fed with REP bounded by the row (see the module doc).
pub(super) struct Emulator<CB: vt100::Callbacks> {
    /// The emulator itself.
    pub(super) parser: vt100::Parser<CB>,
    /// Mirrors the emulator's parser, to find REP.
    mirror: vte::Parser,
    find: FindRep,
}

impl<CB: vt100::Callbacks> Emulator<CB> {
    /// Wraps a fresh emulator.
    pub(super) fn new(parser: vt100::Parser<CB>) -> Self {
        Self {
            parser,
            mirror: vte::Parser::new(),
            find: FindRep::default(),
        }
    }

    /// Feeds `bytes` (any split: sequences may span calls), REP bounded by the cursor's row.
    pub(super) fn process(&mut self, bytes: &[u8]) {
        let mut at = 0;
        // A REP can only be dispatched by its final byte `b`.
        for end in memchr::memchr_iter(b'b', bytes) {
            self.mirror.advance(&mut self.find, &bytes[at..=end]);
            match self.find.count.take() {
                Some(count) => {
                    self.parser.process(&bytes[at..end]);
                    self.parser.process(b"\x18");
                    let count = count.min(self.room());
                    self.parser.process(format!("\x1b[{count}b").as_bytes());
                }
                None => self.parser.process(&bytes[at..=end]),
            }
            at = end + 1;
        }
        self.mirror.advance(&mut self.find, &bytes[at..]);
        self.parser.process(&bytes[at..]);
    }

    /// Columns left in the cursor's row, at least 1 (the cursor may sit past the last column
    /// once it was written: the next character wraps).
    fn room(&self) -> u16 {
        let screen = self.parser.screen();
        let cols = screen.size().1.get();
        cols.saturating_sub(screen.cursor_position().1).max(1)
    }
}
