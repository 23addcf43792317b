//! The napi binding: `createTerminal()` and `TerminalHandle`, shaped like the ACP TypeScript
//! SDK's `TerminalHandle`. Parses JS input by hand so that every bad value is a clear error with
//! a `code` and the field's name, never a generic type error.

use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::{Env, JsValue, Property, PropertyAttributes, ValueType};
use napi_derive::napi;

use crate::cgroup::{Cgroup, PidsCgroup};
use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::keys;
use crate::pty::PtySize;
use crate::registry::{next_id, Registry};
use crate::render::{DEFAULT_SCROLLBACK, MAX_SCROLLBACK};
use crate::sandbox::SandboxSpec;
use crate::spawn::{self, Io, Limits, Shell, SpawnRequest};
use crate::terminal::{OutputSink, OutputVersion, Terminal, TerminalConfig, DEFAULT_KILL_GRACE};

/// An environment variable for the command (ACP `EnvVariable`).
#[napi(object)]
pub struct EnvVariable {
    /// Variable name: non-empty, no `=`, no NUL byte.
    pub name: String,
    /// Variable value: no NUL byte.
    pub value: String,
}

/// The request to run a command: ACP's `CreateTerminalRequest` (`sessionId` optional here).
#[napi(object)]
pub struct CreateTerminalParams {
    /// Session the terminal belongs to; `""` when absent.
    pub session_id: Option<String>,
    /// A shell line (when `args` is absent or empty, run by `/bin/sh -c`), or the program to
    /// execute directly with `args`.
    pub command: String,
    /// Arguments, each passed literally (no shell) when there is at least one.
    #[napi(ts_type = "string[] | null")]
    pub args: Option<Vec<String>>,
    /// Variables applied in order over the inherited environment (later entries win).
    #[napi(ts_type = "EnvVariable[] | null")]
    pub env: Option<Vec<EnvVariable>>,
    /// Absolute path of an existing directory; defaults to the Node process's cwd.
    #[napi(ts_type = "string | null")]
    pub cwd: Option<String>,
    /// Keep at most this many bytes of output (the newest, cut on a character boundary).
    /// Absent or null: keep everything.
    #[napi(ts_type = "number | null")]
    pub output_byte_limit: Option<f64>,
    /// Extension data; ignored.
    #[napi(js_name = "_meta", ts_type = "unknown")]
    pub meta: Option<serde_json::Value>,
}

/// Options that are not part of the ACP request.
#[napi(object)]
pub struct CreateTerminalOptions {
    /// `false`: always execute `command` directly. A string: the shell used for command lines
    /// (default `/bin/sh`).
    #[napi(ts_type = "false | string")]
    pub shell: Option<Either<bool, String>>,
    /// Start from the Node process's environment (default `true`) or from an empty one.
    pub inherit_env: Option<bool>,
    /// Milliseconds between SIGTERM and SIGKILL when killing (default 2000).
    pub kill_grace_ms: Option<f64>,
    /// Kill the command (as `kill()` does) if it still runs after this many milliseconds.
    pub timeout_ms: Option<f64>,
    /// Resource limits applied to the command before it starts (soft = hard).
    pub limits: Option<ResourceLimits>,
    /// Run the command on a pseudo-terminal of this size (default 80x24 when given): it leads
    /// a new session with the pty as its controlling terminal, stdin, stdout and stderr, and
    /// gets `TERM=xterm-256color` unless the request sets `TERM`. Enables `write()`,
    /// `sendKeys()`, `closeStdin()` and `resize()`.
    #[napi(ts_type = "PtyOptions | null")]
    pub pty: Option<PtyOptions>,
    /// Pipe terminals only: `'null'` (default) gives the command /dev/null as stdin; `'pipe'`
    /// a pipe that `write()` feeds and `closeStdin()` closes.
    #[napi(ts_type = "'null' | 'pipe'")]
    pub stdin: Option<String>,
    /// `'raw'` (default): `currentOutput()` is the bytes the command wrote. `'text'` (needs
    /// `pty`): what a person would see on the terminal: escape sequences consumed, `\r`
    /// overwrites and backspaces applied, full-screen programs as their screen, terminal
    /// queries answered (while the program waits for the answer in raw mode) and never shown;
    /// scrollback plus screen (the alternate screen alone while a full-screen program uses
    /// it), trailing blanks trimmed, still tail-limited by `outputByteLimit` on a character
    /// boundary. `onOutput` still delivers the raw bytes (a replay: at most the last MiB).
    #[napi(ts_type = "'raw' | 'text'")]
    pub output: Option<String>,
    /// Text mode: lines kept above the screen (default 1000, at most 100000); older lines are
    /// dropped and `truncated` becomes true.
    pub scrollback: Option<f64>,
    /// Run the command in an OS sandbox (Linux: Landlock, seccomp, no_new_privs, and a PID
    /// namespace with `isolateProcesses`). The command and everything it starts can write only
    /// under `writableRoots` (plus /dev/null, its tty and a private TMPDIR removed at
    /// release), cannot open network connections unless `network`, cannot signal or ptrace
    /// processes outside the terminal, cannot change cgroup, and cannot gain privileges.
    /// Rejects with `ERR_SANDBOX_UNAVAILABLE` naming the part this kernel cannot provide
    /// (see `containmentInfo().sandbox`); never runs the command with less.
    #[napi(ts_type = "SandboxOptions | null")]
    pub sandbox: Option<SandboxOptions>,
}

/// The OS sandbox of a command (`options.sandbox`).
#[napi(object)]
pub struct SandboxOptions {
    /// Absolute paths of existing directories the command may write under (symlinks are
    /// resolved once, at create). None of them may be `/` or be, contain or lie inside
    /// /proc, /sys or /dev. May be empty (only the private TMPDIR is writable).
    pub writable_roots: Vec<String>,
    /// Allow network access (default `false`: no sockets but unix ones, no `connect`, no
    /// TCP through Landlock, no io_uring).
    pub network: Option<bool>,
    /// Run in a PID namespace with its own /proc, so that processes outside the terminal are
    /// invisible (default `true`). Where namespaces are refused, `createTerminal` rejects with
    /// `ERR_SANDBOX_UNAVAILABLE` unless this is `false`.
    pub isolate_processes: Option<bool>,
}

/// Size of a pseudo-terminal, in character cells.
#[napi(object)]
pub struct PtyOptions {
    /// Columns, 1 to 65535 (default 80).
    pub cols: Option<f64>,
    /// Rows, 1 to 65535 (default 24).
    pub rows: Option<f64>,
}

