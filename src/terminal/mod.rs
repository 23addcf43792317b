//! One running command: its state (retained output, exit status, subscribers), and the calls
//! made on it (snapshots, input, resize, kill, release).
//!
//! Who does what:
//! - [`pump`]: the task that reads output, reaps, drains and publishes the exit;
//! - [`input`]: the input queue and the task that writes it;
//! - [`crate::containment`]: every signal (kill, timeout, release, abandon);
//! - [`crate::reap`]: the exit watch.
//!
//! Invariants:
//! - One reader task and (with input) one writer task per terminal; no thread per terminal.
//! - The child is always reaped (no zombie of ours), and the pipe, the pty and the exit watch
//!   are closed when the terminal is released or dropped.
//! - In text mode the output also feeds a terminal emulator ([`crate::render`]), whose answers
//!   to terminal queries are written back as input while the pty is in raw mode (no ICANON, no
//!   ECHO: a program waiting for the answer), never echoed into the output.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{watch, Notify};

use crate::containment::{escalate, Containment, Target};
use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::output::OutputBuffer;
use crate::render::TextScreen;
use crate::sys::spawn::Started;

mod input;
mod pump;
mod retain;
use crate::sys::pty::{self, PtySize};
use input::Input;

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
/// Raw bytes kept for `onOutput` replay in text mode (the text is what is retained there).
const TEXT_RAW_RETAIN: usize = 1 << 20;
/// Default grace between SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(2000);
/// Most bytes held for listeners that subscribe before [`Terminal::release_hold`]; past it
/// the output pump stops reading (the command blocks on a full pipe) until the hold ends.
pub const HOLD_MAX: usize = 4 << 20;

/// Receives raw output as it arrives. Implementations must not block.
pub trait OutputSink: Send + Sync {
    /// A chunk of output, in order.
    fn push(&self, chunk: &[u8]);
    /// The stream ended (or the terminal was released); no more chunks follow.
    fn close(&self);
    /// Whether the consumer is so far behind that the output pump should stop reading (the
    /// command then blocks on a full pipe, as under `cmd | slow_consumer`) until the sink
    /// signals its waker. A sink that answers true must signal the waker once it caught up
    /// or was cancelled, or the pump waits for ever. Default: never.
    fn behind(&self) -> bool {
        false
    }
    /// Given once, when the sink is subscribed: what [`OutputSink::behind`] signals.
    fn set_waker(&self, _waker: Arc<Notify>) {}
}

/// A subscriber given at creation ([`TerminalConfig::first_sink`]).
#[derive(Clone)]
pub struct SharedSink(pub Arc<dyn OutputSink>);

impl std::fmt::Debug for SharedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSink")
    }
}

/// Options fixed at creation.
#[derive(Debug, Clone, Default)]
pub struct TerminalConfig {
    /// Terminal id (in a request, ignored: `start` assigns it).
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
    /// Subscribed before the output pump starts: it receives every byte, exactly once, in order.
    pub first_sink: Option<SharedSink>,
    /// Hold every byte from the first until [`Terminal::release_hold`]: a listener that
    /// subscribes before then receives the output from its first byte (not only from its
    /// subscription on). At most [`HOLD_MAX`] bytes are held; reading pauses past that.
    pub hold_first_output: bool,
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
    /// Every byte so far, while the first output is held (see `hold_first_output`).
    held: Option<Vec<u8>>,
}

/// A running (or finished) command. Shared by the handle and its reader task.
pub struct Terminal {
    config: TerminalConfig,
    /// The working directory the child got.
    cwd: std::path::PathBuf,
    inner: Mutex<Inner>,
    exit_tx: watch::Sender<Option<ExitStatus>>,
    released: AtomicBool,
    /// The handle is gone: stop reading once the exit is published.
    detached: AtomicBool,
    shutdown: Notify,
    kill_lock: tokio::sync::Mutex<()>,
    bytes_read: AtomicU64,
    /// Mirrors `Inner::resizes`, so `output_version` needs no lock.
    resize_count: AtomicU64,
    /// What its processes live in; the only way they are signalled.
    containment: Containment,
    /// The timeout fired (the kill that followed was ours).
    timed_out: AtomicBool,
    /// Set once the reader task ended and closed the pipe and the pidfd.
    closed_tx: watch::Sender<bool>,
    /// Where input goes.
    input: Input,
    /// On a pty: its control (Unix: a duplicate of the master), for the window size and modes.
    pty: Mutex<Option<pty::Control>>,
    is_pty: bool,
    /// The terminal modes saved by [`Terminal::save_pty_modes`].
    saved_modes: Mutex<Option<pty::Modes>>,
    /// True while the first output is held (the pump pauses when the hold is full).
    holding: watch::Sender<bool>,
    /// Signalled by a sink that caught up (see [`OutputSink::behind`]) and by `unsubscribe`:
    /// the pump, paused for a slow listener, looks again.
    caught_up: Arc<Notify>,
}

