//! Pseudo-terminals: opening a pair (per platform), the window size, the foreground group, the
//! terminal modes. The core holds a pty terminal's [`Control`] (Unix: a master duplicate;
//! Windows: the pseudo console) and asks it through the same functions everywhere: [`set_size`],
//! [`foreground_group`], [`modes`] / [`restore_modes`], [`awaits_replies`]. Windows' pseudo
//! console has no foreground group and no termios: `None`, nothing to restore, never raw.
//!
//! Invariants:
//! - No child launched concurrently for another terminal inherits either end (Linux: both are
//!   opened close-on-exec atomically; macOS: the master is made close-on-exec right after
//!   opening, and our launches pass only the descriptors they name), so the master sees the
//!   end exactly when this terminal's processes have closed the slave.
//! - The master is non-blocking (it lives in the runtime's reactor); the slave is blocking, as
//!   programs expect of their terminal.
//! - The caller closes its slave right after the launch; from then on, EIO (Linux) or end of
//!   file (macOS) on a master read means "every process of the terminal closed it", i.e. the
//!   end of the output.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{awaits_replies, dup, foreground_group, modes, open, restore_modes, set_size};
#[cfg(unix)]
pub use unix::{Control, Modes};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{awaits_replies, foreground_group, modes, restore_modes, set_size};
#[cfg(windows)]
pub use windows::{ConPty, Control, Modes};

/// Default size of a pty terminal: columns.
pub const DEFAULT_COLS: u16 = 80;
/// Default size of a pty terminal: rows.
pub const DEFAULT_ROWS: u16 = 24;

/// A terminal size in character cells (both at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtySize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl Default for PtySize {
    fn default() -> Self {
        Self {
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
        }
    }
}
