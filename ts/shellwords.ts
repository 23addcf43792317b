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
 */

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

const MAX_DEPTH = 16;

function analyseLine(line: string, out: ShellAnalysis, depth: number): void {
  if (depth > MAX_DEPTH) {
    out.incomplete = true;
    return;
  }
  const lexer = new Lexer(line, out, depth);
  const tokens = lexer.tokens(0, false).tokens;
  parse(tokens, out, depth);
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
// Lexer

type Token =
  | { kind: 'word'; word: CommandWord; raw: string }
  | { kind: 'op'; op: string }
  | { kind: 'redir'; op: string };

interface PendingHeredoc {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
}

const META = new Set([' ', '\t', '\n', '|', '&', ';', '(', ')', '<', '>']);

class Lexer {
  private heredocs: PendingHeredoc[] = [];

  constructor(
    private readonly s: string,
    private readonly out: ShellAnalysis,
    private readonly depth: number,
  ) {}

  /** Tokenizes from `pos`; with `untilParen`, stops after the `)` closing a `$(`/`<(` (returned `end`). */
  tokens(pos: number, untilParen: boolean): { tokens: Token[]; end: number } {
    const s = this.s;
    const tokens: Token[] = [];
    let parens = 0;
    let i = pos;
    while (i < s.length) {
      const c = s[i]!;
      if (c === ' ' || c === '\t' || c === '\r') {
        i++;
        continue;
      }
      if (c === '\\' && s[i + 1] === '\n') {
        i += 2;
        continue;
      }
      if (c === '\n') {
        tokens.push({ kind: 'op', op: '\n' });
        i = this.heredocBodies(i + 1);
        continue;
      }
      if (c === '#') {
        while (i < s.length && s[i] !== '\n') i++;
        continue;
      }
      if (c === ')') {
        if (untilParen && parens === 0) return { tokens, end: i + 1 };
        parens = Math.max(0, parens - 1);
        tokens.push({ kind: 'op', op: ')' });
        i++;
        continue;
      }
      if (c === '(') {
        if (s[i + 1] === '(' && atCommandStart(tokens)) {
          // (( arithmetic )): no commands, but substitutions inside run.
          i = this.arithmetic(i + 2);
          tokens.push({ kind: 'word', word: { word: '((', dynamic: false }, raw: '((' });
          continue;
        }
        parens++;
        tokens.push({ kind: 'op', op: '(' });
        i++;
        continue;
      }
      if ((c === '<' || c === '>') && s[i + 1] === '(') {
        // Process substitution: a word whose commands run.
        const end = this.nested(i + 2);
        tokens.push({ kind: 'word', word: { word: s.slice(i, end), dynamic: true }, raw: s.slice(i, end) });
        i = end;
        continue;
      }
      const op = matchOperator(s, i);
      if (op) {
        i += op.length;
        if (op.startsWith('<') || op.startsWith('>') || op === '&>' || op === '&>>') {
          tokens.push({ kind: 'redir', op });
          if (op === '<<' || op === '<<-') i = this.heredocStart(i, op === '<<-', tokens);
        } else {
          tokens.push({ kind: 'op', op });
        }
        continue;
      }
      const w = this.word(i);
      // A word of digits right before a redirection is a file-descriptor number, not a word.
      if (/^\d+$/.test(w.raw) && (s[w.end] === '<' || s[w.end] === '>')) {
        i = w.end;
        continue;
      }
      tokens.push({ kind: 'word', word: { word: w.value, dynamic: w.dynamic }, raw: w.raw });
      i = w.end;
    }
    if (untilParen || this.heredocs.length > 0) this.out.incomplete = true;
    return { tokens, end: s.length };
  }

  /** Reads one word starting at `start`. */
  private word(start: number): { value: string; raw: string; dynamic: boolean; end: number } {
    const s = this.s;
    let i = start;
    let value = '';
    let dynamic = false;
    let unquotedGlob = false;
    let openBracket = false;
    let unquotedBrace = false;
    if (s[i] === '~') dynamic = true;
    while (i < s.length && !META.has(s[i]!)) {
      const c = s[i]!;
      if (c === '\\') {
        if (s[i + 1] === '\n') {
          i += 2;
          continue;
        }
        if (i + 1 < s.length) value += s[i + 1];
        i += 2;
        continue;
      }
      if (c === "'") {
        const close = s.indexOf("'", i + 1);
        if (close < 0) {
          this.out.incomplete = true;
          value += s.slice(i + 1);
          i = s.length;
          break;
        }
        value += s.slice(i + 1, close);
        i = close + 1;
        continue;
      }
      if (c === '"') {
        const r = this.doubleQuoted(i + 1);
        value += r.value;
        dynamic ||= r.dynamic;
        i = r.end;
        continue;
      }
      if (c === '$' && s[i + 1] === "'") {
        const r = ansiC(s, i + 2);
        if (r.end > s.length) this.out.incomplete = true;
        value += r.value;
        dynamic ||= r.dynamic;
        i = Math.min(r.end, s.length);
        continue;
      }
      if (c === '$' && s[i + 1] === '"') {
        const r = this.doubleQuoted(i + 2);
        value += r.value;
        dynamic ||= r.dynamic;
        i = r.end;
        continue;
      }
      if (c === '$' || c === '`') {
        const x = this.expansionAt(i);
        if (x) {
          value += x.text;
          dynamic = true;
          i = x.end;
          continue;
        }
        value += c; // a lone `$`
        i++;
        continue;
      }
      if (c === '*' || c === '?' || (c === ']' && openBracket)) unquotedGlob = true;
      if (c === '[') openBracket = true;
      if (c === '{') unquotedBrace = true;
      value += c;
      i++;
    }
    if (unquotedGlob) dynamic = true;
    if (unquotedBrace && /\{[^{}]*(,|\.\.)[^{}]*\}/.test(value)) dynamic = true;
    return { value, raw: s.slice(start, i), dynamic, end: i };
  }

  /** The expansion (`$...`, a backquoted command) starting at `i`, or null for a lone `$`. */
  private expansionAt(i: number): { text: string; end: number } | null {
    const end = this.expansion(i);
    return end > i + 1 || this.s[i] === '`' ? { text: this.s.slice(i, end), end } : null;
  }

  /** Reads a double-quoted string body from `start` (after the quote); returns the index after the closing quote. */
  private doubleQuoted(start: number): { value: string; dynamic: boolean; end: number } {
    const s = this.s;
    let i = start;
    let value = '';
    let dynamic = false;
    while (i < s.length) {
      const c = s[i]!;
      if (c === '"') return { value, dynamic, end: i + 1 };
      if (c === '\\') {
        const n = s[i + 1];
        if (n === '\n') i += 2;
        else if (n === '$' || n === '`' || n === '"' || n === '\\') {
          value += n;
          i += 2;
        } else {
          value += c;
          i++;
        }
        continue;
      }
      if (c === '$' || c === '`') {
        const x = this.expansionAt(i);
        if (x) {
          value += x.text;
          dynamic = true;
          i = x.end;
          continue;
        }
      }
      value += c;
      i++;
    }
    this.out.incomplete = true;
    return { value, dynamic, end: s.length };
  }

  /**
   * An expansion starting at `i` (`$` or a backtick); analyses the commands inside; returns its end
   * (`i + 1` for a `$` that starts nothing).
   */
  private expansion(i: number): number {
    const s = this.s;
    if (s[i] === '`') return this.backticks(i + 1);
    const n = s[i + 1];
    if (n === '(' && s[i + 2] === '(') return this.arithmetic(i + 3);
    if (n === '(') return this.nested(i + 2);
    if (n === '{') return this.braced(i + 2);
    if (n !== undefined && /[A-Za-z_]/.test(n)) {
      let j = i + 1;
      while (j < s.length && /[A-Za-z0-9_]/.test(s[j]!)) j++;
      return j;
    }
    if (n !== undefined && /[0-9@*#?$!-]/.test(n)) return i + 2;
    return i + 1;
  }

  /** `$(...)` / `<(...)` body starting at `start`; returns the index after `)`. */
  private nested(start: number): number {
    const inner = new Lexer(this.s, this.out, this.depth + 1);
    if (this.depth + 1 > MAX_DEPTH) {
      this.out.incomplete = true;
      return this.s.length;
    }
    const { tokens, end } = inner.tokens(start, true);
    parse(tokens, this.out, this.depth + 1);
    return end;
  }

  /** Backtick substitution body from `start`; returns the index after the closing backtick. */
  private backticks(start: number): number {
    const s = this.s;
    let i = start;
    let body = '';
    while (i < s.length && s[i] !== '`') {
      if (s[i] === '\\' && (s[i + 1] === '`' || s[i + 1] === '\\' || s[i + 1] === '$')) {
        body += s[i + 1];
        i += 2;
        continue;
      }
      body += s[i];
      i++;
    }
    if (i >= s.length) this.out.incomplete = true;
    analyseLine(body, this.out, this.depth + 1);
    return Math.min(i + 1, s.length);
  }

  /** `${...}` from `start`; substitutions inside are analysed; returns the index after `}`. */
  private braced(start: number): number {
    const s = this.s;
    let i = start;
    while (i < s.length) {
      const c = s[i]!;
      if (c === '}') return i + 1;
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === "'") {
        const close = s.indexOf("'", i + 1);
        i = close < 0 ? s.length : close + 1;
        continue;
      }
      if (c === '"') {
        i = this.doubleQuoted(i + 1).end;
        continue;
      }
      if (c === '$' || c === '`') {
        i = Math.max(this.expansion(i), i + 1);
        continue;
      }
      i++;
    }
    this.out.incomplete = true;
    return s.length;
  }

  /** Arithmetic body from `start` (after `((`); substitutions inside are analysed; returns the index after `))`. */
  private arithmetic(start: number): number {
    const s = this.s;
    let i = start;
    let depth = 0;
    while (i < s.length) {
      const c = s[i]!;
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) return s[i + 1] === ')' ? i + 2 : i + 1;
        depth--;
      } else if (c === '$' || c === '`') {
        i = Math.max(this.expansion(i), i + 1);
        continue;
      } else if (c === "'" || c === '"') {
        i = c === '"' ? this.doubleQuoted(i + 1).end : s.indexOf("'", i + 1) + 1 || s.length;
        continue;
      } else if (c === '\\') i++;
      i++;
    }
    this.out.incomplete = true;
    return s.length;
  }

  /** After `<<`/`<<-`: reads the delimiter word and queues the body for the next newline. */
  private heredocStart(i: number, stripTabs: boolean, tokens: Token[]): number {
    const s = this.s;
    while (s[i] === ' ' || s[i] === '\t') i++;
    const w = this.word(i);
    if (w.raw.length === 0) {
      this.out.incomplete = true;
      return i;
    }
    this.heredocs.push({ delimiter: w.value, quoted: /['"\\]/.test(w.raw), stripTabs });
    tokens.push({ kind: 'word', word: { word: w.value, dynamic: false }, raw: w.raw }); // the redirection's operand
    return w.end;
  }

  /** Consumes pending here-document bodies starting at `i` (the start of the line after `<<WORD`). */
  private heredocBodies(i: number): number {
    const s = this.s;
    for (const doc of this.heredocs.splice(0)) {
      let found = false;
      while (i < s.length) {
        let lineEnd = s.indexOf('\n', i);
        if (lineEnd < 0) lineEnd = s.length;
        let line = s.slice(i, lineEnd);
        if (doc.stripTabs) line = line.replace(/^\t+/, '');
        if (line === doc.delimiter) {
          i = lineEnd + 1;
          found = true;
          break;
        }
        if (!doc.quoted) this.scanBody(i, lineEnd);
        i = lineEnd + 1;
      }
      if (!found) this.out.incomplete = true;
    }
    return Math.min(i, s.length);
  }

  /** Analyses substitutions in an unquoted here-document line. */
  private scanBody(start: number, end: number): void {
    const s = this.s;
    let i = start;
    while (i < end) {
      if (s[i] === '\\') {
        i += 2;
        continue;
      }
      if (s[i] === '$' || s[i] === '`') {
        i = Math.max(this.expansion(i), i + 1);
        continue;
      }
      i++;
    }
  }
}

const HEX = /[0-9a-fA-F]{1,2}/y;
const OCTAL = /[0-7]{1,3}/y;

function ansiC(s: string, start: number): { value: string; dynamic: boolean; end: number } {
  let i = start;
  let value = '';
  let dynamic = false;
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };
  while (i < s.length && s[i] !== "'") {
    if (s[i] !== '\\') {
      value += s[i];
      i++;
      continue;
    }
    const n = s[i + 1] ?? '';
    if (n in simple) {
      value += simple[n];
      i += 2;
    } else if (n === 'x') {
      HEX.lastIndex = i + 2;
      const m = HEX.exec(s);
      value += m ? String.fromCharCode(parseInt(m[0], 16)) : '\\x';
      i += 2 + (m ? m[0].length : 0);
    } else if (/[0-7]/.test(n)) {
      OCTAL.lastIndex = i + 1;
      const m = OCTAL.exec(s)!;
      value += String.fromCharCode(parseInt(m[0], 8));
      i += 1 + m[0].length;
    } else {
      // \u, \U, \c and unknown escapes: not decoded here, so the value is not known.
      dynamic = true;
      value += '\\' + n;
      i += 2;
    }
  }
  return { value, dynamic, end: i + 1 };
}

const OPERATORS = ['&&', '||', ';;&', ';;', ';&', '|&', '&>>', '&>', '<<<', '<<-', '<<', '<&', '<>', '<', '>>', '>&', '>|', '>', '|', '&', ';'];

function matchOperator(s: string, i: number): string | undefined {
  for (const op of OPERATORS) if (s.startsWith(op, i)) return op;
  return undefined;
}

function atCommandStart(tokens: readonly Token[]): boolean {
  const last = tokens[tokens.length - 1];
  if (!last) return true;
  if (last.kind === 'op') return last.op !== ')';
  return last.kind === 'word' && (RESERVED_CONTINUE.has(last.raw) || last.raw === 'for');
}

// ---------------------------------------------------------------------------------------------------
// Parser: groups tokens into simple commands and hands each to the argv analysis.

/** Reserved words after which a command follows. */
const RESERVED_CONTINUE = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{']);
/** Reserved words that close a compound command. */
const RESERVED_CLOSE = new Set(['fi', 'done', '}', 'esac']);

function isOp(tok: Token | undefined, op: string): boolean {
  return tok?.kind === 'op' && tok.op === op;
}

function parse(tokens: readonly Token[], out: ShellAnalysis, depth: number): void {
  let words: CommandWord[] = [];
  let commandStart = true; // no word of the current simple command yet
  let mode: 'normal' | 'for' | 'casePatterns' | 'caseWord' | 'dbracket' | 'afterCompound' = 'normal';
  let caseDepth = 0;

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
        t++;
        continue;
      }
      flush();
      if ((tok.op === ';;' || tok.op === ';&' || tok.op === ';;&') && caseDepth > 0) mode = 'casePatterns';
      else if (tok.op === ')') mode = 'afterCompound';
      else mode = 'normal';
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
        mode = 'afterCompound';
      }
      continue;
    }
    if (mode === 'afterCompound') continue;
    if (commandStart && literal) {
      if (RESERVED_CONTINUE.has(w.word)) continue;
      if (RESERVED_CLOSE.has(w.word)) {
        if (w.word === 'esac' && caseDepth > 0) caseDepth--;
        mode = 'afterCompound';
        continue;
      }
      if (w.word === 'for' || w.word === 'select') {
        mode = 'for';
        continue;
      }
      if (w.word === 'case') {
        caseDepth++;
        mode = 'caseWord';
        continue;
      }
      if (w.word === 'function') {
        // function NAME [()] BODY: the name is not run.
        if (tokens[t + 1]?.kind === 'word') t++;
        if (isOp(tokens[t + 1], '(') && isOp(tokens[t + 2], ')')) t += 2;
        continue;
      }
      if (w.word === '[[') {
        mode = 'dbracket';
        continue;
      }
      if (w.word === '((') {
        mode = 'afterCompound';
        continue;
      }
    }
    // NAME=value before the command (any substitution in the value was analysed by the lexer).
    if (words.length === 0 && ASSIGNMENT.test(tok.raw)) continue;
    words.push(w);
    commandStart = false;
  }
  flush();
}
