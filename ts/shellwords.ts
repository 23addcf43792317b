/**
 * Best-effort discovery of the programs a command would run, for the host's command policy.
 *
 * `shellCommandWords(line)` reads a POSIX shell line (plus common bash syntax) and returns the command
 * word of every simple command in it: at the start, after `;`, `&`, `&&`, `||`, `|`, `|&`, newlines, `(`,
 * `{`, `!`, `if`/`then`/`do`/..., inside `$(...)`, backticks, `<(...)`, `>(...)`, `${...}`, `$((...))` and
 * unquoted here-documents; environment assignments (`A=1 cmd`) are skipped; function definitions are
 * not commands; and the programs behind wrappers (`exec`, `command`, `env`, `sudo`, `nice`, `timeout`,
 * `xargs`, `find -exec`, `sh -c '...'`, `eval '...'`, ...) are reported too.
 *
 * This is a check, not a sandbox: a shell line can always hide a command (`$CMD`, `eval "$(curl ...)"`,
 * `python -c 'import os; os.system(...)'`, a script file, an alias, a Makefile, an npm script, git
 * aliases). Words whose value is only known at run time are reported with `dynamic: true` so a strict
 * policy can refuse them.
 *
 * The lexer is in ts/shell-lexer.ts; this module groups its tokens into commands and holds the wrapper
 * table. Both are measured against the shared corpus in __test__/fixtures/shell-corpus.ts.
 */

import { analyseArgv, ASSIGNMENT, assignedName, type ArgvContext } from './shell-argv';
import { Lexer, MAX_DEPTH, RESERVED_CONTINUE, type LexerHost, type Token } from './shell-lexer';

/** One command word found in a line or an argv. */
export interface CommandWord {
  /** The word with quoting removed (`"r"m` → `rm`); expansions are kept as written (`$CMD`). */
  word: string;
  /**
   * True when the word's value is only known at run time: it contains a parameter expansion, a command
   * substitution, a glob, a brace expansion or a tilde. Such a word cannot be checked.
   */
  dynamic: boolean;
}

/** Something a line redefines, so that a later command word may not run what the check resolved. */
export interface Redefinition {
  /** `alias NAME=...`, `hash -p PATH NAME`, `enable [-n|-f FILE] NAME`, or a function definition `NAME() {...}`. */
  kind: 'alias' | 'hash' | 'enable' | 'function';
  /** The name redefined (as written when only known at run time). */
  name: string;
}

/** Result of analysing a shell line. */
export interface ShellAnalysis {
  /** Command words in the order found (nested substitutions may come before the command that uses them). */
  words: CommandWord[];
  /**
   * True when the line is malformed: an unterminated quote, substitution or here-document, an unclosed
   * `if`/`case`/loop/group, a dangling operator (`ls |`), a stray `fi` or `)`.
   */
  incomplete: boolean;
  /**
   * Variables the line sets for itself or for the programs it runs: `NAME=value` (alone or before a
   * command), the arguments of `export`/`declare`/`typeset`/`local`/`readonly`, the targets of
   * `read`/`mapfile`/`readarray`/`getopts`/`printf -v`, `for`/`select` variables, `${NAME:=value}`,
   * and `env`/`sudo` assignments. A name only known at run time (`export "$X"`, a `declare -n`
   * reference) has `dynamic: true`.
   */
  assignments: CommandWord[];
  /** Aliases, `hash -p` entries, `enable` and function definitions in the line. */
  redefinitions: Redefinition[];
  /**
   * Shells started without `-c`, which read their commands from stdin (`curl x | sh`, `sh <<EOF`,
   * `bash <<< 'cmd'`, `bash -s`) or from a script file: those commands cannot be checked.
   */
  uncheckedShells: string[];
}

function emptyAnalysis(): ShellAnalysis {
  return { words: [], incomplete: false, assignments: [], redefinitions: [], uncheckedShells: [] };
}

/**
 * Shell builtins that cannot run another program or read code from somewhere (or only run a command that
 * is itself reported and checked); a strict allow list admits them without a rule.
 */
export const SAFE_SHELL_BUILTINS: ReadonlySet<string> = new Set([
  ':', '[', 'true', 'false', 'test', 'echo', 'printf', 'cd', 'pwd', 'export', 'unset', 'set', 'shift',
  'read', 'exit', 'return', 'break', 'continue', 'local', 'readonly', 'declare', 'typeset', 'umask', 'wait',
  'getopts', 'let', 'type', 'hash', 'times', 'jobs', 'shopt', 'pushd', 'popd', 'dirs',
  // These only run a command that is itself found and checked:
  'exec', 'command', 'builtin', 'time',
]);

