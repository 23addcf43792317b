//! `analyseShellLine` / `analyseShellArgv` (and their `Async` variants) / `shellProgramGrammar`: the core's shell-line analysis ([`crate::shell`]) for
//! the TS command policy.
//!
//! The analysis crosses to JS as one JSON text in the exact shape of the TypeScript
//! `ShellAnalysis` (ts/shell-analysis.ts), which `JSON.parse` turns into plain objects: making
//! each object and property through Node-API costs several times more than the parse, and a
//! policy check analyses a line per request.

use napi::{Env, Result, Task};
use napi_derive::napi;
use serde::Serialize;

use crate::shell::{self, Analysis};

/// A program a line would run (`CommandWord`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Word {
    word: String,
    dynamic: bool,
    position: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    runs_code: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    guessed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_option: Option<String>,
}

/// A variable a line assigns (`CommandWord`: the name as `word`).
#[derive(Serialize)]
struct Assignment {
    word: String,
    dynamic: bool,
}

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

/// A piece of a rebuild (`RebuildPiece`).
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Piece {
    Text { text: String },
    Program { program: usize },
    Open,
    Close,
}

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
            .map(|p| Word {
                word: p.word,
                dynamic: p.dynamic,
                position: p.position,
                runs_code: p.runs_code,
                guessed: p.guessed,
                unknown_option: p.unknown_option,
            })
            .collect(),
        incomplete: a.malformed,
        assignments: a
            .assignments
            .into_iter()
            .take(keep)
            .map(|s| Assignment {
                word: s.name,
                dynamic: s.dynamic,
            })
            .collect(),
        refusals,
        redefinitions,
        unchecked_shells,
        rebuild: a.rebuild.filter(|_| count <= MAX_PROGRAMS).map(|r| {
            r.into_iter()
                .map(|p| match p {
                    shell::Piece::Text(text) => Piece::Text { text },
                    shell::Piece::Program(program) => Piece::Program { program },
                    shell::Piece::Open => Piece::Open,
                    shell::Piece::Close => Piece::Close,
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
/// text of ts/shell-analysis.ts's `ShellAnalysis`.
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
