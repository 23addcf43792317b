//! Elsewhere than Linux there is no sandbox: every request is refused with
//! `ERR_SANDBOX_UNAVAILABLE` naming the part (after the roots are validated, so a bad option
//! is still named), and nothing of a sandbox is ever made (the types below have no values).

use super::{unavailable, validate_roots, SandboxSpec, Support};
use crate::error::TermError;
use crate::sys::cwd::Dir;
use crate::sys::spawn::{ChildSteps, Ends};

/// No sandboxed command runs here, in a session of its own or otherwise.
pub const NEW_SESSION: bool = false;

/// The refusal of every sandbox here.
fn refused() -> TermError {
    unavailable(
        "the sandbox (Landlock, seccomp and namespaces)",
        "it needs Linux",
    )
}

/// Pinned writable roots: never made here (pinning is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinned {}

impl Pinned {
    /// Never reached (nothing is pinned here).
    pub fn paths(&self) -> Vec<String> {
        match *self {}
    }
}

/// Refused: there is no sandbox to pin roots for.
pub(super) fn pin(_resolved: &[std::path::PathBuf], _field: &str) -> Result<Pinned, TermError> {
    Err(refused())
}

/// A sandbox ready for a launch: never made here.
#[derive(Debug)]
pub enum SandboxLaunch {}

/// Refuses every sandbox, once `spec`'s roots are valid.
pub fn prepare_launch(
    spec: &SandboxSpec,
    _cwd: &Dir,
    _ends: &Ends,
    field: &str,
) -> Result<SandboxLaunch, TermError> {
    validate_roots(spec, field)?;
    Err(refused())
}

impl SandboxLaunch {
    /// Never reached (no sandbox is made here).
    pub fn steps(&self) -> ChildSteps {
        match *self {}
    }

    /// Never reached (no sandbox is made here).
    pub fn into_guard(self, _init_pid: Option<i32>) -> Result<SandboxGuard, TermError> {
        match self {}
    }
}

/// What a sandboxed terminal leaves behind: nothing here.
#[derive(Debug)]
pub enum SandboxGuard {}

impl SandboxGuard {
    /// Never reached (no sandbox is made here).
    pub fn finish_now(self) {
        match self {}
    }

    /// Never reached (no sandbox is made here).
    pub fn take_listener(&mut self) -> Option<NetworkListener> {
        match *self {}
    }
}

/// A sandbox's network-proxy listener: none here.
#[derive(Debug)]
pub enum NetworkListener {}

impl NetworkListener {
    /// Never reached (no listener is made here).
    pub fn into_raw_fd(self) -> i32 {
        match self {}
    }
}

/// A launch step of a sandbox failed: none runs here, so this names the sandbox as a whole.
pub fn step_error(_code: i32, context: &str, e: &dyn std::fmt::Display) -> TermError {
    unavailable("the sandbox", format_args!("{context}: {e}"))
}

/// What this platform provides: nothing, outside Linux.
pub fn support() -> &'static Support {
    static S: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
    S.get_or_init(|| Support {
        reasons: vec!["the sandbox needs Linux (Landlock, seccomp, namespaces)".into()],
        ..Default::default()
    })
}