/**
 * Every builtin a POSIX shell or bash resolves before searching PATH (so `kill` on a shell line is the
 * builtin even where /usr/bin/kill exists). Includes the unsafe ones (`eval`, `source`, `.`, `trap`, ...).
 */
export const SHELL_BUILTINS: ReadonlySet<string> = new Set([
  ...SAFE_SHELL_BUILTINS,
  'eval', 'source', '.', 'trap', 'alias', 'unalias', 'kill', 'ulimit', 'fg', 'bg', 'disown', 'enable',
  'history', 'fc', 'mapfile', 'readarray', 'compgen', 'complete', 'bind', 'caller', 'suspend', 'logout',
]);

/**
 * Command words of an argv (`[program, ...args]`): the program, then the programs behind wrappers
 * (`sudo rm x` → `sudo`, `rm`), `find -exec`, and `sh -c`/`eval`/`watch` lines (analysed as shell lines).
 * `incomplete` is set when a nested line is malformed.
 */
export function argvCommandWords(argv: readonly string[]): ShellAnalysis {
  const out = emptyAnalysis();
  analyseArgv(argv.map((word) => ({ word, dynamic: false })), { out, line: analyseLine }, 0);
  return out;
}

/** Analyses a shell line; see the module comment for what is found and what cannot be. */
export function shellCommandWords(line: string): ShellAnalysis {
  const out = emptyAnalysis();
  analyseLine(line, out, 0);
  return out;
}

function analyseLine(line: string, out: ShellAnalysis, depth: number): void {
  if (depth > MAX_DEPTH) {
    out.incomplete = true;
    return;
  }
  const host: LexerHost = {
    out,
    parse: (tokens, d) => parse(tokens, out, d),
    line: (text, d) => analyseLine(text, out, d),
  };
  parse(new Lexer(line, host, depth).tokens(0, false).tokens, out, depth);
}

// ---------------------------------------------------------------------------------------------------
// Parser: groups tokens into simple commands, hands each to the argv analysis, and checks the line's
// structure (compound commands closed in order, operators between commands) so that a line a shell
// would refuse is flagged `incomplete`.

/** Reserved words that close a compound command. */
const RESERVED_CLOSE = new Set(['fi', 'done', '}', 'esac']);
/** Operators that need a command before them. */
const NEEDS_BEFORE = new Set(['|', '|&', '&&', '||', ';', '&']);
/** Operators that need a command after them. */
const NEEDS_AFTER = new Set(['|', '|&', '&&', '||']);

function isOp(tok: Token | undefined, op: string): boolean {
  return tok?.kind === 'op' && tok.op === op;
}

function isWord(tok: Token | undefined, raw: string): boolean {
  return tok?.kind === 'word' && tok.raw === raw;
}

