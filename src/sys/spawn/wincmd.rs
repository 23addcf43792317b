//! Windows' launch rules as pure functions: the command line a program receives (MSVC
//! quoting), the command line a batch file (`.cmd`/`.bat`) is run with (cmd's escaping, or a
//! refusal), program lookup through `PATH` and `PATHEXT`, case-insensitive environment names,
//! the environment block, and the shell line (`%ComSpec% /d /s /c`).
//!
//! Nothing here calls Windows: strings are UTF-16 code units (what `CreateProcessW` takes, and
//! lossless for any Windows string) and the file system is a function, so every rule is
//! exercised by `cargo test` on any platform. `windows.rs` calls these.

use std::path::{Path, PathBuf};

/// UTF-16 of `s` (tests and ASCII constants).
pub fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

const QUOTE: u16 = b'"' as u16;
const BACKSLASH: u16 = b'\\' as u16;

/// Appends `arg` to `line` so that a program parsing its command line the MSVC way
/// (`CommandLineToArgvW`, the C runtime, Node, Rust, Python) gets `arg` back exactly:
/// unquoted when it has no space, tab, newline or quote and is not empty; otherwise in
/// quotes, with each `"` preceded by a backslash, and backslashes doubled where they precede a
/// `"` (inside the argument or the closing one). Other characters (`% & | < > ^`, non-ASCII)
/// mean nothing to that parser and pass as they are: no shell reads this line.
pub fn push_msvc_arg(line: &mut Vec<u16>, arg: &[u16]) {
    let needs_quotes = arg.is_empty()
        || arg
            .iter()
            .any(|&c| matches!(c, 0x20 | 0x09 | 0x0a | 0x0b) || c == QUOTE);
    if !needs_quotes {
        line.extend_from_slice(arg);
        return;
    }
    line.push(QUOTE);
    let mut backslashes = 0usize;
    for &c in arg {
        if c == BACKSLASH {
            backslashes += 1;
            continue;
        }
        if c == QUOTE {
            // n backslashes before a quote: 2n + 1, then the quote.
            line.extend(std::iter::repeat_n(BACKSLASH, 2 * backslashes + 1));
        } else {
            line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
        }
        backslashes = 0;
        line.push(c);
    }
    // Before the closing quote: 2n, so none of them escapes it.
    line.extend(std::iter::repeat_n(BACKSLASH, 2 * backslashes));
    line.push(QUOTE);
}

/// The command line for executing `program` (argv[0] as given by the caller) with `args`:
/// every part quoted by [`push_msvc_arg`], separated by one space. argv[0] is quoted the same
/// way; a program name cannot contain `"` on Windows, so it never needs escaping there.
pub fn msvc_command_line(argv0: &[u16], args: &[Vec<u16>]) -> Vec<u16> {
    let mut line = Vec::new();
    push_msvc_arg(&mut line, argv0);
    for a in args {
        line.push(b' ' as u16);
        push_msvc_arg(&mut line, a);
    }
    line
}

/// Why a batch file's argument is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchRefusal {
    /// `%` expands variables even inside quotes, and cmd has no escape for it on a command
    /// line: `%PATH%` or `%=exitcode%` would reach the script expanded.
    Percent,
    /// A line break ends cmd's command: what follows would run as another command.
    LineBreak,
    /// A NUL cannot be passed at all.
    Nul,
    /// The batch file's own path contains `"` or `%` (not a file name Windows allows, or one
    /// cmd would expand).
    Script,
}

impl BatchRefusal {
    /// What the refused value contains, for an error message.
    pub fn reason(self) -> &'static str {
        match self {
            BatchRefusal::Percent => {
                "contains '%', which cmd.exe expands even when quoted: a batch file (.cmd/.bat) \
                 cannot receive it safely"
            }
            BatchRefusal::LineBreak => {
                "contains a line break, which would end cmd.exe's command: a batch file \
                 (.cmd/.bat) cannot receive it safely"
            }
            BatchRefusal::Nul => "contains a NUL character",
            BatchRefusal::Script => "names a batch file whose path contains '\"' or '%'",
        }
    }
}

