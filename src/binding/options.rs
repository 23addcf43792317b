//! The options of `createTerminal()`, declared once: each `#[napi(object, object_to_js = false)]`
//! struct below is the schema (its `///` docs, with range and default, become the types and
//! JSDoc in index.d.ts, which the TS layer imports); its `read` fills it from a JS value with
//! field-named type errors; [`request`] checks ranges and combinations and builds the core's
//! [`TerminalRequest`]. Nothing else reads these options.

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::ValueType;
use napi_derive::napi;

use super::args::*;
use crate::error::TermError;
use crate::render::{DEFAULT_SCROLLBACK, MAX_SCROLLBACK};
use crate::sandbox::SandboxSpec;
use crate::spawn::{Io, Limits, Shell, SpawnRequest};
use crate::start::TerminalRequest;
use crate::sys::pty::PtySize;
use crate::terminal::{TerminalConfig, DEFAULT_KILL_GRACE};

/// An environment variable for the command (ACP `EnvVariable`).
#[napi(object, object_to_js = false)]
pub struct EnvVariable {
    /// Variable name: non-empty, no `=`, no NUL byte.
    pub name: String,
    /// Variable value: no NUL byte.
    pub value: String,
}

/// The request to run a command: ACP's `CreateTerminalRequest` (`sessionId` optional here).
#[napi(object, object_to_js = false)]
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
    #[allow(dead_code)] // declared for the type; never read
    pub meta: Option<serde_json::Value>,
}

impl CreateTerminalParams {
    fn read(v: &Unknown) -> Parsed<Self> {
        let p = as_object(v, "params")?;
        let command = as_string(&get(&p, "command")?, "command")?;
        let session_id = opt_string(&p, "sessionId", "sessionId")?;
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
            env.push(EnvVariable {
                name: as_string(&get(&o, "name")?, &format!("env[{i}].name"))?,
                value: as_string(&get(&o, "value")?, &format!("env[{i}].value"))?,
            });
        }
        Ok(Self {
            session_id,
            command,
            args: Some(args),
            env: Some(env),
            cwd: opt_string(&p, "cwd", "cwd")?,
            output_byte_limit: opt_count(&p, "outputByteLimit", "outputByteLimit")?,
            meta: None,
        })
    }
}

/// Options that are not part of the ACP request.
#[napi(object, object_to_js = false)]
pub struct CreateTerminalOptions {
    /// `false`: always execute `command` directly. A string: the shell used for command lines
    /// (default `/bin/sh`).
    #[napi(ts_type = "false | string")]
    pub shell: Option<Either<bool, String>>,
    /// Start from the Node process's environment (default `true`) or from an empty one.
    pub inherit_env: Option<bool>,
    /// Milliseconds between SIGTERM and SIGKILL when killing, the timeout's kill and
    /// `release()` included: an integer from 0 to 600000 (default 2000), so that a command
    /// that ignores SIGTERM is gone at most that long after a kill starts.
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
    /// Directories the command may start in (absolute; each resolved with realpath when the
    /// request is checked): the working directory must be one of them or lie below one.
    /// Checked on the opened directory itself, which is the directory the command is then
    /// started in, so swapping a path for a symlink after any earlier check cannot move the
    /// command elsewhere. Rejects with `ERR_CWD_OUTSIDE_ROOTS` (nothing is started).
    /// Absent or null: no restriction.
    #[napi(ts_type = "string[] | null")]
    pub allowed_roots: Option<Vec<String>>,
    /// Run the command in an OS sandbox (Linux: mount, PID and IPC namespaces, a new session,
    /// Landlock, seccomp, no_new_privs). The command and everything it starts see the whole
    /// filesystem read-only except `writableRoots`, a private /tmp (TMPDIR) of `tmpBytes` and
    /// a minimal /dev; no host process and no host SysV IPC object; no controlling terminal
    /// but its own pty; cannot open network connections unless `network`, and cannot gain
    /// privileges.
    /// Rejects with `ERR_SANDBOX_UNAVAILABLE` naming the part this kernel cannot provide
    /// (see `containmentInfo().sandbox`); never runs the command with less.
    /// A `SandboxConfig` is configured once (its roots pinned when it was made); options are
    /// configured at this create.
    #[napi(ts_type = "SandboxOptions | SandboxConfig | null")]
    #[allow(dead_code)] // the schema of index.d.ts; read by `read` into a `SandboxSpec`
    pub sandbox: Option<SandboxOptions>,
    /// A listener attached before the command starts: it receives every byte of the output,
    /// exactly once, in order, from the first (even of a command that ends at once). Called as
    /// `onOutput()` listeners are (chunks coalesce while JS is busy, at most 256 KiB a call; a
    /// listener 2 MiB behind holds the command back until it caught up). Not a function:
    /// `ERR_INVALID_ARG`.
    #[napi(ts_type = "((chunk: Buffer, info: OutputChunkInfo) => void) | null")]
    #[allow(dead_code)]
    // the schema of index.d.ts; the function is read by `on_output_listener`
    pub on_output: Option<OnOutputListener>,
}