function parse(tokens: readonly Token[], out: ShellAnalysis, depth: number): void {
  let words: CommandWord[] = [];
  let commandStart = true; // no word of the current simple command yet
  let mode: 'normal' | 'for' | 'casePatterns' | 'caseWord' | 'dbracket' | 'afterCompound' = 'normal';
  let caseDepth = 0;
  const open: string[] = []; // the closing word (or `)`) each open compound command expects
  let current = false; // the command being read has something (a word, an assignment, a redirection, a compound)
  let needCommand = false; // after `|`, `&&`, `||`: a command must follow
  const malformed = (): void => {
    out.incomplete = true;
  };
  const opens = (closer: string): void => {
    open.push(closer);
    current = false;
    needCommand = false;
  };
  const closes = (closer: string): void => {
    if (open[open.length - 1] === closer) open.pop();
    else malformed();
    current = true;
  };

  const cx: ArgvContext = { out, line: analyseLine };
  const flush = (): void => {
    if (words.length > 0) analyseArgv(words, cx, depth);
    words = [];
    commandStart = true;
  };

  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]!;
    if (tok.kind === 'redir') {
      // The next word is a file name (or a here-document delimiter), not an argument.
      if (tokens[t + 1]?.kind === 'word') t++;
      else malformed();
      if (mode === 'normal') current = true;
      continue;
    }
    if (tok.kind === 'op') {
      if (mode === 'dbracket') continue;
      if (mode === 'casePatterns') {
        if (tok.op === ')') mode = 'normal';
        continue;
      }
      if (mode === 'for') {
        if (tok.op === ';' || tok.op === '\n') {
          mode = 'normal';
          commandStart = true;
        }
        continue;
      }
      if (tok.op === '(' && words.length === 1 && isOp(tokens[t + 1], ')')) {
        // name() { ...; }: a function definition, the name is not run.
        out.redefinitions.push({ kind: 'function', name: words[0]!.word });
        words = [];
        commandStart = true;
        current = false;
        t++;
        continue;
      }
      flush();
      if (tok.op === '(') {
        if (current || mode === 'afterCompound') malformed(); // `ls (x)`, `{ ls; } (x)`
        opens(')');
        mode = 'normal';
        continue;
      }
      if (tok.op === ')') {
        if (needCommand) malformed();
        closes(')');
        mode = 'afterCompound';
        continue;
      }
      if (tok.op === ';;' || tok.op === ';&' || tok.op === ';;&') {
        if (caseDepth === 0 || needCommand) malformed();
        mode = caseDepth > 0 ? 'casePatterns' : 'normal';
        current = false;
        continue;
      }
      if (NEEDS_BEFORE.has(tok.op) && !current) malformed();
      if (NEEDS_AFTER.has(tok.op)) needCommand = true;
      if (tok.op !== '\n' || !needCommand) current = false;
      mode = 'normal';
      continue;
    }
    // A word.
    const w = tok.word;
    const literal = !w.dynamic && tok.raw === w.word; // unquoted, so a reserved word can apply
    if (mode === 'dbracket') {
      if (tok.raw === ']]') mode = 'afterCompound';
      continue;
    }
    if (mode === 'for') continue;
    if (mode === 'caseWord') {
      if (literal && w.word === 'in') mode = 'casePatterns';
      continue;
    }
    if (mode === 'casePatterns') {
      if (literal && w.word === 'esac') {
        caseDepth--;
        closes('esac');
        mode = 'afterCompound';
      }
      continue;
    }
    if (mode === 'afterCompound') continue;
    if (commandStart && literal) {
      if (RESERVED_CONTINUE.has(w.word)) {
        if (w.word === 'if') opens('fi');
        else if (w.word === 'while' || w.word === 'until') opens('done');
        else if (w.word === '{') opens('}');
        else if (w.word === 'do') {
          if (open[open.length - 1] !== 'done') malformed();
          current = false;
        } else if (w.word !== '!') {
          if (open[open.length - 1] !== 'fi') malformed(); // then, elif, else
          current = false;
        }
        continue;
      }
      if (RESERVED_CLOSE.has(w.word)) {
        if (w.word === 'esac' && caseDepth > 0) caseDepth--;
        closes(w.word);
        mode = 'afterCompound';
        continue;
      }
      if (w.word === 'for' || w.word === 'select') {
        opens('done');
        mode = 'for';
        const variable = tokens[t + 1];
        if (variable?.kind === 'word' && variable.raw !== '((') out.assignments.push(variable.word);
        continue;
      }
      if (w.word === 'case') {
        caseDepth++;
        opens('esac');
        mode = 'caseWord';
        continue;
      }
      if (w.word === 'function') {
        // function NAME [()] BODY: the name is not run.
        const fn = tokens[t + 1];
        if (fn?.kind === 'word') {
          out.redefinitions.push({ kind: 'function', name: fn.word.word });
          t++;
        }
        if (isOp(tokens[t + 1], '(') && isOp(tokens[t + 2], ')')) t += 2;
        continue;
      }
      if (w.word === 'coproc') {
        // bash's coproc [NAME] COMMAND: reported like `time` (an allow list must name it); a NAME before a
        // compound command is not run.
        out.words.push(w);
        if (tokens[t + 1]?.kind === 'word' && (isWord(tokens[t + 2], '{') || isOp(tokens[t + 2], '('))) t++;
        continue;
      }
      if (w.word === '[[' || w.word === '((') {
        current = true;
        needCommand = false;
        mode = w.word === '[[' ? 'dbracket' : 'afterCompound';
        continue;
      }
    }
    // NAME=value before the command (any substitution in the value was analysed by the lexer).
    current = true;
    needCommand = false;
    if (words.length === 0 && ASSIGNMENT.test(tok.raw)) {
      out.assignments.push({ word: assignedName(tok.raw), dynamic: false });
      continue;
    }
    words.push(w);
    commandStart = false;
  }
  flush();
  if (open.length > 0 || needCommand) malformed();
}
