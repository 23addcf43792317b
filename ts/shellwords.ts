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

/** Result of analysing a shell line. */
export interface ShellAnalysis {
  /** Command words in the order found (nested substitutions may come before the command that uses them). */
  words: CommandWord[];
  /** True when the line is malformed (an unterminated quote, substitution or here-document). */
  incomplete: boolean;
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

/** Shells whose `-c` argument is analysed as a shell line. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish']);

interface WrapperSpec {
  /** Options that take the next word as their value. */
  valueOptions?: readonly string[];
  /** Options whose value is a shell line (`su -c 'line'`, `env -S 'cmd args'`). */
  lineOptions?: readonly string[];
  /** Positional words before the wrapped command (`timeout 10 cmd`, `chroot /dir cmd`). */
  positional?: number;
  /** Skip `NAME=value` words before the command (`env A=1 cmd`). */
  assignments?: boolean;
  /** Options that mean no command is run (`command -v name`). */
  noRunOptions?: readonly string[];
  /** The remaining words are joined and run by a shell (`watch`, `eval`). */
  joinAsLine?: boolean;
  /** The first remaining word is a shell line, the rest are not commands (`trap 'line' EXIT`). */
  firstIsLine?: boolean;
}

/** Programs that run another program given as their arguments. */
const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  exec: { valueOptions: ['-a'] },
  command: { noRunOptions: ['-v', '-V'] },
  builtin: {},
  nohup: {},
  setsid: {},
  time: { valueOptions: ['-f', '-o', '--format', '--output'] },
  env: {
    assignments: true,
    valueOptions: ['-u', '--unset', '-C', '--chdir', '-P'],
    lineOptions: ['-S', '--split-string'],
  },
  sudo: {
    valueOptions: ['-u', '-g', '-C', '-h', '-p', '-r', '-t', '-U', '-D', '-T', '--user', '--group', '--host',
      '--prompt', '--role', '--type', '--other-user', '--chdir', '--close-from', '--command-timeout'],
    assignments: true,
  },
  doas: { valueOptions: ['-u', '-C'] },
  nice: { valueOptions: ['-n', '--adjustment'] },
  ionice: { valueOptions: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'] },
  stdbuf: { valueOptions: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  timeout: { valueOptions: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  chrt: { positional: 1 },
  taskset: { positional: 1 },
  chroot: { valueOptions: ['--userspec', '--groups'], positional: 1 },
  flock: { valueOptions: ['-w', '--timeout', '-E', '--conflict-exit-code'], lineOptions: ['-c', '--command'], positional: 1 },
  runuser: { valueOptions: ['-u', '-g', '-G', '--user', '--group', '--supp-group', '-s', '--shell'], lineOptions: ['-c', '--command'] },
  su: { valueOptions: ['-g', '-G', '--group', '--supp-group', '-s', '--shell'], lineOptions: ['-c', '--command'], positional: 1 },
  xargs: {
    valueOptions: ['-a', '-d', '-E', '-e', '-I', '-i', '-L', '-l', '-n', '-P', '-s', '--arg-file', '--delimiter',
      '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
  },
  watch: { valueOptions: ['-n', '--interval', '-d', '--differences', '-q', '--equexit'], joinAsLine: true },
  eval: { joinAsLine: true },
  trap: { noRunOptions: ['-p', '-l', '-P'], firstIsLine: true },
  unbuffer: {},
  caffeinate: {},
  strace: { valueOptions: ['-e', '-o', '-p', '-s', '-u', '-E', '-a', '-b', '-I', '-O', '-P', '-S', '-X'] },
  ltrace: { valueOptions: ['-e', '-o', '-p', '-s', '-u', '-a', '-A', '-D', '-n'] },
  valgrind: {},
};

function basename(word: string): string {
  const i = word.lastIndexOf('/');
  return i < 0 ? word : word.slice(i + 1);
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/**
 * Command words of an argv (`[program, ...args]`): the program, then the programs behind wrappers
 * (`sudo rm x` → `sudo`, `rm`), `find -exec`, and `sh -c`/`eval`/`watch` lines (analysed as shell lines).
 * `incomplete` is set when a nested line is malformed.
 */
export function argvCommandWords(argv: readonly string[]): ShellAnalysis {
  const out: ShellAnalysis = { words: [], incomplete: false };
  analyseArgv(argv.map((word) => ({ word, dynamic: false })), out, 0);
  return out;
}

/** Analyses a shell line; see the module comment for what is found and what cannot be. */
export function shellCommandWords(line: string): ShellAnalysis {
  const out: ShellAnalysis = { words: [], incomplete: false };
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

function analyseArgv(words: readonly CommandWord[], out: ShellAnalysis, depth: number): void {
  if (words.length === 0) return;
  if (depth > MAX_DEPTH) {
    out.incomplete = true;
    return;
  }
  const first = words[0]!;
  out.words.push(first);
  if (first.dynamic) return;
  const name = basename(first.word);
  const rest = words.slice(1);

  if (name === 'busybox') {
    // busybox APPLET args: the applet is the program.
    analyseArgv(rest, out, depth + 1);
    return;
  }
  if (SHELLS.has(name)) {
    shellInvocation(rest, out, depth);
    return;
  }
  if (name === 'find') {
    findExec(rest, out, depth);
    return;
  }
  const spec = WRAPPERS[name];
  if (!spec) return;
  wrapped(spec, rest, out, depth);
}

/** `sh [options] -c LINE [name args...]`: analyses LINE. */
function shellInvocation(args: readonly CommandWord[], out: ShellAnalysis, depth: number): void {
  let takesLine = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.dynamic) {
      if (takesLine) out.words.push(a);
      return;
    }
    if (a.word === '--') continue;
    if ((a.word.startsWith('-') || a.word.startsWith('+')) && a.word.length > 1) {
      if (a.word.startsWith('--')) continue;
      if (/^[-+][a-zA-Z]*[oO]$/.test(a.word)) i++; // -o pipefail, +O extglob
      if (a.word.slice(1).includes('c')) takesLine = true;
      continue;
    }
    if (takesLine) analyseLine(a.word, out, depth + 1);
    return; // a script file (or the line): anything after is its arguments
  }
}

/** `find ... -exec CMD args ;` (also -execdir, -ok, -okdir). */
function findExec(args: readonly CommandWord[], out: ShellAnalysis, depth: number): void {
  for (let i = 0; i < args.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(args[i]!.word)) continue;
    let end = i + 1;
    while (end < args.length && args[end]!.word !== ';' && args[end]!.word !== '+') end++;
    analyseArgv(args.slice(i + 1, end), out, depth + 1);
    i = end;
  }
}

function wrapped(spec: WrapperSpec, args: readonly CommandWord[], out: ShellAnalysis, depth: number): void {
  let i = 0;
  let positional = spec.positional ?? 0;
  while (i < args.length) {
    const a = args[i]!;
    const w = a.word;
    if (!a.dynamic && w === '--') {
      i++;
      break;
    }
    if (!a.dynamic && w.startsWith('-')) {
      if (spec.noRunOptions?.includes(w)) return;
      let opt = w;
      let value: CommandWord | undefined;
      let consumed = 1;
      const eq = w.startsWith('--') ? w.indexOf('=') : -1;
      if (eq > 0) {
        opt = w.slice(0, eq);
        value = { word: w.slice(eq + 1), dynamic: false };
      } else if (!w.startsWith('--') && w.length > 2 && takesValue(spec, w.slice(0, 2))) {
        opt = w.slice(0, 2);
        value = { word: w.slice(2), dynamic: false };
      }
      const isLine = spec.lineOptions?.includes(opt) ?? false;
      if ((isLine || takesValue(spec, opt)) && value === undefined) {
        value = args[i + 1];
        consumed = 2;
      }
      if (isLine && value) {
        if (value.dynamic) out.words.push(value);
        else analyseLine(value.word, out, depth + 1);
      }
      i += consumed;
      continue;
    }
    if (!a.dynamic && spec.assignments && ASSIGNMENT.test(w)) {
      i++;
      continue;
    }
    if (positional > 0) {
      positional--;
      i++;
      continue;
    }
    break;
  }
  while (spec.assignments && i < args.length && !args[i]!.dynamic && ASSIGNMENT.test(args[i]!.word)) i++;
  const rest = args.slice(i);
  if (rest.length === 0) return;
  if (spec.firstIsLine) {
    const line = rest[0]!;
    if (line.dynamic) out.words.push(line);
    else if (line.word !== '-') analyseLine(line.word, out, depth + 1);
    return;
  }
  if (spec.joinAsLine) {
    const dyn = rest.find((r) => r.dynamic);
    if (dyn) out.words.push(dyn);
    else analyseLine(rest.map((r) => r.word).join(' '), out, depth + 1);
    return;
  }
  analyseArgv(rest, out, depth + 1);
}

function takesValue(spec: WrapperSpec, opt: string): boolean {
  return (spec.valueOptions?.includes(opt) ?? false) || (spec.lineOptions?.includes(opt) ?? false);
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

  const flush = (): void => {
    if (words.length > 0) analyseArgv(words, out, depth);
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
        if (tokens[t + 1]?.kind === 'word') t++;
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
    if (words.length === 0 && ASSIGNMENT.test(tok.raw)) continue;
    words.push(w);
    commandStart = false;
  }
  flush();
  if (open.length > 0 || needCommand) malformed();
}
