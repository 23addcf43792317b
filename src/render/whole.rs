//! [`render_output`]: a finished stretch of output (one command's, `renderTerminalOutput`)
//! rendered at once, with no scrollback limit: rows scrolled off are turned into text as they go,
//! and the text kept is bounded (`max_bytes`: its newest part).

use super::clamp::Emulator;
use super::nz;
use crate::sys::pty::PtySize;

/// The text of a whole stretch of output, as [`render_output`] renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedOutput {
    /// The main screen's text: every line the output wrote, in order.
    pub text: String,
    /// The output leaves the terminal on the alternate screen (a full-screen program showing).
    pub alternate_screen: bool,
    /// The text's older part was dropped to keep it within `max_bytes`.
    pub truncated: bool,
}

/// Turns rows into text incrementally: rows that scroll off the top of the screen are
/// converted as they go, so nothing but the screen itself is kept by the emulator.
struct Lines {
    /// Finished logical lines, each trimmed and followed by `\n`.
    out: String,
    /// The logical line being built (rows the terminal wrapped are joined).
    line: String,
    /// Capture state of the rows scrolled off (knows whether the previous row wrapped).
    state: vt100::capture::BasicFormattedCaptureState,
    buf: String,
    /// Keep at most this many bytes of text (the newest); `usize::MAX`: all of it.
    limit: usize,
    /// Text was dropped to respect `limit`.
    dropped: bool,
}

/// Drops the front of `s` so that at most `keep` bytes remain (cut on a character boundary).
fn keep_tail(s: &mut String, keep: usize) -> bool {
    if s.len() <= keep {
        return false;
    }
    let mut cut = s.len() - keep;
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    s.drain(..cut);
    true
}

impl Lines {
    fn new(limit: usize) -> Self {
        Self {
            out: String::new(),
            line: String::new(),
            state: Default::default(),
            buf: String::new(),
            limit,
            dropped: false,
        }
    }

    /// Keeps the text of the rows scrolled off within twice the limit (amortized: the front is
    /// dropped once that much is held), so memory stays bounded whatever the output.
    fn bound(&mut self) {
        let limit = self.limit;
        if self.out.len().saturating_add(self.line.len()) <= limit.saturating_mul(2) {
            return;
        }
        if self.line.len() >= limit {
            // One logical line longer than the limit: only its end can be kept.
            self.dropped |= keep_tail(&mut self.line, limit);
            self.dropped |= !self.out.is_empty();
            self.out.clear();
        } else {
            let keep = limit - self.line.len();
            self.dropped |= keep_tail(&mut self.out, keep);
        }
    }

    fn finish_line(&mut self) {
        self.out.push_str(self.line.trim_end());
        self.out.push('\n');
        self.line.clear();
    }

    /// Absorbs "basic formatted" capture text: `\n` ends a logical line, SGR codes are dropped.
    fn absorb_formatted(&mut self, formatted: &str) {
        for (i, part) in formatted.split('\n').enumerate() {
            if i > 0 {
                self.finish_line();
            }
            if part.contains('\x1b') {
                self.line
                    .extend(vt100::capture::basic_formatted_to_plain(part));
            } else {
                self.line.push_str(part);
            }
        }
    }
}

