//! One running command: the task that reads its output and reaps it, the exit status and its
//! waiters, kill and release, and output subscribers.
//!
//! Invariants:
//! - One tokio task per terminal does all the I/O (no thread per terminal, nothing polls while
//!   the command is idle: the task sleeps on the pipe and on a pidfd).
//! - The exit status is published only after the child was reaped AND its output was drained:
//!   every byte written before exit is in the buffer when `waitForExit` resolves. A descendant
//!   that keeps the pipe open delays publication by at most [`DRAIN_AFTER_EXIT`].
//! - The child is always reaped (no zombie of ours), and the pipe and pidfd are closed when the
//!   terminal is released or dropped.
//! - Input (a stdin pipe or a pty) is written by a second task, in the order of the calls: each
//!   write is queued when it is made, written in paced chunks (waiting for writability on
//!   EAGAIN, never dropping bytes), and resolves once all its bytes are in the kernel. A write
//!   still blocked when the exit is published fails with `ERR_TERMINAL_EXITED`.
//! - On a pty, EIO on the master is the end of the output (every process closed the slave).
//!   In text mode the output also feeds a terminal emulator ([`crate::render`]), whose answers
//!   to terminal queries are written back as input while the pty is in raw mode (no
//!   ICANON, no ECHO: a program waiting for the answer), never echoed into the output.

use std::cell::RefCell;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::cgroup::{Cgroup, PidsCgroup};
use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::guard;
use crate::kill::{group_has_live_members, session_members, signal_group, signal_session};
use crate::output::{OutputBuffer, RawSnapshot};
use crate::pty::{self, PtySize};
use crate::render::TextScreen;
use crate::sandbox::SandboxGuard;
use crate::spawn::Spawned;

/// Identifies the content of a snapshot: bytes written so far, resizes, exit published.
pub type OutputVersion = (u64, u64, bool);

/// Code of a write to a terminal without input (neither a pty nor `stdin: 'pipe'`).
pub const ERR_NO_STDIN: &str = "ERR_NO_STDIN";
/// Code of a write to a terminal whose command exited.
pub const ERR_TERMINAL_EXITED: &str = "ERR_TERMINAL_EXITED";
/// Code of a write after `closeStdin()` on a pipe.
pub const ERR_STDIN_CLOSED: &str = "ERR_STDIN_CLOSED";
/// Code of a pty-only call (`resize`) on a pipe terminal.
pub const ERR_NOT_A_PTY: &str = "ERR_NOT_A_PTY";
/// Largest chunk handed to one `write` system call, so that one huge write does not hog the
/// runtime and other terminals' input interleaves fairly.
const WRITE_CHUNK: usize = 64 * 1024;
/// Raw bytes kept for `onOutput` replay in text mode (the text is what is retained there).
const TEXT_RAW_RETAIN: usize = 1 << 20;
/// How long a write that found its reader gone waits for the exit, to report
/// `ERR_TERMINAL_EXITED` rather than the bare errno when the command has exited.
const EXIT_AFTER_EPIPE: Duration = Duration::from_millis(250);
/// The byte a pty's line discipline takes as end-of-file by default (VEOF, ^D).
const VEOF: u8 = 0x04;

/// How long to keep waiting for EOF after the child exited (a background descendant may hold
/// the pipe open); what was written before the exit is read at once regardless.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(50);
/// Default grace between SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(2000);
/// Pipe capacity a terminal switches to once it floods (a read found the pipe full).
const FLOOD_PIPE_SIZE: i32 = 1 << 20;
/// A read smaller than this (the default pipe capacity) is taken to have drained the pipe.
const SMALL_READ: usize = 64 * 1024;
/// Size of the per-thread read buffer.
const READ_BUF_SIZE: usize = 1 << 20;
/// Reads per wake-up before yielding to other tasks.
const READS_PER_WAKE: usize = 16;
/// How often group membership is re-checked during a kill's grace period.
const GROUP_POLL: Duration = Duration::from_millis(10);

thread_local! {
    static READ_BUF: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_BUF_SIZE]);
}

/// Receives raw output as it arrives. Implementations must not block.
pub trait OutputSink: Send + Sync {
    /// A chunk of output, in order.
    fn push(&self, chunk: &[u8]);
    /// The stream ended (or the terminal was released); no more chunks follow.
    fn close(&self);
}

