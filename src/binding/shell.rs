//! `analyseShellLine` / `analyseShellArgv` (and their `Async` variants) / `shellProgramGrammar`: the core's shell-line analysis ([`crate::shell`]) for
//! the TS command policy.
//!
//! The analysis crosses to JS as one JSON text, which `JSON.parse` turns into plain values and
//! ts/shell-analysis.ts (`fromNative`) into its `ShellAnalysis`: making each object and property
//! through Node-API costs several times more than the parse, and a policy check analyses a line
//! per request. The frequent parts are arrays rather than objects (a program is `[word, dynamic,
//! position]`, a rebuild piece a string or a number), which `JSON.parse` reads in half the time of
//! the same data as objects:
//!
//! - `words`: `[word, dynamic, position]`, or `[word, dynamic, position, runsCode | null, guessed,
//!   unknownOption | null]` when one of the last three is set;
//! - `assignments`: `[name, dynamic]`;
//! - `rebuild` (absent when there is none): a string is text, a number `n >= 0` the program
//!   `words[n]`, `-1` the start of a nested line and `-2` its end;
//! - `refusals`, `redefinitions`, `uncheckedShells`, `programCount`, `incomplete`: as in
//!   `ShellAnalysis`.

use napi::{Env, Result, Task};
use napi_derive::napi;
use serde::Serialize;

use crate::shell::{self, Analysis};

/// A program a line would run (`CommandWord`), as an array.
#[derive(Serialize)]
#[serde(untagged)]
enum Word {
    /// `[word, dynamic, position]`.
    Plain(String, bool, usize),
    /// `[word, dynamic, position, runsCode, guessed, unknownOption]`.
    Full(String, bool, usize, Option<String>, bool, Option<String>),
}

/// A variable a line assigns (`CommandWord`: the name as `word`), as `[name, dynamic]`.
#[derive(Serialize)]
struct Assignment(String, bool);

/// A part of a line the analysis does not understand (`ShellRefusal`).
#[derive(Serialize)]
struct Refusal {
    reason: &'static str,
    construct: String,
    position: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    word: Option<String>,
}

/// An alias, `hash -p` or `enable` (`Redefinition`).
#[derive(Serialize)]
struct Redefinition {
    kind: &'static str,
    name: String,
}

/// A piece of a rebuild (`RebuildPiece`): text as a string, a program as its index, the start
/// and end of a nested line as [`OPEN`] and [`CLOSE`].
#[derive(Serialize)]
#[serde(untagged)]
enum Piece {
    Text(String),
    Program(usize),
    Mark(i8),
}

/// The start of a nested line in a rebuild.
const OPEN: i8 = -1;
/// The end of a nested line in a rebuild.
const CLOSE: i8 = -2;

/// What a shell line or an argv would run, and what in it is not understood (`ShellAnalysis`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShellAnalysis {
    words: Vec<Word>,
    program_count: usize,
    incomplete: bool,
    assignments: Vec<Assignment>,
    refusals: Vec<Refusal>,
    redefinitions: Vec<Redefinition>,
    unchecked_shells: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rebuild: Option<Vec<Piece>>,
}

/// The most programs a policy judges in one line (`MAX_CHECKED_PROGRAMS` in ts/policy.ts). When a
/// line names more, only the first `MAX_PROGRAMS + 1` are handed over (and the other lists are
/// cut the same way, without a rebuild): converting them all would hold the JS thread, and such
/// a line is refused anyway.
pub const MAX_PROGRAMS: usize = 1000;

