//! Elsewhere: nothing to protect (a sandbox is refused on every platform but Linux).

use crate::error::TermError;
use crate::sandbox::SandboxSpec;

/// Nothing: no sandboxed command can be started here.
#[derive(Debug, Default)]
pub struct OwnFile;

impl OwnFile {
    /// Resolves nothing.
    pub fn resolve() -> Self {
        Self
    }

    /// Nothing to pin (the sandbox itself is refused).
    pub fn guard(&self, _spec: &mut SandboxSpec, _field: &str) -> Result<(), TermError> {
        Ok(())
    }
}
