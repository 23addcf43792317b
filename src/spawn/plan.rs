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
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{TermError, ERR_CWD_OUTSIDE_ROOTS};
use crate::sandbox::SandboxSpec;
use crate::sys::cwd::Dir;
use crate::sys::spawn::{rules, Io, Limits, Lookup};

/// How a command line without args is run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Shell {
    /// The platform's shell when there are no args: `/bin/sh -c <command>`; on Windows
    /// `%ComSpec% /d /s /c "<command>"`, as Node's `shell: true`.
    #[default]
    Default,
    /// Always execute `command` directly.
    Never,
    /// `<shell> -c <command>` when there are no args (on Windows by the shell's kind: cmd,
    /// PowerShell or a POSIX shell).
    Custom(String),
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
    /// argv runs a shell line (the shell's, the line last).
    pub shell_line: bool,
    /// Complete environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// Absolute, existing working directory, as checked.
    pub cwd: PathBuf,
    /// That directory, opened when it was checked: the child changes into this descriptor.
    pub cwd_dir: Arc<Dir>,
    /// Resource limits.
    pub limits: Limits,
    /// Pipes or a pty.
    pub io: Io,
    /// The OS sandbox, if any (its writable roots already checked).
    pub sandbox: Option<SandboxSpec>,
}

/// A string of the request that reaches the OS (command, argument, environment entry, shell,
/// cwd): refused with `ERR_INVALID_ARG` naming `field` when it holds a NUL byte, which no C
/// string carries. The one rule for this: [`plan`] applies it, and the TS layer asks it
/// (`checkText`) before its policy sees a request.
pub fn check_text(value: &str, field: &str) -> Result<(), TermError> {
    if value.contains('\0') {
        return Err(TermError::invalid_arg(format!(
            "{field}: contains a NUL byte"
        )));
    }
    Ok(())
}

/// An environment variable's name: non-empty, without `=` and without a NUL byte, else
/// `ERR_INVALID_ARG` naming `field`. The one rule for this: [`plan`] applies it, and the TS
/// layer asks it (`checkEnvName`).
pub fn check_env_name(name: &str, field: &str) -> Result<(), TermError> {
    if name.is_empty() {
        return Err(TermError::invalid_arg(format!("{field}: is empty")));
    }
    if name.contains('=') {
        return Err(TermError::invalid_arg(format!(
            "{field}: `{name}` contains '='"
        )));
    }
    check_text(name, field)
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
    check_text(&req.command, "command")?;
    for (i, a) in req.args.iter().enumerate() {
        check_text(a, &format!("args[{i}]"))?;
    }
    for (i, (name, value)) in req.env.iter().enumerate() {
        check_env_name(name, &format!("env[{i}].name"))?;
        check_text(value, &format!("env[{i}].value"))?;
    }
    // Some(shell to run the line with; None: the platform's default), or None: never a shell.
    let shell: Option<Option<&str>> = match &req.shell {
        Shell::Custom(s) if s.is_empty() => {
            return Err(TermError::invalid_arg(
                "options.shell must be a non-empty string or false",
            ))
        }
        Shell::Custom(s) => {
            check_text(s, "options.shell")?;
            Some(Some(s.as_str()))
        }
        Shell::Default => Some(None),
        Shell::Never => None,
    };
    let roots = canonical_roots(req.allowed_roots.as_deref())?;
    if let Some(sb) = req.sandbox.as_ref().filter(|sb| sb.pinned.is_none()) {
        crate::sandbox::validate_roots(sb, "options.sandbox")?;
    }
    let (cwd, cwd_dir) = resolve_cwd(req.cwd.as_deref(), default_cwd)?;
    if let Some(roots) = &roots {
        check_inside(&cwd, &cwd_dir, roots)?;
    }
    let env = build_env(req, inherited);
    let path_var = env_value(&env, "PATH").unwrap_or_else(rules::default_path);
    let pathext = env_value(&env, "PATHEXT");
    let search =
        |name: &str, field: &str| resolve_program(name, &path_var, pathext.as_deref(), &cwd, field);

    let (program, argv, shell_line) = match shell {
        Some(sh) if req.args.is_empty() => {
            let (sh, field) = match sh {
                Some(custom) => (custom.to_string(), "options.shell"),
                None => (rules::default_shell(), "the default shell"),
            };
            let program = search(&sh, field)?;
            (program, rules::shell_argv(&sh, &req.command), true)
        }
        _ => {
            let program = search(&req.command, "command")?;
            let args: Vec<OsString> = req.args.iter().map(OsString::from).collect();
            rules::check_args(&program, &args).map_err(TermError::invalid_arg)?;
            let mut argv: Vec<OsString> = vec![req.command.clone().into()];
            argv.extend(args);
            (program, argv, false)
        }
    };
    Ok(SpawnPlan {
        program,
        argv,
        shell_line,
        env,
        cwd,
        cwd_dir: Arc::new(cwd_dir),
        limits: req.limits,
        io: req.io,
        sandbox: req.sandbox.clone(),
    })
}

