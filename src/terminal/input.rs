//! The input queue: writes to a terminal's stdin pipe or pty, in call order.
//!
//! Invariants:
//! - Every operation is queued when the call is made, and a second task performs them one at a
//!   time, in order: nothing is reordered or lost.
//! - A write goes out in chunks of at most [`WRITE_CHUNK`] bytes, yielding between chunks (so
//!   one huge write does not hog the runtime and this terminal's reader drains the echo); on
//!   EAGAIN it waits for writability, never dropping bytes. It resolves once every byte is in
//!   the kernel.
//! - A write still blocked when the exit is published fails with `ERR_TERMINAL_EXITED`; one
//!   whose reader is gone (EPIPE, EIO) reports that as the exit when the exit follows soon.
//! - The descriptor is closed when the queue's sender is gone (release) or on `Close`.

use std::future::Future;
use std::io;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::{exited_error, ERR_NO_STDIN, ERR_STDIN_CLOSED};
use crate::error::TermError;
use crate::exit::ExitStatus;

/// Largest chunk handed to one `write` system call, so that one huge write does not hog the
/// runtime and other terminals' input interleaves fairly.
pub(super) const WRITE_CHUNK: usize = 64 * 1024;
/// How long a write that found its reader gone waits for the exit, to report
/// `ERR_TERMINAL_EXITED` rather than the bare errno when the command has exited.
const EXIT_AFTER_EPIPE: Duration = Duration::from_millis(250);
/// The byte a pty's line discipline takes as end-of-file by default (VEOF, ^D).
const VEOF: u8 = 0x04;

/// Who waits for an operation's result.
type Reply = oneshot::Sender<Result<(), TermError>>;

/// One queued input operation and who waits for it.
struct InputOp {
    kind: InputKind,
    reply: Option<Reply>,
}

enum InputKind {
    Data(Vec<u8>),
    /// Close the stdin pipe (EOF for the command).
    Close,
}

enum State {
    /// stdin is /dev/null.
    None,
    Open(mpsc::UnboundedSender<InputOp>),
    /// `closeStdin()` was called on a pipe, or the terminal was released.
    Closed,
}

/// A descriptor the input task writes to (a fake one in tests).
pub(super) trait InputFd: Send + Sync + 'static {
    /// One non-blocking `write` (`WouldBlock` when nothing can be taken now).
    fn write(&self, data: &[u8]) -> io::Result<usize>;
    /// Resolves once the descriptor may be writable again.
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
}

impl InputFd for crate::sys::pipe::InputWriter {
    fn write(&self, data: &[u8]) -> io::Result<usize> {
        self.try_write(data)
    }

    async fn writable(&self) -> io::Result<()> {
        crate::sys::pipe::InputWriter::writable(self).await
    }
}

/// A terminal's input side: the queue, and the task that performs it.
pub(super) struct Input {
    id: String,
    is_pty: bool,
    state: Mutex<State>,
    /// Completes (its sender is dropped) once the input task closed its descriptor.
    done: Mutex<Option<oneshot::Receiver<()>>>,
}

