//! Helpers of the Windows platform layer's unit tests (here and in `winsys/`): cmd.exe, a
//! command run in a job with its output on a pipe, Wine detection, bounded waiting.

use std::os::windows::io::AsHandle;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::sys::job::Job;
use crate::sys::spawn::wincmd::{shell_command_line, wide, ShellKind};
use crate::sys::spawn::{windows_launch, WinChild, WinLaunch, WinStdio};

/// `%ComSpec%` (cmd.exe).
pub fn comspec() -> PathBuf {
    std::env::var_os("ComSpec")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("C:\\Windows\\System32\\cmd.exe"))
}

/// Runs `line` with cmd.exe in `job`, stdin the NUL device; returns the child and the read
/// end of its output (stdout and stderr).
pub fn cmd_in(job: &Job, line: &str) -> (WinChild, std::fs::File) {
    let (read, write) = crate::sys::pipe::pipe().unwrap();
    let stdin = crate::sys::pipe::null_input().unwrap();
    let shell = comspec();
    let env: Vec<_> = std::env::vars_os().collect();
    let cwd = std::env::temp_dir();
    let child = windows_launch(WinLaunch {
        application: &shell,
        command_line: shell_command_line(
            &wide(&shell.to_string_lossy()),
            ShellKind::Cmd,
            &wide(line),
        ),
        env: &env,
        cwd: &cwd,
        stdio: WinStdio::Handles {
            stdin: stdin.as_handle(),
            output: write.as_handle(),
        },
        job,
    })
    .unwrap();
    (child, std::fs::File::from(read))
}

/// Whether this runs under Wine (its ntdll exports `wine_get_version`).
pub fn under_wine() -> bool {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    let ntdll: Vec<u16> = "ntdll.dll\0".encode_utf16().collect();
    // SAFETY: NUL-terminated names; ntdll is loaded in every process.
    unsafe {
        let module = GetModuleHandleW(ntdll.as_ptr());
        !module.is_null() && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
    }
}

/// Polls `done` until it holds; fails the test, naming `what`, after a minute (a liveness
/// bound, not a timing assertion).
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
