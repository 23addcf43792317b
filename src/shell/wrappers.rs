//! The programs behind one simple command: wrappers (`env`, `xargs`, `timeout`, `sudo`, `sh -c`,
//! a directly invoked ld.so, ...) are unwrapped with their real option grammar, clustered short
//! options included (`xargs -rn 1 rm`, `env -iS rm`, `timeout -vs KILL 5 rm`). An option a
//! wrapper's grammar does not list is a refusal: every later word is then reported as a guessed
//! program (for a deny list) rather than one guess taken as the truth. Builtins that evaluate
//! their arguments (`eval`, `source`, `let`, `printf -v`, `read`, `test -v`, ...) are refused here.

use super::runners::runs_code;
use super::syntax;
use super::words::Word;
use super::{Analysis, Assignment, Program, Refusal, RefusalReason, MAX_DEPTH};

/// Where programs found are recorded, and the position they are reported at.
pub struct Context<'o> {
    /// The analysis being built.
    pub out: &'o mut Analysis,
    /// UTF-16 index of the command in the line.
    pub position: usize,
    /// Nesting depth of the line being analysed.
    pub depth: usize,
}

impl Context<'_> {
    fn refuse(&mut self, reason: RefusalReason, construct: String, word: Option<&str>) {
        self.out.refusals.push(Refusal {
            reason,
            construct,
            position: self.position,
            word: word.map(str::to_string),
        });
    }

    fn push(&mut self, word: &Word, guessed: bool) {
        self.out.programs.push(Program {
            word: word.text.clone(),
            dynamic: word.dynamic,
            position: self.position,
            runs_code: None,
            guessed,
        });
    }

    /// Runs `f` one level deeper (a command nested in another: `find -exec`, `busybox APPLET`);
    /// too deep is a refusal.
    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        if self.depth >= MAX_DEPTH {
            self.refuse(
                RefusalReason::ShellConstruct,
                "commands nested too deeply".into(),
                None,
            );
            return;
        }
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }

    /// Analyses a shell line found in an argument (`sh -c LINE`, `eval ...`).
    fn line(&mut self, line: &str) {
        syntax::analyse(line, self.position, self.depth + 1, self.out);
    }
}

/// An option grammar: short options are single characters (clusterable), long ones names
/// without the leading `--`.
#[derive(Default)]
struct Grammar {
    /// Short options without a value.
    flags: &'static str,
    /// Short options with a value (the rest of the cluster, else the next word).
    valued: &'static str,
    /// Short options whose value can only be attached (`xargs -i[R]`).
    attached: &'static str,
    /// Short options after which no command runs (`command -v`).
    no_run: &'static str,
    /// Long options without a value.
    long_flags: &'static [&'static str],
    /// Long options with a value (`--x=v` or `--x v`).
    long_valued: &'static [&'static str],
    /// Long options whose value can only be attached (`--replace[=R]`).
    long_attached: &'static [&'static str],
    /// Words before the command (`timeout DURATION`).
    positional: usize,
    /// `NAME=VALUE` words before the command are assignments (`env`, `sudo`).
    assignments: bool,
    /// `-N` (digits) is an option (`nice -10`).
    numeric: bool,
    /// Options whose value is a shell line (`su -c LINE`).
    line_options: &'static [&'static str],
}