/// Options fixed at creation.
#[derive(Debug, Clone)]
pub struct TerminalConfig {
    /// Terminal id.
    pub id: String,
    /// Owning ACP session ("" if none).
    pub session_id: String,
    /// Bytes of output to retain (`None`: all).
    pub output_byte_limit: Option<usize>,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Kill the command when it still runs after this long.
    pub timeout: Option<Duration>,
    /// Text mode (pty only): lines of scrollback kept above the screen. `None`: raw output.
    pub text_scrollback: Option<usize>,
}

struct Inner {
    output: OutputBuffer,
    exit: Option<ExitStatus>,
    sinks: Vec<(u64, Arc<dyn OutputSink>)>,
    next_sink: u64,
    /// The reader task ended: no more output will arrive.
    closed: bool,
    /// Text mode: the emulated screen.
    screen: Option<TextScreen>,
    /// Text mode: the text was ever cut (by the limit or the scrollback).
    text_truncated: bool,
    /// Number of resizes (a resize changes the text).
    resizes: u64,
}

/// One queued input operation and who waits for it.
struct InputOp {
    kind: InputKind,
    reply: Option<tokio::sync::oneshot::Sender<Result<(), TermError>>>,
}

enum InputKind {
    Data(Vec<u8>),
    /// Close the stdin pipe (EOF for the command).
    Close,
}

enum InputState {
    /// stdin is /dev/null.
    None,
    Open(tokio::sync::mpsc::UnboundedSender<InputOp>),
    /// `closeStdin()` was called on a pipe, or the terminal was released.
    Closed,
}

/// A running (or finished) command. Shared by the handle and its reader task.
pub struct Terminal {
    config: TerminalConfig,
    pid: i32,
    inner: Mutex<Inner>,
    exit_tx: watch::Sender<Option<ExitStatus>>,
    released: AtomicBool,
    /// The handle is gone: stop reading once the exit is published.
    detached: AtomicBool,
    shutdown: Notify,
    kill_lock: tokio::sync::Mutex<()>,
    bytes_read: AtomicU64,
    /// The terminal's cgroup, where cgroups are available: holds even escaped descendants.
    cgroup: Option<Cgroup>,
    /// The cgroup capping its number of processes (`limits.processes`), where available.
    pids_cgroup: Option<PidsCgroup>,
    /// A sandboxed terminal's TMPDIR and PID-namespace init: dropped (removed, killed) at
    /// release or abandon.
    sandbox: Mutex<Option<SandboxGuard>>,
    /// The timeout fired (the kill that followed was ours).
    timed_out: AtomicBool,
    /// The guardian still lists this terminal.
    tracked: AtomicBool,
    /// Set once the reader task ended and closed the pipe and the pidfd.
    closed_tx: watch::Sender<bool>,
    /// Where input goes.
    input: Mutex<InputState>,
    /// On a pty: a duplicate of the master, for the window size.
    pty: Mutex<Option<OwnedFd>>,
    /// Completes (its sender is dropped) once the input task closed its descriptor.
    input_done: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    is_pty: bool,
}

