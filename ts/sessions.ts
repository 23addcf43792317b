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

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AcpTerminalError, invalidArg } from './errors';
import { nativeCore } from './session-native';
import { commandInput, commandLine, rcLine } from './session-protocol';
import { procStartTime, Session } from './session';
import type { ExecuteRequest, ExecuteResult, PtyCreateTerminalFn, ShellSessionsOptions } from './session-types';
import type { EnvVariable } from './types';
import { normalizeEnv, optionalAbsolutePath, optionalCount } from './validate';

export type {
  ExecuteRequest,
  ExecuteResult,
  PtyCreateTerminalFn,
  PtyCreateTerminalOptions,
  PtyTerminalLike,
  ShellSessionsOptions,
} from './session-types';

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

/**
 * True when `word` is a tmux key name (`C-c`, `M-x`, `S-Tab`, `Up`, `F5`, `Enter`, ...): such
 * commands are sent as keys. A plain character (`q`) is text, not a key. The native core's key
 * table decides (the one `sendKeys()` encodes with).
 */
export function isKeyName(word: string): boolean {
  return nativeCore().isKeyName(word);
}

/** Splits `command` into key names when every whitespace-separated word is one, else returns null. */
export function parseKeys(command: string): string[] | null {
  const words = command.trim().split(/\s+/);
  if (words.length === 0 || words[0] === '') return null;
  return words.every(isKeyName) ? words : null;
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
      const line = commandLine(session.seq, session.commandFile);
      session.typedLine = line;
      await send(() => terminal.write(commandInput(line)));
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
      const backend: PtyCreateTerminalFn = this.backend ?? nativeCore().createTerminal;
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
        },
      );
      session.attach(terminal);
      // The rc is sourced by a typed line rather than `--rcfile`, which would also read the system
      // bashrc; this echo and the default prompt come before the first marker and are dropped.
      await terminal.write(rcLine(rcPath));
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
    if (start === undefined || start === session.shellStart) nativeCore().killSessionTree(terminal.pid);
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

function performanceNow(): number {
  return performance.now();
}