fn grammar(name: &str) -> Option<Grammar> {
    let g = match name {
        "env" => Grammar {
            flags: "i0v",
            valued: "uCS",
            long_flags: &[
                "ignore-environment",
                "null",
                "debug",
                "list-signal-handling",
            ],
            long_valued: &["unset", "chdir", "split-string"],
            long_attached: &["default-signal", "ignore-signal", "block-signal"],
            assignments: true,
            ..Grammar::default()
        },
        "command" => Grammar {
            flags: "p",
            no_run: "vV",
            ..Grammar::default()
        },
        "builtin" | "nohup" | "unbuffer" | "caffeinate" => Grammar::default(),
        "exec" => Grammar {
            flags: "cl",
            valued: "a",
            ..Grammar::default()
        },
        "nice" => Grammar {
            valued: "n",
            long_valued: &["adjustment"],
            numeric: true,
            ..Grammar::default()
        },
        "timeout" => Grammar {
            flags: "fpv",
            valued: "ks",
            long_flags: &["foreground", "preserve-status", "verbose"],
            long_valued: &["kill-after", "signal"],
            positional: 1,
            ..Grammar::default()
        },
        "xargs" => Grammar {
            flags: "0rtpxo",
            valued: "adEILnPs",
            attached: "eil",
            long_flags: &[
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
            ],
            long_valued: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
            long_attached: &["eof", "replace", "max-lines"],
            ..Grammar::default()
        },
        "stdbuf" => Grammar {
            valued: "ioe",
            long_valued: &["input", "output", "error"],
            ..Grammar::default()
        },
        "setsid" => Grammar {
            flags: "cfw",
            long_flags: &["ctty", "fork", "wait"],
            ..Grammar::default()
        },
        "time" => Grammar {
            flags: "pvqa",
            valued: "fo",
            long_flags: &["portability", "verbose", "quiet", "append"],
            long_valued: &["format", "output"],
            ..Grammar::default()
        },
        "ionice" => Grammar {
            flags: "t",
            valued: "cn",
            no_run: "pPu",
            long_flags: &["ignore"],
            long_valued: &["class", "classdata"],
            ..Grammar::default()
        },
        "chrt" => Grammar {
            flags: "abdfioRrmv",
            valued: "TPD",
            no_run: "p",
            long_flags: &[
                "all-tasks",
                "batch",
                "deadline",
                "fifo",
                "idle",
                "other",
                "rr",
                "reset-on-fork",
                "max",
                "verbose",
            ],
            long_valued: &["sched-runtime", "sched-period", "sched-deadline"],
            positional: 1,
            ..Grammar::default()
        },
        "taskset" => Grammar {
            flags: "ac",
            no_run: "p",
            long_flags: &["all-tasks", "cpu-list"],
            positional: 1,
            ..Grammar::default()
        },
        "sudo" => Grammar {
            flags: "AbEHKkNnPSsi",
            valued: "CDghpRrTtUu",
            no_run: "elvV",
            long_flags: &[
                "askpass",
                "background",
                "preserve-env",
                "set-home",
                "login",
                "non-interactive",
                "preserve-groups",
                "stdin",
                "shell",
            ],
            long_valued: &[
                "close-from",
                "chdir",
                "group",
                "host",
                "prompt",
                "chroot",
                "role",
                "type",
                "command-timeout",
                "other-user",
                "user",
            ],
            assignments: true,
            ..Grammar::default()
        },
        "su" | "runuser" => Grammar {
            flags: "lmpfP",
            valued: "gGsuw",
            long_flags: &["login", "preserve-environment", "pty", "fast"],
            long_valued: &[
                "group",
                "supp-group",
                "shell",
                "user",
                "whitelist-environment",
                "session-command",
            ],
            line_options: &["c", "command"],
            ..Grammar::default()
        },
        "doas" => Grammar {
            flags: "nsL",
            valued: "Cu",
            ..Grammar::default()
        },
        "chroot" => Grammar {
            long_flags: &["skip-chdir"],
            long_valued: &["userspec", "groups"],
            positional: 1,
            ..Grammar::default()
        },
        "flock" => Grammar {
            flags: "sxeunoF",
            valued: "wE",
            long_flags: &[
                "shared",
                "exclusive",
                "unlock",
                "nonblock",
                "close",
                "no-fork",
                "verbose",
            ],
            long_valued: &["timeout", "conflict-exit-code"],
            line_options: &["c", "command"],
            positional: 1,
            ..Grammar::default()
        },
        "watch" => Grammar {
            flags: "bcegptwxrf",
            valued: "nq",
            attached: "d",
            long_flags: &[
                "beep", "color", "no-color", "errexit", "chgexit", "precise", "no-title",
                "no-wrap", "exec", "no-rerun", "follow",
            ],
            long_valued: &["interval", "equexit"],
            long_attached: &["differences"],
            ..Grammar::default()
        },
        "strace" | "ltrace" => Grammar {
            flags: "cCdDfFhiqrtTvVwxyzkn",
            valued: "abeEIoOpPsSuUX",
            ..Grammar::default()
        },
        _ if is_ld_so(name) => Grammar {
            long_flags: &["inhibit-cache"],
            long_valued: &[
                "library-path",
                "inhibit-rpath",
                "audit",
                "preload",
                "argv0",
                "glibc-hwcaps-prepend",
                "glibc-hwcaps-mask",
            ],
            ..Grammar::default()
        },
        _ => return None,
    };
    Some(g)
}