impl Terminal {
    /// Starts the reader task for a spawned child (in `cgroup` if any). Must run inside a
    /// tokio runtime.
    pub fn start(
        spawned: Spawned,
        config: TerminalConfig,
        cgroup: Option<Cgroup>,
        pids_cgroup: Option<PidsCgroup>,
    ) -> Result<Arc<Self>, TermError> {
        let Spawned {
            pid,
            output,
            input,
            pty,
            sandbox,
        } = spawned;
        let io_err = |e: std::io::Error| {
            // The child runs but cannot be watched: do not leave it behind.
            if let Some(cg) = &cgroup {
                cg.kill_all();
            }
            signal_group(pid, Signal::SIGKILL);
            let _ = waitpid(Pid::from_raw(pid), None);
            TermError::from_io(&e, "watching the child")
        };
        let pipe = register_readable(output).map_err(io_err)?;
        let child = ChildWatch::new(pid).map_err(io_err)?;
        let input = match input {
            Some(fd) => Some(register_writable(fd).map_err(io_err)?),
            None => None,
        };
        let (exit_tx, _) = watch::channel(None);
        let is_pty = pty.is_some();
        let (pty_fd, size) = match pty {
            Some((fd, size)) => (Some(fd), size),
            None => (None, PtySize::default()),
        };
        let screen = match (config.text_scrollback, is_pty) {
            (Some(sb), true) => Some(TextScreen::new(size, sb)),
            _ => None,
        };
        let raw_limit = if screen.is_some() {
            Some(
                config
                    .output_byte_limit
                    .map_or(TEXT_RAW_RETAIN, |l| l.min(TEXT_RAW_RETAIN)),
            )
        } else {
            config.output_byte_limit
        };
        let mut input_done = None;
        let input_state = match input {
            Some(fd) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
                input_done = Some(done_rx);
                let exit_rx = exit_tx.subscribe();
                let id = config.id.clone();
                tokio::spawn(async move {
                    write_input(fd, rx, exit_rx, id).await;
                    drop(done_tx);
                });
                InputState::Open(tx)
            }
            None => InputState::None,
        };
        let term = Arc::new(Terminal {
            inner: Mutex::new(Inner {
                output: OutputBuffer::new(raw_limit),
                exit: None,
                sinks: Vec::new(),
                next_sink: 0,
                closed: false,
                screen,
                text_truncated: false,
                resizes: 0,
            }),
            input: Mutex::new(input_state),
            input_done: Mutex::new(input_done),
            pty: Mutex::new(pty_fd),
            is_pty,
            config,
            pid,
            exit_tx,
            released: AtomicBool::new(false),
            detached: AtomicBool::new(false),
            shutdown: Notify::new(),
            kill_lock: tokio::sync::Mutex::new(()),
            bytes_read: AtomicU64::new(0),
            cgroup,
            pids_cgroup,
            sandbox: Mutex::new(sandbox),
            timed_out: AtomicBool::new(false),
            tracked: AtomicBool::new(true),
            closed_tx: watch::channel(false).0,
        });
        guard::track(pid, term.cgroup.as_ref().map(|c| c.dir()));
        tokio::spawn(drive(term.clone(), pipe, child));
        Ok(term)
    }

    /// Terminal id.
    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// Owning session id.
    pub fn session_id(&self) -> &str {
        &self.config.session_id
    }

    /// Child pid (also its process group id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether `release()` was called.
    pub fn is_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }

    /// The published exit status, if the command exited and its output was collected.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exit_tx.borrow().clone()
    }

    /// Total bytes the command wrote so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fails with `ERR_TERMINAL_RELEASED` once `release()` was called. Callers check this when
    /// a call is made, before awaiting anything, so a call made before `release()` never fails
    /// because the release won the race.
    pub fn check_live(&self) -> Result<(), TermError> {
        if self.is_released() {
            return Err(TermError::released(self.id()));
        }
        Ok(())
    }

    /// The raw material of a snapshot, with the [`Terminal::output_version`] it belongs to.
    /// In text mode, the rendered text (the limit is applied when decoding, on a character
    /// boundary, as for raw output).
    pub fn raw_output(&self) -> (RawSnapshot, Option<ExitStatus>, OutputVersion) {
        let mut inner = self.lock();
        let exit = inner.exit.clone();
        let version = (inner.output.total_bytes(), inner.resizes, exit.is_some());
        let limit = self.config.output_byte_limit;
        if let Some(screen) = inner.screen.as_mut() {
            let text = screen.text();
            let cut = screen.lines_dropped() || limit.is_some_and(|l| text.len() > l);
            inner.text_truncated |= cut;
            let raw = RawSnapshot {
                bytes: text.into_bytes(),
                limit,
                truncated: inner.text_truncated,
            };
            return (raw, exit, version);
        }
        (inner.output.raw_snapshot(exit.is_some()), exit, version)
    }

    /// Changes whenever `current_output()` could return something else (bytes written,
    /// resizes, and whether the exit was published), so a caller can reuse its last snapshot.
    pub fn output_version(&self) -> OutputVersion {
        let inner = self.lock();
        (
            inner.output.total_bytes(),
            inner.resizes,
            inner.exit.is_some(),
        )
    }

    /// Whether the command runs on a pty.
    pub fn is_pty(&self) -> bool {
        self.is_pty
    }

    fn input_lock(&self) -> MutexGuard<'_, InputState> {
        self.input.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `data` as the command's input, in call order, and returns a future that resolves
    /// once every byte was written (or fails: the command exited or closed its input). Fails
    /// at once (nothing queued) after release, without input, after the exit, or after
    /// `close_stdin` on a pipe.
    pub fn write(
        &self,
        data: Vec<u8>,
    ) -> Result<impl std::future::Future<Output = Result<(), TermError>> + Send + 'static, TermError>
    {
        self.check_live()?;
        let rx = self.enqueue(InputKind::Data(data), true)?;
        Ok(async move {
            match rx {
                Some(rx) => rx.await.unwrap_or(Ok(())),
                None => Ok(()),
            }
        })
    }

    /// End of input: on a pipe, closes it after the queued writes (the command reads EOF;
    /// later writes fail with `ERR_STDIN_CLOSED`); on a pty, queues VEOF (^D), which ends
    /// input for a program reading in canonical mode at the start of a line (after a partial
    /// line, the first ^D only submits that line). A no-op once closed or exited.
    pub fn close_stdin(
        &self,
    ) -> Result<impl std::future::Future<Output = Result<(), TermError>> + Send + 'static, TermError>
    {
        self.check_live()?;
        let mut rx = None;
        {
            let mut st = self.input_lock();
            match &*st {
                InputState::None => return Err(self.no_stdin()),
                InputState::Closed => {}
                InputState::Open(tx) => {
                    if self.exit_status().is_none() || !self.is_pty {
                        let (rtx, rrx) = tokio::sync::oneshot::channel();
                        let kind = if self.is_pty {
                            InputKind::Data(vec![VEOF])
                        } else {
                            InputKind::Close
                        };
                        let _ = tx.send(InputOp {
                            kind,
                            reply: Some(rtx),
                        });
                        rx = Some(rrx);
                    }
                    if !self.is_pty {
                        *st = InputState::Closed;
                    }
                }
            }
        }
        Ok(async move {
            match rx {
                // Closing never fails; a ^D to a command that just exited does not matter.
                Some(rx) => {
                    let _ = rx.await;
                    Ok(())
                }
                None => Ok(()),
            }
        })
    }

    fn no_stdin(&self) -> TermError {
        TermError::new(
            ERR_NO_STDIN,
            format!(
                "terminal {} has no input: create it with options.pty or options.stdin 'pipe'",
                self.id()
            ),
        )
    }

    fn enqueue(
        &self,
        kind: InputKind,
        want_reply: bool,
    ) -> Result<Option<tokio::sync::oneshot::Receiver<Result<(), TermError>>>, TermError> {
        let st = self.input_lock();
        let tx = match &*st {
            InputState::None => return Err(self.no_stdin()),
            InputState::Closed => {
                return Err(TermError::new(
                    ERR_STDIN_CLOSED,
                    format!("terminal {}: stdin was closed by closeStdin()", self.id()),
                ))
            }
            InputState::Open(tx) => tx,
        };
        if self.exit_status().is_some() {
            return Err(exited_error(self.id()));
        }
        if matches!(&kind, InputKind::Data(d) if d.is_empty()) {
            return Ok(None);
        }
        let (reply, rx) = if want_reply {
            let (t, r) = tokio::sync::oneshot::channel();
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        tx.send(InputOp { kind, reply })
            .map_err(|_| exited_error(self.id()))?;
        Ok(rx)
    }

    /// Whether an answer to a terminal query should be sent now: only while the pty is in
    /// non-canonical mode without echo, as a program that reads the answer sets it. Otherwise
    /// (a program that queried and exited, a shell back in cooked mode) the answer would be
    /// echoed into the output or left as input for whatever reads next.
    fn awaits_replies(&self) -> bool {
        let fd = self.pty.lock().unwrap_or_else(|p| p.into_inner());
        let Some(fd) = fd.as_ref() else {
            return false;
        };
        // On a pty master, the termios calls act on the slave's settings.
        match nix::sys::termios::tcgetattr(fd) {
            Ok(t) => {
                use nix::sys::termios::LocalFlags;
                !t.local_flags
                    .intersects(LocalFlags::ICANON | LocalFlags::ECHO)
            }
            Err(_) => false,
        }
    }

    /// Resizes the pty (the kernel sends SIGWINCH to its foreground process group) and, in
    /// text mode, the emulated screen. `ERR_NOT_A_PTY` on a pipe terminal.
    pub fn resize(&self, size: PtySize) -> Result<(), TermError> {
        self.check_live()?;
        if !self.is_pty {
            return Err(TermError::new(
                ERR_NOT_A_PTY,
                format!(
                    "terminal {} is not a pty: resize needs options.pty at creation",
                    self.id()
                ),
            ));
        }
        // The screen first: what the program draws after its SIGWINCH uses the new size.
        {
            let mut inner = self.lock();
            if let Some(s) = inner.screen.as_mut() {
                s.resize(size);
            }
            inner.resizes += 1;
        }
        let fd = self.pty.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(fd) = fd.as_ref() {
            pty::set_size(fd, size).map_err(|e| TermError::from_io(&e, "resize"))?;
        }
        Ok(())
    }

    /// Resolves with the exit status once the command exited and its output was collected.
    pub async fn wait_for_exit(&self) -> ExitStatus {
        let mut rx = self.exit_tx.subscribe();
        let status = rx
            .wait_for(|s| s.is_some())
            .await
            .map(|s| s.clone())
            .ok()
            .flatten();
        // The sender lives as long as `self`, so the wait cannot fail.
        status.unwrap_or(ExitStatus {
            exit_code: None,
            signal: None,
        })
    }

    /// SIGTERM to the group, SIGKILL after the grace if anything still runs; resolves once the
    /// command exited. A no-op for an exited command whose group is empty.
    pub async fn kill(&self) {
        let _serial = self.kill_lock.lock().await;
        if self.exit_status().is_some() && !self.anything_alive() {
            return;
        }
        self.signal_all(Signal::SIGTERM);
        // A stopped process only acts on SIGTERM once continued.
        self.signal_all(Signal::SIGCONT);
        let deadline = Instant::now() + self.config.kill_grace;
        let mut rx = self.exit_tx.subscribe();
        let _ = tokio::time::timeout_at(deadline, rx.wait_for(|s| s.is_some())).await;
        if self.exit_status().is_some() {
            // The leader is gone; give descendants that trap SIGTERM the rest of the grace.
            while self.anything_alive() && Instant::now() < deadline {
                tokio::time::sleep(GROUP_POLL.min(deadline - Instant::now())).await;
            }
            if !self.anything_alive() {
                return;
            }
        }
        self.signal_all(Signal::SIGKILL);
        self.wait_for_exit().await;
    }

    /// True while any process of the terminal runs: in its cgroups, in its process group, or
    /// (pty) in its session.
    fn anything_alive(&self) -> bool {
        self.cgroup.as_ref().is_some_and(|c| c.populated())
            || self
                .pids_cgroup
                .as_ref()
                .is_some_and(|c| !c.pids().is_empty())
            || group_has_live_members(self.pid)
            || (self.is_pty && session_members(self.pid).next().is_some())
    }

    /// Whether `timeoutMs` expired and the terminal was killed for it.
    pub fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::Acquire)
    }

    /// Signals the process group, every process of the cgroup where there is one, and (pty)
    /// every process of the session.
    fn signal_all(&self, sig: Signal) {
        if let Some(pc) = &self.pids_cgroup {
            for pid in pc.pids() {
                // SAFETY: plain kill(2) of a process in this terminal's own cgroup.
                unsafe { libc::kill(pid, sig as i32) };
            }
        }
        if let Some(cg) = &self.cgroup {
            if sig == Signal::SIGKILL {
                cg.kill_all();
            } else {
                cg.signal_all(sig as i32);
            }
        }
        signal_group(self.pid, sig);
        if self.is_pty {
            // Jobs of a shell with job control have groups of their own in the session.
            signal_session(self.pid, sig);
        }
    }

    /// Tells the guardian the terminal's processes are gone (only once).
    fn untrack(&self) {
        if self.tracked.swap(false, Ordering::AcqRel) {
            guard::untrack(self.pid, self.cgroup.as_ref().map(|c| c.dir()));
        }
    }

    /// Marks the terminal released (every later call fails); returns false if it already was.
    /// Follow with [`Terminal::finish_release`].
    pub fn mark_released(&self) -> bool {
        !self.released.swap(true, Ordering::AcqRel)
    }

    /// Kills if running, waits for the exit, then frees the output and closes every fd.
    pub async fn finish_release(&self) {
        self.kill().await;
        self.wait_for_exit().await;
        self.drop_sandbox();
        self.untrack();
        self.shutdown.notify_one();
        // Close the input (its task ends once the queue is empty; the exit is published, so
        // nothing in it can block) and the pty control fd.
        *self.input_lock() = InputState::Closed;
        self.pty.lock().unwrap_or_else(|p| p.into_inner()).take();
        let done = self
            .input_done
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(done) = done {
            let _ = done.await;
        }
        // Resolve only once the descriptors are really closed.
        let _ = self.closed_tx.subscribe().wait_for(|closed| *closed).await;
        let sinks = {
            let mut inner = self.lock();
            inner.output = OutputBuffer::new(Some(0));
            std::mem::take(&mut inner.sinks)
        };
        for (_, s) in sinks {
            s.close();
        }
    }

    /// The handle was dropped without release (garbage collected, or its environment is
    /// going away): SIGKILL the group at once; the task reaps and closes everything.
    pub fn abandon(&self) {
        self.detached.store(true, Ordering::Release);
        if !self.is_released() {
            self.signal_all(Signal::SIGKILL);
        }
        // Node is going away: no background thread would finish the cleanup.
        if let Some(g) = self.take_sandbox() {
            g.finish_now();
        }
        self.shutdown.notify_one();
    }

    /// Ends the sandbox's PID namespace (its init, so every process left in it) and removes
    /// the private TMPDIR.
    fn drop_sandbox(&self) {
        drop(self.take_sandbox());
    }

    fn take_sandbox(&self) -> Option<SandboxGuard> {
        self.sandbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Subscribes to raw output from now on; with `replay`, the retained output is delivered
    /// first, with no gap or overlap with what follows. Returns a key for
    /// [`Terminal::unsubscribe`].
    pub fn subscribe(&self, sink: Arc<dyn OutputSink>, replay: bool) -> Result<u64, TermError> {
        self.check_live()?;
        let mut inner = self.lock();
        if replay {
            let retained = inner.output.raw_tail();
            if !retained.is_empty() {
                sink.push(retained);
            }
        }
        let key = inner.next_sink;
        inner.next_sink += 1;
        if inner.closed {
            drop(inner);
            sink.close();
        } else {
            inner.sinks.push((key, sink));
        }
        Ok(key)
    }

    /// Removes a subscriber; it receives no further chunks.
    pub fn unsubscribe(&self, key: u64) {
        let removed = {
            let mut inner = self.lock();
            let pos = inner.sinks.iter().position(|(k, _)| *k == key);
            pos.map(|i| inner.sinks.remove(i).1)
        };
        if let Some(s) = removed {
            s.close();
        }
    }

    fn append(&self, chunk: &[u8]) {
        self.bytes_read
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        let mut inner = self.lock();
        inner.output.write(chunk);
        let replies = match inner.screen.as_mut() {
            Some(s) => {
                s.feed(chunk);
                s.take_replies()
            }
            None => Vec::new(),
        };
        for (_, s) in &inner.sinks {
            s.push(chunk);
        }
        drop(inner);
        if !replies.is_empty() && self.awaits_replies() {
            // Answers to terminal queries go back as input; nobody waits for them.
            let _ = self.enqueue(InputKind::Data(replies), false);
        }
    }

    fn publish(&self, status: ExitStatus) {
        self.lock().exit = Some(status.clone());
        self.exit_tx.send_replace(Some(status));
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let sinks = std::mem::take(&mut self.lock().sinks);
        for (_, s) in sinks {
            s.close();
        }
    }
}

