//! `TerminalHandle`: the JS object of one terminal. Each method converts its arguments, calls
//! the core [`Terminal`], and converts the result or the error (with `code`).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::UnknownReturnValue;
use napi::{Env, Property, PropertyAttributes};
use napi_derive::napi;

use super::args::*;
use super::errors::{js_error, rejected, settle};
use super::sink::{JsSink, Listeners, OutputChunkInfo};
use super::strings::output_string;
use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::keys;
use crate::output::display::DisplayOptions;
use crate::registry::Registry;
use crate::sys::pty::PtySize;
use crate::terminal::{OutputVersion, Terminal};

/// How the command ended (ACP `TerminalExitStatus`).
#[napi(object, use_nullable = true)]
pub struct TerminalExitStatus {
    /// Exit code; `null` when a signal ended the process.
    pub exit_code: Option<u32>,
    /// POSIX signal name (`"SIGTERM"`, `"SIGKILL"`); `null` on a normal exit.
    pub signal: Option<String>,
}

/// Output so far (ACP `TerminalOutputResponse`).
#[napi(object)]
#[allow(dead_code)] // the type of `currentOutput()`; built field by field there, to reuse the cached string
pub struct TerminalOutputResponse {
    /// Retained output, valid UTF-8, at most `outputByteLimit` bytes.
    pub output: String,
    /// True once any byte was dropped to respect the limit (never goes back to false).
    pub truncated: bool,
    /// Present only once the command exited and all its output was collected.
    pub exit_status: Option<TerminalExitStatus>,
}

/// Options of `onOutput()`.
#[napi(object)]
pub struct OnOutputOptions {
    /// Deliver the output retained so far first (default `false`: only what arrives from now).
    pub replay: Option<bool>,
    /// `'safe'`: the listener gets the output filtered for a real terminal, as
    /// `sanitizeForDisplay()` filters it (text, colours and cursor movement; no clipboard,
    /// title, query or other sequence that acts on the user's terminal), across chunk
    /// boundaries. `'raw'` (default): the bytes as the command wrote them.
    #[napi(ts_type = "'raw' | 'safe' | null")]
    pub display: Option<String>,
    /// With `display: 'safe'`, keep window title changes (OSC 0, 1, 2; default false).
    pub allow_title: Option<bool>,
}

/// Empty response of `kill()` and `release()` (ACP `KillTerminalResponse`).
#[napi(object)]
pub struct TerminalEmptyResponse {}

impl From<ExitStatus> for TerminalExitStatus {
    fn from(s: ExitStatus) -> Self {
        Self {
            exit_code: s.exit_code,
            signal: s.signal,
        }
    }
}

/// A running command: its retained output, exit status, kill and release. Same promise shape
/// as the ACP SDK's `TerminalHandle`, usable with `await using`.
#[napi]
pub struct TerminalHandle {
    pub(super) term: Arc<Terminal>,
    pub(super) registry: Arc<Registry>,
    /// What the last `currentOutput()` returned. The string itself is kept on the JS object
    /// (a hidden property), so it is collected with the handle; polling agents get the same
    /// string again while nothing changed instead of a fresh decode of up to the whole limit.
    pub(super) cache: std::cell::RefCell<Option<OutputCache>>,
    /// Its `onOutput` listeners: flushed before the exit is reported (see [`super::sink`]).
    pub(super) listeners: Listeners,
}

pub(super) struct OutputCache {
    version: OutputVersion,
    truncated: bool,
    exit: Option<ExitStatus>,
}

/// Hidden (non-enumerable) property of a handle holding its last output string.
const OUTPUT_CACHE_KEY: &str = "__acpTerminalLastOutput";