/// The OS sandbox of a command (`options.sandbox`).
#[napi(object, object_to_js = false)]
pub struct SandboxOptions {
    /// Absolute paths of existing directories the command may write under (symlinks are
    /// resolved once, at create). None of them may be `/` or be, contain or lie inside
    /// /proc, /sys or /dev. May be empty (only the private TMPDIR is writable).
    pub writable_roots: Vec<String>,
    /// Network access. `false` (default): a network namespace of its own with only its
    /// loopback (no sockets but unix ones, no `connect`, no TCP through Landlock, no
    /// io_uring). `true`: the host's network. `{ allow, deny }`: the network namespace whose
    /// only way out is the host's allow-list proxy (HTTP CONNECT and SOCKS5 at
    /// 127.0.0.1:3128 inside, `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` set): served by the
    /// package's `createTerminal`, `TerminalHost` and `ShellSessions` (see docs/sandbox.md).
    #[napi(ts_type = "boolean | NetworkOptions | null")]
    pub network: Option<Either<bool, NetworkOptions>>,
    /// Kept for compatibility: `true` (the default) is all it may be. The sandbox always runs
    /// the command in its own PID namespace; `false` is refused with `ERR_INVALID_ARG`.
    #[allow(dead_code)] // the schema of index.d.ts; checked when read
    pub isolate_processes: Option<bool>,
    /// Size of the private /tmp (the command's TMPDIR, also bounding what it may write there)
    /// in bytes, a positive integer (default 256 MiB; its pages are memory).
    pub tmp_bytes: Option<f64>,
}

/// `sandbox.network` as an allow list: host patterns reached through the host's proxy.
#[napi(object, object_to_js = false)]
pub struct NetworkOptions {
    /// Host patterns the command may connect to: `host`, `*.domain` (any name below it),
    /// an IP literal (`127.0.0.1`, `[::1]`), each optionally with `:port` (else every port).
    pub allow: Vec<String>,
    /// Patterns refused even when allowed (deny wins).
    pub deny: Option<Vec<String>>,
}

/// Reads `network` of a sandbox option (`field` names it): a boolean, or `{ allow, deny }`
/// with arrays of non-empty strings (the patterns' grammar is the proxy's, in the TypeScript
/// layer); unknown keys refused.
fn read_network(o: &Object, field: &str) -> Parsed<Option<Either<bool, NetworkOptions>>> {
    let v = get(o, "network")?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    if type_of(&v)? == ValueType::Boolean {
        return opt_bool(o, "network", field).map(|b| b.map(Either::A));
    }
    let n = as_object(&v, field).map_err(|_| {
        TermError::invalid_arg(format!(
            "{field} must be a boolean or {{ allow: string[], deny?: string[] }}, got {}",
            describe(&v)
        ))
    })?;
    for k in Object::keys(&n).map_err(internal)? {
        if k != "allow" && k != "deny" {
            return Err(TermError::invalid_arg(format!(
                "{field}.{k} is not a network option (known: allow, deny)"
            )));
        }
    }
    let list = |key: &str, required: bool| -> Parsed<Option<Vec<String>>> {
        let name = format!("{field}.{key}");
        let Some(items) = opt_array(&n, key, &name)? else {
            if required {
                return Err(TermError::invalid_arg(format!(
                    "{name} is required (an array of host patterns; [] refuses everything)"
                )));
            }
            return Ok(None);
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let s = as_string(item, &format!("{name}[{i}]"))?;
            if s.is_empty() || s.contains('\0') {
                return Err(TermError::invalid_arg(format!(
                    "{name}[{i}] must be a non-empty host pattern without NUL"
                )));
            }
            out.push(s);
        }
        Ok(Some(out))
    };
    Ok(Some(Either::B(NetworkOptions {
        allow: list("allow", true)?.unwrap_or_default(),
        deny: list("deny", false)?,
    })))
}