/// Registers an owned fd with the runtime's reactor for readability.
fn register_readable(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the `OwnedFd` is moved into the `AsyncFd`, so the descriptor stays open and
    // refers to the same file description for the `AsyncFd`'s whole lifetime.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(std::io::Error::from)
}

/// Registers an owned fd with the runtime's reactor for writability.
fn register_writable(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: as in `register_readable`.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::WRITABLE) }
        .map_err(std::io::Error::from)
}

fn exited_error(id: &str) -> TermError {
    TermError::new(
        ERR_TERMINAL_EXITED,
        format!("terminal {id}: the command exited, its input is gone"),
    )
}

/// The input task: performs queued operations in order until the queue's sender is gone.
async fn write_input(
    fd: AsyncFd<OwnedFd>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<InputOp>,
    mut exit_rx: watch::Receiver<Option<ExitStatus>>,
    id: String,
) {
    let mut fd = Some(fd);
    while let Some(op) = rx.recv().await {
        let result = match (op.kind, fd.as_ref()) {
            (InputKind::Close, _) => {
                fd = None;
                Ok(())
            }
            (InputKind::Data(_), None) => Err(TermError::new(
                ERR_STDIN_CLOSED,
                format!("terminal {id}: stdin was closed by closeStdin()"),
            )),
            (InputKind::Data(data), Some(f)) => write_all(f, &data, &mut exit_rx, &id).await,
        };
        if let Some(reply) = op.reply {
            let _ = reply.send(result);
        }
    }
}

