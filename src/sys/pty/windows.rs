//! Windows: pseudo consoles (ConPTY). The console reads what we write to `input` and writes
//! the screen's bytes (VT sequences) to `output`; the child is attached to it at launch
//! (`PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE`). Closing it ends the console; the output must be
//! drained meanwhile (on another thread), or `ClosePseudoConsole` can wait for it.

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::System::Console::{
    ClosePseudoConsole, CreatePseudoConsole, ResizePseudoConsole, COORD, HPCON,
};

/// An open pseudo console and our ends of its two pipes.
#[derive(Debug)]
pub struct ConPty {
    hpc: HPCON,
    /// Where we write the console's input (keys, pasted text).
    pub input: OwnedHandle,
    /// Where we read its output.
    pub output: OwnedHandle,
}

fn coord(cols: u16, rows: u16) -> COORD {
    // A console's size is an i16 pair; larger sizes are clamped.
    COORD {
        X: cols.min(i16::MAX as u16) as i16,
        Y: rows.min(i16::MAX as u16) as i16,
    }
}

fn hresult(hr: i32) -> io::Result<()> {
    if hr < 0 {
        return Err(io::Error::from_raw_os_error(hr));
    }
    Ok(())
}

impl ConPty {
    /// Opens a pseudo console of `cols` x `rows`.
    pub fn open(cols: u16, rows: u16) -> io::Result<ConPty> {
        let (console_in, input) = crate::sys::pipe::pipe()?;
        let (output, console_out) = crate::sys::pipe::pipe()?;
        let mut hpc: HPCON = 0;
        // SAFETY: two valid pipe ends (the console duplicates them); `hpc` receives the handle.
        hresult(unsafe {
            CreatePseudoConsole(
                coord(cols, rows),
                console_in.as_raw_handle(),
                console_out.as_raw_handle(),
                0,
                &mut hpc,
            )
        })?;
        // The console holds its own copies of its ends: ours close here.
        drop((console_in, console_out));
        Ok(ConPty { hpc, input, output })
    }

    /// The handle the launcher attaches the child with.
    pub fn handle(&self) -> HPCON {
        self.hpc
    }

    /// Changes the console's size (the child sees a window-size change).
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        // SAFETY: an open pseudo console.
        hresult(unsafe { ResizePseudoConsole(self.hpc, coord(cols, rows)) })
    }
}

impl Drop for ConPty {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once here.
        unsafe { ClosePseudoConsole(self.hpc) };
    }
}

// SAFETY: an HPCON is a handle, usable from any thread; the pipe handles are Send already.
unsafe impl Send for ConPty {}
// SAFETY: resizing from several threads is serialised by the console host.
unsafe impl Sync for ConPty {}
