//! Shell-line analysis for the host's command policy: what a shell line (or an argv) would run,
//! judged on tree-sitter-bash's syntax tree.
//!
//! The rule (Codex's, `codex-rs/shell-command/src/bash.rs`): a line is understood only when it
//! is a sequence of plain commands of literal words joined by `&&`, `||`, `;`, `|` (and
//! newlines), with redirections to literal paths. Every other construct is reported as a
//! [`Refusal`] naming it and its position; an allow list refuses the line, a deny list (a guard
//! rail) still sees the commands found inside it. The same parse serves dash and bash: a
//! construct the two shells read differently (`[[`, `((`, `$'..'`, `<<<`, `|&`, `&>`, a control
//! character, a backslash-newline) is a refusal too. A line understood comes with its rebuild
//! ([`Analysis::rebuild`]): what the shell is given instead of the agent's text.
//!
//! One walk and tables (imports go down this list, never back up):
//!
//! | file | job |
//! |---|---|
//! | `walk.rs` | the tree walk: statements, words, redirections, refused constructs; the rebuild |
//! | `command.rs` | one simple command: its programs, behind wrappers; every builtin judged by its name wherever it stands; nested `-c` lines handed back to the walk |
//! | `wrappers.rs` | table: wrappers (`env`, `xargs`, `timeout`, `sudo`, ...) and their option grammars |
//! | `programs.rs` | table: plain programs, and the grammar a program name is read with (what is understood) |
//! | `runners.rs` | table: programs that run code from arguments or options (`git`, `tar`, `node`, `make`, ...), read with their grammars |
//! | `options.rs` | reading options with a grammar (clusters, values, GNU abbreviations) |
//! | `shellopts.rs` | table: the shell options a checked line may change (`set`, `shopt`, a shell's `-o`/`-O`); every other change is refused |
//! | `words.rs` | one word: its value (quotes removed, run-time parts flagged) and its rebuild (quoted) |
//! | `parse.rs` | the thread-local tree-sitter parser |
//!
//! Invariant: nothing here executes anything or touches the file system; positions are UTF-16
//! indexes into the line as JS sees it.

mod command;
mod options;
mod parse;
mod programs;
mod runners;
mod shellopts;
mod walk;
mod words;
mod wrappers;

/// Deepest nesting of lines analysed (`sh -c "sh -c '...'"`); deeper is a refusal.
const MAX_DEPTH: usize = 8;

/// Why part of a line is not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    /// A shell construct outside plain commands (arithmetic, substitution, loops, `eval`, ...).
    ShellConstruct,
    /// A shell that reads its commands from stdin or a script file.
    ShellInput,
    /// An option of a wrapper that this analysis does not know (so what it runs is a guess).
    WrapperOption,
    /// An alias, `hash -p` or `enable`: a name that then runs something else.
    Redefinition,
}

impl RefusalReason {
    /// The reason as the policy error reports it.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::ShellConstruct => "shell-construct",
            RefusalReason::ShellInput => "shell-input",
            RefusalReason::WrapperOption => "wrapper-option",
            RefusalReason::Redefinition => "redefinition",
        }
    }
}

/// A part of the line that is not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The kind of refusal.
    pub reason: RefusalReason,
    /// What it is, for a message (`arithmetic $((...))`, "a for loop", `xargs option -J`).
    pub construct: String,
    /// UTF-16 index in the line where it starts.
    pub position: usize,
    /// The word concerned, when there is one (the shell, the redefined name).
    pub word: Option<String>,
}

/// A program the line would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The word with quoting removed; run-time parts kept as written (`$CMD`).
    pub word: String,
    /// True when the word's value is only known at run time (an expansion, a glob, `~`).
    pub dynamic: bool,
    /// UTF-16 index in the line of the command it belongs to.
    pub position: usize,
    /// Set when this program would run code given in its arguments or stdin: why.
    pub runs_code: Option<String>,
    /// Set when this program of the code-runner table was given an option its grammar does not
    /// list: which.
    pub unknown_option: Option<String>,
    /// True when the word was found only by guessing (after an unknown wrapper option, or in
    /// the dash reading of a `[[`/`((` line): a deny list checks it, an allow list has refused.
    pub guessed: bool,
}

/// A variable the line sets (for itself or for the programs it runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The name (as written when it is only known at run time).
    pub name: String,
    /// True when the name is only known at run time.
    pub dynamic: bool,
}