/// Reserved words that cannot start a command.
const RESERVED: &[&str] = &[
    "fi", "done", "esac", "then", "else", "elif", "do", "in", "}", "{",
];

/// Shells whose `-c` argument is a line.
const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "busybox",
];

/// True for the dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 /bin/rm`).
pub fn is_ld_so(name: &str) -> bool {
    name == "ld.so"
        || (name.starts_with("ld-") || name.starts_with("ld64.so")) && name.contains(".so")
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The options parsed before a wrapped command.
struct Parsed {
    /// Index of the wrapped command, if any.
    command: Option<usize>,
    /// Values of options, by option name (`"S"`, `"split-string"`).
    values: Vec<(String, String)>,
    /// An option after which nothing runs was given.
    no_run: bool,
}

/// Parses `words[start..]` with `g`. `Err` names the first option not understood.
fn parse_options(
    g: &Grammar,
    words: &[Word],
    start: usize,
    cx: &mut Context,
) -> Result<Parsed, String> {
    let mut parsed = Parsed {
        command: None,
        values: Vec::new(),
        no_run: false,
    };
    let mut positional = g.positional;
    let mut i = start;
    while i < words.len() {
        let word = &words[i];
        let w = word.text.as_str();
        if word.dynamic {
            if positional == 0 && !w.starts_with('-') {
                break; // the command, known only at run time (reported as dynamic)
            }
            return Err(format!("`{w}` (known only at run time)"));
        }
        if w == "--" {
            i += 1;
            break;
        }
        if let Some(long) = w.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            if g.long_flags.contains(&name) && attached.is_none() || g.long_attached.contains(&name)
            {
                i += 1;
                continue;
            }
            if g.long_valued.contains(&name) || g.line_options.contains(&name) {
                let value = match attached {
                    Some(v) => v.to_string(),
                    None => {
                        i += 1;
                        words.get(i).map(|v| v.text.clone()).unwrap_or_default()
                    }
                };
                parsed.values.push((name.to_string(), value));
                i += 1;
                continue;
            }
            return Err(format!("`--{name}`"));
        }
        if w.len() > 1 && w.starts_with('-') {
            if g.numeric && w[1..].chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let cluster: Vec<char> = w[1..].chars().collect();
            let mut j = 0;
            while j < cluster.len() {
                let c = cluster[j];
                let rest: String = cluster[j + 1..].iter().collect();
                if g.no_run.contains(c) {
                    parsed.no_run = true;
                }
                if g.flags.contains(c) || g.no_run.contains(c) {
                    j += 1;
                    continue;
                }
                if g.attached.contains(c) {
                    break;
                }
                if g.valued.contains(c) || g.line_options.contains(&c.to_string().as_str()) {
                    let value = if rest.is_empty() {
                        i += 1;
                        words.get(i).map(|v| v.text.clone()).unwrap_or_default()
                    } else {
                        rest
                    };
                    parsed.values.push((c.to_string(), value));
                    break;
                }
                return Err(format!(
                    "`-{c}`{}",
                    if cluster.len() > 1 {
                        format!(" in `{w}`")
                    } else {
                        String::new()
                    }
                ));
            }
            i += 1;
            continue;
        }
        if g.assignments && is_assignment(w) {
            let name = w.split('=').next().unwrap_or_default();
            cx.out.assignments.push(Assignment {
                name: name.to_string(),
                dynamic: false,
            });
            i += 1;
            continue;
        }
        if positional > 0 {
            positional -= 1;
            i += 1;
            continue;
        }
        break;
    }
    while g.assignments && i < words.len() && !words[i].dynamic && is_assignment(&words[i].text) {
        let name = words[i].text.split('=').next().unwrap_or_default();
        cx.out.assignments.push(Assignment {
            name: name.to_string(),
            dynamic: false,
        });
        i += 1;
    }
    if i < words.len() {
        parsed.command = Some(i);
    }
    Ok(parsed)
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Builtins refused under an allow list, and why.
fn refused_builtin(name: &str, args: &[Word]) -> Option<(RefusalReason, String)> {
    let construct = RefusalReason::ShellConstruct;
    let why = match name {
        "eval" => "`eval` (runs its arguments as a shell line)",
        "source" | "." => "`source`/`.` (runs a file's commands)",
        "exec" => "`exec` (replaces the shell; `exec -a` renames the program)",
        "trap" => "`trap` (runs its argument as a shell line later)",
        "let" => "`let` (arithmetic, which runs substitutions hidden in variables)",

        "mapfile" | "readarray" => "`mapfile` (its -C callback runs code; it assigns arrays)",
        "fc" | "bind" | "complete" | "compgen" | "history" => {
            "a builtin that runs or defines commands"
        }
        "read" => "`read` (assigns names whose subscripts bash evaluates)",
        "printf" if args.iter().any(|a| a.text.starts_with("-v") || a.dynamic) => {
            "`printf -v` (assigns a name whose subscript bash evaluates)"
        }
        "test" | "[" if args.iter().any(|a| a.text == "-v" || a.text == "-R") => {
            "the test `-v` (bash evaluates the subscript of the name it tests)"
        }
        "alias" | "unalias" => return Some((RefusalReason::Redefinition, "an alias".into())),
        "hash"
            if args
                .iter()
                .any(|a| a.text.starts_with('-') && a.text.contains(['p', 'd'])) =>
        {
            return Some((RefusalReason::Redefinition, "`hash -p`".into()))
        }
        "enable" => return Some((RefusalReason::Redefinition, "`enable`".into())),
        _ => return None,
    };
    Some((construct, why.to_string()))
}

/// Records the programs of one simple command (`words` after assignments).
pub fn programs(words: &[Word], cx: &mut Context) {
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        cx.push(word, false);
        if word.dynamic {
            return;
        }
        let path = word.text.as_str();
        let name = basename(path);
        let args = &words[i + 1..];
        if RESERVED.contains(&path) {
            // `fi`, `done`, `}` where a command should be: the grammar took a stray reserved word
            // (or a construct it does not know, `coproc NAME { ...; }`) for a command.
            cx.out.malformed = true;
        }
        if name == "coproc" && !path.contains('/') {
            cx.refuse(RefusalReason::ShellConstruct, "`coproc`".into(), Some(name));
            if args.first().is_some_and(|a| a.text.starts_with(['(', '{'])) {
                return; // a compound command, walked by the syntax tree
            }
            i += 1;
            continue;
        }
        if !path.contains('/') {
            if let Some((reason, construct)) = refused_builtin(name, args) {
                let redefined = match name {
                    "alias" => args
                        .first()
                        .map(|a| a.text.split('=').next().unwrap_or_default().to_string()),
                    "hash" | "enable" => args.last().map(|a| a.text.clone()),
                    _ => None,
                };
                let kind = (reason == RefusalReason::Redefinition).then_some(name);
                let construct = match kind {
                    Some(k) => format!("{construct} ({k})"),
                    None => construct,
                };
                cx.refuse(reason, construct, redefined.as_deref().or(Some(name)));
                assigned_by_builtin(name, args, cx);
                nested_builtin_lines(name, args, cx);
            }
        }
        if let Some(why) = runs_code(name, args) {
            if let Some(last) = cx.out.programs.last_mut() {
                last.runs_code = Some(why);
            }
        }
        if SHELLS.contains(&name) {
            shell(name, words, i + 1, cx);
            return;
        }
        if name == "find" {
            find_exec(args, cx);
            return;
        }
        let Some(g) = grammar(name) else { return };
        match parse_options(&g, words, i + 1, cx) {
            Ok(parsed) => {
                if parsed.no_run {
                    return;
                }
                for (option, value) in &parsed.values {
                    let split = matches!(option.as_str(), "S" | "split-string") && name == "env";
                    if split || g.line_options.contains(&option.as_str()) {
                        cx.line(value);
                        if split {
                            return;
                        }
                    }
                }
                if name == "su" || name == "runuser" {
                    // `su [-] [USER] [-c LINE]`: the words left are the user and the shell's
                    // arguments, not a command; without -c it starts a login shell.
                    su(name, &words[i + 1..], &parsed, &g, i + 1, cx);
                    return;
                }
                if name == "watch" {
                    if let Some(c) = parsed.command {
                        let line: Vec<&str> = words[c..].iter().map(|w| w.text.as_str()).collect();
                        cx.line(&line.join(" "));
                    }
                    return;
                }
                match parsed.command {
                    Some(c) => i = c,
                    None => return,
                }
            }
            Err(option) => {
                cx.refuse(
                    RefusalReason::WrapperOption,
                    format!("`{name}` option {option}, which this analysis does not know"),
                    Some(name),
                );
                for w in &words[i + 1..] {
                    if !w.text.starts_with('-') {
                        cx.push(w, true);
                    }
                }
                return;
            }
        }
    }
}