fn to_json(a: Analysis) -> String {
    let count = a.programs.len();
    let keep = if count > MAX_PROGRAMS {
        MAX_PROGRAMS + 1
    } else {
        usize::MAX
    };
    let refusals: Vec<Refusal> = a
        .refusals
        .into_iter()
        .take(keep)
        .map(|r| Refusal {
            reason: r.reason.as_str(),
            construct: r.construct,
            position: r.position,
            word: r.word,
        })
        .collect();
    let redefinitions = refusals
        .iter()
        .filter(|r| r.reason == shell::RefusalReason::Redefinition.as_str())
        .filter_map(|r| {
            let kind = if r.construct.ends_with("alias)") {
                "alias"
            } else if r.construct.ends_with("(hash)") {
                "hash"
            } else {
                "enable"
            };
            Some(Redefinition {
                kind,
                name: r.word.clone()?,
            })
        })
        .collect();
    let unchecked_shells = refusals
        .iter()
        .filter(|r| r.reason == shell::RefusalReason::ShellInput.as_str())
        .filter_map(|r| r.word.clone())
        .collect();
    let out = ShellAnalysis {
        program_count: count,
        words: a
            .programs
            .into_iter()
            .take(keep)
            .map(|p| {
                if p.runs_code.is_none() && !p.guessed && p.unknown_option.is_none() {
                    Word::Plain(p.word, p.dynamic, p.position)
                } else {
                    Word::Full(
                        p.word,
                        p.dynamic,
                        p.position,
                        p.runs_code,
                        p.guessed,
                        p.unknown_option,
                    )
                }
            })
            .collect(),
        incomplete: a.malformed,
        assignments: a
            .assignments
            .into_iter()
            .take(keep)
            .map(|s| Assignment(s.name, s.dynamic))
            .collect(),
        refusals,
        redefinitions,
        unchecked_shells,
        rebuild: a.rebuild.filter(|_| count <= MAX_PROGRAMS).map(|r| {
            r.into_iter()
                .map(|p| match p {
                    shell::Piece::Text(text) => Piece::Text(text),
                    shell::Piece::Program(program) => Piece::Program(program),
                    shell::Piece::Open => Piece::Mark(OPEN),
                    shell::Piece::Close => Piece::Mark(CLOSE),
                })
                .collect()
        }),
    };
    // Serializing plain structs of strings, numbers and booleans cannot fail.
    serde_json::to_string(&out).expect("the analysis serializes")
}

/// Analyses a shell line with tree-sitter-bash: the programs it would run (wrappers unwrapped),
/// the variables it assigns, and every construct outside plain commands of literal words. `cwd`:
/// the absolute directory the line starts in (symlinks resolved), which relative path operands
/// (scripts, makefiles, preloads) are judged in; without it they are refused. The result is JSON
/// text that ts/shell-analysis.ts reads into its `ShellAnalysis` (the format is in
/// src/binding/shell.rs).
#[napi]
pub fn analyse_shell_line(line: String, cwd: Option<String>) -> String {
    to_json(shell::analyse_line_in(&line, cwd.as_deref()))
}

/// Analyses an argv request (`[program, ...args]`): the programs behind wrappers, nested
/// `sh -c` lines, and programs that run code from their arguments. JSON, as
/// `analyseShellLine()`.
#[napi]
pub fn analyse_shell_argv(argv: Vec<String>, cwd: Option<String>) -> String {
    to_json(shell::analyse_argv_in(&argv, cwd.as_deref()))
}

/// The grammar the shell analysis reads a program's arguments with, by its file name (`"plain"`
/// for programs whose options cannot run code, `"awk"`, `"shell"`, `"git"`, ...), or `null` for a
/// program the analysis does not understand: a broad allow rule does not admit it.
#[napi]
pub fn shell_program_grammar(name: String) -> Option<String> {
    shell::program_grammar(&name).map(str::to_string)
}

/// One `analyseShellLineAsync()` / `analyseShellArgvAsync()` call: the input copied on the JS
/// thread, analysed (and written as JSON) on a libuv worker thread.
pub struct AnalyseTask {
    input: std::result::Result<String, Vec<String>>,
    cwd: Option<String>,
}

impl Task for AnalyseTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(to_json(match &self.input {
            Ok(line) => shell::analyse_line_in(line, self.cwd.as_deref()),
            Err(argv) => shell::analyse_argv_in(argv, self.cwd.as_deref()),
        }))
    }

    fn resolve(&mut self, _env: Env, json: Self::Output) -> Result<Self::JsValue> {
        Ok(json)
    }
}

/// `analyseShellLine()` off the JS thread: the same result, computed on a libuv worker thread so
/// that a long line never blocks the event loop.
#[napi(ts_return_type = "Promise<string>")]
pub fn analyse_shell_line_async(
    line: String,
    cwd: Option<String>,
) -> napi::bindgen_prelude::AsyncTask<AnalyseTask> {
    napi::bindgen_prelude::AsyncTask::new(AnalyseTask {
        input: Ok(line),
        cwd,
    })
}

/// `analyseShellArgv()` off the JS thread.
#[napi(ts_return_type = "Promise<string>")]
pub fn analyse_shell_argv_async(
    argv: Vec<String>,
    cwd: Option<String>,
) -> napi::bindgen_prelude::AsyncTask<AnalyseTask> {
    napi::bindgen_prelude::AsyncTask::new(AnalyseTask {
        input: Err(argv),
        cwd,
    })
}
