//! Text mode fast-forward: finds the stretches of pty output that can never show in the
//! rendered text, so the terminal emulator need not process them.
//!
//! A flood (`cat big.log` on a pty in text mode) scrolls almost everything it prints off the
//! top of the scrollback; only the last `scrollback + rows` rows can ever be seen. Emulating
//! every byte costs most of the reader's time (measured: vt100 was 52% of all samples of a
//! 32 MiB text-mode run), so [`Scanner::plan`] marks what can be dropped unseen.
//!
//! Invariants (what makes a skip exact: the emulator's text is the same with or without it):
//! - The scanner mirrors the state machine of the `vte` parser that `vt100` uses (0.15, byte
//!   for byte: ground, escape, CSI, DCS, OSC and SOS/PM/APC states), fed with every byte of the
//!   stream in order, skipped or not, so it knows exactly when the emulator's parser is in its
//!   ground state.
//! - A skipped range is *plain*: it starts and ends at a line start (right after a line feed the
//!   parser executed in its ground state, or at the very start of the stream), and holds only
//!   characters, C0 controls other than VT, FF and ESC (CR, LF, BS, HT, BEL move the cursor or
//!   do nothing) and complete SGR sequences (`ESC [ <digits ; :> m`, which change attributes,
//!   never the text). Plain bytes cannot change modes, the screen in use, the scroll region or
//!   anything else but cells, the cursor, attributes and the last printed character.
//! - What follows a skip, within the same plain run, has a carriage return followed by at least
//!   `keep_lines` line feeds. With `keep_lines = scrollback + 2 * rows` and a scroll region that
//!   is the whole screen (any `CSI ... r` that sets one disables skipping until a bare `CSI r`
//!   resets it), those line feeds scroll every row that the skipped bytes (or the state before
//!   them) touched off the top of the scrollback, whatever the cursor's position was: the rows
//!   that remain are written after that carriage return, identically in both cases.
//! - The last printed character (`REP`, `CSI b`, repeats it) is the same: a skip never drops the
//!   last line that may print something before the resume point unless a later kept line may
//!   print too.
//! - The caller checks the main screen is in use when it applies a skip (a plain run cannot
//!   switch screens), and that the scrollback limit is what `keep_lines` was computed from.

use std::ops::Range;

/// The `vte` 0.15 parser states (only the transitions matter here, not the actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscapeIntermediate,
    CsiEntry,
    CsiParam,
    CsiIntermediate,
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsPassthrough,
    DcsIgnore,
    OscString,
    SosPmApcString,
}

/// What one byte did, as far as plainness is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// A byte of the ground state that keeps the run plain (character or harmless control).
    Plain,
    /// A line feed executed in the ground state.
    LineFeed,
    /// A carriage return executed in the ground state.
    CarriageReturn,
    /// Part of a sequence that may still turn out to be SGR.
    Pending,
    /// Completed an SGR sequence (plain).
    Sgr,
    /// Anything else: the plain run ends here.
    Break,
}

/// One line of a plain run: `start..=lf` (the line feed included).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    has_cr: bool,
    /// Holds a byte that may print a character (anything but controls and SGR bytes).
    may_print: bool,
}

/// Tracks the emulator's parser state across the whole stream and plans skips.
#[derive(Debug, Clone)]
pub struct Scanner {
    state: State,
    /// The current CSI collected a parameter byte (`0x30..=0x3f`).
    csi_params: bool,
    /// The current CSI collected an intermediate or private-marker byte, or executed a C0
    /// control inside: not a plain SGR.
    csi_unplain: bool,
    /// A scroll region other than "reset" was set (`CSI <params> r`): no skipping.
    region_set: bool,
    /// The last byte was a line feed executed in the ground state (true at the start).
    at_line_start: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// A scanner for a stream that starts now (the emulator is fresh).
    pub fn new() -> Self {
        Self {
            state: State::Ground,
            csi_params: false,
            csi_unplain: false,
            region_set: false,
            at_line_start: true,
        }
    }

