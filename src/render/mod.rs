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
//! - [`render_output`] renders a whole stretch of output at once (`renderTerminalOutput`, used
//!   by ShellSessions for one command's output) with the same emulator and no scrollback limit:
//!   rows scrolled off the screen are turned into text as they go, so the emulator holds only the
//!   screen and the result is the text itself.
//!
//! - No count makes the work or the text of `N` bytes more than `O(N × cols)` plus the screen:
//!   REP is bounded by the cursor's row (`clamp.rs`), the emulator bounds the other counts.
//!
//! | file | job |
//! |---|---|
//! | `clamp.rs` | [`clamp::Emulator`]: the emulator fed with REP bounded by the cursor's row |
//! | `queries.rs` | the emulator's callbacks in text mode: answers to terminal queries, lines dropped |
//! | `screen.rs` | [`TextScreen`]: a live terminal's screen and scrollback, fed at once or in batches |
//! | `whole.rs` | [`render_output`]: a finished stretch of output turned into text |

use std::num::NonZeroU16;

mod clamp;
mod queries;
mod screen;
mod whole;

pub use screen::TextScreen;
pub use whole::{render_output, RenderedOutput};

/// Default number of lines kept above the screen in text mode.
pub const DEFAULT_SCROLLBACK: usize = 1000;
/// Largest accepted scrollback (lines), so that memory stays bounded.
pub const MAX_SCROLLBACK: usize = 100_000;

/// A screen dimension as the emulator takes it (0 becomes 1).
fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}
