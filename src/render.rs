//! Text mode: what a person would see on the terminal, through a terminal emulator (vt100).
//!
//! Invariants:
//! - The output is the main screen's scrollback followed by its screen, as text: escape
//!   sequences consumed, `\r` overwrites and backspaces applied, rows the terminal wrapped
//!   joined back into one line, trailing blanks of each line and blank lines at the end removed.
//!   While a full-screen program uses the alternate screen, the output is that screen alone.
//! - Terminal queries (DSR, DA, OSC 10/11 colour queries) are consumed, never in the output;
//!   the emulator answers them as xterm would ([`TextScreen::take_replies`]) so that programs
//!   waiting for an answer do not hang (the terminal sends the answers only while the pty is in
//!   raw mode, see `Terminal::awaits_replies`).
//! - Memory is bounded: at most `scrollback` lines above the screen; older lines are dropped
//!   and [`TextScreen::lines_dropped`] says so.

use std::num::NonZeroU16;

use crate::pty::PtySize;

/// Default number of lines kept above the screen in text mode.
pub const DEFAULT_SCROLLBACK: usize = 1000;
/// Largest accepted scrollback (lines), so that memory stays bounded.
pub const MAX_SCROLLBACK: usize = 100_000;

/// Collects what the emulator reports besides the screen.
#[derive(Default)]
struct Events {
    /// Answers to terminal queries, to be written to the terminal's input.
    replies: Vec<u8>,
    /// Lines fell off the top of the scrollback.
    dropped: bool,
}

impl vt100::Callbacks for Events {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let p0 = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        match (i1, c) {
            // DSR: operating status, cursor position (1-based).
            (None, 'n') if p0 == 5 => self.replies.extend_from_slice(b"\x1b[0n"),
            (None, 'n') if p0 == 6 => {
                let (row, col) = screen.cursor_position();
                self.replies
                    .extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            (Some(b'?'), 'n') if p0 == 6 => {
                let (row, col) = screen.cursor_position();
                self.replies
                    .extend_from_slice(format!("\x1b[?{};{}R", row + 1, col + 1).as_bytes());
            }
            // DA1 and DA2, as xterm answers them (VT220 with ANSI colour; xterm version 0).
            (None, 'c') if p0 == 0 => self.replies.extend_from_slice(b"\x1b[?62;22c"),
            (Some(b'>'), 'c') if p0 == 0 => self.replies.extend_from_slice(b"\x1b[>0;0;0c"),
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _screen: &mut vt100::Screen, params: &[&[u8]]) {
        // OSC 10/11 ; ? : foreground/background colour queries (light grey on black).
        if let [which @ (b"10" | b"11"), b"?"] = params {
            let rgb: &[u8] = if *which == b"10" {
                b"rgb:c0c0/c0c0/c0c0"
            } else {
                b"rgb:0000/0000/0000"
            };
            self.replies.extend_from_slice(b"\x1b]");
            self.replies.extend_from_slice(which);
            self.replies.push(b';');
            self.replies.extend_from_slice(rgb);
            self.replies.extend_from_slice(b"\x1b\\");
        }
    }

    fn on_scroll(&mut self, _contents: vt100::capture::RowContents<'_>, alternate: bool) {
        if !alternate {
            self.dropped = true;
        }
    }
}

/// A terminal emulator fed with a pty's output.
pub struct TextScreen {
    parser: vt100::Parser<Events>,
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl TextScreen {
    /// An empty screen of `size`, keeping at most `scrollback` lines above it.
    pub fn new(size: PtySize, scrollback: usize) -> Self {
        Self {
            parser: vt100::Parser::new_with_callbacks(
                nz(size.rows),
                nz(size.cols),
                scrollback.min(MAX_SCROLLBACK),
                Events::default(),
            ),
        }
    }

    /// Feeds output bytes (any split: sequences and characters may span calls).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// Changes the screen size (as the terminal does on `TIOCSWINSZ`).
    pub fn resize(&mut self, size: PtySize) {
        self.parser.set_size(nz(size.rows), nz(size.cols));
    }

    /// Answers to terminal queries seen since the last call (to write to the terminal).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// True once lines fell off the top of the scrollback.
    pub fn lines_dropped(&self) -> bool {
        self.parser.callbacks().dropped
    }

    /// The text a person would see: scrollback then screen (the alternate screen alone while
    /// it is in use), one logical line per line, trailing blanks removed.
    pub fn text(&mut self) -> String {
        let screen = self.parser.screen_mut();
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
}
