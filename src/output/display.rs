//! Display safety: output made safe to write to a real terminal. A streaming filter keeps text,
//! colours (SGR) and cursor movement, and drops everything that acts on the user's terminal
//! beyond the screen: OSC strings (clipboard OSC 52, colour queries, hyperlinks, notifications;
//! titles OSC 0/1/2 only when allowed), DCS/SOS/PM/APC strings, terminal queries (DA, DSR/CPR,
//! DECRQM, XTVERSION, window reports), mode changes, charset switches and resets.
//!
//! Invariants (safety by construction):
//! - The output is a concatenation of complete units, each of which is safe on its own:
//!   printable text (valid UTF-8 without C0 or C1 controls), one of the allowed C0 controls
//!   (BEL, BS, HT, LF, VT, FF, CR), an allowed CSI sequence re-checked byte by byte, an allowed
//!   ESC sequence, or (when allowed) a title OSC with printable text. A terminal that starts
//!   in its ground state is back in it after every unit, so no way of splitting the input
//!   (chunk boundaries, unterminated sequences) can make it see anything else.
//! - Streaming: a sequence cut by a chunk boundary is completed by the next chunk; memory is
//!   bounded (a CSI longer than [`MAX_CSI`] or a title longer than [`MAX_TITLE`] is dropped
//!   whole, the rest of a dropped string is skipped without being kept).
//! - Invalid UTF-8 becomes U+FFFD, so the output is always valid UTF-8.

/// Longest CSI sequence kept (parameters and final byte); longer ones are dropped.
pub const MAX_CSI: usize = 64;
/// Longest window title kept (bytes); longer ones are dropped.
pub const MAX_TITLE: usize = 1024;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// What the filter lets through besides text, colours and cursor movement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DisplayOptions {
    /// Keep window and icon title changes (OSC 0, 1 and 2).
    pub allow_title: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (a charset designation, DECALN, ...): dropped.
    EscapeIntermediate,
    /// In a CSI sequence (its bytes after `ESC [` are in `buf`).
    Csi,
    /// In a CSI sequence being dropped (too long or not allowed): up to its final byte.
    CsiIgnore,
    /// In an OSC string (its bytes in `buf` while it may be a title).
    Osc,
    /// ESC inside an OSC string (ST is `ESC \`).
    OscEscape,
    /// In a DCS, SOS, PM or APC string: dropped up to ST.
    Str,
    /// ESC inside such a string.
    StrEscape,
}

/// The streaming filter. Feed it every chunk in order with [`DisplayFilter::filter`].
#[derive(Debug, Clone)]
pub struct DisplayFilter {
    options: DisplayOptions,
    state: State,
    /// The sequence being collected (CSI parameters, OSC text).
    buf: Vec<u8>,
    /// The OSC string being collected is dropped whatever comes (not a title, or too long).
    osc_drop: bool,
    /// An incomplete UTF-8 character at the end of the last chunk.
    utf8: [u8; 4],
    utf8_len: usize,
    utf8_need: usize,
}

impl DisplayFilter {
    /// A filter in the ground state.
    pub fn new(options: DisplayOptions) -> Self {
        Self {
            options,
            state: State::Ground,
            buf: Vec::new(),
            osc_drop: false,
            utf8: [0; 4],
            utf8_len: 0,
            utf8_need: 0,
        }
    }

