//! Turning a request into a running child.
//!
//! Rules: with no `args` the command is a shell line run by `/bin/sh -c` (or the chosen
//! shell); with `args` it is executed directly, each argument passed literally. The child gets
//! stdin from /dev/null (or a pipe we write to), stdout and stderr on ONE pipe (so the order of
//! writes is kept), its own process group, the inherited environment (unless disabled) with the
//! request's entries applied in order and `PAGER`/`GIT_PAGER` set to `cat` unless the request
//! sets them.
//!
//! On a pty, the child instead leads a new session with the pty's slave as its controlling
//! terminal and as stdin, stdout and stderr, and `TERM=xterm-256color` unless the request sets
//! `TERM`.
//!
//! The program is resolved against the child's `PATH` here (as execvp would), then started by
//! [`crate::launch`] without forking Node, with resource limits, a parent-death signal and the
//! terminal's cgroup applied in the child before exec.
//!
//! With a sandbox ([`crate::sandbox`]), the child also gets a private TMPDIR and enters the
//! sandbox right before exec; a part the kernel cannot provide is `ERR_SANDBOX_UNAVAILABLE`.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use crate::error::TermError;
use crate::launch::{self, LaunchSpec, Rlimit, SessionMode};
use crate::pty::{self, PtySize};
use crate::sandbox::{SandboxGuard, SandboxSpec};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnPlan {
    /// Absolute path of the executable.
    pub program: PathBuf,
    /// Full argv, argv[0] included.
    pub argv: Vec<OsString>,
    /// Complete environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// Absolute, existing working directory.
    pub cwd: PathBuf,
    /// Resource limits.
    pub limits: Limits,
    /// Pipes or a pty.
    pub io: Io,
    /// The OS sandbox, if any (writable roots already checked).
    pub sandbox: Option<SandboxSpec>,
}

/// A started child: its pid (also its process group id) and its descriptors.
#[derive(Debug)]
pub struct Spawned {
    /// Child pid; the child leads its own process group (on a pty: session) with the same id.
    pub pid: i32,
    /// Non-blocking read end of the merged stdout/stderr pipe, or the pty master.
    pub output: OwnedFd,
    /// Non-blocking descriptor we write the command's input to (the stdin pipe's write end,
    /// or a duplicate of the pty master); `None` when stdin is /dev/null.
    pub input: Option<OwnedFd>,
    /// On a pty: a duplicate of the master for window-size control, and the initial size.
    pub pty: Option<(OwnedFd, PtySize)>,
    /// A sandboxed child's TMPDIR and namespace init, cleaned up when dropped (at release).
    pub sandbox: Option<SandboxGuard>,
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
    if let Some(sb) = &req.sandbox {
        crate::sandbox::validate_roots(sb, "options.sandbox")?;
    }
    let cwd = resolve_cwd(req.cwd.as_deref(), default_cwd)?;
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
        limits: req.limits,
        io: req.io,
        sandbox: req.sandbox.clone(),
    })
}

fn resolve_cwd(cwd: Option<&str>, default_cwd: &Path) -> Result<PathBuf, TermError> {
    let Some(cwd) = cwd else {
        return Ok(default_cwd.to_path_buf());
    };
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
        Ok(m) if m.is_dir() => Ok(path.to_path_buf()),
        Ok(_) => Err(TermError::invalid_cwd(format!(
            "cwd `{cwd}` is not a directory"
        ))),
        Err(e) => Err(TermError::invalid_cwd(format!("cwd `{cwd}`: {e}"))),
    }
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
    for pager in ["PAGER", "GIT_PAGER"] {
        if !req.env.iter().any(|(k, _)| k == pager) {
            set(&mut env, pager.into(), "cat".into());
        }
    }
    if matches!(req.io, Io::Pty(_)) && !req.env.iter().any(|(k, _)| k == "TERM") {
        set(&mut env, "TERM".into(), PTY_TERM.into());
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
    let not_found = |what: String| TermError::new("ENOENT", what);
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
    Err(not_found(format!(
        "{field} `{name}` not found in PATH ({})",
        path_var.to_string_lossy()
    )))
}

