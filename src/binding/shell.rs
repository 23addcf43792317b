//! `analyseShellLine` / `analyseShellArgv` (and their `Async` variants) / `shellProgramGrammar`: the core's shell-line analysis ([`crate::shell`]) as
//! plain objects for the TS command policy.

use napi::{Env, Result, Task};
use napi_derive::napi;

use crate::shell::{self, Analysis};

/// A program a line would run.
#[napi(object)]
pub struct ShellProgram {
    /// The word with quoting removed (run-time parts as written, e.g. `$CMD`).
    pub word: String,
    /// True when the word is only known at run time (an expansion, a glob, `~`).
    pub dynamic: bool,
    /// UTF-16 index in the line of the command it belongs to.
    pub position: u32,
    /// Set when the program would run code given in its arguments or stdin: why.
    pub runs_code: Option<String>,
    /// Set when the program (one of the code-runner table) was given an option its grammar
    /// does not list: which.
    pub unknown_option: Option<String>,
    /// True when the word was found only by guessing (after an unknown wrapper option, or in
    /// dash's reading of a `[[`/`((` line).
    pub guessed: bool,
}

/// A variable a line assigns.
#[napi(object)]
pub struct ShellAssignment {
    /// The name (as written when only known at run time).
    pub name: String,
    /// True when the name is only known at run time.
    pub dynamic: bool,
}

/// A part of a line the analysis does not understand.
#[napi(object)]
pub struct ShellRefusal {
    /// `'shell-construct'`, `'shell-input'`, `'wrapper-option'` or `'redefinition'`.
    #[napi(ts_type = "'shell-construct' | 'shell-input' | 'wrapper-option' | 'redefinition'")]
    pub reason: String,
    /// What it is (`arithmetic $(( ))`, "a for loop", ...).
    pub construct: String,
    /// UTF-16 index in the line where it starts.
    pub position: u32,
    /// The word concerned, if any (the shell, the redefined name, the wrapper).
    pub word: Option<String>,
}

/// What a shell line or an argv would run, and what in it is not understood.
#[napi(object)]
pub struct ShellLineAnalysis {
    /// Programs in the order found (including those inside refused constructs).
    pub programs: Vec<ShellProgram>,
    /// Variables assigned.
    pub assignments: Vec<ShellAssignment>,
    /// Constructs not understood, in the order found.
    pub refusals: Vec<ShellRefusal>,
    /// True when the line is not valid bash.
    pub malformed: bool,
    /// What the shell is given instead of the line (the argv instead of the request's), when
    /// every part is understood: text pieces are shell text (words quoted); a program piece is
    /// written as the program checked for it; `open`..`close` enclose a nested `-c` line, written
    /// as one quoted word. In an argv rebuild each top-level piece (or group) is one argument.
    pub rebuild: Option<Vec<ShellPiece>>,
    /// How many programs the line names. When more than [`MAX_PROGRAMS`], only the first
    /// `MAX_PROGRAMS + 1` are in `programs` (and the other lists are cut the same way, `rebuild`
    /// is null): converting them all would hold the JS thread, and such a line is refused anyway.
    pub program_count: u32,
}

/// The most programs a policy judges in one line (`MAX_CHECKED_PROGRAMS` in ts/policy.ts).
pub const MAX_PROGRAMS: usize = 1000;

/// A piece of a rebuild.
#[napi(object)]
pub struct ShellPiece {
    /// `'text'`, `'program'`, `'open'` or `'close'`.
    #[napi(ts_type = "'text' | 'program' | 'open' | 'close'")]
    pub kind: String,
    /// The text of a text piece.
    pub text: Option<String>,
    /// The index in `programs` of a program piece.
    pub program: Option<u32>,
}

fn piece(p: shell::Piece) -> ShellPiece {
    let (kind, text, program) = match p {
        shell::Piece::Text(t) => ("text", Some(t), None),
        shell::Piece::Program(i) => ("program", None, Some(u32::try_from(i).unwrap_or(u32::MAX))),
        shell::Piece::Open => ("open", None, None),
        shell::Piece::Close => ("close", None, None),
    };
    ShellPiece {
        kind: kind.to_string(),
        text,
        program,
    }
}

