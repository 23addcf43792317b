//! One simple command: the programs it runs. Wrappers (`env`, `xargs`, `timeout`, `sudo`, a
//! directly invoked ld.so, ...) are unwrapped with their grammar from `wrappers.rs`, shells'
//! `-c` lines are handed back to the walk (which analyses and rebuilds them), builtins are judged
//! (those that evaluate their arguments refused, the names `export`/`declare`/`unset`/... set or
//! remove recorded), and programs of the code-runner table get the verdict of `runners.rs`.
//! Records, per word of the command, what the rebuild puts in its place.
//!
//! Invariants: this module never parses a line itself (no call back into the walk): a nested line
//! is returned in [`Command::lines`] with the word it came from. A builtin is judged by its name and
//! words only, wherever it stands: every word in command position (the first, or the one behind
//! `command`, `builtin`, `!`, `time` or any other wrapper, at any nesting) goes through the same
//! `Command::builtin` check.

use super::options::parse;
use super::runners::{judge, Verdict};
use super::shellopts;
use super::words::Word;
use super::wrappers::{wrapper, Wrapper, CHDIR_BUILTINS, RESERVED, SHELLS};
use super::{Analysis, Assignment, Program, Refusal, RefusalReason, Start, MAX_DEPTH};

/// Shell variables that change how the shell reads or runs what follows (prompt strings are
/// expanded with `set -x`, `BASH_ALIASES`/`BASH_CMDS` are the alias and hash tables).
pub const SHELL_SENSITIVE: &[&str] = &[
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_ALIASES",
    "BASH_CMDS",
    "BASH_XTRACEFD",
    "GLOBIGNORE",
    "EXECIGNORE",
    "CDPATH",
    "ENV",
    "BASH_ENV",
    "PATH",
    "FUNCNEST",
    "BASH_COMPAT",
    "POSIXLY_CORRECT",
    "BASH_LOADABLES_PATH",
    "HISTFILE",
];

/// Options of the declaration builtins refused (bash evaluates values as arithmetic with `-i`, makes
/// name references with `-n`, arrays with `-a`/`-A`, and acts on functions with `-f`/`-F`).
pub const DECLARATION_OPTIONS_REFUSED: &str = "niaAfF";

/// The builtins that set or remove variables (and their attributes) from their arguments.
const VARIABLE_BUILTINS: &[&str] = &["export", "readonly", "declare", "typeset", "local", "unset"];

/// What the rebuild puts in place of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The word itself, quoted.
    Word,
    /// The program checked (index into [`Analysis::programs`]).
    Program(usize),
    /// A nested line, rebuilt (index into [`Command::lines`]).
    Line(usize),
}

/// A line found in a command's words (`sh -c LINE`, `su -c LINE`, `eval ...`).
pub struct NestedLine {
    /// The word it is, when it is one whole word (so the rebuild can replace it).
    pub word: Option<usize>,
    /// The line.
    pub text: String,
}

/// The programs of one simple command, recorded into an analysis.
pub struct Command<'o> {
    /// The analysis being built.
    pub out: &'o mut Analysis,
    /// UTF-16 index of the command in the outermost line.
    pub position: usize,
    /// Nesting depth of the line being analysed.
    pub depth: usize,
    /// Per word, what the rebuild puts there.
    pub slots: Vec<Slot>,
    /// Lines found in the words, for the walk to analyse.
    pub lines: Vec<NestedLine>,
    /// False inside `busybox APPLET` (the applet is a name, not a path to replace).
    pin: bool,
}

impl<'o> Command<'o> {
    /// A command of `words` words at `position`.
    pub fn new(out: &'o mut Analysis, position: usize, depth: usize, words: usize) -> Self {
        Command {
            out,
            position,
            depth,
            slots: vec![Slot::Word; words],
            lines: Vec::new(),
            pin: true,
        }
    }

    fn refuse(&mut self, reason: RefusalReason, construct: String, word: Option<&str>) {
        self.out.refusals.push(Refusal {
            reason,
            construct,
            position: self.position,
            word: word.map(str::to_string),
        });
    }