impl SandboxOptions {
    /// `options.sandbox`: a [`super::sandbox::SandboxConfig`] (configured once) or options
    /// (configured at this create).
    fn read(o: &Object) -> Parsed<SandboxSpec> {
        match super::sandbox::config_spec(o)? {
            Some(spec) => Ok(spec),
            None => Ok(Self::read_as(o, "options.sandbox")?.spec()),
        }
    }

    /// Unknown keys are refused: a misspelt key of a security option must not pass. `FIELD`
    /// names the option in errors.
    #[allow(non_snake_case)]
    pub(super) fn read_as(o: &Object, FIELD: &str) -> Parsed<Self> {
        const KEYS: [&str; 4] = ["writableRoots", "network", "isolateProcesses", "tmpBytes"];
        for k in Object::keys(o).map_err(internal)? {
            if !KEYS.contains(&k.as_str()) {
                return Err(TermError::invalid_arg(format!(
                    "{FIELD}.{k} is not a sandbox option (known: {})",
                    KEYS.join(", ")
                )));
            }
        }
        let roots =
            opt_array(o, "writableRoots", &format!("{FIELD}.writableRoots"))?.ok_or_else(|| {
                TermError::invalid_arg(format!(
                    "{FIELD}.writableRoots is required (an array of absolute paths; [] for none)"
                ))
            })?;
        let mut writable_roots = Vec::with_capacity(roots.len());
        for (i, r) in roots.iter().enumerate() {
            writable_roots.push(as_string(r, &format!("{FIELD}.writableRoots[{i}]"))?);
        }
        let isolate_processes =
            opt_bool(o, "isolateProcesses", &format!("{FIELD}.isolateProcesses"))?;
        if isolate_processes == Some(false) {
            return Err(TermError::invalid_arg(format!(
                "{FIELD}.isolateProcesses: false is not supported: a sandboxed command always \
                 runs in its own PID namespace (host processes were reachable without it)"
            )));
        }
        let tmp_bytes = opt_count(o, "tmpBytes", &format!("{FIELD}.tmpBytes"))?;
        if tmp_bytes == Some(0.0) {
            return Err(TermError::invalid_arg(format!(
                "{FIELD}.tmpBytes must be a positive integer, got 0"
            )));
        }
        Ok(Self {
            writable_roots,
            network: read_network(o, &format!("{FIELD}.network"))?,
            isolate_processes,
            tmp_bytes,
        })
    }

    pub(super) fn spec(&self) -> SandboxSpec {
        let d = SandboxSpec::default();
        SandboxSpec {
            writable_roots: self.writable_roots.clone(),
            network: matches!(self.network, Some(Either::A(true))),
            proxy: match &self.network {
                Some(Either::B(n)) => Some(crate::sandbox::NetworkRules {
                    allow: n.allow.clone(),
                    deny: n.deny.clone().unwrap_or_default(),
                }),
                _ => None,
            },
            tmp_bytes: self.tmp_bytes.map_or(d.tmp_bytes, |n| n as u64),
            pinned: None,
        }
    }
}

/// The schema of `options.onOutput` (a function). The binding reads the function itself when
/// it creates the terminal (`create_terminal`), since a JS function cannot outlive its call.
pub struct OnOutputListener;

impl TypeName for OnOutputListener {
    fn type_name() -> &'static str {
        "Function"
    }
    fn value_type() -> ValueType {
        ValueType::Function
    }
}

impl FromNapiValue for OnOutputListener {
    unsafe fn from_napi_value(
        _env: napi::sys::napi_env,
        _value: napi::sys::napi_value,
    ) -> Result<Self> {
        Ok(Self)
    }
}

impl ValidateNapiValue for OnOutputListener {}

