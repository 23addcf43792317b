//! The OS sandbox of a terminal: what a command and everything it starts may do. This comment
//! is the whole design; each step is one module, composed by the spawn path
//! ([`crate::spawn`]) through the platform launcher's two hooks ([`crate::sys::spawn::Isolation`]
//! and [`crate::sys::spawn::ChildStep`]), which know nothing of sandboxes.
//!
//! It is the construction of bubblewrap (Flatpak), Codex's Linux sandbox and sandbox-runtime,
//! built into the addon (no `bwrap` binary needed):
//!
//! - [`namespaces`]: new mount, PID and IPC namespaces (inside a user namespace that maps only
//!   the caller's uid and gid where it is not root with CAP_SYS_ADMIN), made by the launch's
//!   intermediate process, whose namespace init (pid 1, SIGCHLD ignored, waiting in the
//!   program of [`init`]) holds them until release; the network and IPC namespaces are a pair made
//!   ahead by [`netpool`] when one is ready (each serves one command); for a configuration
//!   launched in a burst, the whole of it (namespaces, tree, init) is made ahead by [`premade`]
//!   and joined with one `setns` (each serves one command). Release SIGKILLs the init
//!   and the kernel ends everything in the namespace, its tmpfs and its IPC objects with it. No host process exists in the PID namespace (no
//!   signal, ptrace, `prlimit`, `setpriority`, `sched_*` or `/proc/<pid>` reaches one); no host
//!   SysV object exists in the IPC namespace.
//! - [`mounts`]: the host's tree bound read-only, `nosuid`, `nodev`; the writable roots bound
//!   read-write; a minimal `/dev`; a private tmpfs of `tmpBytes` (default
//!   [`DEFAULT_TMP_BYTES`]) as `/tmp` and TMPDIR; the namespace's own read-only `/proc`. Writes
//!   and metadata changes (`chmod`, `utimes`, xattrs) outside the roots fail with `EROFS`.
//! - A new session for every command (`setsid`): a pipe terminal has no controlling terminal
//!   (`/dev/tty` does not exist for it), a pty terminal has only its own pty.
//! - [`child`], in the command right before `execve`: descriptors above 2 close-on-exec;
//!   root's capabilities locked away (`SECBIT_NOROOT`, locked) and every capability dropped;
//!   `no_new_privs`; the [`landlock`] domain (the second wall for writes; TCP rules from ABI 4;
//!   signal and abstract-socket scoping from ABI 6); the [`seccomp`] filter (no `TIOCSTI` or
//!   `TIOCLINUX`, no `clone3`, and without network no socket but unix ones, no `connect`, no
//!   io_uring).
//! - [`proxy`]: with `network: { allow, deny }`, the network namespace gets a TCP listener on
//!   [`PROXY_ADDR`], made by C inside the namespace and passed to the host over a socketpair
//!   (`SCM_RIGHTS`) before anything runs there; the host (the TypeScript layer) serves the
//!   allow-list proxy on it from its own namespace. The command gets the proxy variables; its
//!   seccomp filter allows IP sockets and `connect` (the namespace has no route out) but no
//!   unix socket it could connect elsewhere; Landlock (ABI >= 4) allows TCP connects only to
//!   the proxy's port.
//! - Resource limits and cgroups are the launch's own steps, as without a sandbox.
//!
//! Fail closed: [`prepare_launch`] checks each part against what this kernel provides ([`support`])
//! and answers `ERR_SANDBOX_UNAVAILABLE` naming the part and what the user can do; a part the
//! kernel refuses at launch is the same error naming the step. Nothing runs with less.
//!
//! Reads are not restricted: the command can read whatever the user running Node can.
//!
//! Linux only (`linux.rs`): elsewhere (`none.rs`) [`prepare_launch`] rejects every sandbox with `ERR_SANDBOX_UNAVAILABLE`.

use std::path::PathBuf;

use crate::error::TermError;

#[cfg(target_os = "linux")]
pub mod child;
#[cfg(target_os = "linux")]
mod cleanup;
#[cfg(target_os = "linux")]
mod init;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
pub mod namespaces;
#[cfg(target_os = "linux")]
mod netpool;
#[cfg(target_os = "linux")]
mod premade;
#[cfg(target_os = "linux")]
pub mod proxy;
#[cfg(target_os = "linux")]
pub mod roots;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod support;

// The platform's part: Linux's sandbox, or elsewhere a refusal of every one.
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(target_os = "linux"))]
mod none;
#[cfg(not(target_os = "linux"))]
use none as imp;

pub use imp::{
    prepare_launch, step_error, support, NetworkListener, Pinned, SandboxGuard, NEW_SESSION,
};

/// Error code of a sandbox part this kernel (or this process) cannot provide.
pub const ERR_SANDBOX_UNAVAILABLE: &str = "ERR_SANDBOX_UNAVAILABLE";

/// What the caller asks for (not yet validated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Directories the command may write under (absolute, existing).
    pub writable_roots: Vec<String>,
    /// Allow network connections (default false).
    pub network: bool,
    /// `network: { allow, deny }`: a network namespace whose only way out is the host's
    /// allow-list proxy (`network` is then false). The patterns are kept for the host's proxy
    /// (the TypeScript layer matches them); the core only makes the listener.
    pub proxy: Option<NetworkRules>,
    /// Size of the private /tmp in bytes (default [`DEFAULT_TMP_BYTES`]).
    pub tmp_bytes: u64,
    /// The writable roots pinned once, when the sandbox was configured ([`pin`]); `None`:
    /// each create pins `writable_roots` itself.
    pub pinned: Option<Pinned>,
}

