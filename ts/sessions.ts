/// ShellSessions: persistent, named bash sessions on pseudo-terminals, the robust version of the
/// "interactive terminal tool" of agent frameworks (a shell per id, `is_input`, special keys,
/// `no_enter`, timeouts that return `running` instead of killing).
///
/// How a command is run, and why it is robust:
/// - Each session is `bash --noprofile --norc --noediting -i` on a pty created by the native
///   `createTerminal(..., { pty })`, which is then told to source a private rc (deleted by itself as it
///   is read) that turns terminal echo off, empties PS1/PS2/PS0, keeps history in memory only and
///   installs a read-only `PROMPT_COMMAND` that prints the completion marker. No system or user rc runs.
///   No line editor (`--noediting`): nothing is redrawn or echoed, so the stream holds only output.
/// - The command text is never typed into the terminal: it is written to a file in a private (0700)
///   directory and the shell is sent one short line, ` __acp_n=<seq>; \builtin source <file>`. So
///   heredocs, multi-line scripts, quotes and continuation lines (PS2) are parsed by bash from the file
///   as one unit, the canonical-mode line limit (4095 bytes) does not apply, nothing is echoed, and the
///   command runs in the shell itself (cd, export, functions, `set` options and background jobs persist).
/// - Completion: `PROMPT_COMMAND` (run by bash before each prompt, also after C-c, under `set -e`,
///   `set -u`, `pipefail`, and with stdout/stderr redirected, since it writes to `/dev/tty`) prints
///   `ESC ] 6973 ; <token> ; E ; <seq> ; <$?> BEL`. The 128-bit token comes from `crypto.randomBytes`;
///   the shell only holds it as octal escapes (`\061\141...`), so neither the rc nor `set`/`declare -p`
///   output nor anything echoed contains it literally; only printf's output does. A program cannot
///   complete a command without knowing the token, and a redrawn stale prompt cannot either (the
///   sequence number must match). The marker is matched byte-exactly in the raw stream, wherever it
///   falls inside a chunk or across chunks, and removed from the content.
/// - `exitCode` is `$?` from that marker, the shell's exit code when the shell itself ended (e.g. after
///   `set -e`), otherwise null: never invented. `workingDir` is read from `/proc/<shell pid>/cwd`.
///
/// Content is rendered from the raw bytes (`onOutput`) by `renderTerminalOutput`, the native terminal
/// emulator run over the command's output alone, at the pty's size: escape sequences consumed, `\r`
/// and backspace overwrites and cursor moves applied, alternate-screen drawing skipped. Not from the
/// terminal's own text rendering, because a command's output must be delimited exactly by the markers' byte
/// positions, read incrementally ("the output since the last call") and never lost to a scrollback
/// size; the raw stream gives all three. The terminal is still created in text mode (option `screen`)
/// for its emulator: it answers terminal queries (a program asking for the cursor position or the
/// colours does not hang), and while a full-screen program (`less`, `vim`, `top`) shows, its screen,
/// as the emulator renders it, is appended to the content.
///
/// Each command is sent as C-u, two empty lines, then the line that sources it, so that input left
/// unread (a terminal's late answers to queries of a program that already exited, possibly ending
/// with a backslash) is discarded or run as a line of its own, never glued to the command line.
///
/// Limits, by design: the prompt has no line editor, so cursor and history keys with nothing running
/// are refused (`ERR_NO_RUNNING_COMMAND`) and commands are not in `history`; `set -x` traces carry one
/// `+` more (the command is sourced); `PROMPT_COMMAND` is read-only; a command that replaces the shell
/// (`exec bash`, `exec zsh`) loses the markers, so its later commands stay `running` until C-c/close;
/// after a program leaves the terminal in raw mode, the next result starts with one
/// `bash: $'\025': command not found` line until `stty sane`. Linux only (/proc).

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { AcpTerminalError, invalidArg } from './errors';
import { renderTerminalOutputAsync } from './screen-text';
import type { CreateTerminalParams, EnvVariable, ExitStatus, OutputSnapshot, SandboxOptions } from './types';
import { normalizeEnv, optionalAbsolutePath, optionalCount } from './validate';

/** Default `maxSessions` of {@link ShellSessions}. */
export const DEFAULT_MAX_SESSIONS = 16;
/** Default `timeoutMs` of {@link ShellSessions.execute}: 30 s. */
export const DEFAULT_SESSION_TIMEOUT_MS = 30_000;
/** Default `inputSettleMs`: how long input or keys wait for output to go quiet. */
export const DEFAULT_INPUT_SETTLE_MS = 500;
/** Default `maxOutputBytes`: unreported output kept per session (the newest bytes). */
export const DEFAULT_SESSION_OUTPUT_BYTES = 1024 * 1024;
/** Id of the session used when `execute` gets no `terminalId`. */
export const DEFAULT_SESSION_ID = 'default';