/// Resource limits of the command (`setrlimit`, inherited by its children).
#[napi(object)]
pub struct ResourceLimits {
    /// CPU time in seconds (`RLIMIT_CPU`): SIGXCPU, then SIGKILL.
    pub cpu_seconds: Option<f64>,
    /// Address space in bytes (`RLIMIT_AS`): allocations beyond it fail.
    pub address_space_bytes: Option<f64>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<f64>,
    /// Largest file the command may write, in bytes (`RLIMIT_FSIZE`): SIGXFSZ beyond it.
    pub file_size_bytes: Option<f64>,
    /// Processes of the user (`RLIMIT_NPROC`, counted per user, not per terminal):
    /// fork fails beyond it.
    pub processes: Option<f64>,
}

/// How the command ended (ACP `TerminalExitStatus`).
#[napi(object, use_nullable = true)]
pub struct TerminalExitStatus {
    /// Exit code; `null` when a signal ended the process.
    pub exit_code: Option<u32>,
    /// POSIX signal name (`"SIGTERM"`, `"SIGKILL"`); `null` on a normal exit.
    pub signal: Option<String>,
}

/// Output so far (ACP `TerminalOutputResponse`).
#[napi(object)]
pub struct TerminalOutputResponse {
    /// Retained output, valid UTF-8, at most `outputByteLimit` bytes.
    pub output: String,
    /// True once any byte was dropped to respect the limit (never goes back to false).
    pub truncated: bool,
    /// Present only once the command exited and all its output was collected.
    pub exit_status: Option<TerminalExitStatus>,
}

/// Options of `onOutput()`.
#[napi(object)]
pub struct OnOutputOptions {
    /// Deliver the output retained so far first (default `false`: only what arrives from now).
    pub replay: Option<bool>,
}

/// Empty response of `kill()` and `release()` (ACP `KillTerminalResponse`).
#[napi(object)]
pub struct TerminalEmptyResponse {}

impl From<ExitStatus> for TerminalExitStatus {
    fn from(s: ExitStatus) -> Self {
        Self {
            exit_code: s.exit_code,
            signal: s.signal,
        }
    }
}

/// Creates a JS string; pure ASCII (the common case) takes the cheaper one-byte path.
fn js_string<'env>(env: &'env Env, s: &str) -> Result<Unknown<'env>> {
    if s.is_ascii() {
        Ok(env.create_string_latin1(s.as_bytes())?.to_unknown())
    } else {
        Ok(env.create_string(s)?.to_unknown())
    }
}

/// Builds a JS `Error` with `code` set, as a napi error that rejects/throws that object.
fn js_error(env: &Env, e: TermError) -> Error {
    match env.create_error(Error::from_reason(e.message.clone())) {
        Ok(mut obj) => {
            if obj.set_named_property("code", e.code.as_str()).is_err() {
                return Error::from_reason(e.to_string());
            }
            Error::from(obj.to_unknown())
        }
        Err(err) => err,
    }
}

/// A promise that rejects with `e` (with `code`). The rejection is settled from the runtime,
/// never synchronously inside the call: a promise rejected before the caller could attach a
/// handler is reported by Node as an unhandled rejection in some call paths.
fn rejected<'env, V: ToNapiValue>(env: &'env Env, e: TermError) -> Result<PromiseRaw<'env, V>> {
    settle(env, async move { Err::<(), _>(e) }, |_env, ()| {
        Err(Error::from_reason("acp-terminal: unreachable resolution"))
    })
}

/// Runs `fut` on the runtime and settles the promise on the JS thread, turning a core error
/// into a JS error with `code`.
fn settle<'env, T, V, F, M>(env: &'env Env, fut: F, map: M) -> Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    F: std::future::Future<Output = std::result::Result<T, TermError>> + Send + 'static,
    M: FnOnce(&Env, T) -> Result<V> + 'static,
{
    env.spawn_future_with_callback(async move { Ok(fut.await) }, move |env, r| match r {
        Ok(v) => map(env, v),
        Err(e) => Err(js_error(env, e)),
    })
}

// ---------------------------------------------------------------------------------------------
// Parsing JS values by hand: clear errors that name the field.

fn is_nullish(v: &Unknown) -> Result<bool> {
    Ok(matches!(
        v.get_type()?,
        ValueType::Undefined | ValueType::Null
    ))
}

fn describe(v: &Unknown) -> &'static str {
    match v.get_type() {
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Object) => "an object",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Undefined) => "undefined",
        _ => "an unknown value",
    }
}

type Parsed<T> = std::result::Result<T, TermError>;

fn internal(e: Error) -> TermError {
    TermError::invalid_arg(e.reason.clone())
}

fn get<'e>(obj: &Object<'e>, key: &str) -> Parsed<Unknown<'e>> {
    obj.get_named_property::<Unknown>(key).map_err(internal)
}

fn as_string(v: &Unknown, field: &str) -> Parsed<String> {
    if v.get_type().map_err(internal)? != ValueType::String {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a string, got {}",
            describe(v)
        )));
    }
    // SAFETY: the type was checked just above.
    unsafe { v.cast::<String>() }.map_err(internal)
}

fn opt_string(obj: &Object, key: &str, field: &str) -> Parsed<Option<String>> {
    let v = get(obj, key)?;
    if is_nullish(&v).map_err(internal)? {
        return Ok(None);
    }
    as_string(&v, field).map(Some)
}

fn as_object<'e>(v: &Unknown<'e>, field: &str) -> Parsed<Object<'e>> {
    if v.get_type().map_err(internal)? != ValueType::Object {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an object, got {}",
            describe(v)
        )));
    }
    // SAFETY: the type was checked just above.
    unsafe { v.cast::<Object>() }.map_err(internal)
}

fn opt_array<'e>(obj: &Object<'e>, key: &str, field: &str) -> Parsed<Option<Vec<Unknown<'e>>>> {
    let v = get(obj, key)?;
    if is_nullish(&v).map_err(internal)? {
        return Ok(None);
    }
    if !v.is_array().map_err(internal)? {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an array, got {}",
            describe(&v)
        )));
    }
    // SAFETY: checked to be an array.
    unsafe { v.cast::<Vec<Unknown>>() }
        .map_err(internal)
        .map(Some)
}

