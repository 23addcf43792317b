/**
 * The marker protocol of `ShellSessions`, as pure functions: what is written to the shell (its rc,
 * the line that runs a command) and how its output is read back (markers found byte-exactly in the
 * raw stream and removed, the echo of the typed line and `set -x` traces of the session machinery
 * dropped). No I/O here: the session (`session.ts`) feeds bytes in and acts on what comes out.
 *
 * The marker: `ESC ] 6973 ; <token> ; E ; <seq> ; <status> BEL`, printed by bash itself as its
 * prompt (PS1, by prompt expansion: no command runs, so no function can stand in for one).
 * `<token>` is 128 random bits (hex) known only to the session and, as octal escapes, to the shell;
 * `<seq>` is the number of the command the prompt follows (0 for the prompt after the rc);
 * `<status>` is `$?`. While the shell's stderr is not the terminal (after `exec 2>file`) the prompt
 * is not seen: `PROMPT_COMMAND` then prints `ESC ] 6973 ; <token> ; F ; <seq> BEL` to /dev/tty, a
 * completion without a status (it comes from commands a function could replace); it does so too
 * when PS1 is not the session's (a command made its own prompt read-only).
 * PS0 prints `ESC ] 6973 ; <token> ; S BEL` when the shell has read a command line, before it runs
 * it: a prompt with an older `<seq>` after that start means the session's line failed (broken).
 * Markers are matched case-insensitively (`stty olcuc` upper-cases the token's hex digits).
 *
 * Everything reaches the shell through its pty, as typed lines: no file is written for the shell,
 * so nothing the host opens is a path a command could have touched (a symlink, a FIFO, a directory
 * made unremovable). Text of any size and bytes goes through `$'...'` words (ANSI-C quoting: ASCII
 * control bytes typed as `\xHH`, see `typedWord`) of at most `TYPED_LINE_BYTES` bytes,
 * joined by backslash-newline into one command line (the terminal's 4095-byte line limit holds for
 * each physical line only). The rc is typed as ` \builtin eval $'...'`. A command is typed as
 * ` __acp_o=$BASHOPTS; POSIXLY_CORRECT=1; __acp_n=<seq>; \exec {__acp_f}<<<$'<text>' && \. "/dev/fd/$__acp_f"`:
 * the shell itself puts the text in a here-string (a pipe, or a file under its own TMPDIR: in the
 * sandbox its private /tmp, bounded by `tmpBytes`) and sources it by its descriptor. In POSIX mode
 * `exec` and `.` are special builtins, found before any function named `exec`, `.`, `source` or
 * `builtin`; the text's first line starts with `COMMAND_PREFIX` (the descriptor closed, the SIGINT
 * trap, stdout and stderr put back, then `\unset POSIXLY_CORRECT; \__acp_opts; `: `unset` is a
 * special builtin too; `__acp_opts`, a read-only function of the rc, puts back the shell options that
 * bash's POSIX mode changed and did not restore: `inherit_errexit`, `shift_verbose`, `expand_aliases`,
 * `interactive_comments`, `sourcepath`), so the command itself runs in bash's normal mode, with its
 * own options and line numbers, and no descriptor of the session's.
 */

import { shellQuote } from './shell-quote';

/** The OSC number of the markers (an unassigned one: terminals ignore it). */
export const MARKER_OSC = '6973';

/** A marker found in the stream. */
export interface Marker {
  /**
   * `'prompt'`: the shell is back at its prompt (PS1, or the fallback); `'start'`: the shell read a
   * command line and is about to run it (PS0).
   */
  kind: 'prompt' | 'start';
  /** Sequence number of the command the prompt follows; NaN when the shell printed none (and for start). */
  seq: number;
  /** `$?` as the prompt printed it; null for the fallback marker (stderr not the terminal) and for start. */
  status: number | null;
}

/** One piece of the stream, in order: output bytes or a marker. */
export type StreamPart = { data: Buffer } | { marker: Marker };

/** The bytes every marker of a session starts with. */
export function markerPrefix(token: string): string {
  return `\x1b]${MARKER_OSC};${token};`;
}