/// `options.onOutput` of `createTerminal`, if given: a function, or `ERR_INVALID_ARG`.
pub(super) fn on_output_listener<'e>(
    options: Option<&Unknown<'e>>,
) -> Parsed<Option<super::sink::ListenerFn<'e>>> {
    let Some(o) = options else { return Ok(None) };
    if is_nullish(o)? {
        return Ok(None);
    }
    let v = get(&as_object(o, "options")?, "onOutput")?;
    match type_of(&v)? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::Function => {
            // SAFETY: the value's type was just checked to be a function.
            let f = unsafe { v.cast::<super::sink::ListenerFn<'e>>() }.map_err(internal)?;
            Ok(Some(f))
        }
        _ => Err(TermError::invalid_arg(format!(
            "options.onOutput must be a function, got {}",
            describe(&v)
        ))),
    }
}

impl CreateTerminalOptions {
    /// The options, and `sandbox` as read.
    fn read(o: &Object) -> Parsed<(Self, Option<SandboxSpec>)> {
        let s = get(o, "shell")?;
        let shell = match type_of(&s)? {
            ValueType::Undefined | ValueType::Null => None,
            ValueType::Boolean => Some(Either::A(bool::from_unknown(s).map_err(internal)?)),
            ValueType::String => Some(Either::B(as_string(&s, "options.shell")?)),
            _ => {
                return Err(TermError::invalid_arg(format!(
                    "options.shell must be false or a string, got {}",
                    describe(&s)
                )))
            }
        };
        if matches!(shell, Some(Either::A(true))) {
            return Err(TermError::invalid_arg(
                "options.shell must be false or a string (true is the default: omit it)",
            ));
        }
        let options = Self {
            shell,
            inherit_env: opt_bool(o, "inheritEnv", "options.inheritEnv")?,
            kill_grace_ms: opt_grace(&get(o, "killGraceMs")?, "options.killGraceMs")?
                .map(|d| d.as_millis() as f64),
            timeout_ms: opt_count(o, "timeoutMs", "options.timeoutMs")?,
            limits: opt_object(o, "limits", "options.limits")?
                .map(|l| ResourceLimits::read(&l))
                .transpose()?,
            pty: opt_object(o, "pty", "options.pty")?
                .map(|p| PtyOptions::read(&p))
                .transpose()?,
            stdin: opt_choice(o, "stdin", "options.stdin", &["null", "pipe"])?,
            output: opt_choice(o, "output", "options.output", &["raw", "text"])?,
            scrollback: opt_count(o, "scrollback", "options.scrollback")?,
            // Read by `on_output_listener` (the function is needed on the JS thread).
            on_output: None,
            allowed_roots: opt_array(o, "allowedRoots", "options.allowedRoots")?
                .map(|roots| {
                    roots
                        .iter()
                        .enumerate()
                        .map(|(i, r)| as_string(r, &format!("options.allowedRoots[{i}]")))
                        .collect::<Parsed<Vec<_>>>()
                })
                .transpose()?,
            sandbox: None,
        };
        let sandbox = opt_object(o, "sandbox", "options.sandbox")?
            .map(|s| SandboxOptions::read(&s))
            .transpose()?;
        Ok((options, sandbox))
    }
}

/// Size of a pseudo-terminal, in character cells.
#[napi(object, object_to_js = false)]
pub struct PtyOptions {
    /// Columns, 1 to 65535 (default 80).
    pub cols: Option<f64>,
    /// Rows, 1 to 65535 (default 24).
    pub rows: Option<f64>,
}

impl PtyOptions {
    fn read(p: &Object) -> Parsed<Self> {
        Ok(Self {
            cols: opt_dimension(p, "cols", "options.pty.cols")?.map(f64::from),
            rows: opt_dimension(p, "rows", "options.pty.rows")?.map(f64::from),
        })
    }

    fn size(&self) -> PtySize {
        let d = PtySize::default();
        PtySize {
            cols: self.cols.map_or(d.cols, |c| c as u16),
            rows: self.rows.map_or(d.rows, |r| r as u16),
        }
    }
}

/// Resource limits of the command (`setrlimit`, inherited by its children). Any other key is
/// refused (`ERR_INVALID_ARG` naming it), so a misspelled limit is never silently ignored.
#[napi(object, object_to_js = false)]
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

impl ResourceLimits {
    /// The keys a limits object may have.
    const KEYS: [&'static str; 5] = [
        "cpuSeconds",
        "addressSpaceBytes",
        "openFiles",
        "fileSizeBytes",
        "processes",
    ];

