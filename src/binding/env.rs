//! The Node environment a call comes from: its `process.env`, and its registry of terminals
//! (killed when the environment goes away: worker termination, natural exit, `process.exit()`).

use std::ffi::OsString;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::{Env, ValueType};

use super::args::Parsed;
use crate::registry::Registry;

/// The environment as this JS thread sees it: `process.env` (a worker's own copy in a worker,
/// and in test sandboxes such as jest's), exactly what `child_process` would pass on.
pub(super) fn js_process_env(env: &Env) -> Parsed<Vec<(OsString, OsString)>> {
    let read = || -> Result<Vec<(OsString, OsString)>> {
        let process: Object = env.get_global()?.get_named_property("process")?;
        let penv: Object = process.get_named_property("env")?;
        let keys = Object::keys(&penv)?;
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let v: Unknown = penv.get_named_property(&k)?;
            if v.get_type()? == ValueType::String {
                let v = String::from_unknown(v)?;
                if !k.contains('\0') && !v.contains('\0') && !k.is_empty() && !k.contains('=') {
                    out.push((k.into(), v.into()));
                }
            }
        }
        Ok(out)
    };
    // Without a usable `process.env` (an embedder), fall back to the C environment.
    Ok(read().unwrap_or_else(|_| std::env::vars_os().collect()))
}

/// Per-environment state: the registry of its terminals (every terminal of this environment
/// dies with it, and only those).
pub(super) struct EnvState {
    pub(super) registry: Arc<Registry>,
    /// The main thread's `process.env` is the C environment itself (reading that is ~10x
    /// cheaper than walking the object); a worker's is a private copy that must be walked.
    pub(super) main_thread: bool,
}

pub(super) fn env_state(env: &Env) -> Result<&'static EnvState> {
    if let Some(state) = env.get_instance_data::<EnvState>()? {
        return Ok(state);
    }
    let registry = Registry::new();
    let main_thread: bool = env
        .run_script(
            "(function () { try { var g = typeof process === 'object' && process.getBuiltinModule; \
             return g ? g('node:worker_threads').isMainThread === true : false; } \
             catch (e) { return false; } })()",
        )
        .unwrap_or(false);
    env.set_instance_data(
        EnvState {
            registry: registry.clone(),
            main_thread,
        },
        0,
        |_ctx| {},
    )?;
    // Worker termination and natural exit run environment cleanup hooks …
    env.add_env_cleanup_hook(registry.clone(), |r| {
        r.abandon_all();
    })?;
    // … but `process.exit()` and a fatal exception only emit 'exit' on `process`.
    let on_exit = registry.clone();
    let kill_all =
        env.create_function_from_closure::<(), (), _>("acpTerminalKillAll", move |_| {
            on_exit.abandon_all();
            Ok(())
        })?;
    let install: Function<Function<(), ()>, ()> = env.run_script(
        "(function (f) { if (typeof process === 'object' && process && typeof process.on === 'function') process.on('exit', f); })",
    )?;
    install.call(kill_all)?;
    env.get_instance_data::<EnvState>()?
        .map(|s| &*s)
        .ok_or_else(|| Error::from_reason("acp-terminal: environment state missing"))
}