/** `text` as printf octal escapes (`\061\141...`), so the shell never holds it literally. */
export function octalEscapes(text: string): string {
  return [...text].map((ch) => `\\${ch.charCodeAt(0).toString(8).padStart(3, '0')}`).join('');
}

/**
 * The session's rc, run by the shell right after it started: terminal echo off, no history
 * expansion (`set +H`), no history file,
 * the marker as the prompt (set again before every prompt from a read-only copy, so a command that
 * changes PS1 changes nothing), and a read-only `PROMPT_COMMAND` that does that and prints the fallback
 * marker when stderr is not the terminal.
 */
export function rcText(token: string): string {
  const head = `\\033]${MARKER_OSC};${octalEscapes(`${token};`)}`;
  const prompt = `${head}E;\${__acp_n-};$?\\007`;
  const start = `${head}S\\007`;
  const fallback = `\\builtin printf '${head}F;%s\\007' "\${__acp_n-}" >/dev/tty`;
  // Run before each prompt; `$?` is kept for the prompt by bash. Its stderr (where `set -x` traces
  // go) is discarded; fd 3 is the shell's stderr, to tell whether the prompt reaches the terminal.
  const promptCommand =
    `{ [[ \${PS0@a} == *r* ]] || PS0=$__acp_ps0; [[ \${PS1@a} == *r* ]] || PS1=$__acp_ps1; ` +
    `\\builtin shopt -s promptvars; [[ -t 3 && $PS1 == "$__acp_ps1" ]] || ${fallback}; } 3>&2 2>/dev/null ` +
    `|| { PS1=$__acp_ps1; ${fallback}; } 2>/dev/null || [[ 1 ]]`;
  // Leaving POSIX mode (POSIXLY_CORRECT unset) resets these options to bash's defaults and leaves
  // inherit_errexit on: back to what they were before the command line (`$__acp_o`, from BASHOPTS).
  const restoreOptions =
    'for __acp_x in inherit_errexit shift_verbose expand_aliases interactive_comments sourcepath; do ' +
    'if [[ :$__acp_o: == *:$__acp_x:* ]]; then \\builtin shopt -s $__acp_x; else \\builtin shopt -u $__acp_x; fi; done';
  return [
    '# acp-terminal ShellSessions rc',
    'stty -echo 2>/dev/null',
    // No history expansion: a typed `!!:1` would otherwise become words of an earlier line, unjudged.
    'set +H',
    'HISTCONTROL=ignorespace',
    'history -c',
    'unset HISTFILE',
    "PS2=''",
    '__acp_n=0',
    `declare -r __acp_ps1=${shellQuote(prompt)}`,
    `declare -r __acp_ps0=${shellQuote(start)}`,
    'PS1=$__acp_ps1 PS0=$__acp_ps0',
    `declare -r PROMPT_COMMAND=${shellQuote(promptCommand)}`,
    `__acp_opts() { { ${restoreOptions}; } >/dev/null 2>&1; }`,
    'declare -fr __acp_opts',
    '',
  ].join('\n');
}

/** Longest physical line typed to the shell, in bytes (the terminal's canonical line holds 4095). */
export const TYPED_LINE_BYTES = 1024;

/**
 * `text` as one shell word typed on several physical lines: `$'...'` words (ANSI-C quoting) of at
 * most `TYPED_LINE_BYTES` bytes each, joined by backslash-newline (a line continuation, removed by
 * the shell before it reads words: the parts make one word). Printable ASCII (but `\\` and `'`) and
 * characters beyond ASCII are typed as they are; every ASCII control byte is `\\xHH`, so no byte the
 * terminal's line discipline acts on (C-c, C-d, C-u, C-v, DEL, a line end) is ever typed, whatever
 * the text holds. The shell reads back exactly the text's UTF-8 bytes.
 */
export function typedWord(text: string): string {
  const lines: string[] = [];
  let line = "$'";
  let bytes = 2;
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    let piece: string;
    if (code >= 0x80) piece = ch;
    else if (code === 0x5c) piece = '\\\\';
    else if (code === 0x27) piece = "\\'";
    else if (code >= 0x20 && code < 0x7f) piece = ch;
    else piece = `\\x${code.toString(16).padStart(2, '0')}`;
    const size = code >= 0x80 ? Buffer.byteLength(ch, 'utf8') : piece.length;
    if (bytes + size + 2 > TYPED_LINE_BYTES) {
      lines.push(`${line}'`);
      line = "$'";
      bytes = 2;
    }
    line += piece;
    bytes += size;
  }
  lines.push(`${line}'`);
  return lines.join('\\\n');
}