fn to_js(a: Analysis) -> ShellLineAnalysis {
    let pos = |p: usize| u32::try_from(p).unwrap_or(u32::MAX);
    let count = a.programs.len();
    let keep = if count > MAX_PROGRAMS {
        MAX_PROGRAMS + 1
    } else {
        usize::MAX
    };
    ShellLineAnalysis {
        program_count: pos(count),
        programs: a
            .programs
            .into_iter()
            .take(keep)
            .map(|p| ShellProgram {
                word: p.word,
                dynamic: p.dynamic,
                position: pos(p.position),
                runs_code: p.runs_code,
                unknown_option: p.unknown_option,
                guessed: p.guessed,
            })
            .collect(),
        assignments: a
            .assignments
            .into_iter()
            .take(keep)
            .map(|s| ShellAssignment {
                name: s.name,
                dynamic: s.dynamic,
            })
            .collect(),
        refusals: a
            .refusals
            .into_iter()
            .take(keep)
            .map(|r| ShellRefusal {
                reason: r.reason.as_str().to_string(),
                construct: r.construct,
                position: pos(r.position),
                word: r.word,
            })
            .collect(),
        malformed: a.malformed,
        rebuild: a
            .rebuild
            .filter(|_| count <= MAX_PROGRAMS)
            .map(|r| r.into_iter().map(piece).collect()),
    }
}

/// Analyses a shell line with tree-sitter-bash: the programs it would run (wrappers unwrapped),
/// the variables it assigns, and every construct outside plain commands of literal words.
#[napi]
pub fn analyse_shell_line(line: String) -> ShellLineAnalysis {
    to_js(shell::analyse_line(&line))
}

/// Analyses an argv request (`[program, ...args]`): the programs behind wrappers, nested
/// `sh -c` lines, and programs that run code from their arguments.
#[napi]
pub fn analyse_shell_argv(argv: Vec<String>) -> ShellLineAnalysis {
    to_js(shell::analyse_argv(&argv))
}

/// The grammar the shell analysis reads a program's arguments with, by its file name (`"plain"`
/// for programs whose options cannot run code, `"awk"`, `"shell"`, `"git"`, ...), or `null` for a
/// program the analysis does not understand: a broad allow rule does not admit it.
#[napi]
pub fn shell_program_grammar(name: String) -> Option<String> {
    shell::program_grammar(&name).map(str::to_string)
}

/// One `analyseShellLineAsync()` / `analyseShellArgvAsync()` call: the input copied on the JS
/// thread, analysed on a libuv worker thread.
pub struct AnalyseTask {
    input: std::result::Result<String, Vec<String>>,
}

impl Task for AnalyseTask {
    type Output = Analysis;
    type JsValue = ShellLineAnalysis;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(match &self.input {
            Ok(line) => shell::analyse_line(line),
            Err(argv) => shell::analyse_argv(argv),
        })
    }

    fn resolve(&mut self, _env: Env, a: Self::Output) -> Result<Self::JsValue> {
        Ok(to_js(a))
    }
}

/// `analyseShellLine()` off the JS thread: the same result, computed on a libuv worker thread so
/// that a long line never blocks the event loop.
#[napi(ts_return_type = "Promise<ShellLineAnalysis>")]
pub fn analyse_shell_line_async(line: String) -> napi::bindgen_prelude::AsyncTask<AnalyseTask> {
    napi::bindgen_prelude::AsyncTask::new(AnalyseTask { input: Ok(line) })
}

/// `analyseShellArgv()` off the JS thread.
#[napi(ts_return_type = "Promise<ShellLineAnalysis>")]
pub fn analyse_shell_argv_async(
    argv: Vec<String>,
) -> napi::bindgen_prelude::AsyncTask<AnalyseTask> {
    napi::bindgen_prelude::AsyncTask::new(AnalyseTask { input: Err(argv) })
}
