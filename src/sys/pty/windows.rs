//! Windows: pseudo consoles (ConPTY). The console reads what we write to `input` and writes
//! the screen's bytes (VT sequences) to `output`; the child is attached to it at launch
//! (`PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE`). Closing it ends the console; the output must be
//! drained meanwhile (on another thread), or `ClosePseudoConsole` can wait for it.

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::System::Console::{
    ClosePseudoConsole, CreatePseudoConsole, ResizePseudoConsole, COORD, HPCON,
};

/// An open pseudo console (our ends of its two pipes are handed out by [`ConPty::open`]).
/// Dropping it closes the console: its processes lose their console, its output ends.
#[derive(Debug)]
pub struct ConPty {
    hpc: HPCON,
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
    /// Opens a pseudo console of `cols` x `rows`; with it, where we write its input (keys,
    /// pasted text) and where we read its output.
    pub fn open(cols: u16, rows: u16) -> io::Result<(ConPty, OwnedHandle, OwnedHandle)> {
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
        Ok((ConPty { hpc }, input, output))
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

/// What the core holds of a pty terminal: its pseudo console.
pub type Control = ConPty;

/// A pseudo console has no termios: nothing to save.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modes;

/// Resizes the pseudo console (its processes get a window-size change).
pub fn set_size(control: &Control, size: super::PtySize) -> io::Result<()> {
    control.resize(size.cols, size.rows)
}

/// A pseudo console has no process groups: `None`.
pub fn foreground_group(_control: &Control) -> Option<i32> {
    None
}

/// A pseudo console has no modes to save ([`Modes`]).
pub fn modes(_control: &Control) -> io::Result<Modes> {
    Ok(Modes)
}

/// Nothing to restore on a pseudo console: always false.
pub fn restore_modes(_control: &Control, _saved: &Modes) -> io::Result<bool> {
    Ok(false)
}

/// The console host answers terminal queries itself: the emulator never does.
pub fn awaits_replies(_control: &Control) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::job::{Job, JobLimits};
    use crate::sys::spawn::wincmd::{shell_command_line, wide, ShellKind};
    use crate::sys::spawn::{windows_launch, WinLaunch, WinStdio};
    use crate::sys::wintest::{comspec, under_wine};
    use std::io::Read;

    #[test]
    fn a_pseudo_console_resizes() {
        let (pty, _input, _output) = ConPty::open(80, 24).unwrap();
        // Wine 8's ResizePseudoConsole answers E_NOTIMPL (0x80004001); the workflow's Windows
        // runners require a working one (ACP_TERMINAL_REQUIRE=conpty).
        if !crate::test_util::require(
            "conpty",
            !under_wine(),
            "Wine's ResizePseudoConsole is not implemented",
        ) {
            let e = pty.resize(100, 30).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(0x8000_4001_u32 as i32));
            return;
        }
        pty.resize(100, 30).unwrap();
        pty.resize(1, 1).unwrap();
    }

    #[test]
    fn a_command_on_a_pseudo_console_writes_to_its_output() {
        let (pty, _input, output) = ConPty::open(80, 24).unwrap();
        // Read from the start, on another thread: the console writes as the command runs,
        // and closing it ends its output.
        let mut out = std::fs::File::from(output);
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes);
            bytes
        });
        let job = Job::create(&JobLimits::default()).unwrap();
        let shell = comspec();
        let env: Vec<_> = std::env::vars_os().collect();
        let cwd = std::env::temp_dir();
        let child = windows_launch(WinLaunch {
            application: &shell,
            command_line: shell_command_line(
                &wide(&shell.to_string_lossy()),
                ShellKind::Cmd,
                &wide("echo conpty-says-hi"),
            ),
            env: &env,
            cwd: &cwd,
            stdio: WinStdio::PseudoConsole(pty.handle()),
            job: &job,
        })
        .unwrap();
        let code = crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        assert_eq!(code, 0);
        drop(pty);
        let bytes = reader.join().unwrap();
        // Wine 8 creates the console and runs the command (exit 0 above) but does not make the
        // console the command's standard handles, so its echo goes nowhere (writes to CONOUT$ do
        // arrive: scripts/windows/probes/conpty.c); the workflow's Windows runners require it.
        if !crate::test_util::require(
            "conpty",
            !under_wine(),
            "Wine does not make a pseudo console the command's standard handles",
        ) {
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("conpty-says-hi"), "{text:?}");
    }
}