    /// Consumes `bytes` (the next part of the stream; the caller feeds or skips all of it) and
    /// returns the ranges of it that can be skipped, in order, non-overlapping. `keep_lines` is
    /// `scrollback + 2 * rows` of the screen the bytes go to.
    pub fn plan(&mut self, bytes: &[u8], keep_lines: usize) -> Vec<Range<usize>> {
        let mut skips = Vec::new();
        let mut run = Run::start(self.plain_start(), 0);
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground {
                // Fast path: everything up to the next ESC or line feed is characters and
                // controls that keep the parser in the ground state.
                let rest = &bytes[i..];
                let len = memchr::memchr2(0x1b, b'\n', rest).unwrap_or(rest.len());
                if len > 0 {
                    let span = &rest[..len];
                    if let Some(at) = memchr::memchr2(0x0b, 0x0c, span) {
                        // VT or FF: the plain stretch ends there.
                        run.mark_span(&span[..at]);
                        run.finish(keep_lines, &mut skips);
                        run = Run::start(false, i + at + 1);
                        self.at_line_start = false;
                        i += at + 1;
                        continue;
                    }
                    run.mark_span(span);
                    self.at_line_start = false;
                    i += len;
                    continue;
                }
            }
            let b = bytes[i];
            let effect = self.step(b);
            match effect {
                Effect::Plain => run.mark_byte(b),
                Effect::CarriageReturn => run.mark_cr(),
                Effect::LineFeed => {
                    if !run.push_line(i) {
                        // No run open: a new plain run may start after this line feed.
                        run = Run::start(self.plain_start(), i + 1);
                    }
                }
                Effect::Pending | Effect::Sgr => {}
                Effect::Break => {
                    run.finish(keep_lines, &mut skips);
                    run = Run::start(false, i + 1);
                }
            }
            i += 1;
        }
        run.finish(keep_lines, &mut skips);
        skips
    }

    /// Consumes `bytes` that are processed in full (no skip planned), staying in step.
    pub fn advance(&mut self, bytes: &[u8]) {
        let _ = self.plan(bytes, 0);
    }

    /// Whether a plain run may start at the current position.
    fn plain_start(&self) -> bool {
        self.at_line_start && self.state == State::Ground && !self.region_set
    }

    /// Advances the mirrored parser by one byte.
    fn step(&mut self, b: u8) -> Effect {
        self.at_line_start = false;
        let c0 = matches!(b, 0x00..=0x17 | 0x19 | 0x1c..=0x1f);
        match self.state {
            State::Ground => match b {
                0x1b => {
                    self.state = State::Escape;
                    Effect::Pending
                }
                b'\n' => {
                    self.at_line_start = true;
                    Effect::LineFeed
                }
                b'\r' => Effect::CarriageReturn,
                0x0b | 0x0c => Effect::Break, // VT and FF: line feeds we do not count
                _ => Effect::Plain,
            },
            State::Escape => match b {
                _ if c0 => Effect::Break,
                0x20..=0x2f => self.to(State::EscapeIntermediate),
                0x50 => self.to(State::DcsEntry),
                0x58 | 0x5e | 0x5f => self.to(State::SosPmApcString),
                0x5b => {
                    self.csi_params = false;
                    self.csi_unplain = false;
                    self.state = State::CsiEntry;
                    Effect::Pending
                }
                0x5d => self.to(State::OscString),
                0x30..=0x7e => self.to(State::Ground),
                0x18 | 0x1a => self.to(State::Ground),
                _ => Effect::Break, // 0x1b stays, 0x7f and >= 0x80 are ignored
            },
            State::EscapeIntermediate => match b {
                _ if c0 => Effect::Break,
                0x20..=0x2f | 0x7f => Effect::Break,
                0x30..=0x7e => self.to(State::Ground),
                _ => self.anywhere(b),
            },
            State::CsiEntry | State::CsiParam => match b {
                _ if c0 => {
                    self.csi_unplain = true;
                    Effect::Break
                }
                0x20..=0x2f => {
                    self.csi_unplain = true;
                    self.to(State::CsiIntermediate)
                }
                0x30..=0x3b => {
                    self.csi_params = true;
                    self.state = State::CsiParam;
                    Effect::Pending
                }
                0x3c..=0x3f if self.state == State::CsiEntry => {
                    // A private marker is collected as an intermediate.
                    self.csi_params = true;
                    self.csi_unplain = true;
                    self.to(State::CsiParam)
                }
                0x3c..=0x3f => self.to(State::CsiIgnore),
                0x40..=0x7e => self.csi_dispatch(b),
                0x7f if self.state == State::CsiParam => {
                    self.csi_unplain = true;
                    Effect::Break
                }
                _ => self.anywhere(b),
            },
            State::CsiIntermediate => match b {
                _ if c0 => Effect::Break,
                0x20..=0x2f => Effect::Break,
                0x30..=0x3f => self.to(State::CsiIgnore),
                0x40..=0x7e => self.csi_dispatch(b),
                _ => self.anywhere(b),
            },
            State::CsiIgnore => match b {
                _ if c0 => Effect::Break,
                0x20..=0x3f | 0x7f => Effect::Break,
                0x40..=0x7e => self.to(State::Ground),
                _ => self.anywhere(b),
            },
            State::DcsEntry | State::DcsParam => match b {
                _ if c0 => Effect::Break,
                0x20..=0x2f => self.to(State::DcsIntermediate),
                0x30..=0x3b => self.to(State::DcsParam),
                0x3c..=0x3f if self.state == State::DcsEntry => self.to(State::DcsParam),
                0x3c..=0x3f => self.to(State::DcsIgnore),
                0x40..=0x7e => self.to(State::DcsPassthrough),
                0x7f => Effect::Break,
                _ => self.anywhere(b),
            },
            State::DcsIntermediate => match b {
                _ if c0 => Effect::Break,
                0x20..=0x2f | 0x7f => Effect::Break,
                0x30..=0x3f => self.to(State::DcsIgnore),
                0x40..=0x7e => self.to(State::DcsPassthrough),
                _ => self.anywhere(b),
            },
            State::DcsPassthrough => match b {
                0x18 | 0x1a | 0x9c => self.to(State::Ground),
                0x1b => self.enter_escape_break(),
                _ => Effect::Break,
            },
            State::OscString => match b {
                0x07 | 0x18 | 0x1a => self.to(State::Ground),
                0x1b => self.enter_escape_break(),
                _ => Effect::Break,
            },
            State::DcsIgnore | State::SosPmApcString => self.anywhere(b),
        }
    }

    /// Moves to `state`; the byte is not plain.
    fn to(&mut self, state: State) -> Effect {
        self.state = state;
        Effect::Break
    }

    fn enter_escape_break(&mut self) -> Effect {
        self.state = State::Escape;
        Effect::Break
    }

    /// `vte`'s transitions valid in every state but ground.
    fn anywhere(&mut self, b: u8) -> Effect {
        match b {
            0x18 | 0x1a => self.state = State::Ground,
            0x1b => self.state = State::Escape,
            _ => {}
        }
        Effect::Break
    }

    /// A CSI sequence ends with `final_byte`.
    fn csi_dispatch(&mut self, final_byte: u8) -> Effect {
        self.state = State::Ground;
        if final_byte == b'r' {
            // DECSTBM: bare `CSI r` resets the scroll region, anything else may set one.
            self.region_set = self.csi_params || self.csi_unplain;
            return Effect::Break;
        }
        if final_byte == b'm' && !self.csi_unplain {
            Effect::Sgr
        } else {
            Effect::Break
        }
    }
}