/// A non-negative safe integer, or None for null/undefined.
fn opt_count(obj: &Object, key: &str, field: &str) -> Parsed<Option<f64>> {
    let v = get(obj, key)?;
    if is_nullish(&v).map_err(internal)? {
        return Ok(None);
    }
    if v.get_type().map_err(internal)? != ValueType::Number {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a non-negative integer, got {}",
            describe(&v)
        )));
    }
    // SAFETY: checked to be a number.
    let n = unsafe { v.cast::<f64>() }.map_err(internal)?;
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if !n.is_finite() || n < 0.0 || n.fract() != 0.0 || n > MAX_SAFE {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a non-negative integer no larger than 2^53-1, got {n}"
        )));
    }
    Ok(Some(n))
}

struct ParsedCreate {
    req: SpawnRequest,
    session_id: String,
    output_byte_limit: Option<usize>,
    kill_grace: Duration,
    timeout: Option<Duration>,
    text_scrollback: Option<usize>,
}

/// An optional boolean field (`undefined` and `null` are absent).
fn opt_bool(obj: &Object, key: &str, field: &str) -> Parsed<Option<bool>> {
    let v = get(obj, key)?;
    if is_nullish(&v).map_err(internal)? {
        return Ok(None);
    }
    if v.get_type().map_err(internal)? != ValueType::Boolean {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a boolean, got {}",
            describe(&v)
        )));
    }
    // SAFETY: checked to be a boolean.
    unsafe { v.cast::<bool>() }.map(Some).map_err(internal)
}

/// A terminal dimension: an integer from 1 to 65535.
fn dimension(v: &Unknown, field: &str) -> Parsed<u16> {
    let bad = || {
        TermError::invalid_arg(format!(
            "{field} must be an integer from 1 to 65535, got {}",
            describe(v)
        ))
    };
    if v.get_type().map_err(internal)? != ValueType::Number {
        return Err(bad());
    }
    // SAFETY: checked to be a number.
    let n = unsafe { v.cast::<f64>() }.map_err(internal)?;
    if !(1.0..=65535.0).contains(&n) || n.fract() != 0.0 {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an integer from 1 to 65535, got {n}"
        )));
    }
    Ok(n as u16)
}

fn opt_dimension(obj: &Object, key: &str, field: &str) -> Parsed<Option<u16>> {
    let v = get(obj, key)?;
    if is_nullish(&v).map_err(internal)? {
        return Ok(None);
    }
    dimension(&v, field).map(Some)
}

/// One of the allowed strings, or None for null/undefined.
fn opt_choice(obj: &Object, key: &str, field: &str, allowed: &[&str]) -> Parsed<Option<String>> {
    let Some(s) = opt_string(obj, key, field)? else {
        return Ok(None);
    };
    if !allowed.contains(&s.as_str()) {
        let list: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
        return Err(TermError::invalid_arg(format!(
            "{field} must be {}, got '{s}'",
            list.join(" or ")
        )));
    }
    Ok(Some(s))
}

/// `options.sandbox`: `{ writableRoots: string[], network?: boolean, isolateProcesses?:
/// boolean }`; unknown keys are refused (a misspelt key of a security option must not pass).
fn parse_sandbox(v: &Unknown, field: &str) -> Parsed<SandboxSpec> {
    let o = as_object(v, field)?;
    const KEYS: [&str; 3] = ["writableRoots", "network", "isolateProcesses"];
    for k in Object::keys(&o).map_err(internal)? {
        if !KEYS.contains(&k.as_str()) {
            return Err(TermError::invalid_arg(format!(
                "{field}.{k} is not a sandbox option (known: {})",
                KEYS.join(", ")
            )));
        }
    }
    let roots =
        opt_array(&o, "writableRoots", &format!("{field}.writableRoots"))?.ok_or_else(|| {
            TermError::invalid_arg(format!(
                "{field}.writableRoots is required (an array of absolute paths; [] for none)"
            ))
        })?;
    let mut writable_roots = Vec::with_capacity(roots.len());
    for (i, r) in roots.iter().enumerate() {
        writable_roots.push(as_string(r, &format!("{field}.writableRoots[{i}]"))?);
    }
    let d = SandboxSpec::default();
    Ok(SandboxSpec {
        writable_roots,
        network: opt_bool(&o, "network", &format!("{field}.network"))?.unwrap_or(d.network),
        isolate_processes: opt_bool(&o, "isolateProcesses", &format!("{field}.isolateProcesses"))?
            .unwrap_or(d.isolate_processes),
    })
}