/// Characters that keep an argument of a batch file unquoted: cmd reads everything else
/// specially somewhere (`& | < > ^ ( ) !`, the separators `space tab , ; =`, quotes) or it is
/// not ASCII, and any of those is quoted.
fn batch_plain(c: u16) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a)
        || matches!(
            char::from_u32(u32::from(c)),
            Some('-' | '_' | '.' | '/' | '\\' | ':' | '+' | '@' | '#' | '$' | '~' | '*' | '?')
        )
}

/// The arguments `cmd.exe` gets to run batch file `script` with `args`, after `/d /e:ON /v:OFF
/// /s /c` (so that no AutoRun command runs, `!` is not expanded, and cmd strips exactly the
/// outer pair of quotes): `""<script>" <arg> <arg>"`.
///
/// cmd, not the MSVC parser, reads this line first: inside double quotes `& | < > ^ ( )` are
/// plain characters, so an argument with any character outside a small plain set is quoted; a
/// `"` in it is doubled (cmd closes and reopens its quoting, and the program the script hands
/// `%*` to reads `""` inside quotes as one `"`); backslashes before the closing quote are
/// doubled for that program's MSVC parser. What cmd would still interpret inside quotes is
/// refused, with the index of the argument: `%` (variable expansion), line breaks (a new
/// command) and NUL. This is CVE-2024-24576's class: an argument must never become a command.
pub fn batch_command_line(
    script: &[u16],
    args: &[Vec<u16>],
) -> Result<Vec<u16>, (Option<usize>, BatchRefusal)> {
    if script.iter().any(|&c| c == QUOTE || c == b'%' as u16) {
        return Err((None, BatchRefusal::Script));
    }
    let mut line = wide("\"\"");
    line.extend_from_slice(script);
    line.push(QUOTE);
    for (i, arg) in args.iter().enumerate() {
        for &c in arg {
            let refusal = match c {
                0 => BatchRefusal::Nul,
                0x0a | 0x0d => BatchRefusal::LineBreak,
                0x25 => BatchRefusal::Percent,
                _ => continue,
            };
            return Err((Some(i), refusal));
        }
        line.push(b' ' as u16);
        if !arg.is_empty() && arg.iter().all(|&c| batch_plain(c)) {
            line.extend_from_slice(arg);
            continue;
        }
        line.push(QUOTE);
        let mut backslashes = 0usize;
        for &c in arg {
            if c == QUOTE {
                // For the MSVC parser after cmd: backslashes before a quote are doubled so
                // they stay backslashes; the doubled quote is one literal quote.
                line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
                line.extend([QUOTE, QUOTE]);
                backslashes = 0;
                continue;
            }
            backslashes = if c == BACKSLASH { backslashes + 1 } else { 0 };
            line.push(c);
        }
        line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
        line.push(QUOTE);
    }
    line.push(QUOTE);
    Ok(line)
}

/// What `CreateProcessW` is given for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WinCommand {
    /// The executable Windows loads (nothing is searched).
    pub application: PathBuf,
    /// The command line (no terminating NUL).
    pub command_line: Vec<u16>,
}

/// The command for a direct (argv) request: `program` (resolved, absolute) with `args`.
/// An executable gets [`msvc_command_line`] with `argv0` (the name as the request gave it);
/// a batch file (`.cmd`/`.bat`) is run by `comspec` (cmd.exe) with
/// `/d /e:ON /v:OFF /s /c` and [`batch_command_line`], or refused (the index of the argument,
/// `None` for the script's own path).
pub fn direct_command(
    program: &Path,
    argv0: &[u16],
    args: &[Vec<u16>],
    comspec: &Path,
) -> Result<WinCommand, (Option<usize>, BatchRefusal)> {
    if !is_batch(program) {
        return Ok(WinCommand {
            application: program.to_path_buf(),
            command_line: msvc_command_line(argv0, args),
        });
    }
    let script = wide(&program.to_string_lossy());
    let mut line = Vec::new();
    push_msvc_arg(&mut line, &wide(&comspec.to_string_lossy()));
    line.extend(wide(" /d /e:ON /v:OFF /s /c "));
    line.extend(batch_command_line(&script, args)?);
    Ok(WinCommand {
        application: comspec.to_path_buf(),
        command_line: line,
    })
}