/// The names `read NAME...` and `printf -v NAME` assign (the environment policy judges them).
fn assigned_by_builtin(name: &str, args: &[Word], cx: &mut Context) {
    let names: Vec<&Word> = match name {
        "read" => args.iter().filter(|a| !a.text.starts_with('-')).collect(),
        "printf" => args
            .windows(2)
            .filter(|w| w[0].text == "-v")
            .map(|w| &w[1])
            .collect(),
        "mapfile" | "readarray" => args
            .iter()
            .rev()
            .take(1)
            .filter(|a| !a.text.starts_with('-'))
            .collect(),
        _ => return,
    };
    for n in names {
        cx.out.assignments.push(Assignment {
            name: n.text.clone(),
            dynamic: n.dynamic,
        });
    }
}

/// `su [-] [USER] [options]`: options may also follow the user (`su - root -c 'id'`).
fn su(name: &str, args: &[Word], parsed: &Parsed, g: &Grammar, start: usize, cx: &mut Context) {
    let mut line = parsed
        .values
        .iter()
        .any(|(o, _)| o == "c" || o == "command");
    if let Some(c) = parsed.command {
        let rest = &args[(c - start).min(args.len())..];
        if let Some(first) = rest
            .iter()
            .position(|w| w.text.starts_with('-') && w.text.len() > 1)
        {
            if let Ok(more) = parse_options(g, rest, first, cx) {
                for (o, v) in &more.values {
                    if o == "c" || o == "command" {
                        cx.line(&v.clone());
                        line = true;
                    }
                }
            }
        }
    }
    if !line {
        cx.refuse(
            RefusalReason::ShellInput,
            format!("`{name}` starting a shell"),
            Some(name),
        );
    }
}

