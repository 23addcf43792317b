/**
 * The shell-line lexer behind `shellCommandWords` (see ts/shellwords.ts): splits a line into words,
 * operators and redirections, removing quoting, decoding `$'..'`, skipping comments, line continuations
 * and here-document bodies, and handing every nested command text (`$(...)`, backticks, `<(...)`,
 * substitutions inside `${...}`, `$((...))`, array assignments and unquoted here-documents) back to its
 * host for analysis. It never throws; a malformed line sets `incomplete`.
 */

import type { CommandWord } from './shellwords';

/** Deepest nesting of substitutions analysed; deeper lines are flagged incomplete. */
export const MAX_DEPTH = 16;

/** What the lexer reports to: the analysis it fills and the parser for nested command texts. */
export interface LexerHost {
  /** The analysis being built (`incomplete`, and the assignments of `${NAME:=value}`). */
  readonly out: { incomplete: boolean; assignments: CommandWord[] };
  /** Analyses the tokens of a nested command list (`$(...)`, `<(...)`) at `depth`. */
  parse(tokens: readonly Token[], depth: number): void;
  /** Analyses a nested shell line (a backquoted command) at `depth`. */
  line(text: string, depth: number): void;
}

/** Reserved words after which a command follows. */
export const RESERVED_CONTINUE: ReadonlySet<string> = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{']);

/** A lexer token. `raw` is the word as written (quotes kept), so reserved words can be told from quoted ones. */
export type Token =
  | { kind: 'word'; word: CommandWord; raw: string }
  | { kind: 'op'; op: string }
  | { kind: 'redir'; op: string };

interface PendingHeredoc {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
}

const META = new Set([' ', '\t', '\n', '|', '&', ';', '(', ')', '<', '>']);

/** Tokenizes one line (or a nested part of it). */
export class Lexer {
  private heredocs: PendingHeredoc[] = [];

  constructor(
    private readonly s: string,
    private readonly host: LexerHost,
    private readonly depth: number,
  ) {}

  /** Tokenizes from `pos`; with `untilParen`, stops after the `)` closing a `$(`/`<(` (returned `end`). */
  tokens(pos: number, untilParen: boolean): { tokens: Token[]; end: number } {
    const s = this.s;
    const tokens: Token[] = [];
    let parens = 0;
    let openCases = 0; // `case` words not yet closed by `esac`: their `pattern)` does not close a `$(`
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
        if (untilParen && parens === 0 && openCases === 0) return { tokens, end: i + 1 };
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
      if (ARRAY_ASSIGNMENT.test(w.raw) && s[w.end] === '(') {
        // NAME=(values): the values are words, not commands; substitutions in them run (and are analysed).
        const inner = new Lexer(s, this.host, this.depth).tokens(w.end + 1, true);
        const raw = s.slice(i, inner.end);
        tokens.push({ kind: 'word', word: { word: raw, dynamic: true }, raw });
        i = inner.end;
        continue;
      }
      if (w.raw === 'case' && atCommandStart(tokens)) openCases++;
      else if (w.raw === 'esac' && openCases > 0) openCases--;
      tokens.push({ kind: 'word', word: { word: w.value, dynamic: w.dynamic }, raw: w.raw });
      i = w.end;
    }
    if (untilParen || this.heredocs.length > 0) this.host.out.incomplete = true;
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
          this.host.out.incomplete = true;
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
        if (r.end > s.length) this.host.out.incomplete = true;
        value += r.value;
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
    this.host.out.incomplete = true;
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
    if (this.depth + 1 > MAX_DEPTH) {
      this.host.out.incomplete = true;
      return this.s.length;
    }
    const inner = new Lexer(this.s, this.host, this.depth + 1);
    const { tokens, end } = inner.tokens(start, true);
    this.host.parse(tokens, this.depth + 1);
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
    if (i >= s.length) this.host.out.incomplete = true;
    this.host.line(body, this.depth + 1);
    return Math.min(i + 1, s.length);
  }

  /** `${...}` from `start`; substitutions inside are analysed; returns the index after `}`. */
  private braced(start: number): number {
    const s = this.s;
    let i = start;
    DEFAULT_ASSIGNMENT.lastIndex = start;
    const assigned = DEFAULT_ASSIGNMENT.exec(s);
    if (assigned) this.host.out.assignments.push({ word: assigned[1]!, dynamic: false }); // ${NAME:=value}
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
    this.host.out.incomplete = true;
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
    this.host.out.incomplete = true;
    return s.length;
  }

  /** After `<<`/`<<-`: reads the delimiter word and queues the body for the next newline. */
  private heredocStart(i: number, stripTabs: boolean, tokens: Token[]): number {
    const s = this.s;
    while (s[i] === ' ' || s[i] === '\t') i++;
    const w = this.word(i);
    if (w.raw.length === 0) {
      this.host.out.incomplete = true;
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
      if (!found) this.host.out.incomplete = true;
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
/** `${NAME:=value}` / `${NAME=value}`: assigns NAME when it is unset (or empty). */
const DEFAULT_ASSIGNMENT = /([A-Za-z_][A-Za-z0-9_]*):?=/y;
const UNICODE4 = /[0-9a-fA-F]{1,4}/y;
const UNICODE8 = /[0-9a-fA-F]{1,8}/y;
/** `NAME=` or `NAME+=` right before `(`: an array assignment. */
const ARRAY_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=$/;
const OCTAL = /[0-7]{1,3}/y;

/** Decodes a `$'...'` body from `start` (after the quote) as bash does; returns the index after the closing quote. */
function ansiC(s: string, start: number): { value: string; end: number } {
  let i = start;
  let value = '';
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
    } else if (n === 'u' || n === 'U') {
      const re = n === 'u' ? UNICODE4 : UNICODE8;
      re.lastIndex = i + 2;
      const m = re.exec(s);
      const code = m ? parseInt(m[0], 16) : -1;
      if (m && code <= 0x10ffff) {
        value += String.fromCodePoint(code);
        i += 2 + m[0].length;
      } else {
        value += '\\' + n; // `\u` without digits stays as written (as bash does)
        i += 2;
      }
    } else if (n === 'c' && i + 2 < s.length) {
      // \cX: the control character X & 0x1f.
      value += String.fromCharCode(s.charCodeAt(i + 2) & 0x1f);
      i += 3;
    } else {
      // An unknown escape is kept as written (as bash does).
      value += '\\' + n;
      i += 2;
    }
  }
  return { value, end: i + 1 };
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

