//! A terminal's launch on Windows: its handles ([`open_ends`]: one pipe for stdout and stderr,
//! stdin on `NUL` or a pipe, or a pseudo console) and the launch ([`spawn`]) through
//! [`super::windows`] (`CreateProcessW` suspended, joined to the terminal's job by the job
//! step of its [`Join`], resumed).
//! The command line: a shell line's as cmd (or the named shell) takes it, verbatim for cmd;
//! a program's arguments MSVC-quoted, a batch file's escaped for cmd (refused before, in the
//! plan, when they cannot be). Our copies of the child's ends are closed before [`spawn`]
//! returns, so the output ends when the child's copies are gone.

use std::ffi::OsString;
use std::io;
use std::os::windows::io::{AsHandle, OwnedHandle};
use std::path::PathBuf;
use std::sync::Arc;

use super::command::{Argv, Command, Io, Started};
use super::wincmd::{self, wide, WinCommand};
use super::windows::{launch, WinLaunch, WinStdio};
use super::Leader;
use crate::sys::job::Job;
use crate::sys::pty::{ConPty, PtySize};

/// What the child is put into before it runs: the terminal's job (the job step, `steps/job.rs`),
/// made by the containment (`sys::contain::Holder::join`) with the request's limits.
#[derive(Debug)]
pub struct Join<'a> {
    /// The job the child joins while suspended.
    pub job: &'a Job,
}

/// The handles of one launch, opened before it.
#[derive(Debug)]
pub struct Ends {
    /// Our end of the output: the pipe's read end or the pseudo console's output.
    output: OwnedHandle,
    /// The child's stdin (`NUL` or the stdin pipe's read end) and stdout/stderr (the output
    /// pipe's write end); `None` on a pseudo console.
    child: Option<(OwnedHandle, OwnedHandle)>,
    /// Our input end: the stdin pipe's write end or the pseudo console's input.
    input: Option<OwnedHandle>,
    /// On a pty: the pseudo console and its size.
    console: Option<(ConPty, PtySize)>,
}

/// Opens the launch's handles for `io` (none inheritable: the launch lists the child's).
pub fn open_ends(io: Io) -> io::Result<Ends> {
    match io {
        Io::Pipe | Io::PipeWithStdin => {
            let (output, child_out) = crate::sys::pipe::pipe()?;
            let (child_in, input) = if io == Io::PipeWithStdin {
                let (r, w) = crate::sys::pipe::pipe()?;
                (r, Some(w))
            } else {
                (crate::sys::pipe::null_input()?, None)
            };
            Ok(Ends {
                output,
                child: Some((child_in, child_out)),
                input,
                console: None,
            })
        }
        Io::Pty(size) => {
            let (console, input, output) = ConPty::open(size.cols, size.rows)?;
            Ok(Ends {
                output,
                child: None,
                input: Some(input),
                console: Some((console, size)),
            })
        }
    }
}

/// The executable and command line of `cmd`.
fn command_line(cmd: &Command<'_>) -> io::Result<WinCommand> {
    let to_wide = |s: &std::ffi::OsStr| wide(&s.to_string_lossy());
    let program = cmd.program;
    let argv = cmd.argv.all();
    if let Argv::ShellLine(_) = cmd.argv {
        let shell = argv.first().map(|s| s.to_string_lossy().into_owned());
        let line = argv.last().map(|s| to_wide(s)).unwrap_or_default();
        let kind = wincmd::shell_kind(shell.as_deref().unwrap_or_default());
        return Ok(WinCommand {
            application: program.to_path_buf(),
            command_line: wincmd::shell_command_line(&to_wide(program.as_os_str()), kind, &line),
        });
    }
    let argv0 = argv.first().map(|s| to_wide(s)).unwrap_or_default();
    let args: Vec<Vec<u16>> = argv.iter().skip(1).map(|a| to_wide(a)).collect();
    let comspec: PathBuf = super::rules::comspec();
    wincmd::direct_command(program, &argv0, &args, &comspec).map_err(|(which, why)| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            wincmd::refusal_message(which, why),
        )
    })
}

/// A higher layer's steps in the child: Windows' launch runs none (no sandbox here), so none
/// is ever made.
#[derive(Debug, Clone, Copy)]
pub enum ChildSteps {}

/// The step code of a launch's failed [`ChildSteps`]: never, on Windows.
pub fn failed_step(_e: &io::Error) -> Option<i32> {
    None
}

/// The errno a launch's child reported: Windows' launches fail with plain I/O errors.
pub fn child_errno(_e: &io::Error) -> Option<i32> {
    None
}

/// Launches `cmd` on `ends` (see the module docs), with the [`Leader`] its containment takes.
pub fn spawn(cmd: Command<'_>, ends: Ends) -> io::Result<(Started, Leader)> {
    // No step runs here (none is ever made: there is no sandbox).
    if let Some(steps) = cmd.steps {
        match steps {}
    }
    let job = cmd.join.job;
    let WinCommand {
        application,
        command_line,
    } = command_line(&cmd)?;
    let cwd = crate::sys::cwd::dir_path(cmd.cwd)?;
    let env: Vec<(OsString, OsString)> = cmd.env.to_vec();
    let Ends {
        output,
        child,
        input,
        console,
    } = ends;
    let stdio = match (&child, &console) {
        (Some((stdin, out)), _) => WinStdio::Handles {
            stdin: stdin.as_handle(),
            output: out.as_handle(),
        },
        (None, Some((console, _))) => WinStdio::PseudoConsole(console.handle()),
        (None, None) => return Err(io::Error::other("a launch without standard handles")),
    };
    let launched = launch(WinLaunch {
        application: &application,
        command_line,
        env: &env,
        cwd: &cwd,
        stdio,
        job,
    })?;
    // Close our copies of the child's ends now, so the output ends when its copies are gone.
    drop(child);
    let console_input = match (&console, &input) {
        (Some(_), Some(i)) => Some(i.try_clone()?),
        _ => None,
    };
    let pid = launched.pid as i32;
    let started = Started {
        child: crate::sys::exit_watch::Child::from_handle(Arc::new(launched.process)),
        output,
        input,
        pty: console,
        init_pid: None,
    };
    Ok((started, Leader { pid, console_input }))
}