    /// Records `word` (word `at` of the command) as a program.
    fn push(&mut self, word: &Word, at: Option<usize>, guessed: bool) {
        let t = &word.text;
        if !guessed && !word.dynamic && self.out.cwd_moved && t.contains('/') && !t.starts_with('/')
        {
            self.refuse(
                RefusalReason::ShellConstruct,
                format!("the relative program path `{t}` after a change of directory (it was checked against the request's cwd)"),
                Some(t),
            );
        }
        if let (Some(at), false) = (at, guessed || !self.pin) {
            self.slots[at] = Slot::Program(self.out.programs.len());
        }
        self.out.programs.push(Program {
            word: word.text.clone(),
            dynamic: word.dynamic,
            position: self.position,
            runs_code: None,
            unknown_option: None,
            guessed,
        });
    }

    fn line(&mut self, word: Option<usize>, text: String) {
        if let Some(w) = word {
            self.slots[w] = Slot::Line(self.lines.len());
        }
        self.lines.push(NestedLine { word, text });
    }

    /// Runs `f` one level deeper (`find -exec`, `busybox APPLET`); too deep is a refusal.
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

    fn assign(&mut self, w: &Word) {
        let name = w.text.split('=').next().unwrap_or_default();
        self.out.assignments.push(Assignment {
            name: name.to_string(),
            dynamic: w.dynamic,
        });
    }

    /// Records the programs of `words[from..to]`.
    pub fn programs(&mut self, words: &[Word], from: usize, to: usize) {
        let mut i = from;
        while i < to {
            let word = &words[i];
            self.push(word, Some(i), false);
            if word.dynamic {
                return;
            }
            let path = word.text.as_str();
            let name = path.rsplit('/').next().unwrap_or(path);
            let args = &words[i + 1..to];
            if RESERVED.contains(&path) {
                // `fi`, `done`, `}` where a command should be: a stray reserved word (or a
                // construct the grammar does not know, `coproc NAME { ...; }`).
                self.out.malformed = true;
            }
            if !path.contains('/') {
                if name == "coproc" {
                    self.refuse(RefusalReason::ShellConstruct, "`coproc`".into(), Some(name));
                    if args.first().is_some_and(|a| a.text.starts_with(['(', '{'])) {
                        return; // a compound command, walked by the syntax tree
                    }
                    i += 1;
                    continue;
                }
                if CHDIR_BUILTINS.contains(&name) {
                    // `cd DIR`/`pushd DIR` with one literal directory goes there; `cd`, `cd -`,
                    // options, `popd`: somewhere not known here.
                    let to = match args {
                        [d] if name != "popd" && !d.dynamic && !d.text.starts_with('-') => {
                            Some(d.text.clone())
                        }
                        _ => None,
                    };
                    self.move_cwd(to);
                }
                self.builtin(name, args, i + 1);
            }
            match judge(name, args, self.script_dir().as_ref(), self.start_is_real()) {
                Some(Verdict::Code(why)) => {
                    if let Some(last) = self.out.programs.last_mut() {
                        last.runs_code = Some(why);
                    }
                }
                Some(Verdict::Unknown(option)) => {
                    if let Some(last) = self.out.programs.last_mut() {
                        last.unknown_option = Some(option);
                    }
                }
                None => {}
            }
            if SHELLS.contains(&name) {
                return self.shell(name, words, i + 1, to);
            }
            if name == "find" {
                return self.find_exec(words, i + 1, to);
            }
            let Some(w) = wrapper(name) else { return };
            match self.unwrap(name, &w, words, i + 1, to) {
                Some(c) => i = c,
                None => return,
            }
        }
    }