impl Input {
    /// Starts the input task for `fd` (`None`: stdin is /dev/null). Must run inside a tokio
    /// runtime.
    pub(super) fn start<F: InputFd>(
        fd: Option<F>,
        is_pty: bool,
        exit_rx: watch::Receiver<Option<ExitStatus>>,
        id: String,
    ) -> Self {
        let mut done = None;
        let state = match fd {
            Some(fd) => {
                let (tx, rx) = mpsc::unbounded_channel();
                let (done_tx, done_rx) = oneshot::channel::<()>();
                done = Some(done_rx);
                let task_id = id.clone();
                tokio::spawn(async move {
                    run(fd, rx, exit_rx, task_id).await;
                    drop(done_tx);
                });
                State::Open(tx)
            }
            None => State::None,
        };
        Self {
            id,
            is_pty,
            state: Mutex::new(state),
            done: Mutex::new(done),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn no_stdin(&self) -> TermError {
        TermError::new(
            ERR_NO_STDIN,
            format!(
                "terminal {} has no input: create it with options.pty or options.stdin 'pipe'",
                self.id
            ),
        )
    }

    /// Queues `data`; the receiver (with `want_reply`) gets the result. `exited`: the exit
    /// was published (nothing is queued then).
    pub(super) fn enqueue(
        &self,
        data: Vec<u8>,
        want_reply: bool,
        exited: bool,
    ) -> Result<Option<oneshot::Receiver<Result<(), TermError>>>, TermError> {
        let st = self.lock();
        let tx = match &*st {
            State::None => return Err(self.no_stdin()),
            State::Closed => {
                return Err(TermError::new(
                    ERR_STDIN_CLOSED,
                    format!("terminal {}: stdin was closed by closeStdin()", self.id),
                ))
            }
            State::Open(tx) => tx,
        };
        if exited {
            return Err(exited_error(&self.id));
        }
        if data.is_empty() {
            return Ok(None);
        }
        let (reply, rx) = if want_reply {
            let (t, r) = oneshot::channel();
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        tx.send(InputOp {
            kind: InputKind::Data(data),
            reply,
        })
        .map_err(|_| exited_error(&self.id))?;
        Ok(rx)
    }

    /// End of input: on a pipe, closes it after the queued writes; on a pty, queues VEOF. A
    /// no-op once closed, or (pty) once exited. The future resolves when it was done.
    pub(super) fn close(
        &self,
        exited: bool,
    ) -> Result<impl Future<Output = Result<(), TermError>> + Send + 'static, TermError> {
        let mut rx = None;
        {
            let mut st = self.lock();
            match &*st {
                State::None => return Err(self.no_stdin()),
                State::Closed => {}
                State::Open(tx) => {
                    if !exited || !self.is_pty {
                        let (rtx, rrx) = oneshot::channel();
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
                        *st = State::Closed;
                    }
                }
            }
        }
        Ok(async move {
            // Closing never fails; a ^D to a command that just exited does not matter.
            if let Some(rx) = rx {
                let _ = rx.await;
            }
            Ok(())
        })
    }

    /// Closes the queue without waiting (abandon): the task performs what is queued (the
    /// command is being killed, so no write blocks for long), then closes the descriptor.
    pub(super) fn close_queue(&self) {
        *self.lock() = State::Closed;
    }

    /// Closes the queue (release); resolves once the task has closed the descriptor. Nothing
    /// queued can block by then: the exit is published.
    pub(super) async fn shut(&self) {
        self.close_queue();
        let done = self.done.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(done) = done {
            let _ = done.await;
        }
    }
}

/// The input task: performs queued operations in order until the queue's sender is gone.
async fn run<F: InputFd>(
    fd: F,
    mut rx: mpsc::UnboundedReceiver<InputOp>,
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
async fn write_all<F: InputFd>(
    fd: &F,
    data: &[u8],
    exit_rx: &mut watch::Receiver<Option<ExitStatus>>,
    id: &str,
) -> Result<(), TermError> {
    let mut off = 0;
    while off < data.len() {
        let end = (off + WRITE_CHUNK).min(data.len());
        match fd.write(&data[off..end]) {
            Ok(n) => {
                off += n;
                if off < data.len() {
                    // Pace a large write: let other tasks (this terminal's reader first of
                    // all, which drains the echo) run between chunks.
                    tokio::task::yield_now().await;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                tokio::select! {
                    ready = fd.writable() => if let Err(e) = ready {
                        return Err(TermError::from_io(&e, &format!("write to terminal {id}")));
                    },
                    _ = exit_rx.wait_for(|s| s.is_some()) => return Err(exited_error(id)),
                }
            }
            Err(e) if crate::sys::pipe::reader_gone(&e) => {
                // Usually the command just exited (the pty's slave or the pipe's read end
                // closed with it): report that, as a write after the exit would be.
                let exited =
                    tokio::time::timeout(EXIT_AFTER_EPIPE, exit_rx.wait_for(|s| s.is_some())).await;
                if matches!(exited, Ok(Ok(_))) {
                    return Err(exited_error(id));
                }
                return Err(TermError::from_io(
                    &e,
                    &format!("write to terminal {id}: nothing reads the command's input any more"),
                ));
            }
            Err(e) => {
                return Err(TermError::from_io(&e, &format!("write to terminal {id}")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
