//! [`TextScreen`]: the emulator of a live terminal in text mode, with bounded scrollback, fed
//! at once (queries answered now) or in batches that skip what scrolls off unseen.

use super::clamp::Emulator;
use super::queries::Events;
use super::{nz, MAX_SCROLLBACK};
use crate::sys::pty::PtySize;

/// Output deferred by [`TextScreen::defer`] is processed once this much is pending (or when
/// the text, a resize or an eager feed needs it), so memory stays bounded while a flood runs.
pub const DEFER_LIMIT: usize = 1 << 20;

/// A terminal emulator fed with a pty's output.
///
/// Output can be fed at once ([`TextScreen::feed`]: queries are answered now) or deferred
/// ([`TextScreen::defer`]): deferred output is processed in batches, and stretches that can
/// never show in the text (scrolled off the top of the scrollback before anyone looks) are
/// skipped unseen, exactly ([`crate::fastforward`]). The text is the same either way.
pub struct TextScreen {
    /// The emulator (REP bounded by the cursor's row, see [`Emulator`]).
    emu: Emulator<Events>,
    scrollback: usize,
    /// Output deferred, not yet processed.
    pending: Vec<u8>,
    /// Mirrors the emulator's parser across everything processed or skipped.
    scanner: crate::fastforward::Scanner,
    /// Bytes skipped unseen so far.
    skipped: u64,
}

impl TextScreen {
    /// An empty screen of `size`, keeping at most `scrollback` lines above it.
    pub fn new(size: PtySize, scrollback: usize) -> Self {
        let scrollback = scrollback.min(MAX_SCROLLBACK);
        Self {
            emu: Emulator::new(vt100::Parser::new_with_callbacks(
                nz(size.rows),
                nz(size.cols),
                scrollback,
                Events::default(),
            )),
            scrollback,
            pending: Vec::new(),
            scanner: crate::fastforward::Scanner::new(),
            skipped: 0,
        }
    }

    /// Feeds output bytes now (any split: sequences and characters may span calls), after
    /// what was deferred; answers to queries in them are ready for [`TextScreen::take_replies`].
    pub fn feed(&mut self, bytes: &[u8]) {
        self.flush();
        self.process(bytes);
    }

    /// Queues output bytes to be processed later, in order (when the text is read, on a
    /// resize, an eager feed, or once [`DEFER_LIMIT`] bytes are pending). For output nobody
    /// needs an answer to now: queries in it are answered late, if at all.
    pub fn defer(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= DEFER_LIMIT {
            self.flush();
        }
    }

