//! Windows launch: `CreateProcessW` with an explicit application path (no search by Windows),
//! a command line built by [`super::wincmd`], a sorted Unicode environment block, and exactly
//! the handles the child needs (`PROC_THREAD_ATTRIBUTE_HANDLE_LIST`), or a pseudo console
//! (`PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE`). The child is created suspended, put in the
//! terminal's [`Job`], and only then resumed: nothing it starts can be outside the job.
//! It is not made a new process group: that would disable Ctrl+C in it, which a pty terminal
//! needs, and a console of its own (hidden for pipes, the pseudo console for a pty) already
//! keeps Node's console events away from it and its events away from Node.

use std::ffi::OsString;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::path::Path;

use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT};
use windows_sys::Win32::System::Console::HPCON;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, InitializeProcThreadAttributeList,
    UpdateProcThreadAttribute, CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, STARTF_USESTDHANDLES,
    STARTUPINFOEXW,
};

use super::wincmd;
use crate::sys::job::Job;

/// Where the child's standard handles come from.
#[derive(Debug)]
pub enum WinStdio<'a> {
    /// stdin (the NUL device or a pipe's read end) and one handle for stdout and stderr
    /// (a pipe's write end): made inheritable for this launch and listed as the only handles
    /// the child inherits.
    Handles {
        /// The child's stdin.
        stdin: BorrowedHandle<'a>,
        /// The child's stdout and stderr.
        output: BorrowedHandle<'a>,
    },
    /// A pseudo console (ConPTY): the child's console; it inherits no handle.
    PseudoConsole(HPCON),
}

/// Everything `CreateProcessW` needs.
#[derive(Debug)]
pub struct WinLaunch<'a> {
    /// The executable Windows loads (absolute: nothing is searched).
    pub application: &'a Path,
    /// The command line the program reads its arguments from (no terminating NUL).
    pub command_line: Vec<u16>,
    /// The complete environment.
    pub env: &'a [(OsString, OsString)],
    /// The working directory (absolute).
    pub cwd: &'a Path,
    /// Standard handles or a pseudo console.
    pub stdio: WinStdio<'a>,
    /// The terminal's job, which the child joins before it runs.
    pub job: &'a Job,
}

/// A started child: its process handle and id.
#[derive(Debug)]
pub struct WinChild {
    /// The process (all access: waiting, exit code, termination).
    pub process: OwnedHandle,
    /// Its process id.
    pub pid: u32,
}

fn nul_terminated(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain([0]).collect()
}

/// A `PROC_THREAD_ATTRIBUTE_LIST` with room for one attribute, deleted when dropped.
struct AttributeList {
    // usize-aligned storage for the opaque list.
    buf: Vec<usize>,
}