fn dev_null() -> Result<&'static OwnedFd, TermError> {
    static NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd);
    }
    let f = std::fs::File::open("/dev/null")
        .map_err(|e| TermError::from_io(&e, "opening /dev/null"))?;
    Ok(NULL.get_or_init(|| f.into()))
}

/// The descriptors of a launch: (our output end, the child's stdin, the child's
/// stdout/stderr, our input end, the pty control fd and size).
type Ends = (
    OwnedFd,
    Option<OwnedFd>,
    OwnedFd,
    Option<OwnedFd>,
    Option<(OwnedFd, PtySize)>,
);

/// Starts the planned child as leader of a new process group (a new session on a pty), in
/// the given cgroups (their `cgroup.procs` files), with SIGKILL as its parent-death signal. Pipes: stdin on /dev/null (or a
/// pipe), stdout+stderr on one pipe. Pty: the slave is its controlling terminal and 0, 1, 2.
/// Our copies of the child's ends are closed before returning, so EOF (EIO on a pty) arrives
/// when the child's copies are gone.
pub fn spawn(plan: &SpawnPlan, cgroups: Vec<std::ffi::CString>) -> Result<Spawned, TermError> {
    let argv0 = plan.argv[0].as_bytes().escape_ascii().to_string();
    let ctx = || format!("spawning `{argv0}`");
    let io = |e: std::io::Error| TermError::from_io(&e, &ctx());
    let nonblock = |fd: &OwnedFd| -> Result<(), TermError> {
        fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(|e| io(e.into()))?;
        Ok(())
    };
    // (read end for us, the child's stdin, the child's stdout/stderr, our input, pty control)
    let (output, child_in, child_out, input, pty): Ends = match plan.io {
        Io::Pipe | Io::PipeWithStdin => {
            let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| io(e.into()))?;
            nonblock(&read)?;
            let (child_in, input) = if plan.io == Io::PipeWithStdin {
                let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| io(e.into()))?;
                nonblock(&w)?;
                (Some(r), Some(w))
            } else {
                (None, None)
            };
            (read, child_in, write, input, None)
        }
        Io::Pty(size) => {
            let p = pty::open(size).map_err(io)?;
            let input = pty::dup(&p.master).map_err(io)?;
            let control = pty::dup(&p.master).map_err(io)?;
            (p.master, None, p.slave, Some(input), Some((control, size)))
        }
    };
    let null = dev_null()?;
    let stdin_fd = match (&child_in, &pty) {
        (Some(r), _) => r.as_raw_fd(),
        (None, Some(_)) => child_out.as_raw_fd(),
        (None, None) => null.as_raw_fd(),
    };
    let session = if pty.is_some() {
        SessionMode::NewSession(Some(child_out.as_raw_fd()))
    } else {
        SessionMode::NewGroup
    };
    let tty = pty.is_some().then(|| child_out.as_fd());
    let sandbox = prepare_sandbox(plan, tty)?;
    let mut env_override = None;
    #[cfg(target_os = "linux")]
    if let Some(sb) = &sandbox {
        let mut env = plan.env.clone();
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".into(), sb.tmpdir().as_os_str().to_owned()));
        env_override = Some(env);
    }
    let spec = LaunchSpec {
        program: launch::cpath(&plan.program).map_err(io)?,
        argv: plan
            .argv
            .iter()
            .map(|a| launch::cstring(a))
            .collect::<Result<_, _>>()
            .map_err(io)?,
        envp: launch::envp(env_override.as_deref().unwrap_or(&plan.env)).map_err(io)?,
        cwd: launch::cpath(&plan.cwd).map_err(io)?,
        stdio: [stdin_fd, child_out.as_raw_fd(), child_out.as_raw_fd()],
        session,
        rlimits: plan.limits.rlimits(),
        parent_death_signal: Some(libc::SIGKILL),
        cgroup_procs: cgroups,
        #[cfg(target_os = "linux")]
        sandbox: sandbox.as_ref().map(|s| s.child()),
        #[cfg(not(target_os = "linux"))]
        sandbox: None,
    };
    let launched = launch::launch_with(spec).map_err(|e| launch_error(e, &ctx()))?;
    // Close our copies of the child's ends now, so EOF / EIO arrives when its copies are gone.
    drop(child_out);
    drop(child_in);
    #[cfg(target_os = "linux")]
    let sandbox = sandbox.map(|s| s.into_guard(launched.init_pid));
    #[cfg(not(target_os = "linux"))]
    let sandbox: Option<SandboxGuard> = sandbox.map(|never| match never {});
    Ok(Spawned {
        pid: launched.pid,
        output,
        input,
        pty,
        sandbox,
    })
}