/** A pty terminal as `ShellSessions` drives it: the native `TerminalHandle` of a `{ pty }` terminal. */
export interface PtyTerminalLike {
  /** Pid of the shell (the session leader on the pty). */
  readonly pid: number;
  /** Total bytes the command wrote so far (used to make sure every byte was delivered at exit). */
  readonly outputBytes?: number;
  /** Writes bytes to the pty (what a person types). */
  write(data: string | Buffer): Promise<unknown>;
  /** Sends keys by tmux name (`C-c`, `Up`, `Enter`, ...). */
  sendKeys(keys: string[]): Promise<unknown>;
  /** Changes the pty size. */
  resize?(cols: number, rows: number): Promise<unknown>;
  /** Raw output bytes as they arrive; `replay` delivers what is retained first. */
  onOutput(listener: (chunk: Buffer) => void, options?: { replay?: boolean }): () => void;
  /** Resolves once the shell exited and its output was collected. */
  waitForExit(): Promise<ExitStatus>;
  /** Retained output (unused here except as part of the handle's contract). */
  currentOutput(): Promise<OutputSnapshot>;
  /** Kills the process group; the handle stays valid. */
  kill(): Promise<unknown>;
  /** Kills if running and frees the terminal. */
  release(): Promise<unknown>;
}

/** Backend options `ShellSessions` passes when it creates a session's terminal. */
export interface PtyCreateTerminalOptions {
  /** Terminal size. */
  pty: { cols: number; rows: number };
  /** Whether the shell inherits this process's environment. */
  inheritEnv?: boolean;
  /** Milliseconds between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** `'text'`: the backend emulates the screen (and answers terminal queries); `onOutput` stays raw. */
  output?: 'raw' | 'text';
  /** Text mode: lines kept above the screen. */
  scrollback?: number;
  /** The OS sandbox the shell runs in. */
  sandbox?: SandboxOptions;
}

/** The backend entry point: the native `createTerminal` (with `pty` support) or a substitute. */
export type PtyCreateTerminalFn = (
  params: CreateTerminalParams,
  options: PtyCreateTerminalOptions,
) => Promise<PtyTerminalLike>;

/** Options of `new ShellSessions()`. */
export interface ShellSessionsOptions {
  /** Live sessions allowed; opening one more closes the least recently used (default 16). */
  maxSessions?: number;
  /** Absolute directory new sessions start in (default: this process's cwd). */
  cwd?: string;
  /** Variables set in every session, over the inherited environment. */
  env?: Readonly<Record<string, string>> | readonly EnvVariable[];
  /** Whether sessions inherit this process's environment (default true). */
  inheritEnv?: boolean;
  /** The bash executable (default `bash`, looked up in PATH). */
  shell?: string;
  /** Pty width in columns (default 160). */
  cols?: number;
  /** Pty height in rows (default 40). */
  rows?: number;
  /** Default `timeoutMs` of `execute` (default 30 000). */
  timeoutMs?: number;
  /**
   * After input or keys (and for `""` on an idle session), return once no output arrived for this
   * long, if the command did not finish first (default 500).
   */
  inputSettleMs?: number;
  /** Unreported output kept per session; older bytes are dropped and the result says `truncated` (default 1 MiB). */
  maxOutputBytes?: number;
  /** How long a new shell may take to show its first prompt (default 30 000). */
  startTimeoutMs?: number;
  /**
   * Run sessions in the native text mode (default true): its terminal emulator answers terminal
   * queries (cursor position, device attributes, colours), so programs that ask do not hang, and the
   * screen of a full-screen program that is still running (`less`, `vim`, `top`) is the content.
   */
  screen?: boolean;
  /** Terminal backend (default: the native `createTerminal`). */
  createTerminal?: PtyCreateTerminalFn;
  /** Run every session's shell in the OS sandbox (passed to each create; checked there, see `SandboxOptions`). */
  sandbox?: SandboxOptions;
}

/** Parameters of {@link ShellSessions.execute}. */
export interface ExecuteRequest {
  /** Session id (default `"default"`); a new id opens a new session. */
  terminalId?: string;
  /**
   * A bash command (may span lines, heredocs included); `""` collects more output: of the running
   * command (waiting up to `timeoutMs` for it to finish), or on an idle session what background jobs
   * printed (once output was quiet for `inputSettleMs`); a key name or space-separated key names
   * (`C-c`, `Up Enter`) send those keys.
   */
  command: string;
  /** Send `command` as text to the running program (followed by Enter unless `noEnter`). */
  isInput?: boolean;
  /** Do not press Enter after the text. */
  noEnter?: boolean;
  /** How long to wait for the command to finish before returning `status: 'running'` (default 30 000). */
  timeoutMs?: number;
}

/** Result of {@link ShellSessions.execute}. */
export interface ExecuteResult {
  /** Output since the previous result of this session, as text (echo, markers and escape sequences removed). */
  content: string;
  /** Exit code of the finished command; null while running or when unknown (e.g. the shell died by a signal). */
  exitCode: number | null;
  /** `completed`: the shell is back at its prompt (or ended); `running`: the command still runs. */
  status: 'completed' | 'running';
  /** The shell's current working directory (from /proc). */
  workingDir: string;
  /** The `command` of this call. */
  command: string;
  /** The session id. */
  terminalId: string;
  /** True when older output was dropped to respect `maxOutputBytes`. */
  truncated: boolean;
  /**
   * True when the shell itself ended during this call (`exit`, `set -e` and a failing command, a
   * fatal signal): the session is gone and the next call with this id starts a fresh shell.
   */
  sessionEnded: boolean;
}