impl AttributeList {
    fn new() -> io::Result<Self> {
        let mut size = 0usize;
        // SAFETY: a null list asks for the size one attribute needs; the call "fails" with
        // ERROR_INSUFFICIENT_BUFFER by design.
        unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), 1, 0, &mut size) };
        if size == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut list = AttributeList {
            buf: vec![0usize; size.div_ceil(std::mem::size_of::<usize>())],
        };
        // SAFETY: `buf` holds at least `size` bytes, aligned for the list.
        if unsafe { InitializeProcThreadAttributeList(list.ptr(), 1, 0, &mut size) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(list)
    }

    fn ptr(&mut self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
        self.buf.as_mut_ptr().cast()
    }

    /// Sets `attribute` to the `size` bytes at `value`, which must outlive the launch.
    fn set(
        &mut self,
        attribute: u32,
        value: *const std::ffi::c_void,
        size: usize,
    ) -> io::Result<()> {
        // SAFETY: the list was initialised for one attribute; `value` points to `size` bytes
        // the caller keeps alive until CreateProcessW returns.
        let ok = unsafe {
            UpdateProcThreadAttribute(
                self.ptr(),
                0,
                attribute as usize,
                value,
                size,
                std::ptr::null_mut(),
                std::ptr::null(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for AttributeList {
    fn drop(&mut self) {
        // SAFETY: the list was initialised in `new`.
        unsafe { DeleteProcThreadAttributeList(self.ptr()) };
    }
}

/// Sets or clears the inherit flag of `h`.
fn set_inheritable(h: BorrowedHandle<'_>, inherit: bool) -> io::Result<()> {
    let flag = if inherit { HANDLE_FLAG_INHERIT } else { 0 };
    // SAFETY: a valid handle; only its inherit flag changes.
    if unsafe { SetHandleInformation(h.as_raw_handle(), HANDLE_FLAG_INHERIT, flag) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Starts `spec`: created suspended, put in the job, then resumed.
/// A child that cannot join the job is terminated before it ran, and the error returned.
pub fn launch(spec: WinLaunch<'_>) -> io::Result<WinChild> {
    let application = nul_terminated(spec.application);
    let cwd = nul_terminated(spec.cwd);
    let mut command_line = spec.command_line;
    command_line.push(0);
    let env: Vec<(Vec<u16>, Vec<u16>)> = spec
        .env
        .iter()
        .map(|(k, v)| (k.encode_wide().collect(), v.encode_wide().collect()))
        .collect();
    let env_block = wincmd::env_block(&env);

    let mut attributes = AttributeList::new()?;
    // SAFETY: STARTUPINFOEXW is plain data; zero is "not given" for every field.
    let mut si: STARTUPINFOEXW = unsafe { std::mem::zeroed() };
    si.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
    let mut flags = EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED;
    // Kept alive until CreateProcessW returns (the attribute points into it).
    let handles: [HANDLE; 2];
    let inherit = match &spec.stdio {
        WinStdio::Handles { stdin, output } => {
            set_inheritable(*stdin, true)?;
            set_inheritable(*output, true)?;
            handles = [stdin.as_raw_handle(), output.as_raw_handle()];
            attributes.set(
                PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                handles.as_ptr().cast(),
                std::mem::size_of_val(&handles),
            )?;
            si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
            si.StartupInfo.hStdInput = handles[0];
            si.StartupInfo.hStdOutput = handles[1];
            si.StartupInfo.hStdError = handles[1];
            // A console of its own, never shown: not Node's (whose input it could read and
            // whose Ctrl+C it would get), and no window when Node has no console.
            flags |= CREATE_NO_WINDOW;
            1
        }
        WinStdio::PseudoConsole(hpc) => {
            // Null standard handles with STARTF_USESTDHANDLES: the child takes the pseudo
            // console's, never a copy of Node's own (which Windows duplicates into a console
            // child when Node's stdio are pipes or files; node-pty does the same, see
            // microsoft/terminal#11276).
            si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
            // The attribute's value is the HPCON itself, not a pointer to it.
            attributes.set(
                PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE,
                *hpc as *const std::ffi::c_void,
                std::mem::size_of::<HPCON>(),
            )?;
            0
        }
    };
    si.lpAttributeList = attributes.ptr();

    // SAFETY: zeroed plain data, filled in by the call.
    let mut pi: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: every string is NUL-terminated and outlives the call (the command line is
    // writable, as CreateProcessW requires); the environment block is double-NUL-terminated
    // UTF-16 (CREATE_UNICODE_ENVIRONMENT); `si` and its attribute list are initialised.
    let ok = unsafe {
        CreateProcessW(
            application.as_ptr(),
            command_line.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            inherit,
            flags,
            env_block.as_ptr().cast(),
            cwd.as_ptr(),
            &si.StartupInfo,
            &mut pi,
        )
    };
    let created = if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    };
    // Inheritable no longer: a process started later (by Node's libuv, which inherits every
    // inheritable handle) must not get a copy of these and hold our pipes open.
    if let WinStdio::Handles { stdin, output } = &spec.stdio {
        let _ = set_inheritable(*stdin, false);
        let _ = set_inheritable(*output, false);
    }
    created?;
    // SAFETY: CreateProcessW succeeded: both handles are valid and ours.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(pi.hProcess),
            OwnedHandle::from_raw_handle(pi.hThread),
        )
    };
    super::steps::job::join_then_resume(spec.job, &process, &thread)?;
    Ok(WinChild {
        process,
        pid: pi.dwProcessId,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::job::JobLimits;
    use crate::sys::wintest::comspec;
    use std::io::Read;
    use std::os::windows::io::AsHandle;

    /// Runs `command` with pipes; returns its exit code and output.
    fn run(command: wincmd::WinCommand) -> (u32, String) {
        let env: Vec<_> = std::env::vars_os().collect();
        run_with(command, &env, None)
    }

    /// Runs `command` in `env`, with `input` written to its stdin (a pipe) or the NUL device.
    fn run_with(
        command: wincmd::WinCommand,
        env: &[(OsString, OsString)],
        input: Option<&[u8]>,
    ) -> (u32, String) {
        use std::io::Write;
        let job = Job::create(&JobLimits::default()).unwrap();
        let (read, write) = crate::sys::pipe::pipe().unwrap();
        let (stdin, stdin_writer) = match input {
            Some(_) => {
                let (r, w) = crate::sys::pipe::pipe().unwrap();
                (r, Some(w))
            }
            None => (crate::sys::pipe::null_input().unwrap(), None),
        };
        let cwd = std::env::temp_dir();
        let child = launch(WinLaunch {
            application: &command.application,
            command_line: command.command_line,
            env,
            cwd: &cwd,
            stdio: WinStdio::Handles {
                stdin: stdin.as_handle(),
                output: write.as_handle(),
            },
            job: &job,
        })
        .unwrap();
        // The child's ends are inheritable only during the launch.
        for h in [&write, &stdin] {
            let mut flags = 0u32;
            // SAFETY: a valid handle; `flags` receives its flags.
            let ok = unsafe {
                windows_sys::Win32::Foundation::GetHandleInformation(h.as_raw_handle(), &mut flags)
            };
            assert!(
                ok != 0 && flags & HANDLE_FLAG_INHERIT == 0,
                "flags {flags:#x}"
            );
        }
        drop((write, stdin));
        if let (Some(w), Some(bytes)) = (stdin_writer, input) {
            let mut w = std::fs::File::from(w);
            w.write_all(bytes).unwrap();
            // Dropped here: the command reads EOF after the bytes.
        }
        let mut text = String::new();
        std::fs::File::from(read).read_to_string(&mut text).unwrap();
        let code = crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        (code, text)
    }

    #[test]
    fn a_batch_file_argument_never_becomes_a_command() {
        let script = std::env::temp_dir().join(format!("acp-echo-{}.cmd", std::process::id()));
        std::fs::write(&script, "@echo off\r\necho ARG1=%1\r\n").unwrap();
        let hostile = wincmd::wide("\"&echo INJECTED");
        let injected = |text: &str| text.lines().any(|l| l.trim_start().starts_with("INJECTED"));
        // The attack: MSVC quoting alone (what a program expects) handed to cmd.exe, which
        // reads `\"` as a quoted backslash and then runs what follows the `&`.
        let mut naive = Vec::new();
        wincmd::push_msvc_arg(&mut naive, &wincmd::wide(&comspec().to_string_lossy()));
        naive.extend(wincmd::wide(" /d /s /c \""));
        naive.extend(wincmd::msvc_command_line(
            &wincmd::wide(&script.to_string_lossy()),
            std::slice::from_ref(&hostile),
        ));
        naive.push(b'"' as u16);
        let (_, text) = run(wincmd::WinCommand {
            application: comspec(),
            command_line: naive,
        });
        assert!(injected(&text), "the attack should work: {text:?}");
        // Ours: the argument reaches the script as data.
        let safe = wincmd::direct_command(
            &script,
            &wincmd::wide("script"),
            std::slice::from_ref(&hostile),
            &comspec(),
        )
        .unwrap();
        let (code, text) = run(safe);
        std::fs::remove_file(&script).unwrap();
        assert_eq!(code, 0, "{text:?}");
        assert!(!injected(&text), "{text:?}");
        assert!(
            text.contains("ARG1=") && text.contains("INJECTED"),
            "{text:?}"
        );
    }

    #[test]
    fn arguments_reach_a_program_exactly() {
        // cmd.exe's `echo` prints its command line's tail as written: the quoting is visible.
        let args = [wincmd::wide("a b"), wincmd::wide(""), wincmd::wide("100%")];
        let command = wincmd::direct_command(
            &comspec(),
            &wincmd::wide("cmd"),
            &[
                wincmd::wide("/d"),
                wincmd::wide("/c"),
                wincmd::wide("echo"),
                args[0].clone(),
                args[1].clone(),
                args[2].clone(),
            ],
            &comspec(),
        )
        .unwrap();
        let (code, text) = run(command);
        assert_eq!(code, 0);
        assert_eq!(text, "\"a b\" \"\" 100%\r\n");
    }

    fn cmd(line: &str) -> wincmd::WinCommand {
        let shell = comspec();
        wincmd::WinCommand {
            command_line: wincmd::shell_command_line(
                &wincmd::wide(&shell.to_string_lossy()),
                wincmd::ShellKind::Cmd,
                &wincmd::wide(line),
            ),
            application: shell,
        }
    }

    #[test]
    fn stdin_is_at_eof_or_the_pipe_we_write() {
        // cmd's `set /p` reads one line of stdin into a variable: from NUL it reads nothing.
        let line = "set /p ACP_IN=& set ACP_IN";
        let (_, text) = run(cmd(line));
        assert!(!text.contains("ACP_IN="), "{text:?}");
        let env: Vec<_> = std::env::vars_os().collect();
        let (code, text) = run_with(cmd(line), &env, Some(b"from the pipe\r\n"));
        assert_eq!(code, 0, "{text:?}");
        assert!(text.contains("ACP_IN=from the pipe\r\n"), "{text:?}");
    }

    #[test]
    fn the_environment_is_exactly_the_one_given() {
        // The plan has merged names without case already (a request's `path` replaced `Path`).
        let system_root = std::env::var("SystemRoot").unwrap_or_else(|_| "C:\\Windows".into());
        let env: Vec<(OsString, OsString)> = [
            ("SystemRoot", system_root.as_str()),
            ("path", "C:\\mine"),
            ("ACP_ONLY", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let (code, text) = run_with(cmd("set"), &env, None);
        assert_eq!(code, 0, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let paths: Vec<&&str> = lines
            .iter()
            .filter(|l| l.to_ascii_uppercase().starts_with("PATH="))
            .collect();
        assert_eq!(paths, [&"path=C:\\mine"], "{text}");
        assert!(lines.contains(&"ACP_ONLY=1"), "{text}");
        // Nothing inherited beyond what was given (cmd itself may add its own few).
        let ours = std::env::vars().find(|(k, _)| k.eq_ignore_ascii_case("USERNAME"));
        if let Some((k, v)) = ours {
            assert!(!lines.contains(&format!("{k}={v}").as_str()), "{text}");
        }
    }

    #[test]
    fn programs_are_found_on_the_real_path_through_pathext() {
        let path = std::env::var("PATH").unwrap();
        let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| wincmd::DEFAULT_PATHEXT.into());
        let found = wincmd::find_program(
            "cmd",
            &path,
            &pathext,
            &std::env::temp_dir(),
            |p: &std::path::Path| p.is_file(),
        )
        .expect("cmd on PATH");
        assert!(
            found
                .to_string_lossy()
                .to_ascii_lowercase()
                .ends_with("\\cmd.exe"),
            "{}",
            found.display()
        );
    }
}