impl Terminal {
    /// The sandbox's network-proxy listener, once: the caller serves the proxy on it and owns
    /// it from then on (`None`: no `network: { allow }`, or already taken).
    pub fn take_network_listener(&self) -> Option<crate::sandbox::NetworkListener> {
        self.containment.take_network_listener()
    }

    /// The terminal of a started child in its containment, with its reader task (and input
    /// task) running; `cwd` is the working directory the child got. Must run inside a tokio
    /// runtime.
    pub fn new(
        started: Started,
        cwd: std::path::PathBuf,
        config: TerminalConfig,
        containment: Containment,
    ) -> Result<Arc<Self>, TermError> {
        let Started {
            child,
            output,
            input,
            pty,
            init_pid: _, // the sandbox's guard owns it (in the containment)
        } = started;
        // The child runs but might not be watched: an error leaves nothing behind (it is
        // killed and reaped).
        let mut child = Some(child);
        let io_err = |child: &mut Option<crate::sys::exit_watch::Child>, e: std::io::Error| {
            containment.kill_now();
            containment.untrack();
            if let Some(mut c) = child.take() {
                c.reap();
            }
            TermError::from_io(&e, "watching the child")
        };
        let pipe = match crate::sys::pipe::OutputReader::new(output) {
            Ok(p) => p,
            Err(e) => return Err(io_err(&mut child, e)),
        };
        let input = match input.map(crate::sys::pipe::InputWriter::new).transpose() {
            Ok(i) => i,
            Err(e) => return Err(io_err(&mut child, e)),
        };
        let child = match child.take().map(crate::reap::watch) {
            Some(Ok(w)) => w,
            Some(Err(e)) => return Err(io_err(&mut None, e)),
            None => unreachable!("the child is taken once"),
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
        let input = Input::start(input, is_pty, exit_tx.subscribe(), config.id.clone());
        let sinks: Vec<(u64, Arc<dyn OutputSink>)> =
            config.first_sink.iter().map(|s| (0, s.0.clone())).collect();
        let holding = config.hold_first_output;
        let caught_up = Arc::new(Notify::new());
        for (_, s) in &sinks {
            s.set_waker(caught_up.clone());
        }
        let term = Arc::new(Terminal {
            inner: Mutex::new(Inner {
                output: OutputBuffer::new(raw_limit),
                exit: None,
                next_sink: sinks.len() as u64,
                sinks,
                closed: false,
                screen,
                text_truncated: false,
                resizes: 0,
                held: holding.then(Vec::new),
            }),
            holding: watch::channel(holding).0,
            caught_up,
            input,
            pty: Mutex::new(pty_fd),
            is_pty,
            saved_modes: Mutex::new(None),
            config,
            cwd,
            exit_tx,
            released: AtomicBool::new(false),
            detached: AtomicBool::new(false),
            shutdown: Notify::new(),
            kill_lock: tokio::sync::Mutex::new(()),
            bytes_read: AtomicU64::new(0),
            resize_count: AtomicU64::new(0),
            containment,
            timed_out: AtomicBool::new(false),
            closed_tx: watch::channel(false).0,
        });
        tokio::spawn(pump::drive(term.clone(), pipe, child));
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

    /// The working directory the child got (the checked directory, symlinks resolved).
    pub fn cwd(&self) -> &std::path::Path {
        &self.cwd
    }

    /// Child pid (also its process group id).
    pub fn pid(&self) -> i32 {
        self.containment.pgid()
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

    /// Whether the command runs on a pty.
    pub fn is_pty(&self) -> bool {
        self.is_pty
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
        let rx = self
            .input
            .enqueue(data, true, self.exit_status().is_some())?;
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
        self.input.close(self.exit_status().is_some())
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
            self.resize_count.fetch_add(1, Ordering::Release);
        }
        let control = self.pty.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(control) = control.as_ref() {
            pty::set_size(control, size).map_err(|e| TermError::from_io(&e, "resize"))?;
        }
        Ok(())
    }

    /// The pty's foreground process group (`tcgetpgrp` on the master): the shell's own group
    /// while it waits at its prompt, a job's while that runs. `None` once the command exited
    /// or the terminal was released (its master is closed). `ERR_NOT_A_PTY` on a pipe terminal.
    pub fn foreground_process_group(&self) -> Result<Option<i32>, TermError> {
        if !self.is_pty {
            return Err(TermError::new(
                ERR_NOT_A_PTY,
                format!(
                    "terminal {} is not a pty: foregroundProcessGroup needs options.pty at creation",
                    self.id()
                ),
            ));
        }
        if self.exit_status().is_some() || self.is_released() {
            return Ok(None);
        }
        let control = self.pty.lock().unwrap_or_else(|p| p.into_inner());
        Ok(control.as_ref().and_then(pty::foreground_group))
    }

    /// Saves the pty's current terminal modes (termios: flags and control characters), which
    /// [`Terminal::restore_pty_modes`] puts back. `ERR_NOT_A_PTY` on a pipe terminal; an I/O
    /// error once the master is closed.
    pub fn save_pty_modes(&self) -> Result<(), TermError> {
        let modes = self.with_master("savePtyModes", pty::modes)?;
        *self.saved_modes.lock().unwrap_or_else(|p| p.into_inner()) = Some(modes);
        Ok(())
    }

    /// Puts back the modes [`Terminal::save_pty_modes`] saved, if a program changed them
    /// (`stty olcuc`, `stty intr undef`, raw mode left behind). True when they had changed.
    /// False when nothing was saved. `ERR_NOT_A_PTY` on a pipe terminal; an I/O error once
    /// the master is closed.
    pub fn restore_pty_modes(&self) -> Result<bool, TermError> {
        let Some(saved) = self
            .saved_modes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .cloned()
        else {
            return Ok(false);
        };
        self.with_master("restorePtyModes", |control| {
            pty::restore_modes(control, &saved)
        })
    }

    /// Runs `op` on the pty master; `ERR_NOT_A_PTY` on a pipe terminal.
    fn with_master<T>(
        &self,
        what: &str,
        op: impl FnOnce(&pty::Control) -> std::io::Result<T>,
    ) -> Result<T, TermError> {
        if !self.is_pty {
            return Err(TermError::new(
                ERR_NOT_A_PTY,
                format!(
                    "terminal {} is not a pty: {what} needs options.pty at creation",
                    self.id()
                ),
            ));
        }
        let control = self.pty.lock().unwrap_or_else(|p| p.into_inner());
        let control = control.as_ref().ok_or_else(|| {
            TermError::from_io(
                &std::io::Error::new(std::io::ErrorKind::NotConnected, "the pty is closed"),
                what,
            )
        })?;
        op(control).map_err(|e| TermError::from_io(&e, what))
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
        status.unwrap_or_else(ExitStatus::unknown)
    }

    /// Terminates the command through its containment's escalation (SIGTERM, SIGKILL after
    /// the grace if anything still runs); resolves once the command exited. A no-op for an
    /// exited command with nothing left running.
    pub async fn kill(&self) {
        let _serial = self.kill_lock.lock().await;
        if self.exit_status().is_some() && !self.containment.alive() {
            return;
        }
        let mut rx = self.exit_tx.subscribe();
        let leader_exit = async move {
            let _ = rx.wait_for(|s| s.is_some()).await;
        };
        escalate(&self.containment, self.config.kill_grace, leader_exit).await;
        self.wait_for_exit().await;
    }

    /// Whether `timeoutMs` expired and the terminal was killed for it.
    pub fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::Acquire)
    }