#[napi]
impl TerminalHandle {
    /// Unique terminal id (ACP `terminalId`).
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.term.id().to_string()
    }

    /// Session id from the request (`""` if absent).
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.term.session_id().to_string()
    }

    /// The working directory the command got: the directory checked at creation (the request's
    /// `cwd`, or the Node process's), as an absolute path with symlinks resolved. The command
    /// was started in that very directory even if its path was changed after the check.
    #[napi(getter)]
    pub fn cwd(&self) -> String {
        self.term.cwd().to_string_lossy().into_owned()
    }

    /// With `sandbox.network: { allow }`: the listening socket of the sandbox's network
    /// namespace (127.0.0.1:3128 there), as a descriptor number the caller now owns, for the
    /// host's allow-list proxy (the package's `createTerminal` takes it and serves the proxy);
    /// null otherwise or once taken. Untaken, it is closed at release.
    #[napi]
    pub fn take_network_listener(&self) -> Option<i32> {
        self.term.take_network_listener().map(|l| l.into_raw_fd())
    }

    /// Pid of the child; it leads its own process group with the same id.
    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.term.pid() as u32
    }

    /// True when `timeoutMs` expired and the command was killed for it.
    #[napi(getter)]
    pub fn timed_out(&self) -> bool {
        self.term.timed_out()
    }

    /// Total bytes the command has written so far (retained or not).
    #[napi(getter)]
    pub fn output_bytes(&self) -> f64 {
        self.term.bytes_written() as f64
    }

    /// The retained output so far; `exitStatus` appears once the command exited and all its
    /// output was collected. Rejects with `ERR_TERMINAL_RELEASED` after release.
    #[napi(ts_return_type = "Promise<TerminalOutputResponse>")]
    pub fn current_output<'env>(
        &self,
        env: &'env Env,
        mut this: This<'env>,
    ) -> Result<PromiseRaw<'env, Object<'env>>> {
        if let Err(e) = self.term.check_live() {
            return rejected(env, e);
        }
        let mut cache = self.cache.borrow_mut();
        let version = self.term.output_version();
        let hit = cache.as_ref().filter(|c| c.version == version);
        let (output, truncated, exit) = match hit {
            Some(c) => (
                this.get_named_property::<Unknown>(OUTPUT_CACHE_KEY)?,
                c.truncated,
                c.exit.clone(),
            ),
            None => {
                let (raw, exit, version) = self.term.raw_output();
                let (snap, ascii) = raw.decode_ascii();
                let truncated = snap.truncated;
                let output = output_string(env, snap.output, ascii)?;
                this.define_properties(&[Property::new()
                    .with_utf8_name(OUTPUT_CACHE_KEY)?
                    .with_value(&output)
                    .with_property_attributes(
                        PropertyAttributes::Writable | PropertyAttributes::Configurable,
                    )])?;
                *cache = Some(OutputCache {
                    version,
                    truncated,
                    exit: exit.clone(),
                });
                (output, truncated, exit)
            }
        };
        drop(cache);
        if exit.is_some() {
            // The status is about to show: every listener gets its last bytes first (the
            // output pump handed them every byte before it published the exit).
            self.listeners.flush(env);
        }
        let mut obj = Object::new(env)?;
        obj.set_named_property("output", output)?;
        obj.set_named_property("truncated", truncated)?;
        if let Some(st) = exit {
            obj.set_named_property("exitStatus", TerminalExitStatus::from(st))?;
        }
        PromiseRaw::resolve(env, obj)
    }

    /// Resolves with the exit status once the command exited, every byte it wrote is in
    /// `currentOutput()`, and every `onOutput` listener received its last byte. Any number of
    /// concurrent waiters.
    #[napi(ts_return_type = "Promise<TerminalExitStatus>")]
    pub fn wait_for_exit<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, TerminalExitStatus>> {
        if self.term.is_released() {
            return rejected(env, TermError::released(self.term.id()));
        }
        let term = self.term.clone();
        let listeners = self.listeners.clone();
        // Settled on the JS thread, even when the exit is known already: the listeners'
        // pending bytes are delivered there first, then the promise resolves.
        settle(
            env,
            async move { Ok(term.wait_for_exit().await) },
            move |env, st| {
                listeners.flush(env);
                Ok(st.into())
            },
        )
    }

    /// Terminates the whole process group: SIGTERM, then SIGKILL after `killGraceMs` if
    /// anything still runs. Resolves once the command exited; the handle stays valid.
    /// Killing an exited terminal is a successful no-op.
    #[napi(ts_return_type = "Promise<TerminalEmptyResponse>")]
    pub fn kill<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, TerminalEmptyResponse>> {
        if let Err(e) = self.term.check_live() {
            return rejected(env, e);
        }
        let term = self.term.clone();
        settle(
            env,
            async move {
                term.kill().await;
                Ok(())
            },
            |_env, ()| Ok(TerminalEmptyResponse {}),
        )
    }

    /// Kills the command if it runs, then frees its output and descriptors. Every other
    /// method rejects with `ERR_TERMINAL_RELEASED` afterwards; a second release resolves.
    #[napi(ts_return_type = "Promise<TerminalEmptyResponse>")]
    pub fn release<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, TerminalEmptyResponse>> {
        settle(env, self.release_future(), |_env, ()| {
            Ok(TerminalEmptyResponse {})
        })
    }

    /// Releases the terminal: `await using t = await createTerminal(...)`.
    #[napi(well_known_symbol = "asyncDispose", ts_return_type = "Promise<void>")]
    pub fn async_dispose<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        settle(env, self.release_future(), |_env, ()| Ok(()))
    }

    /// Calls `listener` with raw output bytes as they arrive, in order, from now on. Chunks
    /// are coalesced while JS is busy, at most 256 KiB a call, and the event loop turns
    /// between two calls. A listener that falls 2 MiB behind holds the command back (reading
    /// pauses, the command blocks on a full pipe, as under `cmd | slow_consumer`) until it
    /// caught up: it loses nothing. With `{ replay: true }` the output retained so far comes
    /// first (so a listener attached right after `createTerminal` sees everything within the
    /// limit); of a replay larger than 8 MiB (the high-water mark) the oldest bytes are
    /// dropped, and the next call's `info.dropped` says how many (0 normally);
    /// `currentOutput()` is never affected. With `{ display: 'safe' }`
    /// the listener gets what is safe to write to a real terminal (see `sanitizeForDisplay`;
    /// `info.dropped` then counts filtered bytes).
    /// Returns a function that unsubscribes. Throws `ERR_TERMINAL_RELEASED` after release.
    #[napi(
        ts_args_type = "listener: (chunk: Buffer, info: OutputChunkInfo) => void, options?: OnOutputOptions | null",
        ts_return_type = "() => void"
    )]
    pub fn on_output<'env>(
        &self,
        env: &'env Env,
        listener: Function<'env, FnArgs<(Buffer, OutputChunkInfo)>, UnknownReturnValue>,
        options: Option<OnOutputOptions>,
    ) -> Result<Function<'env, (), ()>> {
        let replay = options.as_ref().and_then(|o| o.replay).unwrap_or(false);
        let safe = options.as_ref().and_then(|o| o.display.as_deref());
        let display = match super::display::display_mode(safe) {
            Ok(true) => Some(DisplayOptions {
                allow_title: options.as_ref().and_then(|o| o.allow_title) == Some(true),
            }),
            Ok(false) => None,
            Err(e) => return Err(js_error(env, e)),
        };
        let sink = JsSink::new(env, &listener, display)?;
        let key = match self.term.subscribe(Arc::new(sink.clone()), replay) {
            Ok(k) => k,
            Err(e) => return Err(js_error(env, e)),
        };
        self.listeners.add(sink.clone());
        let term = self.term.clone();
        env.create_function_from_closure::<(), (), _>("unsubscribe", move |_| {
            sink.cancel();
            term.unsubscribe(key);
            Ok(())
        })
    }

    /// True when the command runs on a pseudo-terminal (`options.pty`).
    #[napi(getter)]
    pub fn is_pty(&self) -> bool {
        self.term.is_pty()
    }

    /// Sends `data` (a string, as UTF-8, or bytes) to the command's input: the pty, or the
    /// stdin pipe of `stdin: 'pipe'`. Writes are queued in call order and never lost or
    /// reordered; a large write is paced (it waits while the command does not read). Resolves
    /// once every byte was handed to the kernel. Rejects with `ERR_NO_STDIN` (no input),
    /// `ERR_STDIN_CLOSED` (after `closeStdin()` on a pipe), `ERR_TERMINAL_EXITED` (the command
    /// exited, also for a write still waiting then), `EPIPE`/`EIO` (nothing reads the input
    /// any more), `ERR_INVALID_ARG` (not a string or bytes), `ERR_TERMINAL_RELEASED`.
    /// On a pty in canonical (line) mode the kernel keeps at most 4095 bytes of one
    /// unfinished line; longer lines need the program to use raw mode.
    #[napi(
        ts_args_type = "data: string | Uint8Array",
        ts_return_type = "Promise<void>"
    )]
    pub fn write<'env>(&self, env: &'env Env, data: Unknown<'env>) -> Result<PromiseRaw<'env, ()>> {
        let bytes = match input_bytes(&data) {
            Ok(b) => b,
            Err(e) => return rejected(env, e),
        };
        match self.term.write(bytes) {
            Ok(fut) => settle(env, fut, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }

    /// Sends keys by their tmux names (`'C-c'`, `'Enter'`, `'Up'`, `'M-x'`, `'S-F6'`,
    /// `'PageUp'`, a single character such as `'q'`), as the bytes an xterm sends for them,
    /// in one write queued like `write()`. A name that is not a key (a word of text, `'F13'`)
    /// rejects with `ERR_INVALID_ARG` naming it, and nothing is sent: use `write()` for text.
    #[napi(ts_args_type = "keys: string[]", ts_return_type = "Promise<void>")]
    pub fn send_keys<'env>(
        &self,
        env: &'env Env,
        keys: Unknown<'env>,
    ) -> Result<PromiseRaw<'env, ()>> {
        let parsed = (|| -> Parsed<Vec<u8>> {
            if !keys.is_array().map_err(internal)? {
                return Err(TermError::invalid_arg(format!(
                    "keys must be an array of key names, got {}",
                    describe(&keys)
                )));
            }
            let items = Vec::<Unknown>::from_unknown(keys).map_err(internal)?;
            let mut names = Vec::with_capacity(items.len());
            for (i, k) in items.iter().enumerate() {
                names.push(as_string(k, &format!("keys[{i}]"))?);
            }
            keys::encode_all(&names)
        })();
        let bytes = match parsed {
            Ok(b) => b,
            Err(e) => return rejected(env, e),
        };
        match self.term.write(bytes) {
            Ok(fut) => settle(env, fut, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }

    /// Ends the input: on a `stdin: 'pipe'` terminal, closes the pipe once the queued writes
    /// are done (the command reads EOF; later writes reject with `ERR_STDIN_CLOSED`); on a
    /// pty, sends VEOF (^D), which a program reading in canonical mode takes as EOF at the
    /// start of a line (after a partial line, a first ^D only submits that line).
    /// Resolves as a no-op when already closed or exited. Rejects with `ERR_NO_STDIN` or
    /// `ERR_TERMINAL_RELEASED`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close_stdin<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        match self.term.close_stdin() {
            Ok(fut) => settle(env, fut, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }

    /// The pty's foreground process group (`tcgetpgrp` on the master): the shell's own
    /// process group while it waits at its prompt, a job's group while that runs. `null` once
    /// the command exited or the terminal was released (its master is closed). Throws
    /// `ERR_NOT_A_PTY` on a pipe terminal.
    #[napi]
    pub fn foreground_process_group(&self, env: &Env) -> Result<Option<u32>> {
        self.term
            .foreground_process_group()
            .map(|g| g.map(|g| g as u32))
            .map_err(|e| js_error(env, e))
    }

    /// Saves the pty's current terminal modes (termios flags and control characters) for
    /// `restorePtyModes()`. Throws `ERR_NOT_A_PTY` on a pipe terminal, an I/O error once the
    /// terminal was released.
    #[napi]
    pub fn save_pty_modes(&self, env: &Env) -> Result<()> {
        self.term.save_pty_modes().map_err(|e| js_error(env, e))
    }

    /// Puts back the modes `savePtyModes()` saved if a program changed them (`stty olcuc`,
    /// `stty intr undef`, a raw mode left behind); true when they had changed, false when they
    /// had not or nothing was saved. Throws `ERR_NOT_A_PTY` on a pipe terminal, an I/O error
    /// once the terminal was released.
    #[napi]
    pub fn restore_pty_modes(&self, env: &Env) -> Result<bool> {
        self.term.restore_pty_modes().map_err(|e| js_error(env, e))
    }

    /// Changes the pty's size (the command gets SIGWINCH; text mode re-renders at the new
    /// size). `cols` and `rows` are integers from 1 to 65535. Rejects with `ERR_NOT_A_PTY` on
    /// a pipe terminal, `ERR_INVALID_ARG` naming `cols` or `rows`, `ERR_TERMINAL_RELEASED`.
    #[napi(
        ts_args_type = "cols: number, rows: number",
        ts_return_type = "Promise<void>"
    )]
    pub fn resize<'env>(
        &self,
        env: &'env Env,
        cols: Unknown<'env>,
        rows: Unknown<'env>,
    ) -> Result<PromiseRaw<'env, ()>> {
        let size = dimension(&cols, "cols").and_then(|cols| {
            Ok(PtySize {
                cols,
                rows: dimension(&rows, "rows")?,
            })
        });
        match size.and_then(|s| self.term.resize(s)) {
            Ok(()) => settle(env, async { Ok(()) }, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }
}

impl TerminalHandle {
    /// Marks the terminal released now (so later calls fail at once) and returns the rest of
    /// the release to run on the runtime.
    fn release_future(
        &self,
    ) -> impl std::future::Future<Output = std::result::Result<(), TermError>> + Send + 'static
    {
        let first = self.term.mark_released();
        let term = self.term.clone();
        let registry = self.registry.clone();
        async move {
            if first {
                term.finish_release().await;
                registry.remove(term.id());
            } else {
                // A release already under way: resolve once the command is gone, like it.
                term.wait_for_exit().await;
            }
            Ok(())
        }
    }
}

impl Drop for TerminalHandle {
    fn drop(&mut self) {
        // Collected without release: the command must not outlive its handle.
        if !self.term.is_released() {
            self.term.abandon();
        }
        self.registry.remove(self.term.id());
    }
}
