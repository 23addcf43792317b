//! A terminal's launch on Unix: its descriptors ([`open_ends`]: one pipe for stdout and
//! stderr, stdin on /dev/null or a pipe, or a pty pair) and the launch ([`spawn`]) of the
//! child through the steps of `steps/` with the values of its [`Join`]: leader of a new
//! process group (a new session on a pty, or when asked), SIGKILL as its parent-death signal,
//! its rlimits and cgroups, then a higher layer's steps ([`spawn_detached`]: the same without
//! the parent-death signal, for the guardian, which must outlive Node). Our copies of the child's ends are closed before either returns, so
//! end of file (EIO on a pty) arrives when the child's copies are gone.

use std::ffi::CString;
use std::io;
use std::marker::PhantomData;
#[cfg(target_os = "linux")]
use std::os::fd::{AsFd, BorrowedFd};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use super::command::{Command, Io, Started};
use super::steps::rlimits::Rlimit;
use super::steps::session::SessionMode;
use super::{cpath, cstring, envp, LaunchSpec, Leader};
use crate::sys::pty::{self, PtySize};

/// The descriptors of one launch, opened before it (a sandbox needs the pty's slave).
#[derive(Debug)]
pub struct Ends {
    /// Our end of the output (non-blocking): the pipe's read end or the pty master.
    output: OwnedFd,
    /// The child's stdin pipe (read end), with `Io::PipeWithStdin`.
    child_in: Option<OwnedFd>,
    /// The child's stdout/stderr: the pipe's write end, or the pty slave.
    child_out: OwnedFd,
    /// Our input end (non-blocking): the stdin pipe's write end, or a pty master duplicate.
    input: Option<OwnedFd>,
    /// On a pty: a master duplicate for the window size, and the size.
    pty: Option<(OwnedFd, PtySize)>,
}

impl Ends {
    /// The pty slave the command gets as its terminal (`None` on pipes), for the sandbox.
    #[cfg(target_os = "linux")]
    pub fn tty(&self) -> Option<BorrowedFd<'_>> {
        self.pty.as_ref().map(|_| self.child_out.as_fd())
    }
}

fn nonblock(fd: &OwnedFd) -> io::Result<()> {
    fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    Ok(())
}

fn dev_null() -> io::Result<&'static OwnedFd> {
    static NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd);
    }
    let f = std::fs::File::open("/dev/null")?;
    Ok(NULL.get_or_init(|| f.into()))
}

/// Opens the launch's descriptors for `io`, every one close-on-exec.
pub fn open_ends(io: Io) -> io::Result<Ends> {
    match io {
        Io::Pipe | Io::PipeWithStdin => {
            let (read, write) = crate::sys::pipe::pipe_cloexec()?;
            nonblock(&read)?;
            let (child_in, input) = if io == Io::PipeWithStdin {
                let (r, w) = crate::sys::pipe::pipe_cloexec()?;
                nonblock(&w)?;
                (Some(r), Some(w))
            } else {
                (None, None)
            };
            Ok(Ends {
                output: read,
                child_in,
                child_out: write,
                input,
                pty: None,
            })
        }
        Io::Pty(size) => {
            let p = pty::open(size)?;
            let input = pty::dup(&p.master)?;
            let control = pty::dup(&p.master)?;
            Ok(Ends {
                output: p.master,
                child_in: None,
                child_out: p.slave,
                input: Some(input),
                pty: Some((control, size)),
            })
        }
    }
}

/// What the child is put into before it runs: the values of the session, rlimits and cgroup
/// steps (`steps/`), made by the containment (`sys::contain::Holder::join`) for a terminal,
/// by the guardian for itself.
#[derive(Debug, Default)]
pub struct Join<'a> {
    /// Lead a new session even on pipes (a pty terminal's command always does): no
    /// controlling terminal to type into.
    pub own_session: bool,
    /// Resource limits, applied in the child.
    pub rlimits: Vec<Rlimit>,
    /// `cgroup.procs` files the child moves itself into (none where the system has no
    /// cgroups).
    pub cgroup_procs: Vec<CString>,
    /// Ties the borrow the Windows join has (its job).
    pub _holder: PhantomData<&'a ()>,
}

/// Launches `cmd` on `ends` (see the module docs), with the [`Leader`] its containment takes.
pub fn spawn(cmd: Command<'_>, ends: Ends) -> io::Result<(Started, Leader)> {
    launch_command(cmd, ends, Some(libc::SIGKILL))
}

/// Launches `cmd` on `ends` as a process that outlives Node (no parent-death signal): the
/// guardian, whose work starts when Node is gone.
pub fn spawn_detached(cmd: Command<'_>, ends: Ends) -> io::Result<(Started, Leader)> {
    launch_command(cmd, ends, None)
}

/// The launch of [`spawn`] and [`spawn_detached`], with `parent_death_signal`.
fn launch_command(
    cmd: Command<'_>,
    ends: Ends,
    parent_death_signal: Option<i32>,
) -> io::Result<(Started, Leader)> {
    let Ends {
        output,
        child_in,
        child_out,
        input,
        pty,
    } = ends;
    let null = dev_null()?;
    let stdin_fd = match (&child_in, &pty) {
        (Some(r), _) => r.as_raw_fd(),
        (None, Some(_)) => child_out.as_raw_fd(),
        (None, None) => null.as_raw_fd(),
    };
    let tty = pty.as_ref().map(|_| child_out.as_raw_fd());
    let spec = LaunchSpec {
        program: cpath(cmd.program)?,
        argv: cmd
            .argv
            .all()
            .iter()
            .map(|a| cstring(a))
            .collect::<Result<_, _>>()?,
        envp: envp(cmd.env)?,
        cwd: cmd.cwd.as_raw_fd(),
        stdio: [stdin_fd, child_out.as_raw_fd(), child_out.as_raw_fd()],
        session: SessionMode::of(tty, cmd.join.own_session),
        rlimits: cmd.join.rlimits,
        cgroup_procs: cmd.join.cgroup_procs,
        steps: cmd.steps,
    };
    let launched = super::launch(spec, parent_death_signal)?;
    // Close our copies of the child's ends now, so EOF / EIO arrives when its copies are gone.
    drop(child_out);
    drop(child_in);
    let started = Started {
        child: crate::sys::exit_watch::Child::from_pid(launched.pid),
        output,
        input,
        pty,
        init_pid: launched.init_pid,
    };
    Ok((started, Leader { pid: launched.pid }))
}
