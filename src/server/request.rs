//! A `create` request of the server protocol (JSON: the ACP `params` and the `createTerminal`
//! `options`, as the Node binding takes them) -> the core's [`TerminalRequest`]. The same checks
//! as `binding/options.rs`, with the same field names in the errors, so a remote create is
//! refused exactly as a local one would be. Unknown keys of `limits` and `sandbox` are refused.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::TermError;
use crate::render::{DEFAULT_SCROLLBACK, MAX_SCROLLBACK};
use crate::sandbox::SandboxSpec;
use crate::spawn::{Io, Limits, Shell, SpawnRequest};
use crate::start::TerminalRequest;
use crate::sys::pty::PtySize;
use crate::terminal::{TerminalConfig, DEFAULT_KILL_GRACE};

type Parsed<T> = Result<T, TermError>;

/// Largest integer a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
/// Longest kill grace (as the binding's `MAX_GRACE_MS`).
const MAX_GRACE_MS: f64 = 600_000.0;

fn bad(msg: String) -> TermError {
    TermError::invalid_arg(msg)
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The value of `key`, `None` when absent or null.
fn field<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

fn as_object<'a>(v: &'a Value, name: &str) -> Parsed<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| bad(format!("{name} must be an object, got {}", describe(v))))
}

fn opt_object<'a>(
    o: &'a Map<String, Value>,
    key: &str,
    name: &str,
) -> Parsed<Option<&'a Map<String, Value>>> {
    field(o, key).map(|v| as_object(v, name)).transpose()
}

fn as_string(v: &Value, name: &str) -> Parsed<String> {
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| bad(format!("{name} must be a string, got {}", describe(v))))
}

fn opt_string(o: &Map<String, Value>, key: &str, name: &str) -> Parsed<Option<String>> {
    field(o, key).map(|v| as_string(v, name)).transpose()
}

fn opt_bool(o: &Map<String, Value>, key: &str, name: &str) -> Parsed<Option<bool>> {
    field(o, key)
        .map(|v| {
            v.as_bool()
                .ok_or_else(|| bad(format!("{name} must be a boolean, got {}", describe(v))))
        })
        .transpose()
}

fn opt_strings(o: &Map<String, Value>, key: &str, name: &str) -> Parsed<Option<Vec<String>>> {
    let Some(v) = field(o, key) else {
        return Ok(None);
    };
    let items = v
        .as_array()
        .ok_or_else(|| bad(format!("{name} must be an array, got {}", describe(v))))?;
    items
        .iter()
        .enumerate()
        .map(|(i, s)| as_string(s, &format!("{name}[{i}]")))
        .collect::<Parsed<Vec<_>>>()
        .map(Some)
}

/// A non-negative safe integer, or `None` when absent or null.
fn opt_count(o: &Map<String, Value>, key: &str, name: &str) -> Parsed<Option<f64>> {
    let Some(v) = field(o, key) else {
        return Ok(None);
    };
    let Some(n) = v.as_f64() else {
        return Err(bad(format!(
            "{name} must be a non-negative integer, got {}",
            describe(v)
        )));
    };
    if !n.is_finite() || n < 0.0 || n.fract() != 0.0 || n > MAX_SAFE {
        return Err(bad(format!(
            "{name} must be a non-negative integer no larger than 2^53-1, got {n}"
        )));
    }
    Ok(Some(n))
}

/// A terminal dimension: an integer from 1 to 65535.
pub(super) fn dimension(v: &Value, name: &str) -> Parsed<u16> {
    match v.as_f64() {
        Some(n) if (1.0..=65535.0).contains(&n) && n.fract() == 0.0 => Ok(n as u16),
        Some(n) => Err(bad(format!(
            "{name} must be an integer from 1 to 65535, got {n}"
        ))),
        None => Err(bad(format!(
            "{name} must be an integer from 1 to 65535, got {}",
            describe(v)
        ))),
    }
}

fn opt_dimension(o: &Map<String, Value>, key: &str, name: &str) -> Parsed<Option<u16>> {
    field(o, key).map(|v| dimension(v, name)).transpose()
}