/// The message of a refused batch-file request: which field (`args[i]`, or `command` for the
/// script itself) and why.
pub fn refusal_message(which: Option<usize>, why: BatchRefusal) -> String {
    match which {
        Some(i) => format!("args[{i}] {}", why.reason()),
        None => format!("command {}", why.reason()),
    }
}

/// Whether `program` is run by cmd.exe whatever the caller does (its extension is `.cmd` or
/// `.bat`, in any case).
pub fn is_batch(program: &Path) -> bool {
    program
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"))
}

/// `PATHEXT` when the environment has none.
pub const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// Whether `name` names a path (has a directory part or a drive) rather than a bare program
/// name to search `PATH` for.
pub fn is_path_like(name: &str) -> bool {
    name.contains(['/', '\\', ':'])
}

/// The extensions of `pathext` (`.COM;.EXE;...`), lower-cased, empty entries and entries not
/// starting with a dot dropped.
fn extensions(pathext: &str) -> Vec<String> {
    pathext
        .split(';')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| e.len() > 1 && e.starts_with('.'))
        .collect()
}

/// The files a name stands for, in the order they are tried: the name itself when its
/// extension is one of `PATHEXT`'s (`node.exe`, `npm.cmd`), then the name with each of
/// `PATHEXT`'s extensions appended (`npm` -> `npm.com`, `npm.exe`, `npm.bat`, `npm.cmd`).
fn candidates(name: &str, pathext: &str) -> Vec<String> {
    let exts = extensions(pathext);
    let lower = name.to_ascii_lowercase();
    let mut out = Vec::new();
    if exts.iter().any(|e| lower.ends_with(e.as_str())) {
        out.push(name.to_string());
    }
    out.extend(exts.iter().map(|e| format!("{name}{e}")));
    out
}