    /// Reads a wrapper's options; returns the index of the command it runs, if it runs one.
    fn unwrap(
        &mut self,
        name: &str,
        w: &Wrapper,
        words: &[Word],
        from: usize,
        to: usize,
    ) -> Option<usize> {
        let me = self.out.programs.len().checked_sub(1);
        let texts: Vec<&str> = words[from..to].iter().map(|w| w.text.as_str()).collect();
        let parsed = match parse(&w.spec, &texts) {
            Ok(p) => p,
            Err(option) => {
                self.refuse(
                    RefusalReason::WrapperOption,
                    format!("`{name}` option {option}, which this analysis does not know"),
                    Some(name),
                );
                for (k, word) in words[from..to].iter().enumerate() {
                    if !word.text.starts_with('-') {
                        self.push(word, Some(from + k), true);
                    }
                }
                return None;
            }
        };
        let first = parsed.operands.first().map_or(to, |&k| from + k);
        // Every word before the command it runs (options, their values, `timeout DURATION`)
        // must be the literal that was read: a glob or expansion there can become other options
        // or another command once the shell expands it (`timeout -k * 5 prog`).
        let before = (first + w.positional).min(to);
        if let Some(d) = words[from..before].iter().find(|w| w.dynamic) {
            let construct = format!(
                "`{name}` option or operand `{}` (known only at run time)",
                d.text
            );
            self.refuse(RefusalReason::WrapperOption, construct, Some(name));
            // A deny list still sees the words that may be the command.
            for (k, word) in words[first..to].iter().enumerate() {
                if !word.dynamic {
                    self.push(word, Some(first + k), true);
                }
            }
            return None;
        }
        if let Some(o) = parsed
            .opts
            .iter()
            .find(|o| w.pid.contains(&o.name.as_str()))
        {
            // `taskset -p MASK PID`, `strace -p PID -e inject=...`: it acts on a process the line
            // did not start. An allow list refuses it unless codeRunners names the program.
            let why = format!(
                "pid-option: `{name} {}` acts on another process (by pid, group or user), which an allow list cannot confine; the sandbox's pid namespace does",
                o.written
            );
            if let Some(p) = me.and_then(|k| self.out.programs.get_mut(k)) {
                p.runs_code.get_or_insert(why);
            }
        }
        if parsed
            .opts
            .iter()
            .any(|o| w.no_run.contains(&o.name.as_str()))
        {
            return None;
        }
        if let Some(why) = parsed.opts.iter().find_map(|o| refused_option(name, o)) {
            self.refuse(RefusalReason::WrapperOption, why, Some(name));
            for (k, word) in words[first..to].iter().enumerate() {
                self.push(word, Some(first + k), true);
            }
            return None;
        }
        if w.moves {
            self.move_cwd(None);
        } else if let Some(o) = parsed
            .opts
            .iter()
            .find(|o| w.chdir.contains(&o.name.as_str()))
        {
            // `env -C DIR`/`--chdir=DIR` goes to DIR; `sudo -D`, `chroot`'s: not followed
            let to = (name == "env").then(|| o.value.clone()).flatten();
            self.move_cwd(to);
        }
        let mut ran_line = false;
        for o in &parsed.opts {
            let split = w.split.contains(&o.name.as_str());
            if split || w.line.contains(&o.name.as_str()) {
                // A whole word when the option stood alone (`-c LINE`, `--command LINE`).
                let alone =
                    o.written == format!("-{}", o.name) || o.written == format!("--{}", o.name);
                let at = (alone && !split)
                    .then_some(from + o.word + 1)
                    .filter(|&k| k < to);
                self.line(at, o.value.clone().unwrap_or_default());
                ran_line = true;
                if split {
                    return None;
                }
            }
        }
        // `su -`, `su -l`, `runuser --login`: a login shell runs the user's start-up files, which
        // the line (or an earlier one) can write, before any `-c` line.
        let login = parsed
            .opts
            .iter()
            .find(|o| w.login.contains(&o.name.as_str()));
        let dash = parsed.operands.iter().any(|&k| texts[k] == "-");
        if w.shell && (login.is_some() || dash) {
            let written = login.map_or("-", |o| o.written.as_str());
            let construct = format!(
                "`{name} {written}` (a login shell runs start-up files the line can write)"
            );
            self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
        }
        if w.shell || ran_line {
            // `su [-] [USER] [-c LINE]`: the operands are the user and the shell's arguments;
            // without -c it starts a login shell.
            if !ran_line {
                self.refuse(
                    RefusalReason::ShellInput,
                    format!("`{name}` starting a shell"),
                    Some(name),
                );
            }
            return None;
        }
        let mut c = first + w.positional;
        while w.assignments && c < to && !words[c].dynamic && is_assignment(&words[c].text) {
            self.assign(&words[c]);
            c += 1;
        }
        if c >= to {
            if w.moves {
                // `chroot ROOT` without a program runs `$SHELL -i`: an interactive shell that
                // runs start-up files the line can write.
                let construct = format!("`{name}` without a program (it runs `$SHELL -i`, an interactive shell that runs start-up files)");
                self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
            }
            return None;
        }
        if w.moves {
            // `chroot DIR PROG`: PROG is looked up inside DIR, not the file the check would pin.
            let construct = format!(
                "`{name}` running a program of another root (`{}`), which is not the file checked",
                words[c].text
            );
            self.refuse(RefusalReason::WrapperOption, construct, Some(name));
            self.push(&words[c], Some(c), true);
            return None;
        }
        if w.joins {
            let line: Vec<&str> = words[c..to].iter().map(|w| w.text.as_str()).collect();
            self.line(None, line.join(" "));
            return None;
        }
        Some(c)
    }