    fn read(l: &Object) -> Parsed<Self> {
        for key in Object::keys(l).map_err(internal)? {
            if !Self::KEYS.contains(&key.as_str()) {
                return Err(TermError::invalid_arg(format!(
                    "options.limits.{key} is not a limit (known: {})",
                    Self::KEYS.join(", ")
                )));
            }
        }
        let field = |key: &str| opt_count(l, key, &format!("options.limits.{key}"));
        Ok(Self {
            cpu_seconds: field("cpuSeconds")?,
            address_space_bytes: field("addressSpaceBytes")?,
            open_files: field("openFiles")?,
            file_size_bytes: field("fileSizeBytes")?,
            processes: field("processes")?,
        })
    }

    fn limits(&self) -> Limits {
        let n = |v: Option<f64>| v.map(|n| n as u64);
        Limits {
            cpu_seconds: n(self.cpu_seconds),
            address_space_bytes: n(self.address_space_bytes),
            open_files: n(self.open_files),
            file_size_bytes: n(self.file_size_bytes),
            processes: n(self.processes),
        }
    }
}

/// Reads `createTerminal(params, options)` and checks what the types alone do not say; the
/// error names the field. The core checks the rest (NUL bytes, env names, cwd, program).
pub(super) fn request(params: &Unknown, options: Option<&Unknown>) -> Parsed<TerminalRequest> {
    let p = CreateTerminalParams::read(params)?;
    let o = match options {
        Some(o) if !is_nullish(o)? => Some(CreateTerminalOptions::read(&as_object(o, "options")?)?),
        _ => None,
    };
    let (o, sandbox) = match o {
        Some((o, sandbox)) => (Some(o), sandbox),
        None => (None, None),
    };
    let mut io = Io::Pipe;
    let mut text_scrollback = None;
    if let Some(o) = &o {
        if let Some(sb) = o.scrollback {
            if sb > MAX_SCROLLBACK as f64 {
                return Err(TermError::invalid_arg(format!(
                    "options.scrollback must be at most {MAX_SCROLLBACK} lines, got {sb}"
                )));
            }
        }
        io = match (&o.pty, o.stdin.as_deref()) {
            (Some(_), Some("pipe")) => {
                return Err(TermError::invalid_arg(
                    "options.stdin 'pipe' is for pipe terminals: a pty terminal's input is the pty (omit options.stdin)",
                ))
            }
            (Some(pty), _) => Io::Pty(pty.size()),
            (None, Some("pipe")) => Io::PipeWithStdin,
            (None, _) => Io::Pipe,
        };
        if o.output.as_deref() == Some("text") {
            if o.pty.is_none() {
                return Err(TermError::invalid_arg(
                    "options.output 'text' needs options.pty (text is rendered by a terminal emulator)",
                ));
            }
            text_scrollback = Some(o.scrollback.map_or(DEFAULT_SCROLLBACK, |n| n as usize));
        }
    }
    let ms = |v: Option<f64>| v.map(|n| Duration::from_millis(n as u64));
    Ok(TerminalRequest {
        spawn: SpawnRequest {
            command: p.command,
            args: p.args.unwrap_or_default(),
            env: p
                .env
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.name, e.value))
                .collect(),
            cwd: p.cwd,
            allowed_roots: o.as_ref().and_then(|o| o.allowed_roots.clone()),
            inherit_env: o.as_ref().and_then(|o| o.inherit_env).unwrap_or(true),
            shell: match o.as_ref().and_then(|o| o.shell.as_ref()) {
                None => Shell::Default,
                Some(Either::A(_)) => Shell::Never,
                Some(Either::B(s)) => Shell::Custom(s.clone()),
            },
            limits: o
                .as_ref()
                .and_then(|o| o.limits.as_ref())
                .map(ResourceLimits::limits)
                .unwrap_or_default(),
            io,
            sandbox,
        },
        terminal: TerminalConfig {
            id: String::new(),
            session_id: p.session_id.unwrap_or_default(),
            output_byte_limit: p
                .output_byte_limit
                .map(|n| n.min(usize::MAX as f64) as usize),
            kill_grace: ms(o.as_ref().and_then(|o| o.kill_grace_ms)).unwrap_or(DEFAULT_KILL_GRACE),
            timeout: ms(o.as_ref().and_then(|o| o.timeout_ms)),
            text_scrollback,
            first_sink: None,
            hold_first_output: false,
        },
    })
}