    /// Bytes skipped unseen so far (they scrolled off the top of the scrollback).
    #[cfg(test)]
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped
    }

    /// Processes the deferred output, skipping what can never show.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let rows = usize::from(self.emu.parser.screen().size().0.get());
        let keep = self.scrollback + 2 * rows;
        let skips = self.scanner.plan(&pending, keep);
        let mut at = 0;
        for skip in skips {
            self.emu.process(&pending[at..skip.start]);
            if self.emu.parser.screen().alternate_screen() {
                // The alternate screen has no scrollback to scroll into: process it all.
                self.emu.process(&pending[skip.clone()]);
            } else {
                self.skipped += skip.len() as u64;
                self.emu.parser.callbacks_mut().dropped = true;
            }
            at = skip.end;
        }
        self.emu.process(&pending[at..]);
        // Deferred output was output nobody awaited answers for: its queries stay unanswered
        // (an answer now would be typed into whatever reads the terminal next).
        self.emu.parser.callbacks_mut().replies.clear();
        // Reuse the allocation for the next batch.
        self.pending = pending;
        self.pending.clear();
        if self.pending.capacity() > DEFER_LIMIT * 2 {
            self.pending.shrink_to(DEFER_LIMIT);
        }
    }

    /// Processes bytes fed eagerly (the scanner sees them too).
    fn process(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        // Eager bytes are never skipped, but the scanner must see them to stay in step.
        self.scanner.advance(bytes);
        self.emu.process(bytes);
    }

    /// Changes the screen size (as the terminal does on `TIOCSWINSZ`).
    pub fn resize(&mut self, size: PtySize) {
        self.flush();
        self.emu.parser.set_size(nz(size.rows), nz(size.cols));
    }

    /// Answers to terminal queries seen since the last call (to write to the terminal).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.emu.parser.callbacks_mut().replies)
    }

    /// True once lines fell off the top of the scrollback (or were skipped unseen), as of
    /// the output processed so far ([`TextScreen::text`] processes what was deferred).
    pub fn lines_dropped(&self) -> bool {
        self.emu.parser.callbacks().dropped
    }

    /// The text a person would see: scrollback then screen (the alternate screen alone while
    /// it is in use), one logical line per line, trailing blanks removed.
    pub fn text(&mut self) -> String {
        self.flush();
        let screen = self.emu.parser.screen_mut();
        let (rows, _) = screen.size();
        let rows = rows.get() as usize;
        // (text, wrapped) for every row: scrollback (oldest first), then the screen.
        let mut lines: Vec<(String, bool)> = Vec::new();
        if !screen.alternate_screen() {
            let total = screen.scrollback_len();
            let mut pos = total;
            while pos > 0 {
                screen.set_scrollback(pos);
                let take = pos.min(rows);
                let texts: Vec<String> = screen.rows(0, u16::MAX).take(take).collect();
                for (i, t) in texts.into_iter().enumerate() {
                    lines.push((t, screen.row_wrapped(i as u16)));
                }
                pos -= take;
            }
            screen.set_scrollback(0);
        }
        let texts: Vec<String> = screen.rows(0, u16::MAX).collect();
        for (i, t) in texts.into_iter().enumerate() {
            lines.push((t, screen.row_wrapped(i as u16)));
        }
        let mut out = String::new();
        let mut line = String::new();
        for (text, wrapped) in lines {
            line.push_str(&text);
            if !wrapped {
                out.push_str(line.trim_end());
                out.push('\n');
                line.clear();
            }
        }
        if !line.is_empty() {
            out.push_str(line.trim_end());
        }
        let keep = out.trim_end().len();
        out.truncate(keep);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(cols: u16, rows: u16, sb: usize) -> TextScreen {
        TextScreen::new(PtySize { cols, rows }, sb)
    }

    #[test]
    fn carriage_returns_and_backspaces_collapse() {
        let mut s = screen(80, 24, 100);
        s.feed(b"start\r\n");
        for i in 0..=100 {
            s.feed(format!("\rprogress {i:3}%").as_bytes());
        }
        s.feed(b"\r\ndone\x08\x08XY\r\n");
        assert_eq!(s.text(), "start\nprogress 100%\ndoXY");
    }

    #[test]
    fn colours_and_osc_are_consumed_and_queries_answered() {
        let mut s = screen(80, 24, 100);
        s.feed(b"\x1b]0;title\x07\x1b[1;31mred\x1b[0m \x1b[6n\x1b[c\x1b]11;?\x1b\\ok\r\n");
        assert_eq!(s.text(), "red ok");
        let replies = String::from_utf8(s.take_replies()).unwrap();
        assert_eq!(
            replies,
            "\x1b[1;5R\x1b[?62;22c\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        assert!(s.take_replies().is_empty());
    }

    #[test]
    fn wrapped_rows_join_and_scrollback_is_kept_in_order() {
        let mut s = screen(10, 3, 100);
        s.feed(b"0123456789abcdef\r\n");
        for i in 0..6 {
            s.feed(format!("line {i}\r\n").as_bytes());
        }
        assert_eq!(
            s.text(),
            "0123456789abcdef\nline 0\nline 1\nline 2\nline 3\nline 4\nline 5"
        );
        assert!(!s.lines_dropped());
    }

    #[test]
    fn scrollback_is_bounded_and_drops_are_reported() {
        let mut s = screen(20, 5, 10);
        for i in 0..100 {
            s.feed(format!("line {i}\r\n").as_bytes());
        }
        let text = s.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 14, "{text}");
        assert_eq!(*lines.last().unwrap(), "line 99");
        assert!(s.lines_dropped());
    }

    #[test]
    fn alternate_screen_shows_the_full_screen_program_then_restores() {
        let mut s = screen(20, 4, 100);
        s.feed(b"before\r\n");
        s.feed(b"\x1b[?1049h\x1b[H\x1b[2Jpage one\r\n~\r\n:\x1b[K");
        assert_eq!(s.text(), "page one\n~\n:");
        s.feed(b"\x1b[?1049l");
        s.feed(b"after\r\n");
        assert_eq!(s.text(), "before\nafter");
    }

    #[test]
    fn rep_fills_at_most_the_row_fed_or_deferred() {
        // 2000 x `a ESC[999999999b`: a row each, not 65536 characters each.
        let flood = "a\x1b[999999999b".repeat(2000);
        for defer in [false, true] {
            let mut s = screen(200, 50, 10_000);
            if defer {
                s.defer(flood.as_bytes());
            } else {
                s.feed(flood.as_bytes());
            }
            assert_eq!(s.text().len(), 2000 * 200, "deferred: {defer}");
        }
    }

    #[test]
    fn deferred_queries_are_never_answered_late() {
        let mut s = screen(80, 24, 100);
        s.defer(b"cooked \x1b[6n\r\n");
        s.feed(b"raw \x1b[c");
        assert_eq!(String::from_utf8(s.take_replies()).unwrap(), "\x1b[?62;22c");
        s.defer(b"\x1b[5n");
        assert_eq!(s.text(), "cooked\nraw");
        assert!(s.take_replies().is_empty());
    }

    /// A deterministic pseudo-random generator (xorshift), so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Output fragments that exercise every path of the fast-forward: plain lines (short,
    /// wrapping, bare LF), colours, cursor movement, erasing, titles (terminated or split),
    /// DCS, scroll regions, the alternate screen, REP, wide and invalid characters, C0/C1.
    fn fragment(rng: &mut Rng, n: usize) -> Vec<u8> {
        let word = |rng: &mut Rng| -> String {
            let len = rng.below(30);
            (0..len)
                .map(|i| (b'a' + ((n + i + rng.below(26)) % 26) as u8) as char)
                .collect()
        };
        match rng.below(42) {
            0..=17 => format!("{} {n}\r\n", word(rng)).into_bytes(),
            18..=20 => format!("{}{}\r\n", word(rng), word(rng).repeat(3)).into_bytes(),
            21 => format!("bare {n}\n").into_bytes(),
            22 => format!("\x1b[3{}m{}\x1b[0m\r\n", rng.below(8), word(rng)).into_bytes(),
            23 => format!("\x1b[{};{}H", rng.below(6), rng.below(25)).into_bytes(),
            24 => b"\x1b[2J".to_vec(),
            25 => b"\x1b[A\x1b[K".to_vec(),
            26 => b"\x1b]0;title\x07".to_vec(),
            27 => b"\x1b]0;split title\r\nstill title\r\n".to_vec(),
            28 => b"\x07\x1b\\".to_vec(),
            40 => b"\x07after a bell\r\n".to_vec(),
            41 => {
                let mut v = "\r\n".repeat(rng.below(40)).into_bytes();
                v.extend_from_slice(b"\x1b[3b\r\n");
                v
            }
            29 => b"\x1bPq#0;2;0;0;0\r\n\x1b\\".to_vec(),
            30 => format!("\x1b[{};{}r", 1 + rng.below(3), 3 + rng.below(3)).into_bytes(),
            31 => b"\x1b[r".to_vec(),
            32 => b"\x1b[?1049h".to_vec(),
            33 => b"\x1b[?1049l".to_vec(),
            34 => b"\x1b[4b".to_vec(),
            35 => "日本語 wide \u{1F389}\r\n".as_bytes().to_vec(),
            36 => b"bad \xff\xc3 utf8 \xe2\x82\r\n".to_vec(),
            37 => b"tab\there\x08\x08XY\x0b\x0c\x18\x85\r\n".to_vec(),
            38 => b"\r\n\r\n\r\n".to_vec(),
            _ => b"\x1b[1;31".to_vec(), // a sequence cut in two (completed by what follows)
        }
        .into_iter()
        .collect()
    }

    #[test]
    fn deferred_output_with_skips_renders_exactly_as_fed_output() {
        let mut total_skipped = 0;
        for seed in 1..=300u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let (cols, rows, sb) = (
                10 + rng.below(20) as u16,
                2 + rng.below(5) as u16,
                rng.below(12),
            );
            let mut stream = Vec::new();
            let fragments = 50 + rng.below(400);
            // Mostly plain text, so that long plain runs (and skips) occur.
            for n in 0..fragments {
                if rng.below(3) == 0 {
                    stream.extend(fragment(&mut rng, n));
                } else {
                    stream.extend(
                        format!("plain line {n} {}\r\n", "x".repeat(rng.below(40))).into_bytes(),
                    );
                }
            }
            let mut eager = screen(cols, rows, sb);
            let mut lazy = screen(cols, rows, sb);
            let mut at = 0;
            while at < stream.len() {
                let end = (at + 1 + rng.below(700)).min(stream.len());
                eager.feed(&stream[at..end]);
                if rng.below(8) == 0 {
                    lazy.feed(&stream[at..end]);
                } else {
                    lazy.defer(&stream[at..end]);
                }
                if rng.below(10) == 0 {
                    assert_eq!(lazy.text(), eager.text(), "seed {seed}, after {end} bytes");
                }
                at = end;
            }
            assert_eq!(lazy.text(), eager.text(), "seed {seed}");
            if lazy.skipped_bytes() > 0 {
                assert!(lazy.lines_dropped(), "seed {seed}");
            }
            assert_eq!(lazy.lines_dropped(), eager.lines_dropped(), "seed {seed}");
            total_skipped += lazy.skipped_bytes();
        }
        // The test exercised skipping, not only the eager path.
        assert!(total_skipped > 100_000, "skipped {total_skipped}");
    }
}