const MARKER_OSC = '6973';
const KEY_NAMES = new Set([
  'Up', 'Down', 'Left', 'Right', 'Home', 'End', 'PageUp', 'PgUp', 'PageDown', 'PgDn', 'NPage', 'PPage',
  'Enter', 'Escape', 'Space', 'Tab', 'BTab', 'BSpace', 'DC', 'IC', 'Delete', 'Insert',
  'F1', 'F2', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8', 'F9', 'F10', 'F11', 'F12',
]);

/**
 * True when `word` is a tmux key name (`C-c`, `M-x`, `S-Tab`, `Up`, `F5`, `Enter`, ...): such
 * commands are sent as keys. A plain character (`q`) is text, not a key.
 */
export function isKeyName(word: string): boolean {
  let rest = word;
  let modified = false;
  while (/^[CMS]-./.test(rest)) {
    rest = rest.slice(2);
    modified = true;
  }
  if (KEY_NAMES.has(rest)) return true;
  return modified && /^[\x21-\x7e]$/.test(rest);
}

/** Splits `command` into key names when every whitespace-separated word is one, else returns null. */
export function parseKeys(command: string): string[] | null {
  const words = command.trim().split(/\s+/);
  if (words.length === 0 || words[0] === '') return null;
  return words.every(isKeyName) ? words : null;
}

interface Completion {
  exitCode: number | null;
  ended: boolean;
}

type Waiting = { seq: number | 'any' } | null;

/** One bash on a pty, with the marker protocol and the unreported output. */
class Session {
  readonly token = randomBytes(16).toString('hex');
  seq = 0;
  lastUsed = 0;
  waiting: Waiting = null;
  /** Set when the awaited marker (or the shell's exit) arrived and was not reported yet. */
  completion: Completion | null = null;
  exit: ExitStatus | null = null;
  ready = false;
  closed = false;
  lastCwd: string;
  private readonly markerPrefix: string;
  private readonly markerRe: RegExp;
  private unparsed = Buffer.alloc(0);
  /** Unreported output: of the running command, or of the completed one not collected yet. */
  private out: TailBuffer;
  /** Output that arrived after an uncollected completion (background jobs): reported next time. */
  private after: TailBuffer;
  private receivedBytes = 0;
  private lastActivity = Date.now();
  private readonly decoder = new StringDecoder('utf8');
  private readonly waiters = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  terminal: PtyTerminalLike | undefined;

  constructor(
    readonly id: string,
    readonly dir: string,
    private readonly maxBytes: number,
    cwd: string,
  ) {
    this.lastCwd = cwd;
    this.out = new TailBuffer(maxBytes);
    this.after = new TailBuffer(maxBytes);
    this.markerPrefix = `\x1b]${MARKER_OSC};${this.token};`;
    this.markerRe = new RegExp(`\\x1b\\]${MARKER_OSC};${this.token};E;(\\d{0,15});(\\d{1,3})\\x07`, 'g');
  }

  get commandFile(): string {
    return path.join(this.dir, 'command.sh');
  }

  /** The rc file: private settings, read-only PROMPT_COMMAND printing the marker, then deletes itself. */
  rcText(rcPath: string): string {
    const octal = [...this.markerPrefix.slice(`\x1b]${MARKER_OSC};`.length)]
      .map((ch) => `\\${ch.charCodeAt(0).toString(8).padStart(3, '0')}`)
      .join('');
    const format = `\\033]${MARKER_OSC};${octal}E;%s;%s\\007`;
    // `$?` is read first thing in the group; the group's stderr (where `set -x` traces go) is discarded.
    const promptCommand =
      `{ __acp_rc=$?; \\builtin printf '${format}' "\${__acp_n-}" "$__acp_rc" >/dev/tty; } 2>/dev/null ` +
      `|| \\builtin printf '${format}' "\${__acp_n-}" "$__acp_rc" >&2`;
    return [
      '# acp-terminal ShellSessions rc (deletes itself)',
      `\\command rm -f -- ${shellQuote(rcPath)}`,
      'stty -echo 2>/dev/null',
      'HISTCONTROL=ignorespace',
      'history -c',
      'unset HISTFILE',
      "PS1='' PS2='' PS0=''",
      'export PAGER=cat GIT_PAGER=cat',
      '__acp_n=0',
      `declare -r PROMPT_COMMAND=${shellQuote(promptCommand)}`,
      '',
    ].join('\n');
  }

  /** Start time of the shell (clock ticks since boot, /proc stat field 22), to detect pid reuse. */
  shellStart: string | undefined;

  attach(terminal: PtyTerminalLike): void {
    this.terminal = terminal;
    this.shellStart = procStartTime(terminal.pid);
    this.unsubscribe = terminal.onOutput((chunk) => this.onChunk(chunk), { replay: true });
    terminal.waitForExit().then(
      (status) => void this.onExit(status),
      () => void this.onExit({ exitCode: null, signal: null }),
    );
  }

