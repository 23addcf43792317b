//! The `lookup` request: what a host's policy needs to know about the far end before anything
//! starts there, answered by the far end itself (its `PATH`, its file system), in one round trip.
//!
//! `{op: "lookup", programs?: [{command, cwd?, path?}], realPaths?: [file], roots?: [dir],
//! cwd?: dir, env?: bool}` answers `{path, cwd, programs: [{path} | {error}], realPaths:
//! [file | null], roots: [dir], cwdInRoots?: {resolved, inside} | {error}, env?: [{name,
//! value}]}`:
//! - `programs`: each resolved as `create` would execute it (`crate::spawn::resolve`, execvp's
//!   rules), through `path` (default: the server's `PATH`) from `cwd` (default: the server's);
//!   a failure is that item's `{error: {code, message, details}}` (`ENOENT`, `EACCES`), exactly
//!   the error `create` would answer.
//! - `realPaths`: each file with its symlinks resolved, null when it cannot be.
//! - `roots`: each directory resolved as `options.allowedRoots` is; a bad root fails the whole
//!   request with `ERR_INVALID_ARG` naming `roots[i]`.
//! - `cwd` (with `roots`): the directory resolved and whether it lies inside the roots, by the
//!   rule `create` applies (`crate::spawn::cwd_in_roots`); a bad cwd is `{error}`.
//! - `env`: the server's environment, which a command inherits unless `inheritEnv` is false.
//!
//! Invariant: nothing is started and nothing is written; the file system is read off the
//! connection's reader (a slow file system does not stall other requests).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{error_json, Reply};
use crate::error::TermError;

fn strings(req: &Map<String, Value>, key: &str) -> Result<Vec<String>, TermError> {
    match req.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| TermError::invalid_arg(format!("{key}[{i}] must be a string")))
            })
            .collect(),
        Some(_) => Err(TermError::invalid_arg(format!(
            "{key} must be an array of strings"
        ))),
    }
}

/// One program to resolve: its name, and the cwd and `PATH` to resolve it with.
struct Program {
    command: String,
    cwd: Option<String>,
    path: Option<String>,
}

fn programs(req: &Map<String, Value>) -> Result<Vec<Program>, TermError> {
    let Some(v) = req.get("programs").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let items = v.as_array().ok_or_else(|| {
        TermError::invalid_arg("programs must be an array of {command, cwd?, path?}")
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let o = item.as_object().ok_or_else(|| {
                TermError::invalid_arg(format!("programs[{i}] must be an object"))
            })?;
            let text = |k: &str| -> Result<Option<String>, TermError> {
                match o.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) if !s.contains('\0') => Ok(Some(s.clone())),
                    Some(_) => Err(TermError::invalid_arg(format!(
                        "programs[{i}].{k} must be a string without NUL"
                    ))),
                }
            };
            let command = text("command")?.ok_or_else(|| {
                TermError::invalid_arg(format!("programs[{i}].command is required"))
            })?;
            Ok(Program {
                command,
                cwd: text("cwd")?,
                path: text("path")?,
            })
        })
        .collect()
}

/// Answers a `lookup` request (see the module's doc).
pub(super) fn lookup(req: &Map<String, Value>) -> Result<Reply, TermError> {
    let programs = programs(req)?;
    let real_paths = strings(req, "realPaths")?;
    let roots = strings(req, "roots")?;
    let cwd = match req.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(TermError::invalid_arg("cwd must be a string")),
    };
    if cwd.is_some() && req.get("roots").is_none_or(Value::is_null) {
        return Err(TermError::invalid_arg(
            "cwd is checked against roots: give roots",
        ));
    }
    let want_env = req.get("env").and_then(Value::as_bool).unwrap_or(false);
    Ok(Box::pin(async move {
        tokio::task::spawn_blocking(move || answer(&programs, &real_paths, &roots, cwd, want_env))
            .await
            .map_err(|e| TermError::new("ERR_INTERNAL", format!("lookup failed: {e}")))?
    }))
}

fn answer(
    programs: &[Program],
    real_paths: &[String],
    roots: &[String],
    cwd: Option<String>,
    want_env: bool,
) -> Result<Value, TermError> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let server_path = std::env::var_os("PATH");
    let resolved: Vec<Value> = programs
        .iter()
        .map(|p| {
            let dir = p.cwd.as_deref().map_or_else(|| here.clone(), PathBuf::from);
            let path = p
                .path
                .as_ref()
                .map(OsString::from)
                .or_else(|| server_path.clone());
            match crate::spawn::resolve(&p.command, path.as_deref(), &dir) {
                Ok(found) => json!({"path": found.to_string_lossy()}),
                Err(e) => json!({"error": error_json(&e)}),
            }
        })
        .collect();
    let reals: Vec<Value> = real_paths
        .iter()
        .map(|f| match std::fs::canonicalize(Path::new(f)) {
            Ok(r) => Value::String(r.to_string_lossy().into_owned()),
            Err(_) => Value::Null,
        })
        .collect();
    // Each root as `create` resolves `allowedRoots` (a root is inside itself).
    let canonical = roots
        .iter()
        .enumerate()
        .map(|(i, r)| {
            crate::spawn::cwd_in_roots(r, std::slice::from_ref(r))
                .map(|(real, _)| real.to_string_lossy().into_owned())
                .map_err(|e| TermError::invalid_arg(format!("roots[{i}] `{r}`: {}", e.message)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = json!({
        "path": server_path.map(|p| p.to_string_lossy().into_owned()),
        "cwd": here.to_string_lossy(),
        "programs": resolved,
        "realPaths": reals,
        "roots": canonical,
    });
    if let Some(cwd) = cwd {
        out["cwdInRoots"] = match crate::spawn::cwd_in_roots(&cwd, roots) {
            Ok((real, inside)) => json!({"resolved": real.to_string_lossy(), "inside": inside}),
            Err(e) => json!({"error": error_json(&e)}),
        };
    }
    if want_env {
        let env: Vec<Value> = std::env::vars_os()
            .filter_map(|(k, v)| {
                Some(json!({"name": k.into_string().ok()?, "value": v.into_string().ok()?}))
            })
            .collect();
        out["env"] = Value::Array(env);
    }
    Ok(out)
}