    /// Builtins that evaluate their arguments (refused), and the names they assign.
    /// A command changes the directory, to `to` when that is known: a second change (or one
    /// after `||`, in a pipeline, ...) leaves it unknown.
    fn move_cwd(&mut self, to: Option<String>) {
        self.out.moved_to = if self.out.cwd_moved { None } else { to };
        self.out.cwd_moved = true;
    }

    /// The directory relative path operands are opened in, for [`judge`]: `None` when they are
    /// judged as written (no start given, no change of directory), `Some(None)` when it is not
    /// known, else the directory (absolute once the start is known).
    /// Whether [`Self::script_dir`] is the start directory itself (resolved by the host: no
    /// symlink in it), not one a `cd` named.
    fn start_is_real(&self) -> bool {
        matches!(self.out.start, Start::At(_)) && !self.out.cwd_moved
    }

    fn script_dir(&self) -> Option<Option<String>> {
        let moved = self.out.cwd_moved.then_some(self.out.moved_to.as_deref());
        match (&self.out.start, moved) {
            (Start::AsWritten, None) => None,
            (Start::AsWritten, Some(to)) => Some(to.map(str::to_string)),
            (Start::Unknown, _) => Some(None),
            (Start::At(s), None) => Some(Some(s.clone())),
            (Start::At(_), Some(None)) => Some(None),
            (Start::At(_), Some(Some(to))) if to.starts_with('/') => Some(Some(to.to_string())),
            (Start::At(s), Some(Some(to))) => Some(Some(format!("{s}/{to}"))),
        }
    }

