//! The napi binding: converts JS values to core requests and core results and errors (with
//! `code`) back to JS. No process logic lives here: one create is one call to
//! [`crate::start::start`].
//!
//! | file | job |
//! |---|---|
//! | `args.rs` | reading JS values, errors naming the field |
//! | `options.rs` | the option structs (the schema of index.d.ts) and their conversion |
//! | `errors.rs` | core errors to JS errors, promises settled on the JS thread |
//! | `env.rs` | `process.env`, the per-environment registry |
//! | `handle.rs` | `TerminalHandle` |
//! | `sink.rs` | `onOutput` streaming |
//! | `display.rs` | `sanitizeForDisplay`, `DisplayFilter` (output safe for a real terminal) |
//! | `strings.rs` | output strings (large ASCII output handed to V8 without a copy) |
//! | `render.rs` | `renderTerminalOutput[Async]` |
//! | `process.rs` | `containmentInfo`, `resolveProgram`, `envDefaults`, `cwdInRoots`, keys, session trees, process groups |
//! | `sandbox.rs` | `SandboxConfig` (a sandbox configured once, its roots pinned) |
//! | `shell.rs` | `analyseShellLine`, `analyseShellArgv`, `shellProgramGrammar` (the command policy's shell analysis) |

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

mod args;
mod display;
mod env;
mod errors;
mod handle;
mod options;
mod process;
mod render;
mod sandbox;
mod shell;
mod sink;
mod strings;

use std::sync::Arc;

use crate::error::TermError;
use crate::terminal::{SharedSink, Terminal};
use env::{env_state, js_process_env};
use errors::{rejected, settle};
pub use handle::TerminalHandle;

/// Starts a command and resolves with its handle once it runs (spawn failures reject).
///
/// With no `args`, `command` is a shell line run by `/bin/sh -c`; with `args`, `command` is
/// executed directly. By default stdin is /dev/null and stdout and stderr form one stream in
/// write order; `options.stdin: 'pipe'` gives it an input pipe, `options.pty` a pseudo-terminal
/// (and `options.output: 'text'` the rendered screen as output).
/// Rejects with `code` `ENOENT`, `EACCES`, `ERR_INVALID_CWD` or `ERR_INVALID_ARG` and a
/// message naming the field; nothing is spawned for a rejected request.
#[napi(
    ts_args_type = "params: CreateTerminalParams, options?: CreateTerminalOptions | null",
    ts_return_type = "Promise<TerminalHandle>"
)]
pub fn create_terminal<'env>(
    env: &'env Env,
    params: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, TerminalHandle>> {
    let state = env_state(env)?;
    let registry = state.registry.clone();
    // Only what must run on the JS thread happens here: reading the arguments, the cwd and
    // the environment (where `process.env` writes happen). Validation of the paths, PATH
    // resolution and the spawn run on the runtime, so a burst of creates never blocks JS.
    let captured = options::request(&params, options.as_ref()).and_then(|p| {
        let cwd = std::env::current_dir().map_err(|e| {
            TermError::invalid_cwd(format!("the Node process's cwd is unusable: {e}"))
        })?;
        let inherited = if !p.spawn.inherit_env {
            Vec::new()
        } else if state.main_thread {
            std::env::vars_os().collect()
        } else {
            js_process_env(env)?
        };
        Ok((p, inherited, cwd))
    });
    let (mut req, inherited, cwd) = match captured {
        Ok(v) => v,
        Err(e) => return rejected(env, e),
    };
    // options.onOutput: subscribed before the output pump starts, so it gets every byte.
    let listeners = sink::Listeners::default();
    match options::on_output_listener(options.as_ref()) {
        Ok(Some(listener)) => {
            let sink = sink::JsSink::new(env, &listener, None)?;
            listeners.add(sink.clone());
            req.terminal.first_sink = Some(SharedSink(Arc::new(sink)));
        }
        Ok(None) => {}
        Err(e) => return rejected(env, e),
    }
    // Listeners attached in the tick that receives the handle (right after `await`, or in a
    // callback run synchronously then, such as TerminalHost's onCreate) get the output from its
    // first byte: the first output is held until that tick ends.
    req.terminal.hold_first_output = true;
    let reg = registry.clone();
    settle(
        env,
        async move {
            let term = crate::start::start(&req, inherited, &cwd)?;
            if !reg.insert(&term) {
                return Err(TermError::new(
                    "ERR_HOST_CLOSED",
                    "the Node environment that asked for this terminal went away while it started",
                ));
            }
            Ok(term)
        },
        move |env, term| {
            release_hold_after_this_tick(env, &term)?;
            Ok(TerminalHandle {
                term,
                registry,
                cache: Default::default(),
                listeners,
            })
        },
    )
}

/// Ends the hold of the terminal's first output with `setImmediate`: after the callbacks and
/// promise reactions of the current tick (the caller's code that resumes with the handle), so
/// every listener attached by then got the whole stream.
fn release_hold_after_this_tick(env: &Env, term: &Arc<Terminal>) -> Result<()> {
    let t = term.clone();
    let release =
        env.create_function_from_closure::<(), (), _>("acpTerminalReleaseHold", move |_| {
            t.release_hold();
            Ok(())
        })?;
    let set_immediate: Function<Function<(), ()>, Unknown> =
        env.get_global()?.get_named_property("setImmediate")?;
    if let Err(e) = set_immediate.call(release) {
        // No event loop to come back to: hold nothing.
        term.release_hold();
        return Err(e);
    }
    Ok(())
}