/// Writes all of `data` in chunks, waiting for writability on EAGAIN; gives up when the exit
/// is published while blocked, or when the other side is gone (EPIPE, EIO).
async fn write_all(
    fd: &AsyncFd<OwnedFd>,
    data: &[u8],
    exit_rx: &mut watch::Receiver<Option<ExitStatus>>,
    id: &str,
) -> Result<(), TermError> {
    let mut off = 0;
    while off < data.len() {
        let end = (off + WRITE_CHUNK).min(data.len());
        match nix::unistd::write(fd.get_ref(), &data[off..end]) {
            Ok(n) => {
                off += n;
                if off < data.len() {
                    // Pace a large write: let other tasks (this terminal's reader first of
                    // all, which drains the echo) run between chunks.
                    tokio::task::yield_now().await;
                }
            }
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                tokio::select! {
                    ready = fd.writable() => match ready {
                        Ok(mut guard) => guard.clear_ready(),
                        Err(e) => return Err(TermError::from_io(&e, &format!("write to terminal {id}"))),
                    },
                    _ = exit_rx.wait_for(|s| s.is_some()) => return Err(exited_error(id)),
                }
            }
            Err(e @ (Errno::EPIPE | Errno::EIO)) => {
                // Usually the command just exited (the pty's slave or the pipe's read end
                // closed with it): report that, as a write after the exit would be.
                let exited =
                    tokio::time::timeout(EXIT_AFTER_EPIPE, exit_rx.wait_for(|s| s.is_some())).await;
                if matches!(exited, Ok(Ok(_))) {
                    return Err(exited_error(id));
                }
                return Err(TermError::new(
                    format!("{e:?}"),
                    format!(
                        "write to terminal {id}: nothing reads the command's input any more ({})",
                        e.desc()
                    ),
                ));
            }
            Err(e) => {
                return Err(TermError::from_io(
                    &std::io::Error::from(e),
                    &format!("write to terminal {id}"),
                ))
            }
        }
    }
    Ok(())
}