/** What is typed to run the rc, as the shell's first line (with a leading space: not in history). */
export function rcInput(token: string): string {
  return ` \\builtin eval ${typedWord(rcText(token))}\n`;
}

/**
 * Prefix of the command text's first line, run in POSIX mode (special builtins before functions): the
 * descriptor it was read from closed (bash read all of it before running any), line editing off again
 * (`set -o vi` / `set -o emacs` of an earlier command turned readline on in a shell started without it:
 * bash then prints no prompt at all; `set`, a special builtin, cannot be a function here), the session's SIGINT (C-c) trap reset, stdout and stderr back on the terminal when a command sent them
 * elsewhere (`exec >/dev/null`): a copy of the shell's stdin, the terminal it reads its lines from,
 * opened for reading and writing; then back to bash's normal mode (see the module doc).
 */
export const COMMAND_PREFIX =
  '{ \\exec {__acp_f}<&-; [[ ! -o emacs && ! -o vi ]] || \\set +o emacs +o vi; } 2>/dev/null; \\trap - INT; [[ -t 1 || ! -t 0 ]] || \\exec >&0; [[ -t 2 || ! -t 0 ]] || \\exec 2>&0; \\unset POSIXLY_CORRECT; \\__acp_opts; ';

/**
 * The line (several physical lines, see `typedWord`) that runs `text` (`commandText`) as command
 * number `seq` (a leading space keeps it out of history).
 */
export function commandLine(seq: number, text: string): string {
  return ` __acp_o=$BASHOPTS; POSIXLY_CORRECT=1; __acp_n=${seq}; \\exec {__acp_f}<<<${typedWord(text)} && \\. "/dev/fd/$__acp_f"`;
}

/** The text the shell sources for `command`: the prefix, then the command. */
export function commandText(command: string): string {
  return `${COMMAND_PREFIX}${command}`;
}

/**
 * What is written to run a command: C-u, two line ends, then the command line. Unread input may sit
 * before it: typically a terminal's answers to queries of a program that exited without reading them
 * (an OSC answer ends with ESC \, a backslash). C-u discards it while it is an unfinished canonical
 * line; otherwise (it arrived in raw mode) the first line end finishes it as a line of its own (or is
 * eaten as a backslash continuation, then the second does). Their prompts are stale (older sequence
 * number). `\n`, not `\r`: a line ends with it even without ICRNL.
 */
export function commandInput(line: string): string {
  return `\x15\n\n${line}\n`;
}

/**
 * A prompt's number and status as the shell expanded them: digits (at most 15 and 3), or text that
 * does not start with a digit (PS1 left unexpanded after `shopt -u promptvars`, `__acp_n` made a
 * reference to another variable): a prompt with no number, stale for the command awaited. Digits
 * beyond those lengths are no marker.
 */
const SEQ = '(\\d{0,15}|[^\\x07\\x1b;\\d][^\\x07\\x1b;]{0,63})';
const STATUS = '(\\d{1,3}|[^\\x07\\x1b;\\d][^\\x07\\x1b;]{0,7})';

const MARKER_TAIL = new RegExp(`^(E(;${SEQ}(;${STATUS}?)?)?|F(;\\d{0,15})?|S)$`, 'i');

/**
 * Finds a session's markers in its raw output, wherever they fall inside a chunk or across chunks, and
 * splits the stream into output and markers. A tail that may be the start of a marker is held back
 * until the next chunk (or `flush()`).
 */
export class MarkerScanner {
  private readonly prefix: string;
  private readonly re: RegExp;
  private unparsed = Buffer.alloc(0);

  constructor(token: string) {
    this.prefix = markerPrefix(token);
    // Case-insensitive: under `stty olcuc` the terminal upper-cases the token's hex digits.
    this.re = new RegExp(`\\x1b\\]${MARKER_OSC};${token};(?:E;${SEQ};${STATUS}|F;(\\d{0,15})|(S))\\x07`, 'gi');
  }

