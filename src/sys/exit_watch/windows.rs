//! Windows: a process handle is signalled when the process ends; its exit code is the full
//! 32-bit value (an NTSTATUS such as `0xC0000005` stays 3221225477).

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{GetExitCodeProcess, WaitForSingleObject, INFINITE};

fn wait(process: &OwnedHandle, ms: u32) -> io::Result<bool> {
    // SAFETY: a valid process handle with SYNCHRONIZE access.
    match unsafe { WaitForSingleObject(process.as_raw_handle(), ms) } {
        WAIT_OBJECT_0 => Ok(true),
        WAIT_TIMEOUT => Ok(false),
        _ => Err(io::Error::last_os_error()),
    }
}

fn exit_code(process: &OwnedHandle) -> io::Result<u32> {
    let mut code = 0u32;
    // SAFETY: a valid process handle; `code` receives the exit code.
    if unsafe { GetExitCodeProcess(process.as_raw_handle(), &mut code) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(code)
}

/// Blocks until `process` has ended and returns its exit code (call it on a blocking thread).
pub fn wait_exit(process: &OwnedHandle) -> io::Result<u32> {
    wait(process, INFINITE)?;
    exit_code(process)
}

/// The exit code of `process` if it has ended, `None` while it runs (decided by the handle's
/// state, never by the code: a process may exit with 259, `STILL_ACTIVE`).
pub fn try_exit(process: &OwnedHandle) -> io::Result<Option<u32>> {
    if wait(process, 0)? {
        exit_code(process).map(Some)
    } else {
        Ok(None)
    }
}