/// The directories of a Windows `PATH` value (`;`-separated, entries may be quoted, empty
/// ones skipped).
pub fn path_dirs(path_var: &str) -> Vec<PathBuf> {
    path_var
        .split(';')
        .map(|d| d.trim().trim_matches('"'))
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Finds the file Windows would run for `name`, as `where`/Node's `cross-spawn` do:
/// a path-like name (`.\x`, `C:\x`, `bin/x`) relative to `cwd`, otherwise each `PATH`
/// directory in order, each trying [`candidates`]. The current directory is NOT searched for a
/// bare name (what Windows' `NoDefaultCurrentDirectoryInExePath` and Rust's `Command` do): a
/// checkout holding `git.exe` cannot take over `git`. `is_file` is the file system.
pub fn find_program(
    name: &str,
    path_var: &str,
    pathext: &str,
    cwd: &Path,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let dirs = if is_path_like(name) {
        vec![cwd.to_path_buf()]
    } else {
        path_dirs(path_var)
    };
    dirs.iter()
        .flat_map(|d| {
            candidates(name, pathext)
                .into_iter()
                .map(move |c| d.join(c))
        })
        .find(|p| is_file(p))
}

/// Finds the `bash.exe` a ShellSession runs on Windows: Git for Windows' (or MSYS2's) bash
/// through `PATH`, then in Git's usual install directories (`<dir>\Git\bin\bash.exe` for each
/// of `install_dirs`: `%ProgramFiles%`, `%ProgramFiles(x86)%`, `%LocalAppData%\Programs`).
/// `%SystemRoot%\System32\bash.exe` is skipped wherever it appears: it is WSL's launcher,
/// which runs a Linux bash in another file system, not a shell for this machine's paths.
pub fn find_bash(
    path_var: &str,
    pathext: &str,
    system_root: &Path,
    install_dirs: &[PathBuf],
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    // Windows compares paths without case, and `/` is `\` there.
    let key = |p: &Path| {
        p.to_string_lossy()
            .to_ascii_lowercase()
            .replace('/', "\\")
            .trim_end_matches('\\')
            .to_string()
    };
    let wsl = key(&system_root.join("System32"));
    let not_wsl = |p: &Path| p.parent().is_none_or(|d| key(d) != wsl);
    let dirs: Vec<PathBuf> = path_dirs(path_var)
        .into_iter()
        .filter(|d| not_wsl(&d.join("bash.exe")))
        .chain(install_dirs.iter().map(|d| d.join("Git").join("bin")))
        .collect();
    dirs.iter()
        .flat_map(|d| {
            candidates("bash", pathext)
                .into_iter()
                .map(move |c| d.join(c))
        })
        .find(|p| not_wsl(p) && is_file(p))
}

/// The key environment names are compared by: ASCII upper case (Windows compares names
/// without case; non-ASCII letters compare exactly). A request's `path` thus replaces the
/// inherited `Path`.
pub fn env_key(name: &std::ffi::OsStr) -> std::ffi::OsString {
    name.to_ascii_uppercase()
}

/// The environment block `CreateProcessW` takes (`CREATE_UNICODE_ENVIRONMENT`): `NAME=value`
/// entries sorted by upper-cased name, each NUL-terminated, and one more NUL at the end (two
/// for an empty environment, as Windows requires).
pub fn env_block(env: &[(Vec<u16>, Vec<u16>)]) -> Vec<u16> {
    let upper = |k: &[u16]| -> Vec<u16> {
        k.iter()
            .map(|&c| {
                if (b'a' as u16..=b'z' as u16).contains(&c) {
                    c - 32
                } else {
                    c
                }
            })
            .collect()
    };
    let mut sorted: Vec<&(Vec<u16>, Vec<u16>)> = env.iter().collect();
    sorted.sort_by_key(|(k, _)| upper(k));
    let mut block = Vec::new();
    for (k, v) in sorted {
        block.extend_from_slice(k);
        block.push(b'=' as u16);
        block.extend_from_slice(v);
        block.push(0);
    }
    if block.is_empty() {
        block.push(0);
    }
    block.push(0);
    block
}

/// The shells a line (no `args`) may be run by, and how each takes the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    /// `cmd.exe` (`%ComSpec%`): `/d /s /c "<line>"`, the line verbatim as Node's `shell: true`.
    Cmd,
    /// `powershell` / `pwsh`: `-NoLogo -NoProfile -NonInteractive -Command <line>`.
    PowerShell,
    /// `bash` (Git for Windows, MSYS2, WSL's launcher): `-c <line>`.
    Posix,
}

/// Which kind of shell `shell` (a name or a path, as `options.shell` gives it) is, by its
/// file name without extension: `cmd`, `powershell`/`pwsh`, anything else is taken as a POSIX
/// shell (`bash`, `sh`, `zsh`).
pub fn shell_kind(shell: &str) -> ShellKind {
    let file = shell.rsplit(['/', '\\']).next().unwrap_or(shell);
    let stem = file
        .rsplit_once('.')
        .filter(|(_, ext)| ext.eq_ignore_ascii_case("exe"))
        .map_or(file, |(stem, _)| stem)
        .to_ascii_lowercase();
    match stem.as_str() {
        "cmd" => ShellKind::Cmd,
        "powershell" | "pwsh" => ShellKind::PowerShell,
        _ => ShellKind::Posix,
    }
}