    fn builtin(&mut self, name: &str, args: &[Word], at: usize) {
        if VARIABLE_BUILTINS.contains(&name) {
            self.variables(name, args);
        }
        let Some((reason, construct)) = refused_builtin(name, args) else {
            return;
        };
        let redefined = match name {
            "alias" => args
                .first()
                .map(|a| a.text.split('=').next().unwrap_or_default().to_string()),
            "hash" | "enable" => args.last().map(|a| a.text.clone()),
            _ => None,
        };
        let construct = if reason == RefusalReason::Redefinition {
            format!("{construct} ({name})")
        } else {
            construct
        };
        self.refuse(reason, construct, redefined.as_deref().or(Some(name)));
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
            _ => Vec::new(),
        };
        for n in names {
            self.out.assignments.push(Assignment {
                name: n.text.clone(),
                dynamic: n.dynamic,
            });
        }
        match name {
            "eval" if args.iter().any(|a| a.dynamic) => {
                let line: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
                let whole = Word {
                    text: line.join(" "),
                    dynamic: true,
                    shell: None,
                };
                self.push(&whole, None, false);
            }
            "eval" => {
                let line: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
                self.line(None, line.join(" "));
            }
            "trap" => {
                if let Some(k) = args.iter().position(|a| !a.text.starts_with('-')) {
                    self.line(Some(at + k), args[k].text.clone());
                }
            }
            _ => {}
        }
    }

    /// `export`, `declare`, `typeset`, `readonly`, `local` and `unset` with their operands as words:
    /// behind `command`, `builtin`, `!`, `time`, under a quoted name (`"export"`), or `unset` from
    /// the walk (a declaration the walk parsed as one comes with its keyword alone, its operands
    /// judged there with the same tables). Each name is one the line sets (or removes), for the
    /// environment rule; a shell-sensitive name, a refused attribute, a name that is not a plain
    /// identifier (bash evaluates a subscript) or a word known only at run time (the shells may
    /// split it into other names, and a declaration behind a prefix is not read as an assignment
    /// by every shell) is refused.
    fn variables(&mut self, name: &str, args: &[Word]) {
        let mut options = true;
        for a in args {
            let t = a.text.as_str();
            if options && t == "--" {
                options = false;
                continue;
            }
            if a.dynamic {
                let construct = format!(
                    "`{name} {t}` (a word known only at run time: the shells may split it into other names)"
                );
                self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                self.out.assignments.push(Assignment {
                    name: t.to_string(),
                    dynamic: true,
                });
                continue;
            }
            if options && (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                if name != "unset"
                    && t[1..]
                        .chars()
                        .any(|c| DECLARATION_OPTIONS_REFUSED.contains(c))
                {
                    let construct = format!("`{name} {t}` (attributes that make bash evaluate values, name references or functions)");
                    self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                }
                continue;
            }
            options = false;
            let var = t.split('=').next().unwrap_or_default();
            if !is_identifier(var) {
                let construct =
                    format!("`{name} {t}` (not a plain variable name: bash evaluates a subscript)");
                self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                continue;
            }
            if SHELL_SENSITIVE.contains(&var) {
                let construct = format!(
                    "`{name} {var}`, which changes how the shell reads or runs what follows"
                );
                self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
            }
            self.out.assignments.push(Assignment {
                name: var.to_string(),
                dynamic: false,
            });
        }
    }

    /// `sh [options] -c LINE [name [args]]`: LINE is returned for the walk; a shell without `-c`
    /// reads a script file or stdin, which cannot be checked.
    fn shell(&mut self, name: &str, words: &[Word], from: usize, to: usize) {
        if name == "busybox" {
            // `busybox APPLET ...`: the applet is the program (a name busybox looks up itself).
            self.pin = false;
            self.nested(|cx| cx.programs(words, from, to));
            self.pin = true;
            return;
        }
        let mut i = from;
        let mut command = false;
        let mut stdin = false;
        let mut quiet: Vec<char> = Vec::new();
        while i < to {
            let w = &words[i];
            if w.dynamic && command {
                break;
            }
            if w.dynamic {
                let construct = format!("`{name}` option `{}` (known only at run time)", w.text);
                self.refuse(RefusalReason::WrapperOption, construct, Some(name));
                return;
            }
            let t = w.text.as_str();
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            if t.starts_with("--") {
                // bash's long options: only those that read no file and change no parsing.
                const LONG: &[&str] = &[
                    "--norc",
                    "--noprofile",
                    "--restricted",
                    "--verbose",
                    "--noediting",
                    "--version",
                    "--help",
                ];
                // Start-up files an interactive (`-i`) shell would read are allowed only when
                // bash was told not to read them (`--norc`). A login shell is refused whatever
                // its options: `--noprofile` turns off the profile, not `~/.bash_logout`, which a
                // login bash runs at `exit` and which an earlier line can write.
                match t {
                    "--norc" => quiet.push('i'),
                    "--login" => {
                        let construct = format!("`{name} --login` (a login shell runs start-up and exit files the line can write: `~/.bash_logout` even with `--noprofile`)");
                        self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                    }
                    _ => {}
                }
                if t != "--login" && !LONG.contains(&t) {
                    let construct = format!("`{name}` option `{t}` (it reads a file, or this analysis does not know it)");
                    self.refuse(RefusalReason::WrapperOption, construct, Some(name));
                    return;
                }
                i += 1;
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                let on = t.starts_with('-');
                for c in t[1..].chars() {
                    match c {
                        'c' => command = true,
                        's' => stdin = true,
                        // Refused, and the line still read: a deny list sees its programs.
                        'i' if on && !quiet.contains(&c) => {
                            let construct = format!("`{name} {t}` (an interactive shell runs start-up files the line can write; bash's `--norc` before it turns them off)");
                            self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                        }
                        'l' if on => {
                            let construct = format!("`{name} {t}` (a login shell runs start-up and exit files the line can write: `~/.bash_logout` even with `--noprofile`)");
                            self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                        }
                        // zsh's `-f` (NO_RCS) and fish's `-N` (`--no-config`): no start-up file.
                        'f' | 'N' if on => quiet.push(c),
                        'i' | 'l' | 'f' | 'N' => {}
                        // Every other letter changes a shell option: only the listed ones pass.
                        _ => {
                            let value = matches!(c, 'o' | 'O').then(|| {
                                i += 1;
                                words.get(i).filter(|w| i < to && !w.dynamic)
                            });
                            let value = value.flatten().map(|w| w.text.as_str());
                            if let Some(why) = shellopts::refused_invocation(on, c, value) {
                                let construct = format!("`{name} {t}`: {why}");
                                self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                                return;
                            }
                        }
                    }
                }
                i += 1;
                continue;
            }
            break;
        }
        // Shells that read a start-up file even to run `-c` (zsh `~/.zshenv`, fish `config.fish`).
        let startup = match name {
            "zsh" if !quiet.contains(&'f') => Some("`zsh` reads `~/.zshenv` before any line, a start-up file the line can write; `zsh -f` turns it off"),
            "fish" if !quiet.contains(&'N') => Some("`fish` reads `~/.config/fish/config.fish` before any line, a start-up file the line can write; `fish -N` turns it off"),
            _ => None,
        };
        if let Some(why) = startup {
            self.refuse(
                RefusalReason::ShellConstruct,
                format!("`{name}` ({why})"),
                Some(name),
            );
        }
        if command {
            match words.get(i).filter(|_| i < to) {
                Some(line) if !line.dynamic => self.line(Some(i), line.text.clone()),
                Some(line) => {
                    self.push(line, None, false);
                    let construct = format!(
                        "`{name} -c` with a line known only at run time (`{}`)",
                        line.text
                    );
                    self.refuse(RefusalReason::ShellConstruct, construct, Some(name));
                }
                None => self.refuse(
                    RefusalReason::ShellInput,
                    format!("`{name} -c` without a line"),
                    Some(name),
                ),
            }
            return;
        }
        let from = if stdin || i >= to {
            "stdin"
        } else {
            "a script file"
        };
        self.refuse(
            RefusalReason::ShellInput,
            format!("`{name}` reading its commands from {from}"),
            Some(name),
        );
    }

    /// `find ... -exec CMD ... ;` (and `-execdir`, `-ok`, `-okdir`): CMD is a program too.
    fn find_exec(&mut self, words: &[Word], from: usize, to: usize) {
        // A glob or expansion among find's words can become `-exec PROG ;` (or end one early)
        // once the shell expands it: only literal words say what find runs.
        if let Some(d) = words[from..to].iter().find(|w| w.dynamic) {
            let construct = format!("`find` word `{}` (known only at run time)", d.text);
            self.refuse(RefusalReason::WrapperOption, construct, Some("find"));
        }
        let mut i = from;
        while i < to {
            let t = words[i].text.as_str();
            if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let end = words[i + 1..to]
                    .iter()
                    .position(|w| w.text == ";" || w.text == "+")
                    .map_or(to, |e| i + 1 + e);
                if t.ends_with("dir") {
                    self.move_cwd(None); // CMD runs in each file's directory
                }
                if end > i + 1 {
                    self.nested(|cx| cx.programs(words, i + 1, end));
                }
                i = end;
            }
            i += 1;
        }
    }
}