/// Watches the child for exit without signals or threads: a pidfd in the runtime's epoll.
enum ChildWatch {
    PidFd(AsyncFd<OwnedFd>),
    /// Kernels without pidfd_open (< 5.3): a blocking waitpid on a dedicated thread.
    Thread(tokio::sync::oneshot::Receiver<ExitStatus>),
}

impl ChildWatch {
    fn new(pid: i32) -> std::io::Result<Self> {
        // SAFETY: plain syscall; a non-negative result is a new fd we own (O_CLOEXEC).
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd >= 0 {
            let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
            return Ok(ChildWatch::PidFd(register_readable(fd)?));
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("acp-terminal-wait".into())
            .spawn(move || {
                let _ = tx.send(reap_blocking(pid));
            })?;
        Ok(ChildWatch::Thread(rx))
    }

    async fn wait(&mut self, pid: i32) -> ExitStatus {
        match self {
            ChildWatch::PidFd(fd) => loop {
                let Ok(mut guard) = fd.readable().await else {
                    return reap_blocking(pid);
                };
                match try_reap(pid) {
                    Some(status) => return status,
                    None => guard.clear_ready(),
                }
            },
            ChildWatch::Thread(rx) => rx.await.unwrap_or(ExitStatus {
                exit_code: None,
                signal: None,
            }),
        }
    }
}

/// Reaps `pid` if it exited. An unknown status (someone else reaped it) is reported as
/// neither code nor signal, never invented.
fn try_reap(pid: i32) -> Option<ExitStatus> {
    loop {
        match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return None,
            Ok(ws) => {
                if let Some(s) = ExitStatus::from_wait_status(ws) {
                    return Some(s);
                }
            }
            Err(Errno::EINTR) => continue,
            Err(_) => {
                return Some(ExitStatus {
                    exit_code: None,
                    signal: None,
                })
            }
        }
    }
}