fn parse_create(params: &Unknown, options: Option<&Unknown>) -> Parsed<ParsedCreate> {
    let p = as_object(params, "params")?;
    let command = {
        let v = get(&p, "command")?;
        as_string(&v, "command")?
    };
    let session_id = opt_string(&p, "sessionId", "sessionId")?.unwrap_or_default();
    let mut args = Vec::new();
    for (i, a) in opt_array(&p, "args", "args")?
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        args.push(as_string(a, &format!("args[{i}]"))?);
    }
    let mut env = Vec::new();
    for (i, e) in opt_array(&p, "env", "env")?
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let o = as_object(e, &format!("env[{i}]"))?;
        let name = as_string(&get(&o, "name")?, &format!("env[{i}].name"))?;
        let value = as_string(&get(&o, "value")?, &format!("env[{i}].value"))?;
        env.push((name, value));
    }
    let cwd = opt_string(&p, "cwd", "cwd")?;
    let output_byte_limit = opt_count(&p, "outputByteLimit", "outputByteLimit")?
        .map(|n| n.min(usize::MAX as f64) as usize);

    let mut shell = Shell::Default;
    let mut inherit_env = true;
    let mut kill_grace = DEFAULT_KILL_GRACE;
    let mut timeout = None;
    let mut limits = Limits::default();
    let mut io = Io::Pipe;
    let mut text_scrollback = None;
    let mut sandbox = None;
    if let Some(o) = options {
        if !is_nullish(o).map_err(internal)? {
            let o = as_object(o, "options")?;
            let s = get(&o, "shell")?;
            match s.get_type().map_err(internal)? {
                ValueType::Undefined | ValueType::Null => {}
                ValueType::Boolean => {
                    // SAFETY: checked to be a boolean.
                    if unsafe { s.cast::<bool>() }.map_err(internal)? {
                        return Err(TermError::invalid_arg(
                            "options.shell must be false or a string (true is the default: omit it)",
                        ));
                    }
                    shell = Shell::Never;
                }
                ValueType::String => shell = Shell::Custom(as_string(&s, "options.shell")?),
                _ => {
                    return Err(TermError::invalid_arg(format!(
                        "options.shell must be false or a string, got {}",
                        describe(&s)
                    )))
                }
            }
            if let Some(b) = opt_bool(&o, "inheritEnv", "options.inheritEnv")? {
                inherit_env = b;
            }
            if let Some(ms) = opt_count(&o, "killGraceMs", "options.killGraceMs")? {
                kill_grace = Duration::from_millis(ms as u64);
            }
            if let Some(ms) = opt_count(&o, "timeoutMs", "options.timeoutMs")? {
                timeout = Some(Duration::from_millis(ms as u64));
            }
            let l = get(&o, "limits")?;
            if !is_nullish(&l).map_err(internal)? {
                let l = as_object(&l, "options.limits")?;
                let field = |key: &str| -> Parsed<Option<u64>> {
                    Ok(opt_count(&l, key, &format!("options.limits.{key}"))?.map(|n| n as u64))
                };
                limits = Limits {
                    cpu_seconds: field("cpuSeconds")?,
                    address_space_bytes: field("addressSpaceBytes")?,
                    open_files: field("openFiles")?,
                    file_size_bytes: field("fileSizeBytes")?,
                    processes: field("processes")?,
                };
            }
            let pty = get(&o, "pty")?;
            let pty = if is_nullish(&pty).map_err(internal)? {
                None
            } else {
                let p = as_object(&pty, "options.pty")?;
                let d = PtySize::default();
                Some(PtySize {
                    cols: opt_dimension(&p, "cols", "options.pty.cols")?.unwrap_or(d.cols),
                    rows: opt_dimension(&p, "rows", "options.pty.rows")?.unwrap_or(d.rows),
                })
            };
            let stdin = opt_choice(&o, "stdin", "options.stdin", &["null", "pipe"])?;
            let output = opt_choice(&o, "output", "options.output", &["raw", "text"])?;
            let scrollback = opt_count(&o, "scrollback", "options.scrollback")?;
            if let Some(sb) = scrollback {
                if sb > MAX_SCROLLBACK as f64 {
                    return Err(TermError::invalid_arg(format!(
                        "options.scrollback must be at most {MAX_SCROLLBACK} lines, got {sb}"
                    )));
                }
            }
            let sb = get(&o, "sandbox")?;
            if !is_nullish(&sb).map_err(internal)? {
                sandbox = Some(parse_sandbox(&sb, "options.sandbox")?);
            }
            io = match (pty, stdin.as_deref()) {
                (Some(_), Some("pipe")) => {
                    return Err(TermError::invalid_arg(
                        "options.stdin 'pipe' is for pipe terminals: a pty terminal's input is the pty (omit options.stdin)",
                    ))
                }
                (Some(size), _) => Io::Pty(size),
                (None, Some("pipe")) => Io::PipeWithStdin,
                (None, _) => Io::Pipe,
            };
            if output.as_deref() == Some("text") {
                if pty.is_none() {
                    return Err(TermError::invalid_arg(
                        "options.output 'text' needs options.pty (text is rendered by a terminal emulator)",
                    ));
                }
                text_scrollback = Some(scrollback.map_or(DEFAULT_SCROLLBACK, |n| n as usize));
            }
        }
    }
    Ok(ParsedCreate {
        req: SpawnRequest {
            command,
            args,
            env,
            cwd,
            inherit_env,
            shell,
            limits,
            io,
            sandbox,
        },
        session_id,
        output_byte_limit,
        kill_grace,
        timeout,
        text_scrollback,
    })
}