/// The host patterns of `network: { allow, deny }`, as given (non-empty strings).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetworkRules {
    /// Hosts the command may reach through the proxy.
    pub allow: Vec<String>,
    /// Hosts it may not, even when allowed.
    pub deny: Vec<String>,
}

/// Where the proxy listens inside a sandbox's network namespace (a fresh namespace: the port
/// is always free): HTTP (CONNECT and absolute-form requests) and SOCKS5 on one port.
pub const PROXY_ADDR: ([u8; 4], u16) = ([127, 0, 0, 1], 3128);

/// The environment a command behind the proxy gets (replacing any value it had), and the
/// variables removed (`NO_PROXY` would let a client skip the proxy, which only fails).
pub fn proxy_env() -> (Vec<(String, String)>, &'static [&'static str]) {
    let ([a, b, c, d], port) = PROXY_ADDR;
    let http = format!("http://{a}.{b}.{c}.{d}:{port}");
    let socks = format!("socks5h://{a}.{b}.{c}.{d}:{port}");
    let mut env = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
    ] {
        env.push((name.to_string(), value.clone()));
        env.push((name.to_ascii_lowercase(), value.clone()));
    }
    (env, &["NO_PROXY", "no_proxy"])
}

/// Validates `spec`'s writable roots and pins them (see [`roots`]), once for every create
/// of a configuration (`field` names the option in errors). Elsewhere than Linux: refused as
/// every sandbox is.
pub fn pin(spec: &SandboxSpec, field: &str) -> Result<Pinned, TermError> {
    let resolved = validate_roots(spec, field)?;
    imp::pin(&resolved, field)
}

/// The default size of a sandbox's private /tmp (`sandbox.tmpBytes`): 256 MiB. Its pages are
/// memory, charged to the terminal's memory cgroup where there is one.
pub const DEFAULT_TMP_BYTES: u64 = 256 << 20;

impl Default for SandboxSpec {
    fn default() -> Self {
        Self {
            writable_roots: Vec::new(),
            network: false,
            proxy: None,
            tmp_bytes: DEFAULT_TMP_BYTES,
            pinned: None,
        }
    }
}

/// What this kernel and process provide for sandboxes (`containmentInfo().sandbox`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Support {
    /// Landlock ABI version (0: no Landlock).
    pub landlock_abi: u32,
    /// Writes limited to the writable roots (Landlock ABI >= 3, which also covers truncate).
    pub filesystem: bool,
    /// How network access is refused: `"landlock+seccomp"` (ABI >= 4: TCP rules too) or
    /// `"seccomp"`; `None` when seccomp filters are unavailable.
    pub network: Option<&'static str>,
    /// How signals to processes outside the terminal are refused: `"landlock"` (ABI >= 6);
    /// `None` otherwise (a PID namespace then stands in for it, see `process_isolation`).
    pub signal_scoping: Option<&'static str>,
    /// Abstract unix sockets outside the terminal unreachable (Landlock ABI >= 6).
    pub abstract_unix_scoping: bool,
    /// How the namespaces (mount, PID, IPC) are made: `"pid-namespace"` (with
    /// CAP_SYS_ADMIN) or `"user+pid-namespace"` (unprivileged user namespaces); `None`
    /// when namespaces are refused.
    pub process_isolation: Option<&'static str>,
    /// Why the missing parts are missing (empty when everything is there).
    pub reasons: Vec<String>,
}

fn unavailable(part: &str, why: impl std::fmt::Display) -> TermError {
    TermError::new(
        ERR_SANDBOX_UNAVAILABLE,
        format!("sandbox: {part} is not available here: {why}"),
    )
}

/// Directories no writable root may be, contain, or lie inside: writing there would undo the
/// sandbox (cgroup moves, sysctls, raw devices).
const FORBIDDEN: &[&str] = &["/proc", "/sys", "/dev"];

/// Checks the writable roots: absolute paths of existing directories, resolved through
/// symlinks, none of them `/` nor in or around /proc, /sys or /dev. `field` names the option
/// in errors (e.g. `options.sandbox`).
pub fn validate_roots(spec: &SandboxSpec, field: &str) -> Result<Vec<PathBuf>, TermError> {
    let mut out = Vec::with_capacity(spec.writable_roots.len());
    for (i, root) in spec.writable_roots.iter().enumerate() {
        let name = format!("{field}.writableRoots[{i}]");
        if root.contains('\0') {
            return Err(TermError::invalid_arg(format!(
                "{name} contains a NUL byte"
            )));
        }
        let path = std::path::Path::new(root);
        if !path.is_absolute() {
            return Err(TermError::invalid_arg(format!(
                "{name} must be an absolute path, got `{root}`"
            )));
        }
        let real = std::fs::canonicalize(path)
            .map_err(|e| TermError::invalid_arg(format!("{name} `{root}`: {e}")))?;
        if !real.is_dir() {
            return Err(TermError::invalid_arg(format!(
                "{name} `{root}` is not a directory"
            )));
        }
        for f in FORBIDDEN {
            let f = std::path::Path::new(f);
            if real.starts_with(f) || f.starts_with(&real) {
                return Err(TermError::invalid_arg(format!(
                    "{name} `{root}` (resolved `{}`) may not be, contain or lie inside {}: \
                     writing there would undo the sandbox",
                    real.display(),
                    f.display()
                )));
            }
        }
        out.push(real);
    }
    Ok(out)
}

// Unix paths and processes (Windows refuses every sandbox: ERR_SANDBOX_UNAVAILABLE).
#[cfg(all(test, unix))]
mod tests;