/// A plain run being scanned: complete lines and the line being built.
struct Run {
    /// Whether this is a plain run at all (false: waiting for the next ground line feed).
    open: bool,
    lines: Vec<Line>,
    cur: Line,
}

impl Run {
    fn start(open: bool, at: usize) -> Self {
        Self {
            open,
            lines: Vec::new(),
            cur: Line {
                start: at,
                has_cr: false,
                may_print: false,
            },
        }
    }

    fn mark_byte(&mut self, b: u8) {
        // Characters (printable ASCII, DEL and every byte of a multibyte character) may print;
        // C0 controls (BS, HT, BEL, ...) never do.
        if b >= 0x20 {
            self.cur.may_print = true;
        }
    }

    /// A stretch of ground-state bytes without ESC, LF, VT or FF.
    fn mark_span(&mut self, span: &[u8]) {
        if !self.cur.has_cr && memchr::memchr(b'\r', span).is_some() {
            self.cur.has_cr = true;
        }
        if !self.cur.may_print && span.iter().any(|&b| b >= 0x20) {
            self.cur.may_print = true;
        }
    }

    fn mark_cr(&mut self) {
        self.cur.has_cr = true;
    }

    /// Closes the current line at the line feed `lf`; false when no run is open.
    fn push_line(&mut self, lf: usize) -> bool {
        if !self.open {
            return false;
        }
        self.lines.push(self.cur);
        self.cur = Line {
            start: lf + 1,
            has_cr: false,
            may_print: false,
        };
        true
    }