impl vt100::Callbacks for Lines {
    fn on_scroll(&mut self, contents: vt100::capture::RowContents<'_>, alternate: bool) {
        if alternate {
            return; // what a full-screen program drew is not part of the main screen's text
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        // Writing to a String cannot fail.
        let _ = contents.write_formatted_basic(&mut buf, &mut self.state);
        self.absorb_formatted(&buf);
        self.buf = buf;
        self.bound();
    }
}

/// Input is fed to the emulator in pieces of this size, so that rows scrolled off are turned
/// into text as they go.
const RENDER_CHUNK: usize = 64 * 1024;

/// Renders a whole stretch of terminal output (e.g. one command's output) as the text a person
/// would read on a terminal of `size`, with no scrollback limit: rows scrolled off the top of
/// the screen are turned into text as they go (the emulator itself keeps only the screen, so
/// memory is the screen plus the text). Rows the terminal wrapped are joined back into one line,
/// trailing blanks of each line are removed, and the lines end at the cursor's line or the last
/// non-blank line, whichever is lower (output ending with a line break ends with `\n`).
///
/// `alternate_before`: the terminal is on the alternate screen when `bytes` starts. What a
/// full-screen program draws on the alternate screen is never part of the text (a person no
/// longer sees it once the program restored the main screen); while the output leaves the
/// terminal on the alternate screen, the text is the main screen's and
/// [`RenderedOutput::alternate_screen`] is true.
///
/// Bounded by construction: REP repeats at most the rest of the cursor's row ([`Emulator`]), so
/// no count makes the work or the text of `N` bytes more than `O(N × cols)` plus the screen;
/// and the text keeps at most `max_bytes` bytes (UTF-8, so as many UTF-16 units at most), its
/// newest part, as output beyond a byte limit keeps its newest bytes:
/// [`RenderedOutput::truncated`] says the front was dropped.
pub fn render_output(
    bytes: &[u8],
    size: PtySize,
    alternate_before: bool,
    max_bytes: Option<usize>,
) -> RenderedOutput {
    let limit = max_bytes.unwrap_or(usize::MAX);
    let mut emulator = Emulator::new(vt100::Parser::new_with_callbacks(
        nz(size.rows),
        nz(size.cols),
        0,
        Lines::new(limit),
    ));
    if alternate_before {
        emulator.process(b"\x1b[?1049h");
    }
    for chunk in bytes.chunks(RENDER_CHUNK) {
        emulator.process(chunk);
    }
    let mut parser = emulator.parser;
    let alternate_screen = parser.screen().alternate_screen();
    if alternate_screen {
        // Back to the main screen (its own cursor) to read its text.
        parser.process(b"\x1b[?47l");
    }
    let mut lines = std::mem::replace(parser.callbacks_mut(), Lines::new(limit));
    let screen = parser.screen();
    // Whether the last row scrolled off wrapped onto the screen's first row: continuing its
    // capture state, the screen's capture starts with a line break unless it did.
    let (mut continued, mut alone) = (String::new(), String::new());
    let mut state = lines.state.clone();
    let _ = screen.write_contents_formatted_basic(
        &mut continued,
        vt100::capture::BasicFormattedCaptureRange::Full(&mut state),
    );
    let _ = screen.write_contents_formatted_basic(
        &mut alone,
        vt100::capture::BasicFormattedCaptureRange::Visible,
    );
    // (Counting leading line breaks: an empty first row writes nothing, not even colours.)
    let leading = |s: &str| s.len() - s.trim_start_matches('\n').len();
    if leading(&continued) > leading(&alone) {
        lines.finish_line();
    }
    let (cursor_row, _) = screen.cursor_position();
    let mut through_cursor = None;
    let rows = screen.size().0.get() as usize;
    for (i, text) in screen.rows(0, u16::MAX).enumerate() {
        lines.line.push_str(&text);
        let wrapped = screen.row_wrapped(i as u16);
        if !wrapped || i + 1 == rows {
            lines.finish_line();
            if through_cursor.is_none() && i >= cursor_row as usize {
                through_cursor = Some(lines.out.len());
            }
        }
    }
    let mut out = lines.out;
    let end = out.trim_end().len().max(through_cursor.unwrap_or(0));
    out.truncate(end);
    if out.ends_with('\n') {
        out.pop();
    }
    let truncated = keep_tail(&mut out, limit) || lines.dropped;
    RenderedOutput {
        text: out,
        alternate_screen,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(s: &str, alt: bool) -> RenderedOutput {
        render_output(s.as_bytes(), PtySize { cols: 80, rows: 24 }, alt, None)
    }

    #[test]
    fn render_output_keeps_every_line_and_ends_at_the_cursor() {
        assert_eq!(render("10%\r50%\r100%\r\n", false).text, "100%\n");
        assert_eq!(render("ok", false).text, "ok");
        assert_eq!(render("", false).text, "");
        assert_eq!(render("a\r\n\r\n", false).text, "a\n\n");
        assert_eq!(render("x\r\ny\x1b[A", false).text, "x\ny");
        // Far more lines than the screen, some wrapped across the scroll boundary.
        let mut input = String::new();
        let mut want = String::new();
        for i in 0..5000 {
            let line = format!("line {i} {}", "x".repeat(i % 200));
            input.push_str(&line);
            input.push_str("\r\n");
            want.push_str(line.trim_end());
            want.push('\n');
        }
        let r = render_output(input.as_bytes(), PtySize { cols: 40, rows: 5 }, false, None);
        let (got, want): (Vec<&str>, Vec<&str>) =
            (r.text.split('\n').collect(), want.split('\n').collect());
        if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
            panic!(
                "line {i}: {:?} != {:?} ({} vs {} lines)",
                got.get(i),
                want.get(i),
                got.len(),
                want.len()
            );
        }
        assert!(!r.alternate_screen);
    }

    #[test]
    fn render_output_joins_a_coloured_row_wrapped_across_the_screen_top() {
        let size = PtySize { cols: 4, rows: 2 };
        let r = render_output(b"\x1b[31mabcdefgh\x1b[0m\r\nz", size, false, None);
        assert_eq!(r.text, "abcdefgh\nz");
        let r = render_output(b"\x1b[31mabcd\x1b[0m\r\n\r\nz", size, false, None);
        assert_eq!(r.text, "abcd\n\nz");
        let r = render_output(b"\x1b[31mab\r\nc\x1b[0m\r\nz", size, false, None);
        assert_eq!(r.text, "ab\nc\nz");
    }

    #[test]
    fn render_output_skips_the_alternate_screen() {
        let r = render(
            "before\r\n\x1b[?1049h\x1b[H\x1b[2Jstuff\x1b[5;1Hmore\x1b[?1049lafter\r\n",
            false,
        );
        assert_eq!(r.text, "before\nafter\n");
        assert!(!r.alternate_screen);
        let r = render("before\r\n\x1b[?1049hstuff\r\n", false);
        assert_eq!(r.text, "before\n");
        assert!(r.alternate_screen);
        let r = render("drawing\x1b[?1049lback", true);
        assert_eq!(r.text, "back");
        assert!(!r.alternate_screen);
        assert!(render("no switch", true).alternate_screen);
    }

    #[test]
    fn rep_repeats_at_most_the_rest_of_the_row() {
        let size = PtySize { cols: 80, rows: 24 };
        // The largest count: one row, not 65535 characters wrapped over 819 rows.
        let r = render_output(b"a\x1b[999999999b", size, false, None);
        assert_eq!(r.text, "a".repeat(80));
        let r = render_output(b"0123456789\x1b[65535b\r\nnext", size, false, None);
        assert_eq!(r.text, format!("0123456789{}\nnext", "9".repeat(70)));
        // Counts within the row are as given; 0 and none are 1.
        assert_eq!(render("ab\x1b[3bc\x1b[0bd\x1b[b", false).text, "abbbbccdd");
        // Not REP: a private marker or an intermediate; a count split across feeds is still REP.
        assert_eq!(render("ab\x1b[?5b\x1b[5 b", false).text, "ab");
        let mut e = Emulator::new(vt100::Parser::new_with_callbacks(
            nz(24),
            nz(80),
            0,
            Lines::new(usize::MAX),
        ));
        e.process(b"x\x1b[99");
        e.process(b"999b");
        assert_eq!(e.parser.screen().contents(), "x".repeat(80));
        // C0 controls inside the sequence run before it, as the emulator runs them.
        let r = render_output(b"abc\x1b[9\r99b", size, false, None);
        assert_eq!(r.text, "c".repeat(80));
    }

    #[test]
    fn rep_flood_renders_one_row_per_repeat_not_65536_characters() {
        // The attack's shape: 2000 x `a ESC[999999999b` (28 KiB) rendered 131 million characters.
        let input = "a\x1b[999999999b".repeat(2000) + "\r\n";
        let r = render_output(
            input.as_bytes(),
            PtySize {
                cols: 160,
                rows: 40,
            },
            false,
            None,
        );
        assert_eq!(r.text.len(), 2000 * 160 + 1);
        assert!(r.text.trim_end().bytes().all(|b| b == b'a'));
        assert!(!r.truncated);
    }

    #[test]
    fn the_text_keeps_its_newest_max_bytes() {
        let mut input = String::new();
        for i in 0..5000 {
            input.push_str(&format!("line {i}\r\n"));
        }
        let size = PtySize { cols: 40, rows: 5 };
        let whole = render_output(input.as_bytes(), size, false, None);
        assert!(!whole.truncated);
        let r = render_output(input.as_bytes(), size, false, Some(1000));
        assert!(r.truncated);
        assert_eq!(r.text.len(), 1000);
        assert!(whole.text.ends_with(&r.text));
        assert!(r.text.ends_with("line 4999\n"));
        // One logical line far longer than the limit (wrapped rows scrolled off): its end.
        let long = "0123456789".repeat(100_000);
        let r = render_output(long.as_bytes(), size, false, Some(25));
        assert_eq!(
            (r.text.as_str(), r.truncated),
            ("5678901234567890123456789", true)
        );
        // Cut on a character boundary: at most the limit.
        let r = render_output("é".repeat(1000).as_bytes(), size, false, Some(9));
        assert_eq!((r.text.as_str(), r.truncated), ("éééé", true));
        // Within the limit: untouched.
        let r = render_output(b"short\r\n", size, false, Some(6));
        assert_eq!((r.text.as_str(), r.truncated), ("short\n", false));
    }
}
