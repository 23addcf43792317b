//! Shell-line analysis for the host's command policy: what a shell line (or an argv) would run,
//! judged on tree-sitter-bash's syntax tree.
//!
//! The rule (Codex's, `codex-rs/core/src/bash.rs`): a line is understood only when it is a
//! sequence of plain commands of literal words joined by `&&`, `||`, `;`, `|` (and newlines),
//! with redirections to literal paths. Every other construct is reported as a [`Refusal`]
//! naming it and its position; an allow list refuses the line, a deny list (a guard rail) still
//! sees the commands found inside it. The same parse serves dash and bash: a construct the two
//! shells read differently (`[[`, `((`, `$'..'`, `<<<`, `|&`, `&>`) is a refusal too.
//!
//! | file | job |
//! |---|---|
//! | `parse.rs` | the thread-local tree-sitter parser |
//! | `words.rs` | the value of one word node (quotes removed; run-time parts flagged) |
//! | `syntax.rs` | the tree walk: simple commands, assignments, refused constructs |
//! | `wrappers.rs` | the programs behind wrappers (`env`, `xargs`, `timeout`, `sh -c`, ...), by their option grammar |
//! | `runners.rs` | allowed programs that run code from their arguments or stdin (`awk`, `python -c`, `git -c`, ...) |
//!
//! Invariant: nothing here executes anything or touches the file system; positions are UTF-16
//! indexes into the line as JS sees it.

mod parse;
mod runners;
mod syntax;
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
}

/// Analyses a shell line (the text a host hands to `sh -c`).
pub fn analyse_line(line: &str) -> Analysis {
    let mut out = Analysis::default();
    syntax::analyse(line, 0, 0, &mut out);
    out
}

/// Analyses an argv request (`[program, ...args]`, no shell in between).
pub fn analyse_argv(argv: &[String]) -> Analysis {
    let mut out = Analysis::default();
    let words: Vec<words::Word> = argv
        .iter()
        .map(|w| words::Word::literal(w.clone()))
        .collect();
    let mut cx = wrappers::Context {
        out: &mut out,
        position: 0,
        depth: 0,
    };
    wrappers::programs(&words, &mut cx);
    out
}