    /// Adds this run's skip, if it has one, to `skips`.
    fn finish(&self, keep_lines: usize, skips: &mut Vec<Range<usize>>) {
        if !self.open {
            return;
        }
        let m = self.lines.len();
        if keep_lines == 0 || m <= keep_lines {
            return;
        }
        // The latest line j whose carriage return is followed by >= keep_lines line feeds
        // (its own and those of the m - 1 - j lines after it): j <= m - keep_lines.
        let Some(mut j) = (0..=m - keep_lines).rev().find(|&j| self.lines[j].has_cr) else {
            return;
        };
        // Keep the last line that may print before the resume point when nothing kept after
        // it may print (the emulator's last printed character must be the same).
        let kept_prints = self.lines[j..].iter().any(|l| l.may_print) || self.cur.may_print;
        if !kept_prints {
            if let Some(p) = (0..j).rev().find(|&p| self.lines[p].may_print) {
                j = p;
            }
        }
        let start = self.lines[0].start;
        let resume = self.lines[j].start;
        if resume > start {
            skips.push(start..resume);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..n {
            v.extend_from_slice(format!("line {i}\r\n").as_bytes());
        }
        v
    }

    #[test]
    fn a_long_plain_run_is_skipped_up_to_the_kept_lines() {
        let data = lines(100);
        let skips = Scanner::new().plan(&data, 10);
        assert_eq!(skips.len(), 1);
        let kept = &data[skips[0].end..];
        assert_eq!(kept.iter().filter(|&&b| b == b'\n').count(), 10);
        assert!(kept.starts_with(b"line 90\r\n"));
        assert_eq!(skips[0].start, 0);
    }

    #[test]
    fn nothing_is_skipped_when_too_few_lines() {
        assert!(Scanner::new().plan(&lines(10), 10).is_empty());
    }

    #[test]
    fn escape_sequences_other_than_sgr_break_the_run() {
        let mut data = lines(50);
        data.extend_from_slice(b"\x1b[2J"); // clear screen: not plain
        data.extend_from_slice(&lines(5));
        let skips = Scanner::new().plan(&data, 10);
        assert_eq!(skips.len(), 1);
        assert!(skips[0].end <= 50 * 9);
        // SGR does not break it.
        let mut colored = Vec::new();
        for i in 0..50 {
            colored.extend_from_slice(format!("\x1b[31mred {i}\x1b[0m\r\n").as_bytes());
        }
        let skips = Scanner::new().plan(&colored, 10);
        assert_eq!(skips.len(), 1);
        assert!(colored[skips[0].end..].starts_with(b"\x1b[31mred 40"));
    }

    #[test]
    fn an_osc_string_is_never_taken_for_text() {
        // An unterminated OSC swallows the lines after it: nothing may be skipped there.
        let mut data = b"\x1b]0;title".to_vec();
        data.extend_from_slice(&lines(50));
        assert!(Scanner::new().plan(&data, 10).is_empty());
        // Terminated by BEL, the lines after the next line feed are plain again.
        let mut data = b"\x1b]0;title\x07\r\n".to_vec();
        data.extend_from_slice(&lines(50));
        assert_eq!(Scanner::new().plan(&data, 10).len(), 1);
    }

    #[test]
    fn a_scroll_region_disables_skipping_until_reset() {
        let mut s = Scanner::new();
        let mut data = b"\x1b[2;10r\r\n".to_vec();
        data.extend_from_slice(&lines(50));
        assert!(s.plan(&data, 10).is_empty());
        let mut data = b"\x1b[r\r\n".to_vec();
        data.extend_from_slice(&lines(50));
        assert_eq!(s.plan(&data, 10).len(), 1);
    }

    #[test]
    fn state_carries_across_calls() {
        let mut s = Scanner::new();
        assert!(s.plan(b"\x1b]0;ti", 10).is_empty());
        // Still inside the OSC: these lines are its payload.
        assert!(s.plan(&lines(50), 10).is_empty());
        assert!(s.plan(b"\x07\r\n", 10).is_empty());
        assert_eq!(s.plan(&lines(50), 10).len(), 1);
    }

    #[test]
    fn bare_line_feeds_need_a_carriage_return_before_the_kept_lines() {
        let mut data = Vec::new();
        for i in 0..50 {
            data.extend_from_slice(format!("x{i}\n").as_bytes());
        }
        assert!(Scanner::new().plan(&data, 10).is_empty());
    }

    #[test]
    fn the_last_printing_line_is_kept_when_only_empty_lines_follow() {
        let mut data = lines(20);
        for _ in 0..30 {
            data.extend_from_slice(b"\r\n");
        }
        let skips = Scanner::new().plan(&data, 10);
        assert_eq!(skips.len(), 1);
        assert!(data[skips[0].end..].starts_with(b"line 19\r\n"));
    }
}