/// The result of analysing a line or an argv.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Programs, in the order found.
    pub programs: Vec<Program>,
    /// Variables assigned.
    pub assignments: Vec<Assignment>,
    /// What is not understood, in the order found.
    pub refusals: Vec<Refusal>,
    /// True when the line is not valid bash (or not a complete line).
    pub malformed: bool,
    /// What the shell is given instead of the line (or the argv instead of the request's), built
    /// from what was checked; `None` when some part is refused.
    pub rebuild: Option<Vec<Piece>>,
    /// A command changed the directory (`cd`, `env -C`, `find -execdir`): a relative program
    /// path after it is refused (it was resolved against the request's cwd).
    pub(crate) cwd_moved: bool,
    /// Where the directory went, relative to the request's cwd (or absolute), when exactly one
    /// command changed it to a literal directory (`cd /dev`, `env -C sub`); `None` when it is
    /// not known (a second change, `cd -`, `popd`, `find -execdir`). Relative script operands
    /// are judged at that directory, and refused when it is not known.
    pub(crate) moved_to: Option<String>,
    /// Where the line's commands start: relative path operands (scripts, makefiles, preloads) are
    /// judged joined to it.
    pub(crate) start: Start,
}

/// Where a line's (or an argv's) commands start, for the relative path operands the analysis
/// judges (`perl dev/stdin` started in `/` reads `/dev/stdin`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Start {
    /// Not given: relative operands are judged as written (the tests' `analyse_line`, whose
    /// lines name no starting directory).
    #[default]
    AsWritten,
    /// This absolute directory (symlinks resolved): a relative operand is judged as the absolute
    /// path it names there.
    At(String),
    /// Somewhere not known (no directory, or not an absolute one): every relative operand is
    /// refused.
    Unknown,
}

impl Start {
    /// The start of a command run in `cwd`: [`Start::Unknown`] unless it is an absolute path.
    pub fn of(cwd: Option<&str>) -> Start {
        match cwd {
            Some(d) if d.starts_with('/') => Start::At(d.to_string()),
            _ => Start::Unknown,
        }
    }
}

/// A piece of a rebuild. Text pieces are shell text (words already quoted); the caller writes a
/// [`Piece::Program`] as the program it checked for that word (its real path, quoted, or the
/// builtin's name), and the pieces between [`Piece::Open`] and [`Piece::Close`] as one quoted
/// word (a nested `-c` line). In an argv rebuild, each top-level piece (or Open..Close group) is
/// one argument, written unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Shell text (an argument, unquoted, at the top of an argv).
    Text(String),
    /// The program at this index of [`Analysis::programs`].
    Program(usize),
    /// The start of a nested line.
    Open,
    /// The end of a nested line.
    Close,
}

/// The grammar the analysis reads `name`'s arguments with (`"plain"`, `"awk"`, `"shell"`, ...), or
/// `None` for a program it does not understand (which an allow list admits only when a rule names
/// it exactly).
pub fn program_grammar(name: &str) -> Option<&'static str> {
    programs::grammar(name)
}

/// Analyses a shell line (the text a host hands to `sh -c`), relative path operands judged as
/// written: what runs it uses [`analyse_line_in`].
#[cfg(test)]
pub fn analyse_line(line: &str) -> Analysis {
    analyse_line_at(line, Start::AsWritten)
}

/// Analyses a shell line whose commands start in `cwd` (absolute; `None` or a relative path: not
/// known, so every relative path operand is refused).
pub fn analyse_line_in(line: &str, cwd: Option<&str>) -> Analysis {
    analyse_line_at(line, Start::of(cwd))
}

fn analyse_line_at(line: &str, start: Start) -> Analysis {
    let mut out = Analysis {
        start,
        ..Analysis::default()
    };
    let pieces = walk::analyse(line, 0, 0, &mut out);
    out.rebuild = pieces.filter(|_| out.refusals.is_empty() && !out.malformed);
    out
}

/// Analyses an argv request (`[program, ...args]`, no shell in between), relative path operands
/// judged as written: what runs it uses [`analyse_argv_in`].
#[cfg(test)]
pub fn analyse_argv(argv: &[String]) -> Analysis {
    analyse_argv_at(argv, Start::AsWritten)
}

/// Analyses an argv request that starts in `cwd` (as [`analyse_line_in`]).
pub fn analyse_argv_in(argv: &[String], cwd: Option<&str>) -> Analysis {
    analyse_argv_at(argv, Start::of(cwd))
}