fn opt_choice(
    o: &Map<String, Value>,
    key: &str,
    name: &str,
    allowed: &[&str],
) -> Parsed<Option<String>> {
    let Some(s) = opt_string(o, key, name)? else {
        return Ok(None);
    };
    if !allowed.contains(&s.as_str()) {
        let list: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
        return Err(bad(format!(
            "{name} must be {}, got '{s}'",
            list.join(" or ")
        )));
    }
    Ok(Some(s))
}

fn only_keys(o: &Map<String, Value>, known: &[&str], name: &str, what: &str) -> Parsed<()> {
    match o.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(bad(format!(
            "{name}.{k} is not {what} (known: {})",
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

fn limits(o: &Map<String, Value>) -> Parsed<Limits> {
    const KEYS: [&str; 5] = [
        "cpuSeconds",
        "addressSpaceBytes",
        "openFiles",
        "fileSizeBytes",
        "processes",
    ];
    only_keys(o, &KEYS, "options.limits", "a limit")?;
    let n = |key: &str| -> Parsed<Option<u64>> {
        Ok(opt_count(o, key, &format!("options.limits.{key}"))?.map(|n| n as u64))
    };
    Ok(Limits {
        cpu_seconds: n("cpuSeconds")?,
        address_space_bytes: n("addressSpaceBytes")?,
        open_files: n("openFiles")?,
        file_size_bytes: n("fileSizeBytes")?,
        processes: n("processes")?,
    })
}

fn sandbox(o: &Map<String, Value>) -> Parsed<SandboxSpec> {
    const NAME: &str = "options.sandbox";
    const KEYS: [&str; 4] = ["writableRoots", "network", "isolateProcesses", "tmpBytes"];
    only_keys(o, &KEYS, NAME, "a sandbox option")?;
    let writable_roots = opt_strings(o, "writableRoots", "options.sandbox.writableRoots")?
        .ok_or_else(|| {
            bad(format!(
                "{NAME}.writableRoots is required (an array of absolute paths; [] for none)"
            ))
        })?;
    if opt_bool(o, "isolateProcesses", "options.sandbox.isolateProcesses")? == Some(false) {
        return Err(bad(format!(
            "{NAME}.isolateProcesses: false is not supported: a sandboxed command always \
             runs in its own PID namespace (host processes were reachable without it)"
        )));
    }
    let tmp_bytes = opt_count(o, "tmpBytes", "options.sandbox.tmpBytes")?;
    if tmp_bytes == Some(0.0) {
        return Err(bad(format!(
            "{NAME}.tmpBytes must be a positive integer, got 0"
        )));
    }
    if let Some(Value::Object(_)) = field(o, "network") {
        return Err(bad(format!(
            "{NAME}.network: {{ allow, deny }} is not supported at the far end: the allow-list \
             proxy runs in the host's Node process; give true or false"
        )));
    }
    let d = SandboxSpec::default();
    Ok(SandboxSpec {
        writable_roots,
        network: opt_bool(o, "network", "options.sandbox.network")?.unwrap_or(d.network),
        proxy: None,
        tmp_bytes: tmp_bytes.map_or(d.tmp_bytes, |n| n as u64),
        // Plain options are configured at each create, as the addon does for plain options.
        pinned: None,
    })
}

/// Reads a `create` request's `params` and `options` (null or absent: none).
pub fn request(params: &Value, options: Option<&Value>) -> Parsed<TerminalRequest> {
    let p = as_object(params, "params")?;
    let command = as_string(p.get("command").unwrap_or(&Value::Null), "command")?;
    let args = opt_strings(p, "args", "args")?.unwrap_or_default();
    let mut env = Vec::new();
    if let Some(v) = field(p, "env") {
        let items = v
            .as_array()
            .ok_or_else(|| bad(format!("env must be an array, got {}", describe(v))))?;
        for (i, e) in items.iter().enumerate() {
            let o = as_object(e, &format!("env[{i}]"))?;
            let get = |k: &str| o.get(k).unwrap_or(&Value::Null);
            env.push((
                as_string(get("name"), &format!("env[{i}].name"))?,
                as_string(get("value"), &format!("env[{i}].value"))?,
            ));
        }
    }
    let empty = Map::new();
    let o = match options.filter(|v| !v.is_null()) {
        Some(v) => as_object(v, "options")?,
        None => &empty,
    };
    let shell = match field(o, "shell") {
        None => Shell::Default,
        Some(Value::Bool(false)) => Shell::Never,
        Some(Value::String(s)) => Shell::Custom(s.clone()),
        Some(Value::Bool(true)) => {
            return Err(bad(
                "options.shell must be false or a string (true is the default: omit it)".into(),
            ))
        }
        Some(v) => {
            return Err(bad(format!(
                "options.shell must be false or a string, got {}",
                describe(v)
            )))
        }
    };
    let kill_grace = match field(o, "killGraceMs") {
        None => DEFAULT_KILL_GRACE,
        Some(v) => match v.as_f64() {
            Some(n) if (0.0..=MAX_GRACE_MS).contains(&n) && n.fract() == 0.0 => {
                Duration::from_millis(n as u64)
            }
            _ => {
                let got = v
                    .as_f64()
                    .map_or(describe(v).to_string(), |n| n.to_string());
                return Err(bad(format!(
                    "options.killGraceMs must be an integer from 0 to {MAX_GRACE_MS} (milliseconds), got {got}"
                )));
            }
        },
    };
    let pty = opt_object(o, "pty", "options.pty")?
        .map(|p| -> Parsed<PtySize> {
            let d = PtySize::default();
            Ok(PtySize {
                cols: opt_dimension(p, "cols", "options.pty.cols")?.unwrap_or(d.cols),
                rows: opt_dimension(p, "rows", "options.pty.rows")?.unwrap_or(d.rows),
            })
        })
        .transpose()?;
    let stdin = opt_choice(o, "stdin", "options.stdin", &["null", "pipe"])?;
    let output = opt_choice(o, "output", "options.output", &["raw", "text"])?;
    let scrollback = opt_count(o, "scrollback", "options.scrollback")?;
    if let Some(sb) = scrollback {
        if sb > MAX_SCROLLBACK as f64 {
            return Err(bad(format!(
                "options.scrollback must be at most {MAX_SCROLLBACK} lines, got {sb}"
            )));
        }
    }
    let io = match (pty, stdin.as_deref()) {
        (Some(_), Some("pipe")) => {
            return Err(bad(
                "options.stdin 'pipe' is for pipe terminals: a pty terminal's input is the pty (omit options.stdin)".into(),
            ))
        }
        (Some(size), _) => Io::Pty(size),
        (None, Some("pipe")) => Io::PipeWithStdin,
        (None, _) => Io::Pipe,
    };
    let text_scrollback = if output.as_deref() == Some("text") {
        if pty.is_none() {
            return Err(bad(
                "options.output 'text' needs options.pty (text is rendered by a terminal emulator)"
                    .into(),
            ));
        }
        Some(scrollback.map_or(DEFAULT_SCROLLBACK, |n| n as usize))
    } else {
        None
    };
    Ok(TerminalRequest {
        spawn: SpawnRequest {
            command,
            args,
            env,
            cwd: opt_string(p, "cwd", "cwd")?,
            allowed_roots: opt_strings(o, "allowedRoots", "options.allowedRoots")?,
            inherit_env: opt_bool(o, "inheritEnv", "options.inheritEnv")?.unwrap_or(true),
            shell,
            limits: opt_object(o, "limits", "options.limits")?
                .map(limits)
                .transpose()?
                .unwrap_or_default(),
            io,
            sandbox: opt_object(o, "sandbox", "options.sandbox")?
                .map(sandbox)
                .transpose()?,
        },
        terminal: TerminalConfig {
            id: String::new(),
            session_id: opt_string(p, "sessionId", "sessionId")?.unwrap_or_default(),
            output_byte_limit: opt_count(p, "outputByteLimit", "outputByteLimit")?
                .map(|n| n.min(usize::MAX as f64) as usize),
            kill_grace,
            timeout: opt_count(o, "timeoutMs", "options.timeoutMs")?
                .map(|n| Duration::from_millis(n as u64)),
            text_scrollback,
            first_sink: None,
            hold_first_output: false,
        },
    })
}