/// `eval ARGS` and `trap LINE SIG`: what a deny list can still see in them.
fn nested_builtin_lines(name: &str, args: &[Word], cx: &mut Context) {
    match name {
        "eval" => {
            let line: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            if args.iter().any(|a| a.dynamic) {
                // Only known at run time: the line itself is the (dynamic) command.
                cx.push(
                    &Word {
                        text: line.join(" "),
                        dynamic: true,
                    },
                    false,
                );
            } else {
                cx.line(&line.join(" "));
            }
        }
        "trap" => {
            if let Some(first) = args.iter().find(|a| !a.text.starts_with('-')) {
                cx.line(&first.text.clone());
            }
        }
        _ => {}
    }
}

/// `sh [options] -c LINE [name [args]]` analyses LINE; a shell without `-c` reads a script file
/// or stdin, which cannot be checked.
fn shell(name: &str, words: &[Word], start: usize, cx: &mut Context) {
    let mut i = start;
    let mut command = false;
    let mut stdin = false;
    if name == "busybox" {
        // `busybox APPLET ...`: the applet is the program.
        cx.nested(|cx| programs(&words[start..], cx));
        return;
    }
    while i < words.len() {
        let w = &words[i];
        if w.dynamic && command {
            break;
        }
        if w.dynamic {
            cx.refuse(
                RefusalReason::WrapperOption,
                format!("`{name}` option `{}` (known only at run time)", w.text),
                Some(name),
            );
            return;
        }
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        if t.starts_with("--") {
            if t == "--rcfile" || t == "--init-file" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            for c in t[1..].chars() {
                match c {
                    'c' => command = true,
                    's' => stdin = true,
                    'o' | 'O' => i += 1,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    if command {
        match words.get(i) {
            Some(line) if !line.dynamic => cx.line(&line.text.clone()),
            Some(line) => {
                cx.push(line, false);
                cx.refuse(
                    RefusalReason::ShellConstruct,
                    format!(
                        "`{name} -c` with a line known only at run time (`{}`)",
                        line.text
                    ),
                    Some(name),
                );
            }
            None => cx.refuse(
                RefusalReason::ShellInput,
                format!("`{name} -c` without a line"),
                Some(name),
            ),
        }
        return;
    }
    let from = if stdin || i >= words.len() {
        "stdin"
    } else {
        "a script file"
    };
    cx.refuse(
        RefusalReason::ShellInput,
        format!("`{name}` reading its commands from {from}"),
        Some(name),
    );
}

/// `find ... -exec CMD ... ;` (and `-execdir`, `-ok`, `-okdir`): CMD is a program too.
fn find_exec(args: &[Word], cx: &mut Context) {
    let mut i = 0;
    while i < args.len() {
        if matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let end = args[i + 1..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(args.len(), |e| i + 1 + e);
            if end > i + 1 {
                cx.nested(|cx| programs(&args[i + 1..end], cx));
            }
            i = end;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{analyse_argv, analyse_line};

    fn words(line: &str) -> Vec<String> {
        analyse_line(line)
            .programs
            .into_iter()
            .map(|p| p.word)
            .collect()
    }

    #[test]
    fn clustered_wrapper_options_are_unwrapped() {
        assert_eq!(words("xargs -rn 1 rm"), ["xargs", "rm"]);
        assert_eq!(words("xargs -0I {} rm {}"), ["xargs", "rm"]);
        assert_eq!(words("env -iS rm"), ["env", "rm"]);
        assert_eq!(words("env -i -- rm"), ["env", "rm"]);
        assert_eq!(words("timeout -vs KILL 5 rm"), ["timeout", "rm"]);
        assert_eq!(words("timeout --signal=KILL 5 rm x"), ["timeout", "rm"]);
        assert_eq!(words("nice -10 rm"), ["nice", "rm"]);
        assert_eq!(
            words("nice -n 5 nohup setsid -f stdbuf -oL rm"),
            ["nice", "nohup", "setsid", "stdbuf", "rm"]
        );
        assert_eq!(words("command -p rm"), ["command", "rm"]);
        assert_eq!(words("command -v rm"), ["command"]);
        assert_eq!(
            words("/lib64/ld-linux-x86-64.so.2 /bin/rm x"),
            ["/lib64/ld-linux-x86-64.so.2", "/bin/rm"]
        );
        assert_eq!(words("rbash -c 'rm x'"), ["rbash", "rm"]);
        assert_eq!(words("bash -lc 'ls && rm x'"), ["bash", "ls", "rm"]);
        assert_eq!(words("find . -name x -exec rm {} +"), ["find", "rm"]);
        assert_eq!(words("sudo -u root -E rm"), ["sudo", "rm"]);
        assert_eq!(
            words("ionice -c 3 taskset -c 0 chrt -f 10 rm"),
            ["ionice", "taskset", "chrt", "rm"]
        );
    }

    #[test]
    fn an_unknown_wrapper_option_is_a_refusal_and_later_words_are_guesses() {
        let a = analyse_line("xargs -J % rm");
        assert_eq!(a.refusals[0].reason, super::RefusalReason::WrapperOption);
        assert!(a.programs.iter().any(|p| p.word == "rm" && p.guessed));
    }

    #[test]
    fn shells_without_a_line_read_input_that_cannot_be_checked() {
        for line in [
            "echo rm | sh",
            "bash script.sh",
            "bash -s",
            "sh <<'EOF'\nrm x\nEOF",
        ] {
            let a = analyse_line(line);
            assert!(
                a.refusals
                    .iter()
                    .any(|r| r.reason == super::RefusalReason::ShellInput),
                "{line}"
            );
        }
        let argv: Vec<String> = ["bash", "-c", "npm test && rm -rf dist"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let names: Vec<String> = analyse_argv(&argv)
            .programs
            .into_iter()
            .map(|p| p.word)
            .collect();
        assert_eq!(names, ["bash", "npm", "rm"]);
    }
}
