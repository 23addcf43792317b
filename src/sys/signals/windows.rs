//! Windows: no signals; `CTRL_BREAK` is the graceful request a console process group can
//! get (what `taskkill` without `/f` and Ctrl+Break do).

use std::io;

use windows_sys::Win32::System::Console::{GenerateConsoleCtrlEvent, CTRL_BREAK_EVENT};

/// Sends `CTRL_BREAK` to process group `group` (a child started with
/// `CREATE_NEW_PROCESS_GROUP` leads its own). Reaches only a group attached to this process's
/// console; otherwise Windows refuses it and the caller goes straight to termination.
pub fn ctrl_break(group: u32) -> io::Result<()> {
    // SAFETY: no pointers; Windows checks the group.
    if unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, group) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