/// The environment as this JS thread sees it: `process.env` (a worker's own copy in a worker,
/// and in test sandboxes such as jest's), exactly what `child_process` would pass on.
fn js_process_env(env: &Env) -> Parsed<Vec<(OsString, OsString)>> {
    let read = || -> Result<Vec<(OsString, OsString)>> {
        let process: Object = env.get_global()?.get_named_property("process")?;
        let penv: Object = process.get_named_property("env")?;
        let keys = Object::keys(&penv)?;
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let v: Unknown = penv.get_named_property(&k)?;
            if v.get_type()? == ValueType::String {
                // SAFETY: checked to be a string.
                let v: String = unsafe { v.cast() }?;
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

// ---------------------------------------------------------------------------------------------
// Per-environment registry: every terminal of this environment dies with it.

struct EnvState {
    registry: Arc<Registry>,
    /// The main thread's `process.env` is the C environment itself (reading that is ~10x
    /// cheaper than walking the object); a worker's is a private copy that must be walked.
    main_thread: bool,
}

fn env_state(env: &Env) -> Result<&'static EnvState> {
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
    // Validation, cwd and environment are read on the JS thread (where `process.env` writes
    // happen); only the spawn itself runs on the runtime.
    // Only what must run on the JS thread happens here: reading the arguments, the cwd and
    // the environment (where `process.env` writes happen). Validation of the paths, PATH
    // resolution and the spawn run on the runtime, so a burst of creates never blocks JS.
    let captured = parse_create(&params, options.as_ref()).and_then(|p| {
        let cwd = std::env::current_dir().map_err(|e| {
            TermError::invalid_cwd(format!("the Node process's cwd is unusable: {e}"))
        })?;
        let inherited = if !p.req.inherit_env {
            Vec::new()
        } else if state.main_thread {
            std::env::vars_os().collect()
        } else {
            js_process_env(env)?
        };
        Ok((p, inherited, cwd))
    });
    let (parsed, inherited, cwd) = match captured {
        Ok(v) => v,
        Err(e) => return rejected(env, e),
    };
    let config = TerminalConfig {
        id: next_id(),
        session_id: parsed.session_id,
        output_byte_limit: parsed.output_byte_limit,
        kill_grace: parsed.kill_grace,
        timeout: parsed.timeout,
        text_scrollback: parsed.text_scrollback,
    };
    let req = parsed.req;
    let reg = registry.clone();
    settle(
        env,
        async move {
            let plan = spawn::plan(&req, inherited, &cwd)?;
            let cgroup = Cgroup::create();
            let pids = plan
                .limits
                .processes
                .and_then(|max| PidsCgroup::create(max, cgroup.as_ref()));
            let mut procs: Vec<_> = cgroup.iter().filter_map(|c| c.procs_path()).collect();
            if let Some(p) = pids.as_ref().and_then(|p| p.procs_path()) {
                if !procs.contains(&p) {
                    procs.push(p);
                }
            }
            let spawned = spawn::spawn(&plan, procs)?;
            let term = Terminal::start(spawned, config, cgroup, pids)?;
            reg.insert(&term);
            Ok(term)
        },
        move |_env, term| {
            Ok(TerminalHandle {
                term,
                registry,
                cache: Default::default(),
            })
        },
    )
}

/// What this process can use to contain terminals (see the README's guarantees).
#[napi(object)]
pub struct ContainmentInfo {
    /// Each terminal gets its own cgroup (v2), so even descendants that leave the process
    /// group (`setsid`, double fork) are killed with it.
    pub cgroups: bool,
    /// `limits.processes` is also a per-terminal pids cgroup (`pids.max`): it caps the
    /// processes alive at once and holds for root. Without it, `processes` is only
    /// `RLIMIT_NPROC`, counted per user and not enforced for root.
    pub pids_limit: bool,
    /// Pid of the guardian process that kills remaining terminals if Node dies without
    /// running any code (SIGKILL, default SIGINT/SIGTERM); null if it could not start.
    pub guardian_pid: Option<u32>,
    /// What `options.sandbox` can get here.
    pub sandbox: SandboxInfo,
}

/// What this kernel and process provide for `options.sandbox` (`containmentInfo().sandbox`).
#[napi(object, use_nullable = true)]
pub struct SandboxInfo {
    /// A sandbox with its defaults (`network: false`, `isolateProcesses: true`) can be created.
    pub available: bool,
    /// Landlock ABI version (0: no Landlock). Writes are confined from ABI 3, TCP is also
    /// refused by Landlock from ABI 4, signals and abstract unix sockets are scoped from 6.
    pub landlock_abi: u32,
    /// Writes confined to the writable roots (Landlock ABI >= 3).
    pub filesystem: bool,
    /// How network access is refused: `'landlock+seccomp'` or `'seccomp'`; null: it cannot be.
    #[napi(ts_type = "'landlock+seccomp' | 'seccomp' | null")]
    pub network: Option<String>,
    /// How signals to processes outside the terminal are refused: `'landlock'` (ABI >= 6);
    /// null: only a PID namespace (isolateProcesses) hides them.
    #[napi(ts_type = "'landlock' | null")]
    pub signal_scoping: Option<String>,
    /// Abstract unix sockets outside the terminal are unreachable (Landlock ABI >= 6).
    pub abstract_unix_scoping: bool,
    /// How `isolateProcesses` is provided: `'pid-namespace'` (CAP_SYS_ADMIN) or
    /// `'user+pid-namespace'` (unprivileged user namespaces); null: it cannot be.
    #[napi(ts_type = "'pid-namespace' | 'user+pid-namespace' | null")]
    pub process_isolation: Option<String>,
    /// Why the missing parts are missing.
    pub reasons: Vec<String>,
}

/// Reports how terminals are contained in this process (starts the guardian if needed).
#[napi]
pub fn containment_info() -> ContainmentInfo {
    ContainmentInfo {
        cgroups: crate::cgroup::base().is_some(),
        pids_limit: crate::cgroup::pids_base().is_some(),
        guardian_pid: crate::guard::guardian_pid().map(|p| p as u32),
        sandbox: sandbox_info(),
    }
}

fn sandbox_info() -> SandboxInfo {
    let s = crate::sandbox::support();
    SandboxInfo {
        available: s.filesystem && s.network.is_some() && s.process_isolation.is_some(),
        landlock_abi: s.landlock_abi,
        filesystem: s.filesystem,
        network: s.network.map(String::from),
        signal_scoping: s.signal_scoping.map(String::from),
        abstract_unix_scoping: s.abstract_unix_scoping,
        process_isolation: s.process_isolation.map(String::from),
        reasons: s.reasons.clone(),
    }
}

/// Options of `resolveProgram()`.
#[napi(object)]
pub struct ResolveProgramOptions {
    /// Directory relative `PATH` entries and paths are resolved against (default: the Node
    /// process's cwd).
    #[napi(ts_type = "string | null")]
    pub cwd: Option<String>,
    /// The search path (default: `PATH` of the Node process's environment).
    #[napi(ts_type = "string | null")]
    pub path: Option<String>,
}

/// The absolute path `createTerminal` would execute for a direct (argv) request of `command`,
/// resolved exactly as it resolves it. Throws with `code` `ENOENT`, `EACCES` or
/// `ERR_INVALID_ARG`.
#[napi(ts_args_type = "command: string, options?: ResolveProgramOptions | null")]
pub fn resolve_program(env: &Env, command: Unknown, options: Option<Unknown>) -> Result<String> {
    let parsed = (|| -> Parsed<(String, Option<String>, Option<String>)> {
        let command = as_string(&command, "command")?;
        let Some(o) = options.filter(|o| !is_nullish(o).unwrap_or(true)) else {
            return Ok((command, None, None));
        };
        let o = as_object(&o, "options")?;
        Ok((
            command,
            opt_string(&o, "cwd", "options.cwd")?,
            opt_string(&o, "path", "options.path")?,
        ))
    })();
    let (command, cwd, path) = parsed.map_err(|e| js_error(env, e))?;
    let cwd = match cwd {
        Some(c) => std::path::PathBuf::from(c),
        None => std::env::current_dir().map_err(|e| {
            js_error(
                env,
                TermError::invalid_cwd(format!("the Node process's cwd: {e}")),
            )
        })?,
    };
    let path = path
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    spawn::resolve(&command, path.as_deref(), &cwd)
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| js_error(env, e))
}

/// Options of `renderTerminalOutput()`.
#[napi(object)]
pub struct RenderTerminalOutputOptions {
    /// Width of the terminal the output was written to, in columns, 1 to 65535 (default 80):
    /// where the terminal wraps lines (wrapped rows come back as one line) and how far a `\r`
    /// goes back.
    #[napi(ts_type = "number | null")]
    pub cols: Option<u32>,
    /// Height of its screen, in rows, 1 to 65535 (default 24): how far up cursor movements can
    /// redraw and what a screen erase clears.
    #[napi(ts_type = "number | null")]
    pub rows: Option<u32>,
    /// The terminal is on the alternate screen when `data` starts (default false).
    #[napi(ts_type = "boolean | null")]
    pub alternate_screen: Option<bool>,
}

/// What `renderTerminalOutput()` returns.
#[napi(object)]
pub struct RenderedTerminalOutput {
    /// The main screen's text: every line the output wrote, including the lines that scrolled
    /// off the screen, without escape sequences, trailing blanks removed.
    pub text: String,
    /// The output leaves the terminal on the alternate screen: a full-screen program (`less`,
    /// `vim`, `top`) is still showing. What it drew is not in `text`.
    pub alternate_screen: bool,
}

/// Reads the arguments of `renderTerminalOutput()`: the bytes, the screen size, the start screen.
fn render_args(data: &Unknown, options: Option<Unknown>) -> Parsed<(Vec<u8>, PtySize, bool)> {
    let bytes = input_bytes(data)?;
    let mut size = PtySize { cols: 80, rows: 24 };
    let Some(o) = options.filter(|o| !is_nullish(o).unwrap_or(true)) else {
        return Ok((bytes, size, false));
    };
    let o = as_object(&o, "options")?;
    if let Some(cols) = opt_dimension(&o, "cols", "options.cols")? {
        size.cols = cols;
    }
    if let Some(rows) = opt_dimension(&o, "rows", "options.rows")? {
        size.rows = rows;
    }
    let alternate = opt_bool(&o, "alternateScreen", "options.alternateScreen")?.unwrap_or(false);
    Ok((bytes, size, alternate))
}

/// Renders raw terminal output (a string, as UTF-8, or bytes) through the terminal emulator
/// of text mode, as the text a person would read: escape sequences consumed, `\r` and
/// backspace overwrites, erases and cursor movements applied, rows the terminal wrapped joined
/// back into one line, trailing blanks of each line removed. Every line is kept (no scrollback
/// limit; the emulator keeps only the screen, lines scrolled off it are kept as text). The text
/// ends with the cursor's line or the last non-blank line, whichever is lower, so output ending
/// with a line break ends with `\n`. What a full-screen program draws on the alternate screen is
/// never in the text (a person no longer sees it once the program restores the main screen).
/// Synchronous: on the JS thread it costs about 0.15 s per MiB of ordinary output (more when
/// every byte scrolls); `renderTerminalOutputAsync()` does the same work off the JS thread.
/// Throws with `code` `ERR_INVALID_ARG` naming the field.
#[napi(ts_args_type = "data: string | Uint8Array, options?: RenderTerminalOutputOptions | null")]
pub fn render_terminal_output(
    env: &Env,
    data: Unknown,
    options: Option<Unknown>,
) -> Result<RenderedTerminalOutput> {
    let (bytes, size, alternate) = render_args(&data, options).map_err(|e| js_error(env, e))?;
    Ok(crate::render::render_output(&bytes, size, alternate).into())
}

impl From<crate::render::RenderedOutput> for RenderedTerminalOutput {
    fn from(r: crate::render::RenderedOutput) -> Self {
        RenderedTerminalOutput {
            text: r.text,
            alternate_screen: r.alternate_screen,
        }
    }
}

/// One `renderTerminalOutputAsync()` call: the arguments read on the JS thread (or why they
/// were refused), rendered on a libuv worker thread.
pub struct RenderTask {
    args: std::result::Result<(Vec<u8>, PtySize, bool), TermError>,
}

impl Task for RenderTask {
    type Output = crate::render::RenderedOutput;
    type JsValue = RenderedTerminalOutput;

    fn compute(&mut self) -> Result<Self::Output> {
        match &self.args {
            Ok((bytes, size, alternate)) => {
                Ok(crate::render::render_output(bytes, *size, *alternate))
            }
            Err(e) => Err(Error::from_reason(e.message.clone())),
        }
    }

    fn resolve(&mut self, _env: Env, r: Self::Output) -> Result<Self::JsValue> {
        Ok(r.into())
    }

    fn reject(&mut self, env: Env, err: Error) -> Result<Self::JsValue> {
        match &self.args {
            // Refused arguments: the same error, with `code`, as the synchronous variant throws.
            Err(e) => Err(js_error(&env, e.clone())),
            Ok(_) => Err(err),
        }
    }
}

/// `renderTerminalOutput()` off the JS thread: the same result, computed on a libuv worker
/// thread so that rendering a large output never blocks the event loop. The input is copied
/// when the call is made. Rejects with `code` `ERR_INVALID_ARG` naming the field.
#[napi(
    ts_args_type = "data: string | Uint8Array, options?: RenderTerminalOutputOptions | null",
    ts_return_type = "Promise<RenderedTerminalOutput>"
)]
pub fn render_terminal_output_async(
    data: Unknown,
    options: Option<Unknown>,
) -> AsyncTask<RenderTask> {
    AsyncTask::new(RenderTask {
        args: render_args(&data, options),
    })
}

