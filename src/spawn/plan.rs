//! Request -> plan: everything checked and resolved before anything is started.
//!
//! Rules: with no `args` the command is a shell line run by `/bin/sh -c` (or the chosen
//! shell); with `args` it is executed directly, each argument passed literally. The child gets
//! the inherited environment (unless disabled) with the request's entries applied in order and
//! `PAGER`/`GIT_PAGER` set to `cat` unless the request sets them; on a pty also
//! `TERM=xterm-256color` unless the request sets `TERM`. The program is resolved against the
//! child's `PATH` (as execvp would). The working directory is opened here, once: the child
//! changes into that descriptor.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{TermError, ERR_CWD_OUTSIDE_ROOTS};
use crate::sandbox::SandboxSpec;
use crate::sys::pty::PtySize;
use crate::sys::spawn::Rlimit;

/// Default shell for command lines.
pub const DEFAULT_SHELL: &str = "/bin/sh";
/// Search path used when the child's environment has no `PATH` (as glibc's execvp).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// How a command line without args is run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Shell {
    /// `/bin/sh -c <command>` when there are no args.
    #[default]
    Default,
    /// Always execute `command` directly.
    Never,
    /// `<shell> -c <command>` when there are no args.
    Custom(String),
}

/// Resource limits for the command (each applied as both soft and hard limit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// `RLIMIT_CPU`: CPU seconds.
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_AS`: bytes of address space.
    pub address_space_bytes: Option<u64>,
    /// `RLIMIT_NOFILE`: open files.
    pub open_files: Option<u64>,
    /// `RLIMIT_FSIZE`: bytes a file may grow to.
    pub file_size_bytes: Option<u64>,
    /// `RLIMIT_NPROC`: processes of the user.
    pub processes: Option<u64>,
}

impl Limits {
    /// The limits as `setrlimit` calls.
    // `RLIMIT_*` are u32 on glibc and i32 on macOS and musl: the cast is needed on one only.
    #[allow(clippy::unnecessary_cast)]
    pub fn rlimits(&self) -> Vec<Rlimit> {
        [
            (libc::RLIMIT_CPU, self.cpu_seconds),
            (libc::RLIMIT_AS, self.address_space_bytes),
            (libc::RLIMIT_NOFILE, self.open_files),
            (libc::RLIMIT_FSIZE, self.file_size_bytes),
            (libc::RLIMIT_NPROC, self.processes),
        ]
        .into_iter()
        .filter_map(|(r, v)| {
            v.map(|value| Rlimit {
                resource: r as i32,
                value,
            })
        })
        .collect()
    }
}

/// Where the command's input and output go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Io {
    /// stdin from /dev/null; stdout and stderr on one pipe.
    #[default]
    Pipe,
    /// stdin on a pipe the caller writes to; stdout and stderr on one pipe.
    PipeWithStdin,
    /// All three on a new pseudo-terminal of this size; the command leads a new session.
    Pty(PtySize),
}

/// Variables every command gets unless the request's env sets them, applied over the inherited
/// environment: pagers that never wait for a key (so `git log` or `man` cannot hang a
/// terminal), and on a pty `TERM` ([`PTY_TERM`]).
pub fn env_defaults(pty: bool) -> Vec<(&'static str, &'static str)> {
    let mut defaults = vec![("PAGER", "cat"), ("GIT_PAGER", "cat")];
    if pty {
        defaults.push(("TERM", PTY_TERM));
    }
    defaults
}

/// `TERM` given to commands on a pty unless the request sets it.
pub const PTY_TERM: &str = "xterm-256color";

/// A terminal request, as given by the caller (not yet validated).
#[derive(Debug, Clone, Default)]
pub struct SpawnRequest {
    /// Shell line (no args) or program (with args).
    pub command: String,
    /// Literal arguments; empty means "shell line".
    pub args: Vec<String>,
    /// Environment entries applied in order over the inherited environment.
    pub env: Vec<(String, String)>,
    /// Working directory; `None` uses `default_cwd`.
    pub cwd: Option<String>,
    /// Directories the working directory must be in (or be); `None`: anywhere. Checked on the
    /// opened directory itself, so a path swapped after any earlier check cannot move the
    /// command elsewhere.
    pub allowed_roots: Option<Vec<String>>,
    /// Start from the inherited environment (`true`) or an empty one.
    pub inherit_env: bool,
    /// Shell choice.
    pub shell: Shell,
    /// Resource limits.
    pub limits: Limits,
    /// Pipes or a pty.
    pub io: Io,
    /// The OS sandbox, if any.
    pub sandbox: Option<SandboxSpec>,
}

/// A validated, fully resolved spawn: what will be executed, exactly.
#[derive(Debug, Clone)]
pub struct SpawnPlan {
    /// Absolute path of the executable.
    pub program: PathBuf,
    /// Full argv, argv[0] included.
    pub argv: Vec<OsString>,
    /// Complete environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// Absolute, existing working directory, as checked.
    pub cwd: PathBuf,
    /// That directory, opened when it was checked: the child changes into this descriptor.
    pub cwd_dir: Arc<OwnedFd>,
    /// Resource limits.
    pub limits: Limits,
    /// Pipes or a pty.
    pub io: Io,
    /// The OS sandbox, if any (its writable roots already checked).
    pub sandbox: Option<SandboxSpec>,
}

fn reject_nul(value: &str, field: &str) -> Result<(), TermError> {
    if value.contains('\0') {
        return Err(TermError::invalid_arg(format!(
            "{field} contains a NUL byte"
        )));
    }
    Ok(())
}

/// Validates the request and resolves program, argv, environment and cwd.
/// `inherited` is the caller's environment; `default_cwd` the caller's working directory.
pub fn plan(
    req: &SpawnRequest,
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    default_cwd: &Path,
) -> Result<SpawnPlan, TermError> {
    if req.command.is_empty() {
        return Err(TermError::invalid_arg("command must be a non-empty string"));
    }
    reject_nul(&req.command, "command")?;
    for (i, a) in req.args.iter().enumerate() {
        reject_nul(a, &format!("args[{i}]"))?;
    }
    for (i, (name, value)) in req.env.iter().enumerate() {
        if name.is_empty() {
            return Err(TermError::invalid_arg(format!("env[{i}].name is empty")));
        }
        if name.contains('=') {
            return Err(TermError::invalid_arg(format!(
                "env[{i}].name `{name}` contains '='"
            )));
        }
        reject_nul(name, &format!("env[{i}].name"))?;
        reject_nul(value, &format!("env[{i}].value"))?;
    }
    let shell = match &req.shell {
        Shell::Custom(s) if s.is_empty() => {
            return Err(TermError::invalid_arg(
                "options.shell must be a non-empty string or false",
            ))
        }
        Shell::Custom(s) => {
            reject_nul(s, "options.shell")?;
            Some(s.as_str())
        }
        Shell::Default => Some(DEFAULT_SHELL),
        Shell::Never => None,
    };
    let roots = canonical_roots(req.allowed_roots.as_deref())?;
    if let Some(sb) = &req.sandbox {
        crate::sandbox::validate_roots(sb, "options.sandbox")?;
    }
    let (cwd, cwd_dir) = resolve_cwd(req.cwd.as_deref(), default_cwd)?;
    if let Some(roots) = &roots {
        check_inside(&cwd, &cwd_dir, roots)?;
    }
    let env = build_env(req, inherited);
    let path_var = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| DEFAULT_PATH.into());

    let (program, argv) = match shell {
        Some(sh) if req.args.is_empty() => {
            let program = resolve_program(sh, &path_var, &cwd, "options.shell")?;
            let argv = vec![sh.into(), "-c".into(), req.command.clone().into()];
            (program, argv)
        }
        _ => {
            let program = resolve_program(&req.command, &path_var, &cwd, "command")?;
            let mut argv: Vec<OsString> = vec![req.command.clone().into()];
            argv.extend(req.args.iter().map(OsString::from));
            (program, argv)
        }
    };
    Ok(SpawnPlan {
        program,
        argv,
        env,
        cwd,
        cwd_dir: Arc::new(cwd_dir),
        limits: req.limits,
        io: req.io,
        sandbox: req.sandbox.clone(),
    })
}

/// The roots, each absolute and resolved (symlinks, `..`) as they are now.
fn canonical_roots(roots: Option<&[String]>) -> Result<Option<Vec<PathBuf>>, TermError> {
    let Some(roots) = roots else {
        return Ok(None);
    };
    roots
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let field = format!("options.allowedRoots[{i}]");
            reject_nul(r, &field)?;
            if !Path::new(r).is_absolute() {
                return Err(TermError::invalid_arg(format!(
                    "{field} must be an absolute path, got `{r}`"
                )));
            }
            std::fs::canonicalize(r)
                .map_err(|e| TermError::invalid_arg(format!("{field} `{r}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Where a working directory really is, read back from its opened descriptor (symlinks and
/// `..` resolved), and whether that is one of `roots` (as given to
/// [`SpawnRequest::allowed_roots`]) or below one: the check [`plan`] makes, for a caller that
/// checks a request before starting it. Errors: `ERR_INVALID_CWD` for a cwd that is missing,
/// relative or not a directory; `ERR_INVALID_ARG` for a bad root.
pub fn cwd_in_roots(cwd: &str, roots: &[String]) -> Result<(PathBuf, bool), TermError> {
    let roots = canonical_roots(Some(roots))?.unwrap_or_default();
    let (path, dir) = resolve_cwd(Some(cwd), Path::new("/"))?;
    let real = real_dir(&path, &dir)?;
    let inside = is_inside(&real, &roots);
    Ok((real, inside))
}

fn real_dir(cwd: &Path, dir: &crate::sys::cwd::Dir) -> Result<PathBuf, TermError> {
    crate::sys::cwd::dir_path(dir)
        .map_err(|e| TermError::invalid_cwd(format!("cwd `{}`: {e}", cwd.display())))
}

/// The roots rule: a (resolved) directory is allowed when it is a (resolved) root or below one,
/// component-wise (`/a/bc` is not below `/a/b`).
fn is_inside(real: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| real.starts_with(root))
}