fn reap_blocking(pid: i32) -> ExitStatus {
    loop {
        match waitpid(Pid::from_raw(pid), None) {
            Ok(ws) => {
                if let Some(s) = ExitStatus::from_wait_status(ws) {
                    return s;
                }
            }
            Err(Errno::EINTR) => continue,
            Err(_) => {
                return ExitStatus {
                    exit_code: None,
                    signal: None,
                }
            }
        }
    }
}

enum ReadOutcome {
    /// The pipe is empty for now.
    Drained,
    /// Budget used up; more may be waiting.
    More,
    /// All writers closed the pipe.
    Eof,
}

/// Reads up to `max_reads` times into the thread's buffer, appending to the terminal.
///
/// With `short_read_drains`, a small read (under [`SMALL_READ`]) is taken to have emptied the
/// pipe, which saves the extra read that would only answer EAGAIN: on a flood of small writes
/// (`head` writes 4 KiB at a time) a third of all read calls. After a large read, reading again
/// at once often finds the next large write already there, so the loop goes on. That is safe with tokio's readiness ticks (readiness that arrives after the
/// guard was taken is not cleared), but not once the writers hung up: the caller passes false
/// then, so EOF is read rather than assumed.
fn read_some(
    term: &Terminal,
    fd: &OwnedFd,
    max_reads: usize,
    grown: &mut bool,
    short_read_drains: bool,
) -> ReadOutcome {
    READ_BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        for _ in 0..max_reads {
            match nix::unistd::read(fd.as_fd(), &mut buf[..]) {
                Ok(0) => return ReadOutcome::Eof,
                Ok(n) => {
                    term.append(&buf[..n]);
                    if short_read_drains && n < SMALL_READ {
                        return ReadOutcome::Drained;
                    }
                    if !*grown && n >= 65536 {
                        // The pipe was full: this command floods. A larger pipe means fewer
                        // wake-ups for both sides (best effort; limits may refuse it).
                        *grown = true;
                        unsafe {
                            libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, FLOOD_PIPE_SIZE);
                        }
                    }
                }
                Err(Errno::EAGAIN) => return ReadOutcome::Drained,
                Err(Errno::EINTR) => continue,
                Err(_) => return ReadOutcome::Eof,
            }
        }
        ReadOutcome::More
    })
}