/// A running command: its retained output, exit status, kill and release. Same promise shape
/// as the ACP SDK's `TerminalHandle`, usable with `await using`.
#[napi]
pub struct TerminalHandle {
    term: Arc<Terminal>,
    registry: Arc<Registry>,
    /// What the last `currentOutput()` returned. The string itself is kept on the JS object
    /// (a hidden property), so it is collected with the handle; polling agents get the same
    /// string again while nothing changed instead of a fresh decode of up to the whole limit.
    cache: std::cell::RefCell<Option<OutputCache>>,
}

struct OutputCache {
    version: OutputVersion,
    truncated: bool,
    exit: Option<ExitStatus>,
}

/// Hidden (non-enumerable) property of a handle holding its last output string.
const OUTPUT_CACHE_KEY: &str = "__acpTerminalLastOutput";

#[napi]
impl TerminalHandle {
    /// Unique terminal id (ACP `terminalId`).
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.term.id().to_string()
    }

    /// Session id from the request (`""` if absent).
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.term.session_id().to_string()
    }

    /// Pid of the child; it leads its own process group with the same id.
    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.term.pid() as u32
    }

    /// True when `timeoutMs` expired and the command was killed for it.
    #[napi(getter)]
    pub fn timed_out(&self) -> bool {
        self.term.timed_out()
    }

    /// Total bytes the command has written so far (retained or not).
    #[napi(getter)]
    pub fn output_bytes(&self) -> f64 {
        self.term.bytes_written() as f64
    }

    /// The retained output so far; `exitStatus` appears once the command exited and all its
    /// output was collected. Rejects with `ERR_TERMINAL_RELEASED` after release.
    #[napi(ts_return_type = "Promise<TerminalOutputResponse>")]
    pub fn current_output<'env>(
        &self,
        env: &'env Env,
        mut this: This<'env>,
    ) -> Result<PromiseRaw<'env, Object<'env>>> {
        if let Err(e) = self.term.check_live() {
            return rejected(env, e);
        }
        let mut cache = self.cache.borrow_mut();
        let version = self.term.output_version();
        let hit = cache.as_ref().filter(|c| c.version == version);
        let (output, truncated, exit) = match hit {
            Some(c) => (
                this.get_named_property::<Unknown>(OUTPUT_CACHE_KEY)?,
                c.truncated,
                c.exit.clone(),
            ),
            None => {
                let (raw, exit, version) = self.term.raw_output();
                let snap = raw.decode();
                let output = js_string(env, &snap.output)?;
                this.define_properties(&[Property::new()
                    .with_utf8_name(OUTPUT_CACHE_KEY)?
                    .with_value(&output)
                    .with_property_attributes(
                        PropertyAttributes::Writable | PropertyAttributes::Configurable,
                    )])?;
                *cache = Some(OutputCache {
                    version,
                    truncated: snap.truncated,
                    exit: exit.clone(),
                });
                (output, snap.truncated, exit)
            }
        };
        let mut obj = Object::new(env)?;
        obj.set_named_property("output", output)?;
        obj.set_named_property("truncated", truncated)?;
        if let Some(st) = exit {
            obj.set_named_property("exitStatus", TerminalExitStatus::from(st))?;
        }
        PromiseRaw::resolve(env, obj)
    }

    /// Resolves with the exit status once the command exited and every byte it wrote is in
    /// `currentOutput()`. Any number of concurrent waiters.
    #[napi(ts_return_type = "Promise<TerminalExitStatus>")]
    pub fn wait_for_exit<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, TerminalExitStatus>> {
        if self.term.is_released() {
            return rejected(env, TermError::released(self.term.id()));
        }
        if let Some(st) = self.term.exit_status() {
            return PromiseRaw::resolve(env, st.into());
        }
        let term = self.term.clone();
        settle(
            env,
            async move { Ok(term.wait_for_exit().await) },
            |_env, st| Ok(st.into()),
        )
    }

    /// Terminates the whole process group: SIGTERM, then SIGKILL after `killGraceMs` if
    /// anything still runs. Resolves once the command exited; the handle stays valid.
    /// Killing an exited terminal is a successful no-op.
    #[napi(ts_return_type = "Promise<TerminalEmptyResponse>")]
    pub fn kill<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, TerminalEmptyResponse>> {
        if let Err(e) = self.term.check_live() {
            return rejected(env, e);
        }
        let term = self.term.clone();
        settle(
            env,
            async move {
                term.kill().await;
                Ok(())
            },
            |_env, ()| Ok(TerminalEmptyResponse {}),
        )
    }

    /// Kills the command if it runs, then frees its output and descriptors. Every other
    /// method rejects with `ERR_TERMINAL_RELEASED` afterwards; a second release resolves.
    #[napi(ts_return_type = "Promise<TerminalEmptyResponse>")]
    pub fn release<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, TerminalEmptyResponse>> {
        settle(env, self.release_future(), |_env, ()| {
            Ok(TerminalEmptyResponse {})
        })
    }

    /// Releases the terminal: `await using t = await createTerminal(...)`.
    #[napi(well_known_symbol = "asyncDispose", ts_return_type = "Promise<void>")]
    pub fn async_dispose<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        settle(env, self.release_future(), |_env, ()| Ok(()))
    }

    /// Calls `listener` with raw output bytes as they arrive, in order, from now on. Chunks
    /// are coalesced while JS is busy; a slow listener never slows the command or the
    /// retained output. With `{ replay: true }` the output retained so far comes first (so a
    /// listener attached right after `createTerminal` sees everything within the limit).
    /// Returns a function that unsubscribes. Throws `ERR_TERMINAL_RELEASED` after release.
    #[napi(
        ts_args_type = "listener: (chunk: Buffer) => void, options?: OnOutputOptions | null",
        ts_return_type = "() => void"
    )]
    pub fn on_output<'env>(
        &self,
        env: &'env Env,
        listener: Function<'env, Buffer, UnknownReturnValue>,
        options: Option<OnOutputOptions>,
    ) -> Result<Function<'env, (), ()>> {
        let replay = options.and_then(|o| o.replay).unwrap_or(false);
        let sink = JsSink::new(env, &listener)?;
        let key = match self.term.subscribe(Arc::new(sink.clone()), replay) {
            Ok(k) => k,
            Err(e) => return Err(js_error(env, e)),
        };
        let term = self.term.clone();
        env.create_function_from_closure::<(), (), _>("unsubscribe", move |_| {
            sink.cancel();
            term.unsubscribe(key);
            Ok(())
        })
    }

    /// True when the command runs on a pseudo-terminal (`options.pty`).
    #[napi(getter)]
    pub fn is_pty(&self) -> bool {
        self.term.is_pty()
    }

    /// Sends `data` (a string, as UTF-8, or bytes) to the command's input: the pty, or the
    /// stdin pipe of `stdin: 'pipe'`. Writes are queued in call order and never lost or
    /// reordered; a large write is paced (it waits while the command does not read). Resolves
    /// once every byte was handed to the kernel. Rejects with `ERR_NO_STDIN` (no input),
    /// `ERR_STDIN_CLOSED` (after `closeStdin()` on a pipe), `ERR_TERMINAL_EXITED` (the command
    /// exited, also for a write still waiting then), `EPIPE`/`EIO` (nothing reads the input
    /// any more), `ERR_INVALID_ARG` (not a string or bytes), `ERR_TERMINAL_RELEASED`.
    /// On a pty in canonical (line) mode the kernel keeps at most 4095 bytes of one
    /// unfinished line; longer lines need the program to use raw mode.
    #[napi(
        ts_args_type = "data: string | Uint8Array",
        ts_return_type = "Promise<void>"
    )]
    pub fn write<'env>(&self, env: &'env Env, data: Unknown<'env>) -> Result<PromiseRaw<'env, ()>> {
        let bytes = match input_bytes(&data) {
            Ok(b) => b,
            Err(e) => return rejected(env, e),
        };
        match self.term.write(bytes) {
            Ok(fut) => settle(env, fut, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }

    /// Sends keys by their tmux names (`'C-c'`, `'Enter'`, `'Up'`, `'M-x'`, `'S-F6'`,
    /// `'PageUp'`, a single character such as `'q'`), as the bytes an xterm sends for them,
    /// in one write queued like `write()`. A name that is not a key (a word of text, `'F13'`)
    /// rejects with `ERR_INVALID_ARG` naming it, and nothing is sent: use `write()` for text.
    #[napi(ts_args_type = "keys: string[]", ts_return_type = "Promise<void>")]
    pub fn send_keys<'env>(
        &self,
        env: &'env Env,
        keys: Unknown<'env>,
    ) -> Result<PromiseRaw<'env, ()>> {
        let parsed = (|| -> Parsed<Vec<u8>> {
            if !keys.is_array().map_err(internal)? {
                return Err(TermError::invalid_arg(format!(
                    "keys must be an array of key names, got {}",
                    describe(&keys)
                )));
            }
            // SAFETY: checked to be an array.
            let items = unsafe { keys.cast::<Vec<Unknown>>() }.map_err(internal)?;
            let mut names = Vec::with_capacity(items.len());
            for (i, k) in items.iter().enumerate() {
                names.push(as_string(k, &format!("keys[{i}]"))?);
            }
            keys::encode_all(&names)
        })();
        let bytes = match parsed {
            Ok(b) => b,
            Err(e) => return rejected(env, e),
        };
        match self.term.write(bytes) {
            Ok(fut) => settle(env, fut, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }

    /// Ends the input: on a `stdin: 'pipe'` terminal, closes the pipe once the queued writes
    /// are done (the command reads EOF; later writes reject with `ERR_STDIN_CLOSED`); on a
    /// pty, sends VEOF (^D), which a program reading in canonical mode takes as EOF at the
    /// start of a line (after a partial line, a first ^D only submits that line).
    /// Resolves as a no-op when already closed or exited. Rejects with `ERR_NO_STDIN` or
    /// `ERR_TERMINAL_RELEASED`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close_stdin<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        match self.term.close_stdin() {
            Ok(fut) => settle(env, fut, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }

    /// Changes the pty's size (the command gets SIGWINCH; text mode re-renders at the new
    /// size). `cols` and `rows` are integers from 1 to 65535. Rejects with `ERR_NOT_A_PTY` on
    /// a pipe terminal, `ERR_INVALID_ARG` naming `cols` or `rows`, `ERR_TERMINAL_RELEASED`.
    #[napi(
        ts_args_type = "cols: number, rows: number",
        ts_return_type = "Promise<void>"
    )]
    pub fn resize<'env>(
        &self,
        env: &'env Env,
        cols: Unknown<'env>,
        rows: Unknown<'env>,
    ) -> Result<PromiseRaw<'env, ()>> {
        let size = dimension(&cols, "cols").and_then(|cols| {
            Ok(PtySize {
                cols,
                rows: dimension(&rows, "rows")?,
            })
        });
        match size.and_then(|s| self.term.resize(s)) {
            Ok(()) => settle(env, async { Ok(()) }, |_env, ()| Ok(())),
            Err(e) => rejected(env, e),
        }
    }
}

