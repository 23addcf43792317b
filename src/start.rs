//! The core entry point: a request, validated by the binding's conversion, becomes a running
//! terminal. The path of one request: [`crate::spawn::plan`] (checks and resolves program,
//! argv, environment, cwd) -> [`crate::containment::Prepared`] (cgroups) ->
//! [`crate::spawn::spawn`] (descriptors, then the platform launch) -> the containment of the
//! child (the guardian lists it) -> [`Terminal::start`] (the output pump and the input queue).

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::containment::Prepared;
use crate::error::TermError;
use crate::registry::next_id;
use crate::spawn::{self, SpawnRequest};
use crate::terminal::{Terminal, TerminalConfig};

/// Everything `createTerminal` was asked for, in core types.
#[derive(Debug, Clone, Default)]
pub struct TerminalRequest {
    /// What to run and how (command, args, env, cwd, shell, limits, pipes or pty).
    pub spawn: SpawnRequest,
    /// Owning ACP session ("" if none).
    pub session_id: String,
    /// Bytes of output to retain (`None`: all).
    pub output_byte_limit: Option<usize>,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Kill the command when it still runs after this long.
    pub timeout: Option<Duration>,
    /// Text mode (pty only): lines of scrollback. `None`: raw output.
    pub text_scrollback: Option<usize>,
}

/// Starts the request's command: plans it against the caller's environment (`inherited`)
/// and working directory (`default_cwd`), contains and spawns it, and starts its terminal.
/// Must run inside a tokio runtime. Nothing is left behind on failure.
pub fn start(
    req: &TerminalRequest,
    inherited: Vec<(OsString, OsString)>,
    default_cwd: &Path,
) -> Result<Arc<Terminal>, TermError> {
    let plan = spawn::plan(&req.spawn, inherited, default_cwd)?;
    let prepared = Prepared::new(plan.limits.processes);
    let spawned = spawn::spawn(&plan, prepared.procs_files())?;
    let containment = prepared.contain(spawned.pid, spawned.pty.is_some());
    let config = TerminalConfig {
        id: next_id(),
        session_id: req.session_id.clone(),
        output_byte_limit: req.output_byte_limit,
        kill_grace: req.kill_grace,
        timeout: req.timeout,
        text_scrollback: req.text_scrollback,
    };
    Terminal::start(spawned, config, containment)
}