  private onChunk(chunk: Buffer): void {
    this.receivedBytes += chunk.length;
    this.lastActivity = Date.now();
    let buf = this.unparsed.length > 0 ? Buffer.concat([this.unparsed, chunk]) : chunk;
    const s = buf.toString('latin1');
    this.markerRe.lastIndex = 0;
    let pos = 0;
    for (let m = this.markerRe.exec(s); m; m = this.markerRe.exec(s)) {
      this.data(buf.subarray(pos, m.index));
      pos = m.index + m[0].length;
      this.marker(m[1] === '' ? NaN : Number(m[1]), Number(m[2]));
    }
    // Hold back a tail that may be the start of a marker split across chunks.
    const hold = this.partialMarkerStart(s, pos);
    this.data(buf.subarray(pos, hold));
    this.unparsed = Buffer.from(buf.subarray(hold));
    buf = Buffer.alloc(0);
    this.notify();
  }

  private partialMarkerStart(s: string, from: number): number {
    const esc = s.lastIndexOf('\x1b', s.length - 1);
    if (esc < from) return s.length;
    const tail = s.slice(esc);
    if (this.markerPrefix.startsWith(tail)) return esc;
    if (tail.startsWith(this.markerPrefix) && /^E(;\d{0,15}(;\d{0,3})?)?$/.test(tail.slice(this.markerPrefix.length))) {
      return esc;
    }
    return s.length;
  }

  private data(bytes: Buffer): void {
    if (bytes.length === 0 || !this.ready) return; // startup noise (before the first prompt) is dropped
    (this.completion ? this.after : this.out).push(bytes);
  }

  private marker(seq: number, status: number): void {
    if (!this.ready) {
      if (seq === 0) this.ready = true;
      return;
    }
    const w = this.waiting;
    if (!w || this.completion) return; // a prompt redrawn while idle
    if (w.seq !== 'any' && w.seq !== seq) return; // a stale prompt
    this.completion = { exitCode: status, ended: false };
    this.waiting = null;
  }

  private async onExit(status: ExitStatus): Promise<void> {
    // Make sure every byte the shell wrote was delivered to onChunk before finishing.
    const deadline = Date.now() + 2000;
    while (!this.closed && typeof this.terminal?.outputBytes === 'number' && Date.now() < deadline) {
      let total: number;
      try {
        total = this.terminal.outputBytes;
      } catch {
        break;
      }
      if (this.receivedBytes >= total) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    if (this.unparsed.length > 0) {
      const rest = this.unparsed;
      this.unparsed = Buffer.alloc(0);
      this.data(rest);
    }
    this.exit = status;
    if (!this.completion) {
      this.completion = { exitCode: status.exitCode, ended: true };
      this.waiting = null;
    } else {
      this.completion.ended = true;
    }
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves on the next output, marker or exit, or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(Math.max(0, ms), 2 ** 31 - 1));
      this.waiters.add(done);
    });
  }

  get idleSinceMs(): number {
    return Date.now() - this.lastActivity;
  }

  get busy(): boolean {
    return this.waiting !== null;
  }

  /**
   * Before something new is sent: a completion nobody collected yet is folded into the unreported
   * output (its output and what followed it stay, in order, for the next result).
   */
  absorbCompletion(): void {
    if (!this.completion) return;
    this.out.append(this.after);
    this.after = new TailBuffer(this.maxBytes);
    this.completion = null;
  }

  /** The terminal is on the alternate screen as of the output taken so far. */
  private alternate = false;

  /** The pty's size, which the output is rendered for (where lines wrap, how far cursor moves redraw). */
  size = { cols: 80, rows: 24 };

  /** Remembers the exact line typed to run a command, to drop its echo if a program turned echo back on. */
  typedLine: string | undefined;

  /**
   * Takes the unreported output (up to the completion, if any) as rendered text. The rendering runs
   * off the JS thread. While a full-screen program is still showing at the end, `screen` (the
   * terminal's own screen) is asked for and appended: that is what a person sees.
   */
  async take(screen?: () => Promise<string | undefined>): Promise<{ content: string; truncated: boolean; completion: Completion | null }> {
    const { bytes, truncated } = this.out.take();
    const completion = this.completion;
    if (completion) {
      this.out = this.after;
      this.after = new TailBuffer(this.maxBytes);
      this.completion = null;
    }
    let text = this.decoder.write(bytes);
    if (completion?.ended) text += this.decoder.end();
    const alternateBefore = this.alternate;
    const render = async (t: string): Promise<string> => {
      const r = await renderTerminalOutputAsync(t, { ...this.size, alternateScreen: alternateBefore });
      this.alternate = r.alternateScreen;
      return r.text;
    };
    let rendered: string;
    if (this.typedLine !== undefined) {
      // (with the echo of the empty line typed before it)
      for (const typed of [`\r\n${this.typedLine}\r\n`, `${this.typedLine}\r\n`]) {
        const echo = text.indexOf(typed);
        if (echo === -1) continue;
        text = text.slice(0, echo) + text.slice(echo + typed.length);
        break;
      }
      rendered = await render(text);
      // Under `set -x` the shell traces the line that runs the command: drop exactly those two lines.
      const file = this.commandFile;
      const traced = (l: string): boolean =>
        /^\S*\+ __acp_n=\d+$/.test(l) ||
        l.endsWith(`+ builtin source ${file}`) ||
        l.endsWith(`+ builtin source ${shellQuote(file)}`);
      if (rendered.includes('__acp_n=') || rendered.includes(file)) {
        rendered = rendered
          .split('\n')
          .filter((l) => !traced(l))
          .join('\n');
      }
      if (completion) this.typedLine = undefined;
    } else {
      rendered = await render(text);
    }
    // Parse errors name the file the command was sourced from: say `bash: line 1: ...` as `bash -c` does.
    rendered = rendered.split(`bash: ${this.commandFile}: line `).join('bash: line ').replace(/\s+$/, '');
    // A full-screen program still showing: what a person sees is its screen (from the emulator).
    const current = this.alternate && screen ? await screen() : undefined;
    if (current !== undefined) {
      const shown = current.replace(/\s+$/, '');
      rendered = rendered && shown ? `${rendered}\n${shown}` : rendered || shown;
    }
    return { content: rendered, truncated, completion };
  }

  cwd(): string {
    if (!this.terminal) return this.lastCwd;
    try {
      this.lastCwd = fs.readlinkSync(`/proc/${this.terminal.pid}/cwd`);
    } catch {
      // the shell is gone: keep the last directory read from it
    }
    return this.lastCwd;
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}