/// The bytes of a `write()` argument: a string as UTF-8, or a Buffer / Uint8Array.
fn input_bytes(data: &Unknown) -> Parsed<Vec<u8>> {
    match data.get_type().map_err(internal)? {
        ValueType::String => Ok(as_string(data, "data")?.into_bytes()),
        ValueType::Object if data.is_buffer().map_err(internal)? => {
            // SAFETY: checked to be a Buffer.
            let b = unsafe { data.cast::<BufferSlice>() }.map_err(internal)?;
            Ok(b.to_vec())
        }
        ValueType::Object if data.is_typedarray().map_err(internal)? => {
            // SAFETY: checked to be a typed array; only Uint8Array is accepted below.
            let a = unsafe { data.cast::<Uint8ArraySlice>() }.map_err(|_| {
                TermError::invalid_arg("data must be a string, a Buffer or a Uint8Array")
            })?;
            Ok(a.to_vec())
        }
        _ => Err(TermError::invalid_arg(format!(
            "data must be a string, a Buffer or a Uint8Array, got {}",
            describe(data)
        ))),
    }
}

impl TerminalHandle {
    /// Marks the terminal released now (so later calls fail at once) and returns the rest of
    /// the release to run on the runtime.
    fn release_future(
        &self,
    ) -> impl std::future::Future<Output = std::result::Result<(), TermError>> + Send + 'static
    {
        let first = self.term.mark_released();
        let term = self.term.clone();
        let registry = self.registry.clone();
        async move {
            if first {
                term.finish_release().await;
                registry.remove(term.id());
            } else {
                // A release already under way: resolve once the command is gone, like it.
                term.wait_for_exit().await;
            }
            Ok(())
        }
    }
}

