//! `SandboxConfig`: a sandbox configured once (its writable roots resolved, checked and
//! opened then, see [`crate::sandbox::roots`]) and passed as `options.sandbox` to every
//! create that should use it; a plain options object is configured again at each create.

use napi::bindgen_prelude::*;
use napi::{Env, JsValue};
use napi_derive::napi;

use super::args::{as_object, internal, Parsed};
use super::errors::js_error;
use super::options::SandboxOptions;
use crate::sandbox::SandboxSpec;

/// An OS sandbox configured once: `new SandboxConfig({ writableRoots, network, tmpBytes })`
/// resolves each writable root, refuses what `options.sandbox` refuses (and a root that is or
/// contains a kernel filesystem such as proc or sysfs), merges a root nested in another, and
/// opens each directory. Every create given this object as `options.sandbox` binds those very
/// directories: relinking or renaming a root's path afterwards cannot point the sandbox
/// elsewhere (the create is refused instead). Throws `ERR_INVALID_ARG` naming the field
/// (`sandbox.writableRoots[i]`); `ERR_SANDBOX_UNAVAILABLE` outside Linux.
#[napi]
pub struct SandboxConfig {
    pub(super) spec: SandboxSpec,
}

#[napi]
impl SandboxConfig {
    /// `field` names the options in errors (default `'sandbox'`).
    #[napi(
        constructor,
        ts_args_type = "options: SandboxOptions, field?: string | null"
    )]
    pub fn new(env: Env, options: Unknown, field: Option<String>) -> Result<Self> {
        configure(&options, field.as_deref().unwrap_or("sandbox")).map_err(|e| js_error(&env, e))
    }

    /// The writable roots as pinned: resolved, nested ones merged into their parent.
    #[napi(getter)]
    pub fn writable_roots(&self) -> Vec<String> {
        self.spec
            .pinned
            .as_ref()
            .map_or_else(Vec::new, |p| p.paths())
    }

    /// `network` as configured: `true`/`false`, or `{ allow, deny }` (served by the host's
    /// proxy).
    #[napi(getter, ts_return_type = "boolean | NetworkRules")]
    pub fn network(&self) -> Either<bool, NetworkRules> {
        match &self.spec.proxy {
            Some(r) => Either::B(NetworkRules {
                allow: r.allow.clone(),
                deny: r.deny.clone(),
            }),
            None => Either::A(self.spec.network),
        }
    }
}

/// What `network` was configured as: a boolean, or the allow list's patterns.
#[napi(object)]
pub struct NetworkRules {
    /// Patterns allowed through the proxy.
    pub allow: Vec<String>,
    /// Patterns refused even when allowed.
    pub deny: Vec<String>,
}

fn configure(options: &Unknown, field: &str) -> Parsed<SandboxConfig> {
    let o = as_object(options, field)?;
    let mut spec = SandboxOptions::read_as(&o, field)?.spec();
    spec.pinned = Some(crate::sandbox::pin(&spec, field)?);
    Ok(SandboxConfig { spec })
}

/// The spec of `o` when it is a `SandboxConfig`.
pub(super) fn config_spec(o: &Object) -> Parsed<Option<SandboxSpec>> {
    let env = Env::from_raw(o.value().env);
    if !<SandboxConfig as JavaScriptClassExt>::instance_of(&env, o).map_err(internal)? {
        return Ok(None);
    }
    // SAFETY: `o` was just checked to be a SandboxConfig instance of this environment.
    let config = unsafe { ClassInstance::<SandboxConfig>::from_napi_value(env.raw(), o.raw()) }
        .map_err(internal)?;
    Ok(Some(config.spec.clone()))
}