/// The command line that runs `line` with `shell` (its path as it will be executed).
/// cmd takes the line verbatim inside one pair of quotes (it strips exactly those, `/s`), as
/// Node's `shell: true` does; the other shells get it as one MSVC-quoted argument.
pub fn shell_command_line(shell: &[u16], kind: ShellKind, line: &[u16]) -> Vec<u16> {
    let mut out = Vec::new();
    push_msvc_arg(&mut out, shell);
    match kind {
        ShellKind::Cmd => {
            out.extend(wide(" /d /s /c \""));
            out.extend_from_slice(line);
            out.push(QUOTE);
        }
        ShellKind::PowerShell => {
            out.extend(wide(" -NoLogo -NoProfile -NonInteractive -Command "));
            push_msvc_arg(&mut out, line);
        }
        ShellKind::Posix => {
            out.extend(wide(" -c "));
            push_msvc_arg(&mut out, line);
        }
    }
    out
}

/// A path without the `\\?\` prefix Windows' final-path calls answer with: `\\?\C:\x` is
/// `C:\x`, `\\?\UNC\server\share` is `\\server\share`; anything else is returned as it is.
pub fn strip_verbatim(path: &[u16]) -> Vec<u16> {
    let unc = wide("\\\\?\\UNC\\");
    let verbatim = wide("\\\\?\\");
    if path.starts_with(&unc) {
        let mut out = wide("\\\\");
        out.extend_from_slice(&path[unc.len()..]);
        return out;
    }
    path.strip_prefix(verbatim.as_slice())
        .unwrap_or(path)
        .to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// `CommandLineToArgvW`'s rules (the MSVC C runtime's since 2008), written out so the
    /// quoting is checked by a reader of the line, not by its inverse written the same way.
    fn parse_msvc(line: &[u16]) -> Vec<Vec<u16>> {
        let mut args = Vec::new();
        let mut i = 0;
        let n = line.len();
        loop {
            while i < n && (line[i] == b' ' as u16 || line[i] == b'\t' as u16) {
                i += 1;
            }
            if i >= n {
                return args;
            }
            let mut arg = Vec::new();
            let mut quoted = false;
            while i < n {
                let c = line[i];
                if c == BACKSLASH {
                    let start = i;
                    while i < n && line[i] == BACKSLASH {
                        i += 1;
                    }
                    let count = i - start;
                    if i < n && line[i] == QUOTE {
                        arg.extend(std::iter::repeat_n(BACKSLASH, count / 2));
                        if count % 2 == 1 {
                            arg.push(QUOTE);
                            i += 1;
                        }
                    } else {
                        arg.extend(std::iter::repeat_n(BACKSLASH, count));
                    }
                    continue;
                }
                if c == QUOTE {
                    if quoted && i + 1 < n && line[i + 1] == QUOTE {
                        arg.push(QUOTE);
                        i += 2;
                        continue;
                    }
                    quoted = !quoted;
                    i += 1;
                    continue;
                }
                if !quoted && (c == b' ' as u16 || c == b'\t' as u16) {
                    break;
                }
                arg.push(c);
                i += 1;
            }
            args.push(arg);
        }
    }

    fn s(w: &[u16]) -> String {
        String::from_utf16(w).unwrap()
    }

    #[test]
    fn msvc_quoting_round_trips_every_hard_argument() {
        let hard = [
            "",
            "plain",
            "two words",
            "tab\there",
            "new\nline",
            "trailing\\",
            "trailing two\\\\",
            "C:\\Program Files\\x\\",
            "quote\"inside",
            "\\\"",
            "\\\\\"",
            "\"",
            "\"\"",
            "back\\slash\\in\\path",
            "%PATH% & echo pwned | more < in > out ^",
            "caf\u{e9} \u{65e5}\u{672c} \u{1f600}",
            " leading and trailing ",
        ];
        let args: Vec<Vec<u16>> = hard.iter().map(|a| wide(a)).collect();
        let line = msvc_command_line(&wide("C:\\bin\\prog.exe"), &args);
        let parsed = parse_msvc(&line);
        assert_eq!(s(&parsed[0]), "C:\\bin\\prog.exe");
        let got: Vec<String> = parsed[1..].iter().map(|a| s(a)).collect();
        assert_eq!(got, hard, "line: {}", s(&line));
    }

    #[test]
    fn msvc_quoting_is_minimal_and_exact() {
        let q = |a: &str| {
            let mut l = Vec::new();
            push_msvc_arg(&mut l, &wide(a));
            s(&l)
        };
        assert_eq!(q("plain"), "plain");
        assert_eq!(q(""), "\"\"");
        assert_eq!(q("a\\b\\"), "a\\b\\", "no quotes: backslashes stay");
        assert_eq!(q("a b\\"), "\"a b\\\\\"");
        assert_eq!(q("a\"b"), "\"a\\\"b\"");
        assert_eq!(q("a\\\"b"), "\"a\\\\\\\"b\"");
        assert_eq!(q("100%&|<>^"), "100%&|<>^");
    }

    /// What cmd.exe does with `/s /c "<line>"` when it runs a batch file: strips the outer
    /// quotes, then splits at unquoted separators, reporting whether any of `& | < > ^ %`,
    /// or a line break, was outside quotes (where cmd acts on them) or a `%` anywhere.
    fn cmd_exposed(line: &str) -> bool {
        let inner = &line[1..line.len() - 1];
        let mut quoted = false;
        for c in inner.chars() {
            match c {
                '"' => quoted = !quoted,
                '%' | '\n' | '\r' => return true,
                '&' | '|' | '<' | '>' | '^' | '(' | ')' if !quoted => return true,
                _ => {}
            }
        }
        false
    }

    #[test]
    fn batch_arguments_are_quoted_so_cmd_acts_on_none_of_them() {
        let args = [
            "--version",
            "",
            "a b",
            "& calc.exe",
            "\"& calc.exe",
            "\"\"&calc",
            "x\"|\"y",
            "a^b",
            "(x)",
            "C:\\dir with space\\",
            "caf\u{e9}",
            "k=v,w;z",
            "a\\\"b",
        ];
        let w: Vec<Vec<u16>> = args.iter().map(|a| wide(a)).collect();
        let line = s(&batch_command_line(&wide("C:\\n\\npm.cmd"), &w).unwrap());
        assert!(!cmd_exposed(&line), "{line}");
        assert!(
            line.starts_with("\"\"C:\\n\\npm.cmd\" --version \"\" \"a b\""),
            "{line}"
        );
        assert!(line.contains(" \"\"\"& calc.exe\" "), "{line}");
        assert!(line.contains(" \"C:\\dir with space\\\\\" "), "{line}");
        // What the program the script passes `%*` to receives (cmd hands it the arguments
        // as written, minus the outer quotes).
        let parsed = parse_msvc(&wide(&line[1..line.len() - 1]));
        let got: Vec<String> = parsed[1..].iter().map(|a| s(a)).collect();
        assert_eq!(got, args);
    }

    #[test]
    fn batch_arguments_cmd_would_still_expand_are_refused_naming_the_index() {
        let script = wide("C:\\x\\run.bat");
        for (arg, why) in [
            ("%PATH%", BatchRefusal::Percent),
            ("\"%=exitcode%\"", BatchRefusal::Percent),
            ("a\nb", BatchRefusal::LineBreak),
            ("a\r& calc", BatchRefusal::LineBreak),
            ("a\0b", BatchRefusal::Nul),
        ] {
            let args = vec![wide("ok"), wide(arg)];
            assert_eq!(
                batch_command_line(&script, &args),
                Err((Some(1), why)),
                "{arg:?}"
            );
            assert!(!why.reason().is_empty());
        }
        assert_eq!(
            batch_command_line(&wide("C:\\100%\\x.cmd"), &[]),
            Err((None, BatchRefusal::Script))
        );
        assert!(is_batch(Path::new("C:\\n\\npm.CMD")));
        assert!(is_batch(Path::new("x.bat")));
        assert!(!is_batch(Path::new("x.exe")));
        assert!(!is_batch(Path::new("cmd")));
    }

    #[test]
    fn batch_files_run_through_cmd_and_executables_directly() {
        let comspec = Path::new("C:\\Windows\\System32\\cmd.exe");
        let args = vec![wide("run"), wide("a b")];
        let exe =
            direct_command(Path::new("C:\\n\\node.exe"), &wide("node"), &args, comspec).unwrap();
        assert_eq!(exe.application, Path::new("C:\\n\\node.exe"));
        assert_eq!(s(&exe.command_line), "node run \"a b\"");
        let bat =
            direct_command(Path::new("C:\\n\\npm.cmd"), &wide("npm"), &args, comspec).unwrap();
        assert_eq!(bat.application, comspec);
        assert_eq!(
            s(&bat.command_line),
            "C:\\Windows\\System32\\cmd.exe /d /e:ON /v:OFF /s /c \"\"C:\\n\\npm.cmd\" run \"a b\"\""
        );
        let refused = direct_command(
            Path::new("C:\\n\\npm.cmd"),
            &wide("npm"),
            &[wide("ok"), wide("%USERPROFILE%")],
            comspec,
        )
        .unwrap_err();
        let message = refusal_message(refused.0, refused.1);
        assert!(message.starts_with("args[1] contains '%'"), "{message}");
        assert!(refusal_message(None, BatchRefusal::Script).starts_with("command "));
    }

    fn fake_fs(files: &[&str]) -> impl Fn(&Path) -> bool {
        let set: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        move |p: &Path| set.contains(p)
    }

    #[test]
    fn programs_are_found_through_path_and_pathext() {
        let fs = fake_fs(&[
            "/nodejs/npm.cmd",
            "/nodejs/npm",
            "/nodejs/node.exe",
            "/git/git.exe",
            "/repo/git.exe",
            "/repo/tools/build.bat",
        ]);
        let path = "/nodejs;;\"/git\"";
        let cwd = Path::new("/repo");
        let find = |name: &str| find_program(name, path, DEFAULT_PATHEXT, cwd, &fs);
        // `npm` is npm.cmd, not the extensionless shell script beside it.
        assert_eq!(find("npm"), Some(PathBuf::from("/nodejs/npm.cmd")));
        assert_eq!(find("node"), Some(PathBuf::from("/nodejs/node.exe")));
        assert_eq!(find("node.exe"), Some(PathBuf::from("/nodejs/node.exe")));
        // A quoted PATH entry; the checkout's own git.exe does not shadow PATH's.
        assert_eq!(find("git"), Some(PathBuf::from("/git/git.exe")));
        assert_eq!(find("nope"), None);
        // Path-like names are relative to the cwd and never searched in PATH.
        assert_eq!(
            find("tools/build"),
            Some(PathBuf::from("/repo/tools/build.bat"))
        );
        assert_eq!(
            find("bin\\node"),
            None,
            "node.exe is in PATH, not in the cwd's bin"
        );
        // PATHEXT decides, in its order and case.
        assert_eq!(
            find_program("npm", path, ".cmd;.EXE", cwd, &fs),
            Some(PathBuf::from("/nodejs/npm.cmd"))
        );
        assert_eq!(find_program("npm", path, ".EXE", cwd, &fs), None);
        assert_eq!(
            path_dirs("C:\\a; ;\"C:\\Program Files\\b\";"),
            vec![
                PathBuf::from("C:\\a"),
                PathBuf::from("C:\\Program Files\\b")
            ]
        );
    }

    #[test]
    fn shell_sessions_find_git_bash_and_never_wsl() {
        let root = Path::new("/win");
        let installs = [PathBuf::from("/pf"), PathBuf::from("/pf86")];
        // WSL's launcher first in PATH (as on most machines), Git's bash installed.
        let fs = fake_fs(&["/win/System32/bash.exe", "/pf86/Git/bin/bash.exe"]);
        let path = "/win/System32;/win";
        assert_eq!(
            find_bash(path, DEFAULT_PATHEXT, root, &installs, &fs),
            Some(PathBuf::from("/pf86/Git/bin/bash.exe"))
        );
        // A bash on PATH (MSYS2, Git's cmd dir) comes first.
        let fs = fake_fs(&["/msys/usr/bin/bash.exe", "/pf/Git/bin/bash.exe"]);
        assert_eq!(
            find_bash("/msys/usr/bin", DEFAULT_PATHEXT, root, &installs, &fs),
            Some(PathBuf::from("/msys/usr/bin/bash.exe"))
        );
        // Only WSL's: none.
        let fs = fake_fs(&["/win/System32/bash.exe"]);
        assert_eq!(find_bash(path, DEFAULT_PATHEXT, root, &installs, &fs), None);
    }

    #[test]
    fn environment_names_are_case_insensitive() {
        use std::ffi::OsStr;
        assert_eq!(env_key(OsStr::new("Path")), env_key(OsStr::new("PATH")));
        assert_eq!(env_key(OsStr::new("systemRoot")), "SYSTEMROOT");
        assert_ne!(env_key(OsStr::new("PATH")), env_key(OsStr::new("PATHEXT")));
        // Only ASCII folds: Windows compares other letters exactly here too.
        assert_ne!(env_key(OsStr::new("é")), env_key(OsStr::new("É")));
    }

    #[test]
    fn the_environment_block_is_sorted_and_double_terminated() {
        let e = |k: &str, v: &str| (wide(k), wide(v));
        let block = env_block(&[e("b", "2"), e("A", "1"), e("_x", "3")]);
        // Upper-cased, `_` (0x5F) sorts after the letters.
        assert_eq!(s(&block), "A=1\0b=2\0_x=3\0\0");
        assert_eq!(env_block(&[]), vec![0, 0]);
    }

    #[test]
    fn final_paths_lose_their_verbatim_prefix() {
        let strip = |p: &str| s(&strip_verbatim(&wide(p)));
        assert_eq!(strip("\\\\?\\C:\\Users\\me"), "C:\\Users\\me");
        assert_eq!(strip("\\\\?\\UNC\\srv\\share\\d"), "\\\\srv\\share\\d");
        assert_eq!(strip("C:\\plain"), "C:\\plain");
    }

    #[test]
    fn shell_lines_run_as_node_runs_them() {
        assert_eq!(shell_kind("C:\\Windows\\system32\\cmd.exe"), ShellKind::Cmd);
        assert_eq!(shell_kind("powershell"), ShellKind::PowerShell);
        assert_eq!(shell_kind("PWSH.EXE"), ShellKind::PowerShell);
        assert_eq!(
            shell_kind("C:/Program Files/Git/bin/bash.exe"),
            ShellKind::Posix
        );
        let line = "echo \"a b\" & dir | more";
        let cmd = shell_command_line(
            &wide("C:\\Windows\\system32\\cmd.exe"),
            ShellKind::Cmd,
            &wide(line),
        );
        assert_eq!(
            s(&cmd),
            format!("C:\\Windows\\system32\\cmd.exe /d /s /c \"{line}\"")
        );
        let bash = shell_command_line(
            &wide("C:\\Git\\bin\\bash.exe"),
            ShellKind::Posix,
            &wide(line),
        );
        let parsed: Vec<String> = parse_msvc(&bash).iter().map(|a| s(a)).collect();
        assert_eq!(parsed, ["C:\\Git\\bin\\bash.exe", "-c", line]);
        let ps = shell_command_line(&wide("pwsh.exe"), ShellKind::PowerShell, &wide(line));
        let parsed: Vec<String> = parse_msvc(&ps).iter().map(|a| s(a)).collect();
        assert_eq!(parsed.last().map(String::as_str), Some(line));
    }
}