  /** The parts of `chunk` (after what was held back), in order; empty data parts are left out. */
  scan(chunk: Buffer): StreamPart[] {
    const parts: StreamPart[] = [];
    const data = (bytes: Buffer): void => {
      if (bytes.length > 0) parts.push({ data: bytes });
    };
    const buf = this.unparsed.length > 0 ? Buffer.concat([this.unparsed, chunk]) : chunk;
    const s = buf.toString('latin1');
    this.re.lastIndex = 0;
    let pos = 0;
    for (let m = this.re.exec(s); m; m = this.re.exec(s)) {
      data(buf.subarray(pos, m.index));
      pos = m.index + m[0].length;
      if (m[4] !== undefined) {
        parts.push({ marker: { kind: 'start', seq: NaN, status: null } });
        continue;
      }
      const seq = m[2] === undefined ? m[3]! : m[1]!;
      const status = m[2] !== undefined && /^\d{1,3}$/.test(m[2]) ? Number(m[2]) : null;
      parts.push({ marker: { kind: 'prompt', seq: /^\d{1,15}$/.test(seq) ? Number(seq) : NaN, status } });
    }
    const hold = this.partialMarkerStart(s, pos);
    data(buf.subarray(pos, hold));
    this.unparsed = Buffer.from(buf.subarray(hold));
    return parts;
  }

  /** What is held back (the stream ended: it was not a marker). */
  flush(): Buffer {
    const rest = this.unparsed;
    this.unparsed = Buffer.alloc(0);
    return rest;
  }

  private partialMarkerStart(s: string, from: number): number {
    const esc = s.lastIndexOf('\x1b', s.length - 1);
    if (esc < from) return s.length;
    const tail = s.slice(esc).toLowerCase();
    if (this.prefix.startsWith(tail)) return esc;
    if (tail.startsWith(this.prefix) && MARKER_TAIL.test(tail.slice(this.prefix.length))) return esc;
    return s.length;
  }
}

/** Removes the echo of the typed command line (with the echo of the empty line typed before it), if any. */
export function removeEcho(text: string, typedLine: string): string {
  const echoed = typedLine.split('\n').join('\r\n');
  for (const typed of [`\r\n${echoed}\r\n`, `${echoed}\r\n`]) {
    const echo = text.indexOf(typed);
    if (echo !== -1) return text.slice(0, echo) + text.slice(echo + typed.length);
  }
  return text;
}

/**
 * Lines `set -x` prints for the session machinery: the typed line (depth one: `exec` with its
 * here-string, `.` of its descriptor) and the text's prefix.
 */
function isMachineryTrace(line: string): boolean {
  return (
    /^\++ (POSIXLY_CORRECT=1|__acp_n=\d+|__acp_o=\S*|unset POSIXLY_CORRECT|__acp_opts|trap - INT|\[\[ -t [12] \]\]|\[\[ ! -t 0 \]\])$/.test(line) ||
    /^\+ (exec|\. \/dev\/fd\/\d+)$/.test(line)
  );
}

/** Under `set -x` the shell traces the line that runs the command: drops exactly those lines. */
export function removeTraces(rendered: string): string {
  if (!/POSIXLY_CORRECT|__acp_n=|\/dev\/fd\//.test(rendered)) return rendered;
  return rendered
    .split('\n')
    .filter((l) => !isMachineryTrace(l))
    .join('\n');
}

/**
 * Parse errors name the descriptor the command was sourced from and quote its first line with the
 * prefix: says `bash: line 1: ...` and quotes the line as `bash -c` does.
 */
export function asBashC(rendered: string): string {
  return rendered.replace(/bash: \/dev\/fd\/\d+: line /g, 'bash: line ').split(`\`${COMMAND_PREFIX}`).join('`');
}

/** What `bash -n` (in the C locale) says about a here-document left open, if it does. */
export function openHereDocument(diagnostics: string): { line: number; delimiter: string } | null {
  const m = /here-document at line (\d+) delimited by end-of-file \(wanted `(.*)'\)/.exec(diagnostics);
  return m ? { line: Number(m[1]), delimiter: m[2]! } : null;
}