/**
 * Named, persistent bash sessions on pseudo-terminals: the interactive terminal tool of an agent.
 *
 * ```ts
 * await using shells = new ShellSessions({ cwd: workspace });
 * await shells.execute({ command: 'cd /tmp && export X=1' });
 * const r = await shells.execute({ command: 'echo $X; pwd' }); // { content: '1\n/tmp', exitCode: 0, ... }
 * await shells.execute({ command: 'python3 -i', timeoutMs: 2000 }); // status 'running'
 * await shells.execute({ command: '1+1', isInput: true });
 * await shells.execute({ command: 'C-d' });
 * ```
 *
 * Calls on one session are serialized; different sessions run concurrently.
 */
export class ShellSessions implements AsyncDisposable {
  private readonly sessions = new Map<string, Session>();
  private readonly opening = new Map<string, Promise<Session>>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private closed = false;
  private readonly maxSessions: number;
  private readonly cwd: string;
  private readonly env: EnvVariable[];
  private readonly inheritEnv: boolean | undefined;
  private readonly shell: string;
  private readonly cols: number;
  private readonly rows: number;
  private readonly timeoutMs: number;
  private readonly settleMs: number;
  private readonly maxOutputBytes: number;
  private readonly startTimeoutMs: number;
  private readonly screen: boolean;
  private readonly backend: PtyCreateTerminalFn | undefined;
  private readonly sandbox: SandboxOptions | undefined;

