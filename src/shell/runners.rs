//! Programs that run code given in their arguments or on stdin, so that allowing the program
//! allows any command: an allow list refuses them unless the host opts each one in. The table
//! here is what docs/host-policy.md lists.

use super::words::Word;

/// Why running `name` with `args` would run code from its arguments or stdin, if it would.
pub fn runs_code(name: &str, args: &[Word]) -> Option<String> {
    let family = family(name)?;
    if let Some(d) = args.iter().find(|a| a.dynamic) {
        return Some(format!(
            "`{name}` with an argument known only at run time (`{}`)",
            d.text
        ));
    }
    let text: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match family {
        Family::Awk => awk(name, &text),
        Family::Sed => sed(name, &text),
        Family::Interpreter(code) => interpreter(name, &text, code),
        Family::Git => git(&text),
        Family::Npx => Some(format!(
            "`{name}` runs a package's code (fetched if missing)"
        )),
        Family::Npm => package_exec(name, &text),
        Family::Find => text
            .iter()
            .find(|a| matches!(**a, "-exec" | "-execdir" | "-ok" | "-okdir"))
            .map(|a| format!("`find {a}` runs a command for each file")),
        Family::Xargs => {
            Some("`xargs` appends words read from stdin to the command it runs".into())
        }
        Family::Env => text
            .iter()
            .take_while(|a| a.starts_with('-'))
            .find(|a| a.starts_with("--split-string") || !a.starts_with("--") && a.contains('S'))
            .map(|_| "`env -S` splits a string into a command".into()),
        Family::Tar => text
            .iter()
            .find(|a| {
                [
                    "--to-command",
                    "--checkpoint-action",
                    "--use-compress-program",
                    "--rsh-command",
                    "--info-script",
                    "--new-volume-script",
                    "-I",
                    "-F",
                ]
                .iter()
                .any(|o| a.starts_with(o))
            })
            .map(|a| format!("`tar {a}` runs a command")),
        Family::Rsync => text
            .iter()
            .find(|a| {
                a.starts_with("-e") || a.starts_with("--rsh") || a.starts_with("--rsync-path")
            })
            .map(|a| format!("`rsync {a}` runs a command")),
        Family::LdSo => text
            .iter()
            .find(|a| a.starts_with("--preload") || a.starts_with("--audit"))
            .map(|a| format!("the dynamic loader's `{a}` loads code into the program")),
    }
}