    /// Filters one chunk of the stream, appending what is safe to `out`. A sequence or a
    /// character the chunk ends inside of is completed (or dropped) by the next call.
    pub fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.reserve(input.len());
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            if self.state == State::Ground && self.utf8_need == 0 {
                // The common case: a run of printable ASCII is copied at once.
                let run = input[i..]
                    .iter()
                    .position(|&c| !(0x20..0x7f).contains(&c))
                    .unwrap_or(input.len() - i);
                if run > 0 {
                    out.extend_from_slice(&input[i..i + run]);
                    i += run;
                    continue;
                }
            }
            self.byte(b, out);
            i += 1;
        }
    }

    /// Filters a whole text at once (the end of the input ends it: an unfinished sequence is
    /// dropped, an unfinished character becomes U+FFFD).
    pub fn filter_all(options: DisplayOptions, input: &[u8]) -> Vec<u8> {
        let mut f = DisplayFilter::new(options);
        let mut out = Vec::with_capacity(input.len());
        f.filter(input, &mut out);
        if f.utf8_need > 0 {
            out.extend_from_slice(REPLACEMENT);
        }
        out
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        // An unfinished UTF-8 character is only continued by a continuation byte.
        if self.utf8_need > 0 {
            if (0x80..0xc0).contains(&b) {
                self.utf8[self.utf8_len] = b;
                self.utf8_len += 1;
                if self.utf8_len == self.utf8_need {
                    self.utf8_need = 0;
                    self.emit_char(out);
                }
                return;
            }
            self.utf8_need = 0;
            out.extend_from_slice(REPLACEMENT);
        }
        // CAN and SUB cancel any sequence; ESC starts a new one (also inside a CSI).
        match (b, self.state) {
            (CAN | SUB, _) => {
                self.state = State::Ground;
                return;
            }
            (ESC, State::Osc) => {
                self.state = State::OscEscape;
                return;
            }
            (ESC, State::Str) => {
                self.state = State::StrEscape;
                return;
            }
            (ESC, State::OscEscape | State::StrEscape) => {
                // Not an ST: the string is over (as in xterm), a new sequence starts.
                self.state = State::Escape;
                return;
            }
            (ESC, _) => {
                self.state = State::Escape;
                return;
            }
            _ => {}
        }
        match self.state {
            State::Ground => self.ground(b, out),
            State::Escape => self.escape(b, out),
            State::EscapeIntermediate => {
                if (0x30..0x7f).contains(&b) {
                    self.state = State::Ground;
                } else if b < 0x20 {
                    self.control(b, out);
                }
            }
            State::Csi => self.csi(b, out),
            State::CsiIgnore => {
                if (0x40..0x7f).contains(&b) {
                    self.state = State::Ground;
                } else if b < 0x20 {
                    self.control(b, out);
                }
            }
            State::Osc => {
                if b == BEL {
                    self.end_osc(out);
                } else if b < 0x20 {
                    // Other controls inside an OSC string are ignored by terminals.
                } else if !self.osc_drop {
                    if self.buf.len() >= MAX_TITLE {
                        self.osc_drop = true;
                        self.buf.clear();
                    } else {
                        self.buf.push(b);
                    }
                }
            }
            State::OscEscape => {
                if b == b'\\' {
                    self.end_osc(out);
                } else {
                    // ESC and a byte that is not `\`: the OSC is cut off; the byte starts
                    // an escape sequence, as after a plain ESC.
                    self.state = State::Escape;
                    self.escape(b, out);
                }
            }
            State::Str => {}
            State::StrEscape => {
                if b == b'\\' {
                    self.state = State::Ground;
                } else {
                    self.state = State::Str;
                }
            }
        }
    }

    fn ground(&mut self, b: u8, out: &mut Vec<u8>) {
        match b {
            0x20..=0x7e => out.push(b),
            0x00..=0x1f | 0x7f => self.control(b, out),
            0xc2..=0xdf => self.start_utf8(b, 2),
            0xe0..=0xef => self.start_utf8(b, 3),
            0xf0..=0xf4 => self.start_utf8(b, 4),
            // A continuation byte without a start, or a byte never valid in UTF-8 (raw C1
            // controls among them).
            _ => out.extend_from_slice(REPLACEMENT),
        }
    }

    fn start_utf8(&mut self, b: u8, need: usize) {
        self.utf8[0] = b;
        self.utf8_len = 1;
        self.utf8_need = need;
    }

    /// A complete UTF-8 sequence: kept if valid and not a C1 control (U+0080..U+009F).
    fn emit_char(&mut self, out: &mut Vec<u8>) {
        let bytes = &self.utf8[..self.utf8_len];
        match std::str::from_utf8(bytes) {
            Ok(s) if !s.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)) => {
                out.extend_from_slice(bytes)
            }
            Ok(_) => {}
            Err(_) => out.extend_from_slice(REPLACEMENT),
        }
    }

    /// The C0 controls that only move the cursor or ring the bell pass; the others (ENQ,
    /// which asks for the answerback, SO/SI charset shifts, NUL, DEL) are dropped.
    fn control(&mut self, b: u8, out: &mut Vec<u8>) {
        if matches!(b, BEL | 0x08 | 0x09 | 0x0a | 0x0b | 0x0c | 0x0d) {
            out.push(b);
        }
    }

    fn escape(&mut self, b: u8, out: &mut Vec<u8>) {
        self.state = State::Ground;
        match b {
            b'[' => {
                self.buf.clear();
                self.state = State::Csi;
            }
            b']' => {
                self.buf.clear();
                self.osc_drop = false;
                self.state = State::Osc;
            }
            b'P' | b'X' | b'^' | b'_' => self.state = State::Str,
            // Save and restore the cursor, index, next line, reverse index.
            b'7' | b'8' | b'D' | b'E' | b'M' => out.extend_from_slice(&[ESC, b]),
            0x20..=0x2f => self.state = State::EscapeIntermediate,
            0x00..=0x1f => {
                // A control inside an escape sequence is executed; the sequence goes on.
                self.control(b, out);
                self.state = State::Escape;
            }
            // Everything else (RIS `ESC c`, DECID `ESC Z`, keypad modes, tab stops, ...).
            _ => {}
        }
    }

    fn csi(&mut self, b: u8, out: &mut Vec<u8>) {
        match b {
            b'0'..=b'9' | b';' | b':' => {
                if self.buf.len() >= MAX_CSI {
                    self.state = State::CsiIgnore;
                } else {
                    self.buf.push(b);
                }
            }
            // Private markers (`?`, `>`, `<`, `=`) and intermediates: modes, queries, DEC
            // private functions. Dropped.
            0x20..=0x2f | 0x3c..=0x3f => self.state = State::CsiIgnore,
            0x40..=0x7e => {
                self.state = State::Ground;
                if csi_allowed(&self.buf, b) {
                    out.extend_from_slice(&[ESC, b'[']);
                    out.extend_from_slice(&self.buf);
                    out.push(b);
                }
            }
            0x00..=0x1f => self.control(b, out),
            _ => self.state = State::CsiIgnore,
        }
    }

    fn end_osc(&mut self, out: &mut Vec<u8>) {
        self.state = State::Ground;
        if self.osc_drop || !self.options.allow_title {
            return;
        }
        let Some(sep) = self.buf.iter().position(|&c| c == b';') else {
            return;
        };
        let (ps, text) = (&self.buf[..sep], &self.buf[sep + 1..]);
        if !matches!(ps, b"0" | b"1" | b"2") {
            return;
        }
        // The title itself: printable UTF-8 only (no C1 controls; C0 never got here).
        let printable = std::str::from_utf8(text).is_ok_and(|t| {
            !t.chars()
                .any(|c| c.is_control() || ('\u{80}'..='\u{9f}').contains(&c))
        });
        if printable {
            out.extend_from_slice(&[ESC, b']']);
            out.extend_from_slice(&self.buf);
            out.push(BEL);
        }
    }
}

/// The CSI sequences that change only what is drawn: SGR (colours, attributes), cursor
/// movement, erasing in the display (not the scrollback: `CSI 3 J`) or the line, inserting and
/// deleting characters and lines, scrolling, saving and restoring the cursor. Not kept: device
/// and status reports (DA, DSR/CPR), window operations and reports, modes, scroll margins,
/// cursor style, repeat (`REP`, which can ask for 65535 copies), and anything else.
fn csi_allowed(params: &[u8], final_byte: u8) -> bool {
    match final_byte {
        b'm' | b'A' | b'B' | b'C' | b'D' | b'E' | b'F' | b'G' | b'H' | b'f' | b'd' | b'e'
        | b'a' | b'`' | b'K' | b'@' | b'P' | b'X' | b'L' | b'M' | b'S' | b'T' | b'I' | b'Z'
        | b's' | b'u' => true,
        b'J' => matches!(params, b"" | b"0" | b"1" | b"2"),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