impl Drop for TerminalHandle {
    fn drop(&mut self) {
        // Collected without release: the command must not outlive its handle.
        if !self.term.is_released() {
            self.term.abandon();
        }
        self.registry.remove(self.term.id());
    }
}

// ---------------------------------------------------------------------------------------------
// Output streaming to JS.

#[derive(Default)]
struct SinkState {
    pending: Vec<u8>,
    scheduled: bool,
    cancelled: bool,
}

type DispatchFn = ThreadsafeFunction<Arc<JsSink>, (), (), Status, false, true>;

/// Delivers output to a JS listener: at most one call is queued at a time, and it takes
/// everything that arrived until it runs (so chunks coalesce while JS is busy).
struct JsSink {
    state: Mutex<SinkState>,
    listener: FunctionRef<Buffer, UnknownReturnValue>,
    dispatch: std::sync::OnceLock<DispatchFn>,
}

impl JsSink {
    fn new(env: &Env, listener: &Function<Buffer, UnknownReturnValue>) -> Result<Arc<Self>> {
        let sink = Arc::new(JsSink {
            state: Mutex::new(SinkState::default()),
            listener: listener.create_ref()?,
            dispatch: std::sync::OnceLock::new(),
        });
        let noop =
            env.create_function_from_closure::<(), (), _>("acpTerminalOutput", |_| Ok(()))?;
        let tsfn = noop
            .build_threadsafe_function::<Arc<JsSink>>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(
                |ctx: napi::threadsafe_function::ThreadsafeCallContext<Arc<JsSink>>| {
                    ctx.value.deliver(&ctx.env)?;
                    Ok(())
                },
            )?;
        let _ = sink.dispatch.set(tsfn);
        Ok(sink)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// On the JS thread: hand everything pending to the listener.
    fn deliver(&self, env: &Env) -> Result<()> {
        let data = {
            let mut s = self.lock();
            s.scheduled = false;
            if s.cancelled {
                return Ok(());
            }
            std::mem::take(&mut s.pending)
        };
        if data.is_empty() {
            return Ok(());
        }
        let f = self.listener.borrow_back(env)?;
        f.call(Buffer::from(data))?;
        Ok(())
    }

    fn cancel(&self) {
        let mut s = self.lock();
        s.cancelled = true;
        s.pending = Vec::new();
    }
}

impl OutputSink for Arc<JsSink> {
    fn push(&self, chunk: &[u8]) {
        let mut s = self.lock();
        if s.cancelled {
            return;
        }
        s.pending.extend_from_slice(chunk);
        if !s.scheduled {
            s.scheduled = true;
            drop(s);
            if let Some(d) = self.dispatch.get() {
                d.call(self.clone(), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }

    fn close(&self) {
        // Pending data is still delivered by the call already queued.
    }
}