/// Refuses an opened working directory that is not one of `roots` or below one: where the
/// descriptor really is counts, not what its path named when it was checked.
fn check_inside(cwd: &Path, dir: &OwnedFd, roots: &[PathBuf]) -> Result<(), TermError> {
    let real = real_dir(cwd, dir)?;
    if is_inside(&real, roots) {
        return Ok(());
    }
    let list: Vec<String> = roots.iter().map(|r| format!("`{}`", r.display())).collect();
    Err(TermError::new(
        ERR_CWD_OUTSIDE_ROOTS,
        format!(
            "cwd `{}` (resolved: `{}`) is outside options.allowedRoots ({})",
            cwd.display(),
            real.display(),
            list.join(", ")
        ),
    ))
}

fn resolve_cwd(cwd: Option<&str>, default_cwd: &Path) -> Result<(PathBuf, OwnedFd), TermError> {
    let path = match cwd {
        None => default_cwd.to_path_buf(),
        Some(cwd) => {
            if cwd.contains('\0') {
                return Err(TermError::invalid_cwd("cwd contains a NUL byte"));
            }
            let path = Path::new(cwd);
            if !path.is_absolute() {
                return Err(TermError::invalid_cwd(format!(
                    "cwd must be an absolute path, got `{cwd}`"
                )));
            }
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(TermError::invalid_cwd(format!(
                        "cwd `{cwd}` is not a directory"
                    )))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(TermError::invalid_cwd(format!(
                        "cwd `{cwd}` does not exist"
                    )))
                }
                Err(e) => return Err(TermError::invalid_cwd(format!("cwd `{cwd}`: {e}"))),
            }
            path.to_path_buf()
        }
    };
    let dir = crate::sys::cwd::open_dir(&path)
        .map_err(|e| TermError::invalid_cwd(format!("cwd `{}`: {e}", path.display())))?;
    Ok((path, dir))
}