  /** Creates a session manager; invalid options throw `ERR_INVALID_ARG` naming the option. */
  constructor(options: ShellSessionsOptions = {}) {
    if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
    this.maxSessions = optionalCount(options.maxSessions, 'options.maxSessions', 1) ?? DEFAULT_MAX_SESSIONS;
    this.cwd = optionalAbsolutePath(options.cwd, 'options.cwd') ?? process.cwd();
    this.env = normalizeEnv(options.env, 'options.env');
    if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
      throw invalidArg('options.inheritEnv', 'must be a boolean');
    }
    this.inheritEnv = options.inheritEnv;
    if (options.shell !== undefined && (typeof options.shell !== 'string' || options.shell === '')) {
      throw invalidArg('options.shell', 'must be a non-empty string');
    }
    this.shell = options.shell ?? 'bash';
    this.cols = optionalCount(options.cols, 'options.cols', 1) ?? 160;
    this.rows = optionalCount(options.rows, 'options.rows', 1) ?? 40;
    this.timeoutMs = optionalCount(options.timeoutMs, 'options.timeoutMs') ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.settleMs = optionalCount(options.inputSettleMs, 'options.inputSettleMs') ?? DEFAULT_INPUT_SETTLE_MS;
    this.maxOutputBytes = optionalCount(options.maxOutputBytes, 'options.maxOutputBytes', 1) ?? DEFAULT_SESSION_OUTPUT_BYTES;
    this.startTimeoutMs = optionalCount(options.startTimeoutMs, 'options.startTimeoutMs', 1) ?? 30_000;
    if (options.screen !== undefined && typeof options.screen !== 'boolean') {
      throw invalidArg('options.screen', 'must be a boolean');
    }
    this.screen = options.screen ?? true;
    if (options.createTerminal !== undefined && typeof options.createTerminal !== 'function') {
      throw invalidArg('options.createTerminal', 'must be a function');
    }
    this.backend = options.createTerminal;
    this.sandbox = options.sandbox;
  }

  /** Ids of the live sessions, least recently used first. */
  get ids(): string[] {
    return [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed).map((s) => s.id);
  }

  /** Pid of a session's shell, or undefined when there is no such live session. */
  shellPid(terminalId: string = DEFAULT_SESSION_ID): number | undefined {
    return this.sessions.get(terminalId)?.terminal?.pid;
  }

  /**
   * Runs a command in a session (opened on first use), sends input or keys to its running program,
   * or collects more output. Resolves with the output since the previous result of that session.
   *
   * Rejects with `ERR_INVALID_ARG` (a bad field, named), `ERR_COMMAND_RUNNING` (a new command while
   * one runs: collect with `""`, answer with `isInput`, or interrupt with `C-c`), `ERR_NO_RUNNING_COMMAND`
   * (`isInput` with nothing running), `ERR_SESSION_START` (bash did not start), `ERR_HOST_CLOSED`.
   */
  async execute(request: ExecuteRequest): Promise<ExecuteResult> {
    if (typeof request !== 'object' || request === null) throw invalidArg('params', 'must be an object');
    const { command } = request;
    if (typeof command !== 'string') throw invalidArg('command', 'must be a string');
    if (command.includes('\0')) throw invalidArg('command', 'must not contain NUL bytes');
    const terminalId = request.terminalId ?? DEFAULT_SESSION_ID;
    if (typeof terminalId !== 'string' || terminalId === '' || terminalId.length > 256 || terminalId.includes('\0')) {
      throw invalidArg('terminalId', 'must be a non-empty string of at most 256 characters without NUL');
    }
    for (const field of ['isInput', 'noEnter'] as const) {
      if (request[field] !== undefined && request[field] !== null && typeof request[field] !== 'boolean') {
        throw invalidArg(field, 'must be a boolean');
      }
    }
    const timeoutMs = optionalCount(request.timeoutMs, 'timeoutMs') ?? this.timeoutMs;
    this.assertOpen();
    return this.withLock(terminalId, () =>
      this.run(terminalId, command, request.isInput === true, request.noEnter === true, timeoutMs),
    );
  }

  /** Resizes a session's pty (programs get SIGWINCH). Resolves false for an unknown id. */
  async resize(terminalId: string, cols: number, rows: number): Promise<boolean> {
    if (typeof terminalId !== 'string' || terminalId === '') throw invalidArg('terminalId', 'must be a non-empty string');
    const c = optionalCount(cols, 'cols', 1);
    const r = optionalCount(rows, 'rows', 1);
    if (c === undefined || r === undefined) throw invalidArg(c === undefined ? 'cols' : 'rows', 'must be an integer >= 1');
    const session = this.sessions.get(terminalId);
    const terminal = session?.terminal;
    if (!session || !terminal?.resize) return false;
    await terminal.resize(c, r);
    session.size = { cols: c, rows: r };
    return true;
  }

  /**
   * Closes a session: kills its shell and every process of its tree, then frees the terminal.
   * Resolves false for an unknown id.
   */
  async close(terminalId: string): Promise<boolean> {
    if (typeof terminalId !== 'string' || terminalId === '') throw invalidArg('terminalId', 'must be a non-empty string');
    const pending = this.opening.get(terminalId);
    if (pending) await pending.catch(() => undefined);
    const session = this.sessions.get(terminalId);
    if (!session) return false;
    await this.destroy(session);
    return true;
  }

  /** Closes every session and refuses new calls. */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.opening.values()].map((p) => p.catch(() => undefined)));
    await Promise.all([...this.sessions.values()].map((s) => this.destroy(s)));
  }

  /** Same as `closeAll()`, for `await using shells = new ShellSessions()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.closeAll();
  }

  private assertOpen(): void {
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the shell sessions were closed');
  }

  private async withLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(id) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(fn);
    const tail = next.catch(() => undefined);
    this.locks.set(id, tail);
    try {
      return await next;
    } finally {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    }
  }

  private async run(id: string, command: string, isInput: boolean, noEnter: boolean, timeoutMs: number): Promise<ExecuteResult> {
    let session = this.sessions.get(id);
    if (session && (session.exit || session.closed) && !(command === '' && session.completion)) {
      // The shell ended (its end was reported, or is collected only by an empty command): start afresh.
      await this.destroy(session);
      session = undefined;
    }
    session ??= await this.open(id);
    session.lastUsed = performanceNow();
    const s = session;
    const terminal = s.terminal!;
    const send = async (op: () => Promise<unknown>): Promise<void> => {
      try {
        await op();
      } catch (error) {
        // A write to a shell that just ended fails; its end is then reported as the result.
        const deadline = Date.now() + 2000;
        while (!s.exit && Date.now() < deadline) await s.changed(deadline - Date.now());
        if (!s.exit) throw error;
      }
    };
    const keys = isInput ? null : parseKeys(command);
    let mode: 'command' | 'input';
    if (command !== '' && !s.busy) s.absorbCompletion();
    if (command === '') {
      // Running: wait for it as for a command. Idle: collect what background jobs print, until quiet.
      mode = s.busy ? 'command' : 'input';
    } else if (keys) {
      if (!session.busy) {
        // Nothing runs and nothing was typed: the shell has no line editor (no history or cursor
        // keys), so only control keys and Enter mean something to it.
        const bad = keys.find((k) => k !== 'Enter' && !/^C-[\x21-\x7e]$/.test(k));
        if (bad !== undefined) {
          throw new AcpTerminalError(
            'ERR_NO_RUNNING_COMMAND',
            `command: no program is running in session ${JSON.stringify(id)} to receive ${JSON.stringify(bad)}; ` +
              'the shell has no line editing (history and cursor keys do nothing): send the command itself',
            { field: 'command', terminalId: id },
          );
        }
        session.waiting = { seq: 'any' };
      }
      await send(() => terminal.sendKeys(keys));
      mode = 'input';
    } else if (isInput) {
      if (!session.busy) {
        throw new AcpTerminalError(
          'ERR_NO_RUNNING_COMMAND',
          `isInput: no command is running in session ${JSON.stringify(id)}; send the text as a command instead`,
          { field: 'isInput', terminalId: id },
        );
      }
      await send(() => terminal.write(noEnter ? command : `${command}\r`));
      mode = 'input';
    } else if (session.busy) {
      throw new AcpTerminalError(
        'ERR_COMMAND_RUNNING',
        `command: a command is still running in session ${JSON.stringify(id)}; send "" to collect its output, ` +
          'isInput: true to answer it, "C-c" to interrupt it, or use another terminalId',
        { field: 'command', terminalId: id },
      );
    } else if (noEnter) {
      // Text typed at the prompt without Enter: it runs when Enter (or more input with Enter) follows.
      session.waiting = { seq: 'any' };
      await send(() => terminal.write(command));
      mode = 'input';
    } else {
      session.seq += 1;
      fs.mkdirSync(session.dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(session.commandFile, command.endsWith('\n') ? command : `${command}\n`, { mode: 0o600 });
      session.waiting = { seq: session.seq };
      session.typedLine = ` __acp_n=${session.seq}; \\builtin source ${shellQuote(session.commandFile)}`;
      // First C-u and two line ends. Unread input may sit before our line: typically the emulator's
      // answers to queries of a program that exited without reading them (an OSC answer ends with
      // ESC \, a backslash). C-u discards it while it is an unfinished canonical line; otherwise (it
      // arrived in raw mode) the first line end finishes it as a line of its own (or is eaten as a
      // backslash continuation, then the second does). Their prompts are stale (older sequence
      // number). `\n`, not `\r`: a line ends with it even without ICRNL.
      await send(() => terminal.write(`\x15\n\n${s.typedLine}\n`));
      mode = 'command';
    }
    await this.waitForResult(session, mode, timeoutMs);
    const screen = this.screen
      ? () =>
          terminal.currentOutput().then(
            (o) => o.output,
            () => undefined,
          )
      : undefined;
    const { content, truncated, completion } = await session.take(screen);
    const ended = completion?.ended === true;
    const result: ExecuteResult = {
      content,
      exitCode: completion ? completion.exitCode : null,
      status: completion || !session.busy ? 'completed' : 'running',
      workingDir: session.cwd(),
      command,
      terminalId: id,
      truncated,
      sessionEnded: ended,
    };
    if (ended || session.exit) await this.destroy(session);
    return result;
  }

  private async waitForResult(session: Session, mode: 'command' | 'input', timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const start = Date.now();
    // Let output callbacks already queued run first (and never starve them, even with timeoutMs 0).
    await new Promise((resolve) => setImmediate(resolve));
    for (;;) {
      if (session.completion) return;
      if (!session.busy && mode === 'command') return;
      const now = Date.now();
      if (now >= deadline) return;
      let wait = deadline - now;
      if (mode === 'input') {
        const quietFor = Math.min(session.idleSinceMs, now - start);
        if (quietFor >= this.settleMs) return;
        wait = Math.min(wait, this.settleMs - quietFor);
      }
      await session.changed(wait);
    }
  }

  private async open(id: string): Promise<Session> {
    const pending = this.opening.get(id);
    if (pending) return pending;
    // start() runs after `opening` counts this session, so eviction sees it.
    const promise = Promise.resolve()
      .then(() => this.start(id))
      .finally(() => this.opening.delete(id));
    this.opening.set(id, promise);
    return promise;
  }

  private async start(id: string): Promise<Session> {
    await this.evictFor();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-shell-'));
    trackDir(dir);
    const session = new Session(id, dir, this.maxOutputBytes, this.cwd);
    session.size = { cols: this.cols, rows: this.rows };
    const rcPath = path.join(dir, 'rc');
    try {
      fs.writeFileSync(rcPath, session.rcText(rcPath), { mode: 0o600 });
      const backend = this.backend ?? loadNativePtyCreateTerminal();
      const terminal = await backend(
        {
          command: this.shell,
          args: ['--noprofile', '--norc', '--noediting', '-i'],
          cwd: this.cwd,
          ...(this.env.length > 0 ? { env: this.env } : {}),
          outputByteLimit: 64 * 1024,
        },
        {
          pty: { cols: this.cols, rows: this.rows },
          // Text mode for its emulator (query answers, full-screen programs); the scrollback is not used.
          ...(this.screen ? { output: 'text' as const, scrollback: 0 } : {}),
          ...(this.inheritEnv !== undefined ? { inheritEnv: this.inheritEnv } : {}),
          ...(this.sandbox !== undefined ? { sandbox: this.sandbox } : {}),
        },
      );
      session.attach(terminal);
      // The rc is sourced by a typed line rather than `--rcfile`, which would also read the system
      // bashrc; this echo and the default prompt come before the first marker and are dropped.
      await terminal.write(` \\builtin source ${shellQuote(rcPath)}\n`);
      const deadline = Date.now() + this.startTimeoutMs;
      while (!session.ready && !session.exit && Date.now() < deadline) await session.changed(deadline - Date.now());
      if (!session.ready) {
        const why = session.exit ? `it exited (${JSON.stringify(session.exit)})` : `no prompt within ${this.startTimeoutMs} ms`;
        await this.kill(session);
        throw new AcpTerminalError(
          'ERR_SESSION_START',
          `terminalId: the shell of session ${JSON.stringify(id)} did not start: ${why}`,
          { terminalId: id },
        );
      }
    } catch (error) {
      await this.kill(session).catch(() => undefined);
      removeDir(dir);
      throw error;
    }
    if (this.closed) {
      await this.kill(session);
      removeDir(dir);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the shell sessions were closed while a session was starting');
    }
    session.lastUsed = performanceNow();
    this.sessions.set(id, session);
    return session;
  }

  /** Closes least recently used sessions until one more fits (idle ones first). */
  private async evictFor(): Promise<void> {
    while (this.sessions.size + this.opening.size > this.maxSessions) {
      const candidates = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed);
      const victim = candidates.find((s) => !this.locks.has(s.id)) ?? candidates[0];
      if (!victim) return;
      await this.destroy(victim);
    }
  }

  private async destroy(session: Session): Promise<void> {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    if (session.closed) return;
    session.closed = true;
    await this.kill(session);
    removeDir(session.dir);
  }

  private async kill(session: Session): Promise<void> {
    const terminal = session.terminal;
    if (!terminal) return;
    session.cwd();
    // Sweep the session's processes unless the shell's pid now belongs to another process (reused
    // after the shell was reaped); the native release still kills what it contains.
    const start = procStartTime(terminal.pid);
    if (start === undefined || start === session.shellStart) killSessionTree(terminal.pid);
    session.detach();
    await terminal.release().catch(() => undefined);
  }
}