fn analyse_argv_at(argv: &[String], start: Start) -> Analysis {
    let mut out = Analysis {
        start,
        ..Analysis::default()
    };
    let words: Vec<words::Word> = argv
        .iter()
        .map(|w| words::Word::literal(w.clone()))
        .collect();
    let mut cmd = command::Command::new(&mut out, 0, 0, words.len());
    cmd.programs(&words, 0, words.len());
    let command::Command { slots, lines, .. } = cmd;
    let mut pieces = Vec::new();
    let mut whole = true;
    for (k, slot) in slots.into_iter().enumerate() {
        match slot {
            command::Slot::Word => pieces.push(Piece::Text(argv[k].clone())),
            command::Slot::Program(p) => pieces.push(Piece::Program(p)),
            command::Slot::Line(l) => match walk::analyse(&lines[l].text, 0, 1, &mut out) {
                Some(inner) => {
                    pieces.push(Piece::Open);
                    pieces.extend(inner);
                    pieces.push(Piece::Close);
                }
                None => whole = false,
            },
        }
    }
    for line in lines.iter().filter(|l| l.word.is_none()) {
        walk::analyse(&line.text, 0, 1, &mut out);
        whole = false;
    }
    let understood = whole && out.refusals.is_empty() && !out.malformed;
    out.rebuild = understood.then_some(pieces);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rebuild written as the policy writes it, each program as `<word>`.
    fn written(a: &Analysis, argv: bool) -> Option<String> {
        let pieces = a.rebuild.as_ref()?;
        let mut out = String::new();
        let mut depth = 0;
        for p in pieces {
            // In an argv, each top-level piece (a nested line's `[` included) is its own argument.
            if argv && depth == 0 && !out.is_empty() {
                out.push('|');
            }
            let text = match p {
                Piece::Text(t) => t.clone(),
                Piece::Program(i) => format!("<{}>", a.programs[*i].word),
                Piece::Open => {
                    depth += 1;
                    "[".into()
                }
                Piece::Close => {
                    depth -= 1;
                    "]".into()
                }
            };
            out.push_str(&text);
        }
        Some(out)
    }

    #[test]
    fn a_line_is_rebuilt_from_what_was_checked() {
        let line = |l: &str| written(&analyse_line(l), false);
        assert_eq!(
            line("cd x && npm test 2>&1 | tail -50").as_deref(),
            Some("<cd> x && <npm> test 2>&1 | <tail> -50")
        );
        assert_eq!(
            line("FOO=\"a b\" ls -la 'my file' > out.txt; echo $HOME").as_deref(),
            Some("FOO='a b' <ls> -la 'my file' >out.txt; <echo> ${HOME}")
        );
        assert_eq!(
            line("bash -c 'ls && rm \"x y\"' name").as_deref(),
            Some("<bash> -c [<ls> && <rm> 'x y'] name")
        );
        assert_eq!(
            line("cat <<'EOF' | tail -1\n$(rm x)\nEOF\nls").as_deref(),
            Some("<cat> <<'EOF' | <tail> -1\n$(rm x)\nEOF\n<ls>")
        );
        assert_eq!(
            line("[ -d node_modules ] || npm ci").as_deref(),
            Some("<[> '-d' node_modules ']' || <npm> ci")
        );
        assert_eq!(
            line("export NODE_ENV=test").as_deref(),
            Some("<export> NODE_ENV=test")
        );
        assert_eq!(
            line("env A=1 timeout 5 rm x").as_deref(),
            Some("<env> A=1 <timeout> 5 <rm> x")
        );
        assert_eq!(line("echo $(id)"), None);
        let argv: Vec<String> = ["bash", "-c", "ls x; rm y"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            written(&analyse_argv(&argv), true).as_deref(),
            Some("<bash>|-c|[<ls> x; <rm> y]")
        );
    }

    #[test]
    fn bytes_the_grammar_and_the_shells_read_differently_are_refused_at_every_depth() {
        let refused = |a: &Analysis| {
            a.rebuild.is_none()
                && a.refusals
                    .iter()
                    .any(|r| r.construct.contains("read differently"))
        };
        for line in [
            "ls \\\r\nrm -f victim",
            "ls\rrm",
            "ls \x0b x",
            "ls \x1b[0m",
            "ls\u{7f}",
            "x\\\n#; rm -f victim",
            "ls 'a\\\nb'",
            "bash -c 'ls \\\r\nrm -f victim'",
            "sh -c \"bash -c 'x\\\\\n#; rm'\"",
        ] {
            let a = analyse_line(line);
            assert!(refused(&a), "{line:?}: {:?}", a.refusals);
        }
        for script in ["ls \\\r\nrm -f victim", "x\\\n#; rm -f victim"] {
            let argv: Vec<String> = ["bash", "-c", script]
                .iter()
                .map(|s| s.to_string())
                .collect();
            assert!(refused(&analyse_argv(&argv)), "{script:?}");
        }
        // A deny list still sees the command the shells would run.
        let a = analyse_line("ls \\\r\nrm -f victim");
        assert!(a.programs.iter().any(|p| p.word == "rm" && p.guessed));
        // TAB and LF are plain separators; a backslash before a newline is refused even when
        // escaped (tree-sitter drops it inside double quotes).
        assert!(analyse_line("ls\t-la\nls").rebuild.is_some());
        assert!(refused(&analyse_line("echo \\\\\nls")));
    }
}