    /// Marks the terminal released (every later call fails); returns false if it already was.
    /// Follow with [`Terminal::finish_release`].
    pub fn mark_released(&self) -> bool {
        !self.released.swap(true, Ordering::AcqRel)
    }

    /// Kills if running, waits for the exit, then frees the output and closes every fd.
    pub async fn finish_release(&self) {
        self.release_hold();
        self.kill().await;
        self.wait_for_exit().await;
        self.containment.end_sandbox();
        self.containment.untrack();
        self.shutdown.notify_one();
        // Close the pty control fd and the input (its task ends once the queue is empty; the
        // exit is published, so nothing in it can block).
        self.pty.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.input.shut().await;
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
    /// going away): SIGKILL the group at once, close the pty's control descriptor and the input
    /// queue (its task then closes its descriptor); the output task reaps and closes the rest.
    /// Nothing waits for the drop: a terminal whose start finished as its environment went away
    /// is never dropped (napi keeps the settlement that holds it).
    pub fn abandon(&self) {
        self.release_hold();
        self.detached.store(true, Ordering::Release);
        if !self.is_released() {
            self.containment.kill_now();
        }
        self.pty.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.input.close_queue();
        self.shutdown.notify_one();
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

fn exited_error(id: &str) -> TermError {
    TermError::new(
        ERR_TERMINAL_EXITED,
        format!("terminal {id}: the command exited, its input is gone"),
    )
}

// sh lines and signals: Unix (Windows: __test__/windows/lifecycle.test.mjs).
#[cfg(all(test, unix))]
mod tests;