/** Private directories of live sessions, removed at exit even if `closeAll()` was never called. */
const liveDirs = new Set<string>();
let exitHookInstalled = false;

function trackDir(dir: string): void {
  liveDirs.add(dir);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const d of liveDirs) fs.rmSync(d, { recursive: true, force: true });
    });
  }
}

function removeDir(dir: string): void {
  liveDirs.delete(dir);
  fs.rmSync(dir, { recursive: true, force: true });
}

let nativeCreate: PtyCreateTerminalFn | undefined;

function loadNativePtyCreateTerminal(): PtyCreateTerminalFn {
  if (!nativeCreate) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const native = require('../index.js') as { createTerminal: PtyCreateTerminalFn };
    nativeCreate = native.createTerminal;
  }
  return nativeCreate;
}

function performanceNow(): number {
  return performance.now();
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The newest `max` bytes of a stream, trimmed lazily (at twice the limit, so a flood is not copied per chunk). */
class TailBuffer {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private truncated = false;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(Buffer.from(chunk));
    this.bytes += chunk.length;
    if (this.bytes > 2 * this.max) this.trim();
  }

  append(other: TailBuffer): void {
    for (const c of other.chunks) this.push(c);
    this.truncated ||= other.truncated;
  }

  peek(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  take(): { bytes: Buffer; truncated: boolean } {
    if (this.bytes > this.max) this.trim();
    const result = { bytes: Buffer.concat(this.chunks), truncated: this.truncated };
    this.chunks = [];
    this.bytes = 0;
    this.truncated = false;
    return result;
  }

  private trim(): void {
    const all = Buffer.concat(this.chunks);
    let start = all.length - this.max;
    // Start on a line boundary when one is near, so no escape sequence or character is cut in half.
    const nl = all.indexOf(0x0a, start);
    if (nl !== -1 && nl - start < 4096) start = nl + 1;
    const kept = Buffer.from(all.subarray(start));
    this.chunks = [kept];
    this.bytes = kept.length;
    this.truncated = true;
  }
}

interface ProcInfo {
  pid: number;
  ppid: number;
  sid: number;
  state: string;
}

function listProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(e), state: f[0]!, ppid: Number(f[1]), sid: Number(f[3]) });
    } catch {
      // raced with its exit
    }
  }
  return out;
}

/**
 * The live processes of a shell session: everything in the pty's session (`sid` = the shell's pid, so
 * background jobs in their own process groups too) and every descendant of those (even after `setsid`).
 */
export function sessionTreePids(shellPid: number): number[] {
  const procs = listProcesses().filter((p) => p.state !== 'Z' && p.state !== 'X');
  const members = new Set<number>();
  for (const p of procs) if (p.sid === shellPid || p.pid === shellPid) members.add(p.pid);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) {
      if (!members.has(p.pid) && members.has(p.ppid)) {
        members.add(p.pid);
        grew = true;
      }
    }
  }
  members.delete(process.pid);
  return [...members];
}

function procStartTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function killSessionTree(shellPid: number): void {
  // Repeat: a process may fork while the previous round is being killed.
  for (let round = 0; round < 10; round++) {
    const pids = sessionTreePids(shellPid);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone, or not ours
      }
    }
  }
}