#[cfg(target_os = "linux")]
fn prepare_sandbox(
    plan: &SpawnPlan,
    tty: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<Option<crate::sandbox::Prepared>, TermError> {
    plan.sandbox
        .as_ref()
        .map(|sb| crate::sandbox::prepare(sb, tty, "options.sandbox"))
        .transpose()
}

#[cfg(not(target_os = "linux"))]
fn prepare_sandbox(
    plan: &SpawnPlan,
    _tty: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<Option<std::convert::Infallible>, TermError> {
    plan.sandbox
        .as_ref()
        .map(|sb| crate::sandbox::prepare(sb, "options.sandbox"))
        .transpose()
}

/// A launch failure as a core error: a failed sandbox step is `ERR_SANDBOX_UNAVAILABLE`
/// naming the part (the kernel refused it), anything else keeps its errno as the code.
fn launch_error(e: std::io::Error, context: &str) -> TermError {
    #[cfg(target_os = "linux")]
    if let Some(step) = launch::sandbox_step(&e) {
        return TermError::new(
            crate::sandbox::ERR_SANDBOX_UNAVAILABLE,
            format!(
                "{context}: sandbox: {} was refused by the kernel: {e}",
                step.part()
            ),
        );
    }
    TermError::from_io(&e, context)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(command: &str, args: &[&str]) -> SpawnRequest {
        SpawnRequest {
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            inherit_env: true,
            ..Default::default()
        }
    }

    fn inherited() -> Vec<(OsString, OsString)> {
        vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("HOME".into(), "/root".into()),
            ("PAGER".into(), "less".into()),
        ]
    }

    fn env_of(p: &SpawnPlan, k: &str) -> Option<String> {
        p.env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    #[test]
    fn pty_sets_term_unless_the_request_does() {
        let mut r = req("true", &[]);
        r.io = Io::Pty(PtySize::default());
        let inherited = || {
            let mut v = super::tests::inherited();
            v.push(("TERM".into(), "dumb".into()));
            v
        };
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        assert_eq!(env_of(&p, "TERM").as_deref(), Some(PTY_TERM));
        r.env.push(("TERM".into(), "vt100".into()));
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        assert_eq!(env_of(&p, "TERM").as_deref(), Some("vt100"));
        let p = plan(&req("true", &[]), inherited(), Path::new("/")).unwrap();
        assert_eq!(env_of(&p, "TERM").as_deref(), Some("dumb"));
    }

    #[test]
    fn shell_rule() {
        let p = plan(&req("echo a && echo b", &[]), inherited(), Path::new("/")).unwrap();
        assert_eq!(p.program, PathBuf::from("/bin/sh"));
        assert_eq!(p.argv, vec!["/bin/sh", "-c", "echo a && echo b"]);
        let p = plan(&req("echo", &["a b", "$HOME"]), inherited(), Path::new("/")).unwrap();
        assert!(p.program.ends_with("echo"));
        assert_eq!(p.argv, vec!["echo", "a b", "$HOME"]);
        let mut r = req("true", &[]);
        r.shell = Shell::Never;
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        assert!(p.program.ends_with("true"));
        assert_eq!(p.argv, vec!["true"]);
        let mut r = req("echo $0", &[]);
        r.shell = Shell::Custom("bash".into());
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        assert!(p.program.ends_with("bash"));
        assert_eq!(p.argv, vec!["bash", "-c", "echo $0"]);
    }

    #[test]
    fn env_rules() {
        let mut r = req("x", &[]);
        r.env = vec![
            ("A".into(), "1".into()),
            ("A".into(), "2".into()),
            ("GIT_PAGER".into(), "less".into()),
        ];
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        assert_eq!(env_of(&p, "A").as_deref(), Some("2"));
        assert_eq!(env_of(&p, "HOME").as_deref(), Some("/root"));
        assert_eq!(env_of(&p, "PAGER").as_deref(), Some("cat"));
        assert_eq!(env_of(&p, "GIT_PAGER").as_deref(), Some("less"));
        assert_eq!(p.env.iter().filter(|(k, _)| k == "A").count(), 1);
        r.inherit_env = false;
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        assert_eq!(env_of(&p, "HOME"), None);
        assert_eq!(env_of(&p, "PAGER").as_deref(), Some("cat"));
    }

    #[test]
    fn invalid_requests_name_the_field() {
        let cases: Vec<(SpawnRequest, &str, &str)> = vec![
            (req("a\0b", &[]), "ERR_INVALID_ARG", "command"),
            (req("echo", &["ok", "b\0"]), "ERR_INVALID_ARG", "args[1]"),
            (
                SpawnRequest {
                    env: vec![("".into(), "v".into())],
                    ..req("x", &[])
                },
                "ERR_INVALID_ARG",
                "env[0].name",
            ),
            (
                SpawnRequest {
                    env: vec![("A".into(), "v".into()), ("B=C".into(), "v".into())],
                    ..req("x", &[])
                },
                "ERR_INVALID_ARG",
                "env[1].name",
            ),
            (
                SpawnRequest {
                    env: vec![("A".into(), "v\0".into())],
                    ..req("x", &[])
                },
                "ERR_INVALID_ARG",
                "env[0].value",
            ),
            (
                SpawnRequest {
                    cwd: Some("relative/dir".into()),
                    ..req("x", &[])
                },
                "ERR_INVALID_CWD",
                "cwd",
            ),
            (
                SpawnRequest {
                    cwd: Some("/definitely/not/here".into()),
                    ..req("x", &[])
                },
                "ERR_INVALID_CWD",
                "cwd",
            ),
            (
                SpawnRequest {
                    cwd: Some("/bin/sh".into()),
                    ..req("x", &[])
                },
                "ERR_INVALID_CWD",
                "not a directory",
            ),
            (req("no-such-command-xyz", &["a"]), "ENOENT", "command"),
            (req("", &[]), "ERR_INVALID_ARG", "command"),
        ];
        for (r, code, needle) in cases {
            let e = plan(&r, inherited(), Path::new("/")).unwrap_err();
            assert_eq!(e.code, code, "{e}");
            assert!(e.message.contains(needle), "{e} should name {needle}");
        }
    }

    #[test]
    fn spawn_runs_and_merges_streams() {
        let p = plan(
            &req("echo a; echo b >&2; echo c", &[]),
            std::env::vars_os(),
            Path::new("/"),
        )
        .unwrap();
        let s = spawn(&p, Vec::new()).unwrap();
        let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(s.pid), None).unwrap();
        assert_eq!(
            status,
            nix::sys::wait::WaitStatus::Exited(nix::unistd::Pid::from_raw(s.pid), 0)
        );
        let mut out = Vec::new();
        let mut f = std::fs::File::from(s.output);
        use std::io::Read;
        let mut buf = [0u8; 64];
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(out, b"a\nb\nc\n");
    }
}