/// The roots, each absolute and resolved (symlinks, `..`) as they are now: opened as directories
/// and read back, the form [`cwd_in_roots`] and [`plan`] compare the opened cwd in. Errors are
/// `ERR_INVALID_ARG`, the message starting `options.allowedRoots[i]: `.
pub fn canonical_roots(roots: Option<&[String]>) -> Result<Option<Vec<PathBuf>>, TermError> {
    let Some(roots) = roots else {
        return Ok(None);
    };
    roots
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let invalid =
                |why: String| TermError::invalid_arg(format!("options.allowedRoots[{i}]: {why}"));
            if r.contains('\0') {
                return Err(invalid("contains a NUL byte".into()));
            }
            if !Path::new(r).is_absolute() {
                return Err(invalid(format!("must be an absolute path, got `{r}`")));
            }
            // Resolved as the cwd is (its opened directory's path), so both are compared in
            // one form (Windows' canonicalize answers `\\?\` paths, the cwd's has none).
            crate::sys::cwd::open_dir(Path::new(r))
                .and_then(|d| crate::sys::cwd::dir_path(&d))
                .map_err(|e| invalid(format!("`{r}`: {e}")))
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
fn check_inside(cwd: &Path, dir: &Dir, roots: &[PathBuf]) -> Result<(), TermError> {
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

fn resolve_cwd(cwd: Option<&str>, default_cwd: &Path) -> Result<(PathBuf, Dir), TermError> {
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
    // By the platform's key (Windows: without case): a request's `path` replaces the
    // inherited `Path`, name and all, and no duplicate is left.
    let mut index: HashMap<OsString, usize> = HashMap::new();
    let mut set = |env: &mut Vec<(OsString, OsString)>, k: OsString, v: OsString| {
        let key = rules::env_key(&k);
        if let Some(&i) = index.get(&key) {
            env[i] = (k, v);
        } else {
            index.insert(key, env.len());
            env.push((k, v));
        }
    };
    if req.inherit_env {
        for (k, v) in inherited {
            set(&mut env, k, v);
        }
    }
    for (name, value) in env_defaults(matches!(req.io, Io::Pty(_))) {
        let key = rules::env_key(OsStr::new(name));
        if !req
            .env
            .iter()
            .any(|(k, _)| rules::env_key(OsStr::new(k)) == key)
        {
            set(&mut env, name.into(), value.into());
        }
    }
    for (k, v) in &req.env {
        set(&mut env, k.into(), v.into());
    }
    env
}

/// The value of `name` in `env` (the last entry of its key).
fn env_value(env: &[(OsString, OsString)], name: &str) -> Option<OsString> {
    let key = rules::env_key(OsStr::new(name));
    env.iter()
        .rev()
        .find(|(k, _)| rules::env_key(k) == key)
        .map(|(_, v)| v.clone())
}

/// Resolves the program a direct (argv) request for `name` would execute, given the child's
/// `PATH` (None: the default search path) and working directory.
pub fn resolve(name: &str, path_var: Option<&OsStr>, cwd: &Path) -> Result<PathBuf, TermError> {
    if name.is_empty() {
        return Err(TermError::invalid_arg("command must be a non-empty string"));
    }
    check_text(name, "command")?;
    let default_path;
    let path_var = match path_var {
        Some(p) => p,
        None => {
            default_path = rules::default_path();
            &default_path
        }
    };
    // The inherited value (Windows compares names without case, as `var_os` does there), read
    // alone rather than with a copy of the whole environment: this runs for every program word
    // a command policy checks.
    let pathext = std::env::var_os("PATHEXT");
    resolve_program(name, path_var, pathext.as_deref(), cwd, "command")
}

/// Resolves `name` by the platform's rules ([`rules::find_program`]: execvp's on Unix, `PATH`
/// and `PATHEXT` on Windows), as an error naming `field` when nothing runs.
fn resolve_program(
    name: &str,
    path_var: &OsStr,
    pathext: Option<&OsStr>,
    cwd: &Path,
    field: &str,
) -> Result<PathBuf, TermError> {
    let not_found = |what: String| TermError::new("ENOENT", what).with_detail("program", name);
    let is_path = rules::is_path(name);
    match rules::find_program(name, path_var, pathext, cwd) {
        Lookup::Found(p) => Ok(p),
        Lookup::NotExecutable if is_path => Err(TermError::new(
            "EACCES",
            format!("{field} `{name}` is not an executable file"),
        )),
        Lookup::NotExecutable => Err(TermError::new(
            "EACCES",
            format!("{field} `{name}` was found in PATH but is not executable"),
        )),
        Lookup::NotFound if is_path => Err(not_found(format!("{field} `{name}` does not exist"))),
        // The searched PATH goes to `details` only: the message reaches agents (and their
        // models' logs).
        Lookup::NotFound => Err(not_found(format!("{field} `{name}` not found in PATH"))
            .with_detail("path", path_var.to_string_lossy())),
    }
}
