//! Windows' launch rules (the `rules` of [`super`]), over the pure functions of
//! [`super::wincmd`]: a shell line runs as Node's `shell: true` does (`%ComSpec% /d /s /c`),
//! environment names compare without case, a program is found through `PATH` and `PATHEXT`,
//! and a batch file's arguments are escaped for cmd or refused.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::command::Lookup;
use super::wincmd::{self, ShellKind};

fn env_value<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    let key = env_key(OsStr::new(name));
    env.iter()
        .rev()
        .find(|(k, _)| env_key(k) == key)
        .map(|(_, v)| v.as_os_str())
}

/// This process's (Node's) environment: where the interpreter and the system directory are
/// read from, never the request's (whose `ComSpec` would otherwise choose the program that runs
/// every shell line and batch file).
fn own_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

fn system_root(env: &[(OsString, OsString)]) -> PathBuf {
    env_value(env, "SystemRoot")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("C:\\Windows"))
}

/// The command interpreter, as Node's `shell: true` finds it: this process's `%ComSpec%`, else
/// `%SystemRoot%\System32\cmd.exe`.
pub fn comspec() -> PathBuf {
    let env = own_env();
    env_value(&env, "ComSpec")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| system_root(&env).join("System32").join("cmd.exe"))
}

/// The shell a line runs in when the request names none: cmd.exe ([`comspec`]).
pub fn default_shell() -> String {
    comspec().to_string_lossy().into_owned()
}

/// The argv that runs `line` with `shell`, by the shell's kind (what the launch's command
/// line is built from): cmd `/d /s /c <line>`, PowerShell `-NoLogo -NoProfile
/// -NonInteractive -Command <line>`, a POSIX shell `-c <line>`.
pub fn shell_argv(shell: &str, line: &str) -> Vec<OsString> {
    let flags: &[&str] = match wincmd::shell_kind(shell) {
        ShellKind::Cmd => &["/d", "/s", "/c"],
        ShellKind::PowerShell => &["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"],
        ShellKind::Posix => &["-c"],
    };
    std::iter::once(shell)
        .chain(flags.iter().copied())
        .chain(std::iter::once(line))
        .map(OsString::from)
        .collect()
}

/// The key environment names are compared by: ASCII upper case (`Path` is `PATH`).
pub fn env_key(name: &OsStr) -> OsString {
    wincmd::env_key(name)
}

/// The search path when the environment has none: `%SystemRoot%\System32;%SystemRoot%` (this
/// process's `SystemRoot`).
pub fn default_path() -> OsString {
    let root = system_root(&own_env());
    format!("{};{}", root.join("System32").display(), root.display()).into()
}

/// Whether `name` is a path (a directory part or a drive) rather than a name to search for.
pub fn is_path(name: &str) -> bool {
    wincmd::is_path_like(name)
}

/// Finds the file Windows would run for `name` ([`wincmd::find_program`]: `PATH` in order,
/// each directory with `PATHEXT`'s extensions; a path relative to `cwd`; never the current
/// directory for a bare name). Every candidate is an executable there: nothing is "found but
/// not executable".
pub fn find_program(name: &str, path_var: &OsStr, pathext: Option<&OsStr>, cwd: &Path) -> Lookup {
    let pathext = pathext
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| wincmd::DEFAULT_PATHEXT.into());
    match wincmd::find_program(name, &path_var.to_string_lossy(), &pathext, cwd, |p| {
        p.is_file()
    }) {
        Some(p) => Lookup::Found(p),
        None => Lookup::NotFound,
    }
}

/// Whether `args` can reach `program` exactly: a batch file (`.cmd`, `.bat`) is run by cmd,
/// whose escaping cannot carry every argument; what it cannot carry is refused, naming the
/// argument (`args[i]`) and why: never passed on to be interpreted as a command.
pub fn check_args(program: &Path, args: &[OsString]) -> Result<(), String> {
    let wide: Vec<Vec<u16>> = args
        .iter()
        .map(|a| wincmd::wide(&a.to_string_lossy()))
        .collect();
    wincmd::direct_command(program, &[], &wide, &comspec())
        .map(drop)
        .map_err(|(which, why)| wincmd::refusal_message(which, why))
}