/// A wrapper option that makes it run something the analysis cannot pin: why.
fn refused_option(wrapper: &str, o: &super::options::Opt) -> Option<String> {
    let v = o.value.as_deref().unwrap_or("");
    let why = match (wrapper, o.name.as_str()) {
        ("su" | "runuser", "s" | "shell") => "runs the line with a shell of its choosing",
        ("sudo", "R" | "chroot") => "runs the program of another root, not the file checked",
        ("strace" | "ltrace", "E") => "sets the environment of the program it runs",
        ("strace" | "ltrace", "o") if v.starts_with(['|', '!']) => {
            "pipes its output to a shell command"
        }
        _ => return None,
    };
    Some(format!("`{wrapper} {}` ({why})", o.written))
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=')
        .is_some_and(|(name, _)| is_identifier(name))
}

/// A plain shell variable name (no subscript, no expansion).
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// Builtins refused under an allow list, and why.
fn refused_builtin(name: &str, args: &[Word]) -> Option<(RefusalReason, String)> {
    let why = match name {
        "set" | "shopt" => {
            let why = if name == "set" {
                shellopts::refused_set(args)
            } else {
                shellopts::refused_shopt(args)
            };
            return why.map(|w| (RefusalReason::ShellConstruct, w));
        }
        "jobs"
            if args
                .iter()
                .any(|a| a.dynamic || a.text.starts_with('-') && a.text.contains('x')) =>
        {
            "`jobs -x` (runs a command)"
        }
        "wait"
            if args
                .iter()
                .any(|a| a.dynamic || a.text.starts_with('-') && a.text.contains('p')) =>
        {
            "`wait -p` (assigns a name whose subscript bash evaluates)"
        }
        "getopts" => "`getopts` (assigns a name whose subscript bash evaluates)",
        "command" | "builtin" if args.first().is_some_and(|a| a.dynamic) => {
            "a builtin run by a name known only at run time"
        }
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
    Some((RefusalReason::ShellConstruct, why.to_string()))
}
#[cfg(test)]
mod tests {
    use super::super::{analyse_argv, analyse_line, RefusalReason};

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
        // Refused under an allow list, still seen by a deny list.
        assert_eq!(words("timeout * rm x"), ["timeout", "rm", "x"]);
        assert_eq!(words("find * -exec rm {} +"), ["find", "rm"]);
        assert_eq!(words("find . -name x -exec rm {} +"), ["find", "rm"]);
        assert_eq!(words("sudo -u root -E rm"), ["sudo", "rm"]);
        assert_eq!(
            words("ionice -c 3 taskset -c 0 chrt -f 10 rm"),
            ["ionice", "taskset", "chrt", "rm"]
        );
        // GNU abbreviations of long options, as the wrapper reads them.
        assert_eq!(words("timeout --sig=KILL 5 rm"), ["timeout", "rm"]);
        assert_eq!(words("env --split-s='rm x'"), ["env", "rm"]);
    }

    #[test]
    fn a_relative_program_after_a_change_of_directory_is_refused() {
        for line in [
            "cd /usr/bin && ./setpriv /bin/sh -c id",
            "pushd x; bin/tool",
            "env -C /tmp ./t",
            "find . -execdir ./t {} +",
            "cd x; bash -c './t'",
        ] {
            let a = analyse_line(line);
            assert!(
                a.refusals
                    .iter()
                    .any(|r| r.construct.contains("relative program path")),
                "{line}: {:?}",
                a.refusals
            );
        }
        for line in ["./t && cd x", "cd x && /bin/t", "cd x && make"] {
            assert!(analyse_line(line).refusals.is_empty(), "{line}");
        }
    }

    #[test]
    fn options_and_builtins_that_run_what_the_check_cannot_pin_are_refused() {
        for line in [
            "su -s /usr/bin/python3 -c 'x' root",
            "runuser --shell=/bin/perl -c x root",
            "chroot /tmp/root /bin/sh",
            // x13, x14: an interactive or login shell runs start-up files the line can write
            "chroot /",
            "chroot --userspec=0:0 /",
            "su -",
            "su - -c ls",
            "su -l -c ls",
            "su --login -c ls root",
            "su -c ls - root",
            "runuser -l root -c ls",
            "sudo -R /tmp/root ls",
            "strace -E LD_PRELOAD=/tmp/x.so ls",
            "strace -o '|sh' ls",
            "ltrace -o '!sh' ls",
            "bash --rcfile ./rc -ic :",
            "bash -i -c ls",
            "bash -ic ls",
            "bash -l -c ls",
            "bash -lc ls",
            "bash --login -c ls",
            "sh -l -c ls",
            "sh -c 'bash -lc ls'",
            "zsh -c ls",
            "sh -c 'zsh -c ls'",
            "fish -c ls",
            "bash --norc -lc ls",
            "bash --noprofile -ic ls",
            // r6-08: a login bash runs `~/.bash_logout` at exit even with `--noprofile`
            "bash --norc --noprofile -lc ls",
            "bash --norc --noprofile -ilc ls",
            "bash --noprofile --login -c ls",
            "bash --noprofile --norc -lc 'ls; exit'",
            "sh -c 'bash --noprofile --norc -xlc ls'",
            "timeout -k * 5 ls",
            "timeout * ls",
            "timeout $T ls",
            "nice -n ~ ls",
            "env -u {a,b} ls",
            "find . -name *.c -exec ls {} ;",
            "find $D -exec ls {} ;",
            "bash --init-file ./rc -c :",
            "bash --debugger -c :",
            "bash -kc 'ls x=1'",
            "sh -o keyword -c ls",
            "bash -O extdebug -c ls",
            "set -k; ls",
            "set -eo keyword",
            "set -H",
            "set -o histexpand",
            "shopt -s expand_aliases",
            "jobs -x rm x",
            "wait -p x",
            "getopts a 'x[$(id)]'",
        ] {
            let a = analyse_line(line);
            assert!(
                a.refusals.iter().any(|r| matches!(
                    r.reason,
                    RefusalReason::WrapperOption | RefusalReason::ShellConstruct
                )),
                "{line}: {:?}",
                a.refusals
            );
        }
        for line in [
            "set -e; set -o pipefail; set -- -k",
            "bash --norc -ic ls",
            "bash --norc --noprofile -c ls",
            "zsh -fc ls",
            "zsh -f -c ls",
            "fish -N -c ls",
            "timeout -k 2 5 ls *",
            "find . -name '*.c' -exec ls {} ;",
            "jobs -l",
            "strace -o out.txt ls",
            "su -c ls root",
        ] {
            assert!(analyse_line(line).refusals.is_empty(), "{line}");
        }
        // A deny list still sees what chroot would run.
        assert!(analyse_line("chroot /r rm x")
            .programs
            .iter()
            .any(|p| p.word == "rm" && p.guessed));
    }

    /// Every spelling that reaches a builtin (prefixes, nested prefixes, a quoted or escaped name).
    const PREFIXES: &[&str] = &[
        "command ",
        "command -p ",
        "command -- ",
        "command -p -- ",
        "builtin ",
        "command builtin ",
        "builtin command ",
        "builtin -- ",
        "command command ",
        "time -- ",
        "! ",
        "! command ",
        "time ",
        "time -p ",
        "time command builtin ",
        "exec ",
        "nohup ",
    ];

    #[test]
    fn a_builtin_behind_any_prefix_is_judged_as_in_first_position() {
        // Builtins judged in first position: what they assign, or that they are refused.
        for line in [
            "export TAR_OPTIONS=x",
            "export -- TAR_OPTIONS=x",
            "declare -x GIT_EXTERNAL_DIFF=x",
            "typeset -x MAKEFLAGS=x",
            "readonly NODE_OPTIONS=x",
            "local GIT_SSH_COMMAND=x",
            "export PS4=x",
            "export PATH=/tmp",
            "declare -n r=x",
            "declare -i x=1",
            "export -f f",
            "typeset -a a",
            "unset -v GIT_EDITOR EDITOR VISUAL LESSSECURE",
            "unset LESSSECURE",
            "read x",
            "printf -v x 1",
            "mapfile x",
            "readarray -C cb x",
            "getopts a x",
            "eval ls",
            "source x",
            ". ./x",
            "trap ls EXIT",
            "let x=1",
            "set -k",
            "alias ls=rm",
            "hash -p /bin/rm ls",
            "enable -f x.so x",
            "test -v x",
            "fc -s",
        ] {
            let first = analyse_line(line);
            assert!(
                !first.refusals.is_empty() || !first.assignments.is_empty(),
                "{line}: judged as nothing in first position"
            );
            let names = |a: &super::super::Analysis| -> Vec<String> {
                a.assignments.iter().map(|a| a.name.clone()).collect()
            };
            for spelling in PREFIXES.iter().map(|p| format!("{p}{line}")).chain([
                format!("\\{line}"),
                format!("\"{line}").replacen(' ', "\" ", 1),
            ]) {
                let a = analyse_line(&spelling);
                assert!(
                    first.refusals.is_empty() || !a.refusals.is_empty(),
                    "{spelling}: not refused ({:?})",
                    first.refusals
                );
                for name in names(&first) {
                    assert!(
                        names(&a).contains(&name),
                        "{spelling}: `{name}` not assigned"
                    );
                }
                // The same in the -c script of an argv request.
                let argv: Vec<String> = vec!["bash".into(), "-c".into(), spelling.clone()];
                let b = analyse_argv(&argv);
                assert_eq!(
                    (b.refusals.len(), names(&b)),
                    (a.refusals.len(), names(&a)),
                    "argv {spelling}"
                );
            }
        }
    }

    #[test]
    fn a_declaration_reached_as_words_refuses_what_it_cannot_name() {
        for line in [
            "command export A=$x",
            "command export \"$N\"=1",
            "builtin export 'a[$(id)]=1'",
            "command declare -n r=PATH",
            "command export -- -n",
            "command unset 'a[$(id)]'",
            "command unset $N",
            "command export PROMPT_COMMAND=x",
            "command export A=1 -f",
        ] {
            let a = analyse_line(line);
            assert!(
                a.refusals
                    .iter()
                    .any(|r| r.reason == RefusalReason::ShellConstruct),
                "{line}: {:?}",
                a.refusals
            );
        }
        // What they are for: a plain name and value, an option, `command -v`.
        for line in [
            "command export LANG=C",
            "builtin declare -x TZ=UTC",
            "command unset -v LANG",
            "command -v export",
            "unset LANG",
        ] {
            let a = analyse_line(line);
            assert!(a.refusals.is_empty(), "{line}: {:?}", a.refusals);
            assert!(a.rebuild.is_some(), "{line}");
        }
        assert!(analyse_line("command -v export TAR_OPTIONS=x")
            .assignments
            .is_empty());
    }

    #[test]
    fn an_unknown_wrapper_option_is_a_refusal_and_later_words_are_guesses() {
        let a = analyse_line("xargs -J % rm");
        assert_eq!(a.refusals[0].reason, RefusalReason::WrapperOption);
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
                    .any(|r| r.reason == RefusalReason::ShellInput),
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