fn build_env(
    req: &SpawnRequest,
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let mut index: HashMap<OsString, usize> = HashMap::new();
    let mut set = |env: &mut Vec<(OsString, OsString)>, k: OsString, v: OsString| {
        if let Some(&i) = index.get(&k) {
            env[i].1 = v;
        } else {
            index.insert(k.clone(), env.len());
            env.push((k, v));
        }
    };
    if req.inherit_env {
        for (k, v) in inherited {
            set(&mut env, k, v);
        }
    }
    for (name, value) in env_defaults(matches!(req.io, Io::Pty(_))) {
        if !req.env.iter().any(|(k, _)| k == name) {
            set(&mut env, name.into(), value.into());
        }
    }
    for (k, v) in &req.env {
        set(&mut env, k.into(), v.into());
    }
    env
}

fn is_executable_file(p: &Path) -> Option<bool> {
    let m = std::fs::metadata(p).ok()?;
    Some(m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Resolves the program a direct (argv) request for `name` would execute, given the child's
/// `PATH` (None: the default search path) and working directory.
pub fn resolve(name: &str, path_var: Option<&OsStr>, cwd: &Path) -> Result<PathBuf, TermError> {
    if name.is_empty() {
        return Err(TermError::invalid_arg("command must be a non-empty string"));
    }
    reject_nul(name, "command")?;
    resolve_program(
        name,
        path_var.unwrap_or(DEFAULT_PATH.as_ref()),
        cwd,
        "command",
    )
}

/// Resolves `name` like execvp: a name with a `/` is a path (relative to `cwd`), otherwise
/// each `PATH` entry is tried in order.
fn resolve_program(
    name: &str,
    path_var: &OsStr,
    cwd: &Path,
    field: &str,
) -> Result<PathBuf, TermError> {
    let not_found = |what: String| TermError::new("ENOENT", what).with_detail("program", name);
    if name.contains('/') {
        // `cwd/./x` → `cwd/x` (components() drops `.`; `..` is left to the kernel).
        let p: PathBuf = cwd.join(name).components().collect();
        return match is_executable_file(&p) {
            Some(true) => Ok(p),
            Some(false) => Err(TermError::new(
                "EACCES",
                format!("{field} `{name}` is not an executable file"),
            )),
            None => Err(not_found(format!("{field} `{name}` does not exist"))),
        };
    }
    let mut denied = false;
    for dir in std::env::split_paths(path_var) {
        let dir = if dir.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let candidate = dir.join(name);
        match is_executable_file(&candidate) {
            Some(true) => return Ok(candidate),
            Some(false) if candidate.is_file() => denied = true,
            _ => {}
        }
    }
    if denied {
        return Err(TermError::new(
            "EACCES",
            format!("{field} `{name}` was found in PATH but is not executable"),
        ));
    }
    // The searched PATH goes to `details` only: the message reaches agents (and their models' logs).
    Err(not_found(format!("{field} `{name}` not found in PATH"))
        .with_detail("path", path_var.to_string_lossy()))
}