/// The terminal's single task: read output, notice the exit, drain, publish, clean up.
async fn drive(term: Arc<Terminal>, pipe: AsyncFd<OwnedFd>, mut child: ChildWatch) {
    let mut exit: Option<ExitStatus> = None;
    let mut published = false;
    let mut eof = false;
    let mut grown = false;
    let mut drain_deadline = Instant::now();
    let timeout_at = term.config.timeout.map(|t| Instant::now() + t);
    let mut timed_out = false;
    loop {
        if !published && eof {
            if let Some(st) = exit.clone() {
                term.publish(st);
                published = true;
            }
        }
        if published && (eof || term.detached.load(Ordering::Acquire)) {
            break;
        }
        tokio::select! {
            _ = term.shutdown.notified(), if published => break,
            _ = tokio::time::sleep_until(timeout_at.unwrap_or_else(Instant::now)),
                if timeout_at.is_some() && !timed_out && exit.is_none() => {
                // The command ran too long: kill it as kill() does, without blocking this loop.
                timed_out = true;
                term.timed_out.store(true, Ordering::Release);
                let t = term.clone();
                tokio::spawn(async move { t.kill().await });
            },
            ready = pipe.readable(), if !eof => match ready {
                Ok(mut guard) => match read_some(
                    &term,
                    guard.get_inner(),
                    READS_PER_WAKE,
                    &mut grown,
                    !guard.ready().is_read_closed(),
                ) {
                    ReadOutcome::Drained => guard.clear_ready(),
                    ReadOutcome::More => tokio::task::yield_now().await,
                    ReadOutcome::Eof => eof = true,
                },
                Err(_) => eof = true,
            },
            status = child.wait(term.pid), if exit.is_none() => {
                // Everything written before the exit is in the pipe now: take it at once.
                if !eof && matches!(read_some(&term, pipe.get_ref(), 64, &mut grown, false), ReadOutcome::Eof) {
                    eof = true;
                }
                exit = Some(status);
                drain_deadline = Instant::now() + DRAIN_AFTER_EXIT;
            },
            _ = tokio::time::sleep_until(drain_deadline), if exit.is_some() && !published => {
                // A descendant holds the pipe open: publish what the child wrote, keep reading.
                if !eof && matches!(read_some(&term, pipe.get_ref(), 64, &mut grown, false), ReadOutcome::Eof) {
                    eof = true;
                }
                if let Some(st) = exit.clone() {
                    term.publish(st);
                    published = true;
                }
            },
        }
    }
    let sinks = {
        let mut inner = term.lock();
        inner.closed = true;
        std::mem::take(&mut inner.sinks)
    };
    for (_, s) in sinks {
        s.close();
    }
    if term.detached.load(Ordering::Acquire) || !term.anything_alive() {
        // Nothing left for the guardian to kill (or abandon() already killed it all).
        term.untrack();
    }
    drop(pipe);
    drop(child);
    term.closed_tx.send_replace(true);
}