enum Family {
    Awk,
    Sed,
    /// An interpreter and the short options that take a program text.
    Interpreter(&'static str),
    Git,
    Npx,
    Npm,
    Find,
    Xargs,
    Env,
    Tar,
    Rsync,
    LdSo,
}

fn family(name: &str) -> Option<Family> {
    let f = match name {
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => Family::Awk,
        "sed" | "gsed" => Family::Sed,
        "node" | "nodejs" | "bun" | "deno" => Family::Interpreter("ep"),
        "perl" => Family::Interpreter("eE"),
        "ruby" | "irb" => Family::Interpreter("e"),
        "php" => Family::Interpreter("rRBE"),
        "lua" | "luajit" | "Rscript" => Family::Interpreter("e"),
        "tclsh" | "wish" | "osascript" => Family::Interpreter("e"),
        "git" => Family::Git,
        "npx" | "bunx" | "pnpx" => Family::Npx,
        "npm" | "pnpm" | "yarn" => Family::Npm,
        "find" => Family::Find,
        "xargs" => Family::Xargs,
        "env" => Family::Env,
        "tar" | "gtar" | "bsdtar" => Family::Tar,
        "rsync" => Family::Rsync,
        _ if super::wrappers::is_ld_so(name) => Family::LdSo,
        _ if name.starts_with("python") || name.starts_with("pypy") => Family::Interpreter("c"),
        _ => return None,
    };
    Some(f)
}

/// An awk program calling `system()`, a pipe (`"cmd" | getline`, `print | "cmd"`) or loading an
/// extension; or a program read from a file.
fn awk(name: &str, args: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with("-f")
            || a.starts_with("--file")
            || a.starts_with("-E")
            || a.starts_with("--exec")
            || a.starts_with("-i")
            || a.starts_with("--include")
            || a.starts_with("-l")
            || a.starts_with("--load")
        {
            return Some(format!("`{name} {a}` reads its program from a file"));
        }
        if a.len() > 1 && a.starts_with('-') {
            // -v var=val, -F fs, -W opt take a value when not attached.
            if matches!(a, "-v" | "-F" | "-W") {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    let program = args.get(i)?;
    ["system", "|", "@load", "@include", "ENVIRON[\"", "PROCINFO"]
        .iter()
        .find(|p| program.contains(*p))
        .filter(|p| **p == "system" || **p == "|" || p.starts_with('@'))
        .map(|p| format!("the `{name}` program uses `{p}`, which runs commands or loads code"))
}

/// GNU sed's `e` command and `s///e` flag run the pattern space as a command; `-f` reads the
/// script from a file. `--sandbox` turns them off.
fn sed(name: &str, args: &[&str]) -> Option<String> {
    if args.contains(&"--sandbox") {
        return None;
    }
    let mut scripts = Vec::new();
    let mut i = 0;
    let mut explicit = false;
    while i < args.len() {
        let a = args[i];
        if a == "-e" || a == "--expression" {
            explicit = true;
            scripts.push(args.get(i + 1).copied().unwrap_or(""));
            i += 2;
            continue;
        }
        if let Some(s) = a.strip_prefix("--expression=") {
            explicit = true;
            scripts.push(s);
        } else if a == "-f" || a.starts_with("--file") || a.starts_with("-f") {
            return Some(format!("`{name} {a}` reads its script from a file"));
        } else if a.starts_with('-') && a.len() > 1 {
            if let Some(rest) = a.strip_prefix('-').and_then(|r| r.split_once('e')) {
                // a cluster such as `-ne 'script'`
                explicit = true;
                scripts.push(if rest.1.is_empty() {
                    args.get(i + 1).copied().unwrap_or("")
                } else {
                    rest.1
                });
                if rest.1.is_empty() {
                    i += 1;
                }
            } else if a.contains('f') && !a.starts_with("--") {
                return Some(format!("`{name} {a}` reads its script from a file"));
            }
        } else if !explicit {
            scripts.push(a);
            explicit = true;
        }
        i += 1;
    }
    scripts.iter().any(|s| sed_script_executes(s)).then(|| {
        format!("the `{name}` script uses the `e` command or the `s///e` flag, which run commands")
    })
}

/// True when a sed script holds an `e` command or an `s` command with the `e` flag.
fn sed_script_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let at_command = |c: char| c.is_ascii_alphabetic() || c == '{' || c == '}' || c == '=';
    while i < chars.len() {
        let c = chars[i];
        match c {
            ';' | '\n' | ' ' | '\t' | '!' | '{' | '}' => i += 1,
            '0'..='9' | '$' | ',' | '~' | '+' => i += 1,
            '/' | '\\' => {
                // an address /re/ or \cREc
                let delim = if c == '\\' {
                    chars.get(i + 1).copied().unwrap_or('/')
                } else {
                    '/'
                };
                i += if c == '\\' { 2 } else { 1 };
                while i < chars.len() && chars[i] != delim {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                    i += 1;
                }
            }
            'e' => return true,
            's' | 'y' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return false;
                };
                i += 2;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delim {
                        i += if chars[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                if c == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                        if chars[i] == 'e' {
                            return true;
                        }
                        if chars[i] == 'w' {
                            break; // the rest is a file name
                        }
                        i += 1;
                    }
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l'
            | 'L' => {
                // the rest of the line is text, a label or a file name
                while i < chars.len()
                    && chars[i] != '\n'
                    && !(matches!(c, 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L') && chars[i] == ';')
                {
                    i += 1;
                }
            }
            _ if at_command(c) => i += 1,
            _ => i += 1,
        }
    }
    false
}

/// `-c`/`-e`-style options (also in a cluster such as `perl -ne`), `--eval`, or a program read
/// from stdin (no script argument, or `-`).
fn interpreter(name: &str, args: &[&str], code: &str) -> Option<String> {
    // Options of common interpreters that take the next word as their value.
    const VALUED: &[&str] = &[
        "-m",
        "-W",
        "-X",
        "-Q",
        "-r",
        "--require",
        "--import",
        "--loader",
        "-C",
        "--conditions",
        "--input-type",
        "-I",
        "-M",
        "-x",
        "-d",
        "-F",
        "-E",
    ];
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-" {
            return Some(format!("`{name} -` reads its program from stdin"));
        }
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if ["eval", "print", "command", "exec"]
                .iter()
                .any(|o| long == *o || long.starts_with(&format!("{o}=")))
            {
                return Some(format!("`{name} {a}` runs code given as an argument"));
            }
            if VALUED.contains(&a) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            if let Some(c) = cluster.chars().find(|c| code.contains(*c)) {
                return Some(format!("`{name} -{c}` runs code given as an argument"));
            }
            if name.starts_with("python") && cluster.starts_with('m') {
                return None; // -m module: runs a module (a file), like a script
            }
            if VALUED.contains(&a) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if (name == "deno" || name == "bun") && matches!(a, "eval" | "x" | "repl") {
            return Some(format!("`{name} {a}` runs code given as an argument"));
        }
        return None; // a script file
    }
    if i >= args.len() {
        return Some(format!(
            "`{name}` without a script reads its program from stdin"
        ));
    }
    None
}

/// `git -c`/`--config-env` (config that names commands: core.fsmonitor, core.pager, ...),
/// `--exec-path`, commands that run a command (`submodule foreach`, `bisect run`, `rebase -x`),
/// `git config` writes, and subcommands that may be aliases (`!cmd` aliases run commands).
fn git(args: &[&str]) -> Option<String> {
    const BUILTIN: &[&str] = &[
        "add",
        "am",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bundle",
        "cat-file",
        "check-ignore",
        "checkout",
        "cherry",
        "cherry-pick",
        "clean",
        "clone",
        "commit",
        "config",
        "count-objects",
        "describe",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "fetch",
        "for-each-ref",
        "format-patch",
        "fsck",
        "gc",
        "grep",
        "help",
        "init",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "merge",
        "merge-base",
        "mv",
        "name-rev",
        "notes",
        "pull",
        "push",
        "range-diff",
        "rebase",
        "reflog",
        "remote",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "shortlog",
        "show",
        "show-ref",
        "sparse-checkout",
        "stash",
        "status",
        "submodule",
        "switch",
        "symbolic-ref",
        "tag",
        "version",
        "whatchanged",
        "worktree",
        "var",
    ];
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-c" || a.starts_with("--config-env") || a.starts_with("--exec-path=") {
            return Some(format!(
                "`git {a}` sets configuration that can name commands to run"
            ));
        }
        if matches!(
            a,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
        ) {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    let sub = *args.get(i)?;
    let rest = &args[i + 1..];
    if !BUILTIN.contains(&sub) {
        return Some(format!("`git {sub}` is not a git command this analysis knows: it may be an alias, which can run any command"));
    }
    let runs = match sub {
        "submodule" => rest.contains(&"foreach"),
        "bisect" => rest.contains(&"run"),
        "rebase" => rest.iter().any(|a| *a == "-x" || a.starts_with("--exec")),
        "config" => !rest.iter().any(|a| {
            matches!(
                *a,
                "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
            )
        }),
        "diff" | "log" | "show" => rest.contains(&"--ext-diff"),
        _ => false,
    };
    runs.then(|| format!("`git {sub}` with these arguments runs or configures commands"))
}

/// `npm exec`/`npm x`, `pnpm dlx`/`pnpm exec`, `yarn dlx`/`yarn exec`, and `-c` commands.
fn package_exec(name: &str, args: &[&str]) -> Option<String> {
    let sub = args.iter().find(|a| !a.starts_with('-'))?;
    (matches!(*sub, "exec" | "x" | "dlx")
        || args.contains(&"-c")
        || args.iter().any(|a| a.starts_with("--call")))
    .then(|| format!("`{name} {sub}` runs a package's code (fetched if missing)"))
}

#[cfg(test)]
mod tests {
    use super::super::analyse_line;

    fn runs(line: &str) -> bool {
        analyse_line(line)
            .programs
            .iter()
            .any(|p| p.runs_code.is_some())
    }

    #[test]
    fn code_runners_are_flagged() {
        for line in [
            "awk 'BEGIN{system(\"rm x\")}'",
            "gawk '{print | \"sh\"}' f",
            "awk -f prog.awk",
            "python3 -c 'import os'",
            "python3 -Bc 'import os'",
            "python3",
            "python3 - < x.py",
            "perl -ne 'print' f",
            "node -e 1",
            "node --eval=1",
            "ruby -e 1",
            "git -c core.fsmonitor='rm x' status",
            "git --config-env=core.pager=X log",
            "git lg",
            "git config core.fsmonitor x",
            "git submodule foreach rm",
            "npx cowsay",
            "npm exec -- cowsay",
            "pnpm dlx cowsay",
            "find . -exec rm {} +",
            "xargs rm",
            "env -S 'rm x'",
            "sed 's/x/rm y/e' f",
            "sed -n '1e rm x' f",
            "sed -e p -e 'e rm x' f",
            "tar --to-command='rm x' -xf a.tar",
            "rsync -e 'rm x' a b",
        ] {
            assert!(runs(line), "{line}");
        }
        for line in [
            "awk '{print $1}' f",
            "sed -n 's/a/b/gp' f",
            "sed '/x/d;s/e/E/g' f",
            "python3 script.py -c x",
            "python3 -m pytest",
            "node build.js",
            "perl script.pl",
            "git status",
            "git -C dir log --oneline",
            "git config --get user.name",
            "npm test",
            "npm run build",
            "find . -name '*.o'",
            "tar -xf a.tar",
        ] {
            assert!(!runs(line), "{line}");
        }
    }
}
