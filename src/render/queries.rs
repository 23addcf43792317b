//! The emulator's callbacks in text mode: answers to terminal queries (DSR, DA, OSC 10/11
//! colour queries) as xterm would give them, and whether lines fell off the scrollback.

/// Collects what the emulator reports besides the screen.
#[derive(Default)]
pub(super) struct Events {
    /// Answers to terminal queries, to be written to the terminal's input.
    pub(super) replies: Vec<u8>,
    /// Lines fell off the top of the scrollback.
    pub(super) dropped: bool,
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
