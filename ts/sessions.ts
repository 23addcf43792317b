/// ShellSessions: persistent, named bash sessions on pseudo-terminals, the robust version of the
/// "interactive terminal tool" of agent frameworks (a shell per id, `is_input`, special keys,
/// `no_enter`, timeouts that return `running` instead of killing). This file is the manager (options,
/// the session cap, per-session call order, what a request sends); `session.ts` is one shell,
/// `session-protocol.ts` the marker protocol, `session-input.ts` how a request's text is read.
///
/// How a command is run, and why it is robust:
/// - Each session is `bash --noprofile --norc --noediting -i` on a pty created by the native
///   `createTerminal(..., { pty })`, its rc typed as its first line (see below): echo off, the
///   completion marker as the prompt, history in memory only. No system or user rc runs; no line
///   editor, so nothing is redrawn or echoed and the stream holds only output.
/// - Nothing is written to a file: the rc and each command reach the shell through its pty only, so
///   no host-side path exists that a command (in the sandbox or not) could replace with a symlink or
///   a FIFO, fill, or make unremovable. The command text is typed as `$'...'` words (ASCII
///   control bytes escaped, so the terminal's line discipline acts on none) into a here-string of
///   the shell's own, which the shell sources with `.` in POSIX mode (so no function can stand in for
///   `.`). Heredocs, multi-line scripts and quotes are parsed by bash as one unit, the 4095-byte line
///   limit does not apply, and the command runs in the shell itself (cd, export, functions, `set`
///   options and background jobs persist). A here-document left open is refused before anything runs
///   (`bash -n` on the text, given on its stdin), as bash would run it with exit status 0.
/// - Completion: bash's own prompt prints `ESC ] 6973 ; <token> ; E ; <seq> ; <$?> BEL` (prompt
///   expansion: no command runs, so redefining `builtin` or `printf` changes nothing; PS1 is reset
///   from a read-only copy before every prompt). The 128-bit token exists in the shell only as octal
///   escapes; a stale prompt has an older sequence number. The marker is matched byte-exactly in the
///   raw stream and removed. Printed text is only a candidate: it completes a command once the shell is
///   seen from outside at its own prompt (the pty's foreground process group is the shell's, and the
///   shell is blocked in the very read where it blocked at its first prompt, not a `read` of the
///   command's); then the output is drained and the last marker taken (two: `exitCode: null`). A
///   marker that fails that (printed by a command that goes on running) completes nothing, and
///   the command's completion then reports `exitCode: null`. While the shell's stderr is not the
///   terminal, `PROMPT_COMMAND` prints a marker without a status: completions then say `exitCode: null`.
/// - `exitCode` is `$?` from the prompt, the shell's exit code when the shell itself ended, otherwise
///   null, never invented by the host (a command that prints the shell's own marker and then fails is
///   reported with its real exit code or null). `workingDir` is read from `/proc/<shell pid>/cwd`.
/// - Content is the raw output of the command alone, rendered by the native terminal emulator at the
///   pty's size (escapes consumed, `\r` overwrites applied); the terminal runs in text mode for its
///   emulator, which answers terminal queries and shows a full-screen program's screen while it runs.
///
/// Limits, by design: the prompt has no line editor, so cursor and history keys with nothing running
/// are refused (`ERR_NO_RUNNING_COMMAND`) and commands are not in `history`; `set -x` traces carry one
/// `+` more (the command is sourced); PS1, PS0, `PROMPT_COMMAND`, the SIGINT trap and the terminal
/// modes are the session's; a process that may ptrace the shell (root, or the same user without Yama)
/// can make the shell itself return to its prompt. Linux only (/proc).
///
/// No command leaves a session wedged: terminal modes are put back before each command line, stdout,
/// stderr, the SIGINT trap and line editing (off) before each command, a stopped shell is continued, a
/// shell back at its prompt without printing one (`set -o vi`) completes the command; what bash cannot
/// prevent (a read-only session variable, an extdebug DEBUG trap, `exec bash`, a shell that loops
/// ignoring C-c) makes the session `broken` (with `why`) until `restart()`. Every process of a session
/// carries its tag in its environment, and closing kills those as well as the shell's session tree.

import { AcpTerminalError, invalidArg } from './errors';
import { compileEnvPatterns, filteredInheritedEnv } from './policy-env';
import { findOpenHereDocument, inputText, keyRefusedAtPrompt, keysPrompt, type OpenHereDocument, requestKeys } from './session-input';
import { loadNative, nativeCreateTerminal } from './native';
import { type NetworkConnectionEvent, networkRulesOf } from './network-proxy';
import { commandInput, commandLine, commandText } from './session-protocol';
import { type Early, Session, SESSION_TAG_VAR } from './session';
import type {
  ExecuteRequest,
  ExecuteResult,
  InterruptOptions,
  InterruptReport,
  PreviousCommand,
  PtyCreateTerminalFn,
  RestartResult,
  SessionBackend,
  ShellInspection,
  ShellSessionsNetworkListener,
  ShellSessionsOptions,
} from './session-types';
import type { EnvVariable } from './types';
import { mergeEnv, normalizeEnv, optionalAbsolutePath, optionalCount } from './validate';

export { isKeyName, parseKeys } from './session-input';

export type {
  ExecuteRequest,
  ExecuteResult,
  InterruptOptions,
  InterruptReport,
  PtyCreateTerminalFn,
  PtyCreateTerminalOptions,
  PtyTerminalLike,
  PreviousCommand,
  RestartResult,
  SessionBackend,
  ShellInspection,
  ShellSessionsNetworkEvent,
  ShellSessionsNetworkListener,
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
/** Default `graceMs` of {@link ShellSessions.interrupt}. */
export const DEFAULT_INTERRUPT_GRACE_MS = 1000;

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
  /** Sessions being ended (no longer in `sessions`): `closeAll()` waits for them too. */
  private readonly ending = new Map<Session, Promise<void>>();
  /** Here-document checks in flight (`bash -n`): `closeAll()` stops them and waits for them. */
  private readonly checks = new Map<AbortController, Promise<unknown>>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private closed = false;
  private readonly maxSessions: number;
  /** Where new sessions start; undefined: the far end's server's directory (with `backend`). */
  private readonly cwd: string | undefined;
  private readonly env: EnvVariable[];
  private readonly inheritEnv: boolean | undefined;
  private readonly dropEnv: ((name: string) => boolean) | undefined;
  /** `options.shell`, else the platform's bash (`sessionBash()`) once a session needs it. */
  private shell: string | undefined;
  private readonly cols: number;
  private readonly rows: number;
  private readonly timeoutMs: number;
  private readonly settleMs: number;
  private readonly maxOutputBytes: number;
  private readonly startTimeoutMs: number;
  private readonly screen: boolean;
  private readonly backend: PtyCreateTerminalFn | undefined;
  /** `options.backend`: the shells run at its far end. */
  private readonly far: SessionBackend | undefined;
  private readonly sandbox: ShellSessionsOptions['sandbox'];
  /** The sandbox has a network allow list: its proxy's connections go to `networkListeners`. */
  private readonly proxied: boolean;
  private readonly networkListeners = new Set<ShellSessionsNetworkListener>();
  private readonly inputWait: boolean;
  private readonly quietMs: number | undefined;
  private readonly maxContentChars: number | undefined;
  private readonly outputListeners = new Set<(terminalId: string, chunk: Buffer) => void>();

  /** Creates a session manager; invalid options throw `ERR_INVALID_ARG` naming the option. */
  constructor(options: ShellSessionsOptions = {}) {
    if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
    this.maxSessions = optionalCount(options.maxSessions, 'options.maxSessions', 1) ?? DEFAULT_MAX_SESSIONS;
    if (options.backend !== undefined) {
      const b = options.backend as Partial<SessionBackend> | null;
      if (typeof b !== 'object' || b === null || typeof b.createTerminal !== 'function' || typeof b.lookup !== 'function') {
        throw invalidArg('options.backend', 'must be a backend of `backends` (podman, docker, kubectl, ssh, command, local)');
      }
    }
    this.far = options.backend;
    this.cwd = optionalAbsolutePath(options.cwd, 'options.cwd') ?? (this.far ? undefined : process.cwd());
    this.env = normalizeEnv(options.env, 'options.env');
    if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
      throw invalidArg('options.inheritEnv', 'must be a boolean');
    }
    this.inheritEnv = options.inheritEnv;
    const drop = compileEnvPatterns(options.dropInheritedEnv, 'options.dropInheritedEnv');
    this.dropEnv = options.inheritEnv === false ? undefined : drop;
    if (options.shell !== undefined && (typeof options.shell !== 'string' || options.shell === '')) {
      throw invalidArg('options.shell', 'must be a non-empty string');
    }
    this.shell = options.shell;
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
    this.backend = options.createTerminal ?? this.far?.createTerminal;
    // A substitute or a far end's backend gets the options as given (checked where it creates).
    this.sandbox = pinSandbox(options.sandbox, this.backend !== undefined);
    this.proxied = networkRulesOf(this.sandbox, 'options.sandbox') !== undefined;
    if (options.onNetwork !== undefined) {
      if (typeof options.onNetwork !== 'function') throw invalidArg('options.onNetwork', 'must be a function');
      this.networkListeners.add(options.onNetwork);
    }
    if (options.returnOnInputWait !== undefined && typeof options.returnOnInputWait !== 'boolean') {
      throw invalidArg('options.returnOnInputWait', 'must be a boolean');
    }
    this.inputWait = options.returnOnInputWait ?? true;
    this.quietMs = optionalCount(options.quietMs, 'options.quietMs', 1);
    this.maxContentChars = optionalCount(options.maxContentChars, 'options.maxContentChars', 1);
  }

  /**
   * Subscribes to every session's output as it arrives (bytes, prompt markers removed, before any
   * rendering), e.g. to show a `running` command live; returns the unsubscribe function.
   */
  onOutput(listener: (terminalId: string, chunk: Buffer) => void): () => void {
    if (typeof listener !== 'function') throw invalidArg('listener', 'must be a function');
    const own = (terminalId: string, chunk: Buffer): void => listener(terminalId, chunk);
    this.outputListeners.add(own);
    return () => void this.outputListeners.delete(own);
  }

  /**
   * Subscribes to the connections through the sessions' network proxies (`sandbox.network: { allow }`),
   * allowed or refused, each reported once it is over; returns the unsubscribe function.
   */
  onNetwork(listener: ShellSessionsNetworkListener): () => void {
    if (typeof listener !== 'function') throw invalidArg('listener', 'must be a function');
    const own: ShellSessionsNetworkListener = (event) => listener(event);
    this.networkListeners.add(own);
    return () => void this.networkListeners.delete(own);
  }

  private network(terminalId: string, event: NetworkConnectionEvent): void {
    for (const listener of [...this.networkListeners]) {
      try {
        listener({ type: 'network', time: Date.now(), terminalId, ...event });
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Ids of the live sessions, least recently used first. */
  get ids(): string[] {
    return [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed).map((s) => s.id);
  }

  /** True when the shells run on this machine, through the native core (no `backend`, no substitute `createTerminal`). */
  get local(): boolean {
    return this.backend === undefined;
  }

  /** Pid of a session's shell (the far end's, with `backend`), or undefined when there is no such live session. */
  shellPid(terminalId: string = DEFAULT_SESSION_ID): number | undefined {
    return this.sessions.get(terminalId)?.terminal?.pid;
  }

  /** A live session's working directory, read where its shell runs; undefined when there is no such session. */
  async workingDir(terminalId: string = DEFAULT_SESSION_ID): Promise<string | undefined> {
    const session = this.sessions.get(terminalId);
    return session && !session.closed ? session.cwd() : undefined;
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
    const quietMs = optionalCount(request.quietMs, 'quietMs', 1) ?? this.quietMs;
    this.assertOpen();
    return this.withLock(terminalId, () =>
      this.run(terminalId, command, request.isInput === true, request.noEnter === true, timeoutMs, quietMs),
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
   * Interrupts the command running in a session and always gets the prompt back without losing the
   * session: C-c first; if the prompt is not back within `graceMs`, the pty's foreground process group
   * (when it is not the shell's own) is terminated: SIGTERM (and SIGCONT), then SIGKILL if it still
   * runs `graceMs` later. Resolves with the output since the previous result, like `execute`, plus
   * `interrupt` saying what it took. With nothing running, nothing is sent (`interrupt.signal` null).
   * Waits for a call on the same session that is still running, as every call does.
   * Rejects with `ERR_INVALID_ARG` naming `terminalId` or `graceMs`, or `ERR_HOST_CLOSED`.
   */
  async interrupt(terminalId: string = DEFAULT_SESSION_ID, options: InterruptOptions = {}): Promise<ExecuteResult> {
    if (typeof terminalId !== 'string' || terminalId === '') throw invalidArg('terminalId', 'must be a non-empty string');
    if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
    const graceMs = optionalCount(options.graceMs, 'graceMs') ?? DEFAULT_INTERRUPT_GRACE_MS;
    if (graceMs > 600_000) throw invalidArg('graceMs', `must be at most 600000 (10 minutes), got ${graceMs}`);
    this.assertOpen();
    return this.withLock(terminalId, () => this.interruptLocked(terminalId, graceMs));
  }

  private async interruptLocked(id: string, graceMs: number): Promise<ExecuteResult> {
    const session = this.sessions.get(id);
    if (!session || session.closed) {
      return {
        content: '',
        exitCode: null,
        status: 'completed',
        workingDir: this.cwd ?? '',
        command: 'C-c',
        terminalId: id,
        truncated: false,
        sessionEnded: false,
        interrupt: { signal: null, processGroup: null },
      };
    }
    const terminal = session.terminal!;
    const report: InterruptReport = { signal: null, processGroup: null };
    if (session.busy && !session.completion && !session.exit) {
      report.signal = 'SIGINT';
      await terminal.sendKeys(['C-c']).catch(() => undefined);
      await this.waitForResult(session, 'command', graceMs);
      const look: ShellInspection | null = session.busy && !session.completion && session.watch?.canTell ? await session.look() : null;
      const group = look?.foregroundProcessGroup ?? null;
      if (typeof group === 'number' && group !== terminal.pid) {
        // signal null: the group ended by itself meanwhile (C-c took effect late); nothing was signalled.
        const { signal, pgid } = await session.watch!.killForeground(group, graceMs);
        if (signal !== null) {
          report.signal = signal;
          report.processGroup = pgid ?? group;
        }
        // The shell prompts once its job is gone (unless the shell itself goes on: still running).
        await this.waitForResult(session, 'command', Math.max(graceMs, 5000));
      } else if (
        typeof group === 'number' &&
        session.busy &&
        !session.completion &&
        look?.shellWait !== 'reading-stdin' && // a `read` of the command's waits for input: still running
        (await session.promptState()) !== 'prompt'
      ) {
        // What runs is the shell itself, and C-c did not stop it: nothing can end it but its end.
        session.markBroken(
          'the shell itself ignores C-c (a trap or a loop of its own builtins): nothing but ending the shell ' +
            'stops it; restart() gives a fresh shell',
        );
      }
    }
    return this.result(session, 'C-c', report);
  }

  /**
   * Replaces a session's shell with a fresh one in the directory the old shell was in: the way back
   * from `status: 'broken'`, or a clean slate on request. Everything the old session started is killed
   * first, as `close()` does. Waits for a call on the same session that is still running, as every call
   * does. Rejects with `ERR_INVALID_ARG` naming `terminalId`, `ERR_SESSION_START` (the fresh shell did
   * not start; the session is then closed), `ERR_HOST_CLOSED`.
   */
  async restart(terminalId: string = DEFAULT_SESSION_ID): Promise<RestartResult> {
    if (typeof terminalId !== 'string' || terminalId === '') throw invalidArg('terminalId', 'must be a non-empty string');
    this.assertOpen();
    return this.withLock(terminalId, async () => {
      const pending = this.opening.get(terminalId);
      if (pending) await pending.catch(() => undefined);
      const old = this.sessions.get(terminalId);
      let cwd = this.cwd;
      let previous: string | null = null;
      if (old) {
        cwd = await old.cwd();
        previous = old.broken;
        await this.destroy(old);
      }
      let fresh: Session;
      try {
        fresh = await this.open(terminalId, cwd);
      } catch (error) {
        // The old directory is gone (checked where the shell runs): the sessions' own directory instead.
        if ((error as { code?: unknown }).code !== 'ERR_INVALID_CWD' || cwd === this.cwd) throw error;
        fresh = await this.open(terminalId, this.cwd);
      }
      return { terminalId, workingDir: await fresh.cwd(), previous };
    });
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

  /**
   * Closes every session and refuses new calls; resolves once every process the sessions started is
   * gone: a shell still starting is waited for and ended, and a call waiting for its session's turn
   * starts no shell (it rejects with `ERR_HOST_CLOSED`).
   */
  async closeAll(): Promise<void> {
    this.closed = true;
    for (const stop of this.checks.keys()) stop.abort();
    await Promise.all([...this.opening.values(), ...this.checks.values()].map((p) => p.catch(() => undefined)));
    await Promise.all([...this.sessions.values()].map((s) => this.destroy(s)));
    await Promise.all([...this.ending.values()].map((p) => p.catch(() => undefined)));
  }

  /** Same as `closeAll()`, for `await using shells = new ShellSessions()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.closeAll();
  }

  /**
   * The here-document check of a command (its own short-lived `bash -n`), ended by `closeAll()`: a
   * check in flight then is released (its bash killed) and waited for; none starts once closed.
   */
  private async findOpenHereDocument(command: string, text: string): Promise<OpenHereDocument | null> {
    this.assertOpen();
    const stop = new AbortController();
    const checking = findOpenHereDocument(this.bash(), command, text, this.far ? this.backend : undefined, stop.signal);
    this.checks.set(stop, checking);
    try {
      const open = await checking;
      this.assertOpen();
      return open;
    } finally {
      this.checks.delete(stop);
    }
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

  private async run(
    id: string,
    command: string,
    isInput: boolean,
    noEnter: boolean,
    timeoutMs: number,
    quietMs: number | undefined,
  ): Promise<ExecuteResult> {
    let session = this.sessions.get(id);
    if (session && (session.exit || session.closed) && !(command === '' && session.completion)) {
      // The shell ended (its end was reported, or is collected only by an empty command): start afresh.
      await this.destroy(session);
      session = undefined;
    }
    session ??= await this.open(id);
    if (session.broken !== null) {
      throw new AcpTerminalError(
        'ERR_SESSION_BROKEN',
        `terminalId: session ${JSON.stringify(id)} is broken: ${session.broken}`,
        { terminalId: id, why: session.broken },
      );
    }
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
    const keys = requestKeys(command, isInput);
    let mode: 'command' | 'input';
    // A command that returned `running` and ended since, uncollected: reported as `previous` by the
    // call that sends something new (not mixed into its content), taken right before that is sent.
    let previous: PreviousCommand | undefined;
    if (command === '') {
      // Running: wait for it as for a command. Idle: collect what background jobs print, until quiet.
      mode = s.busy ? 'command' : 'input';
    } else if (keys) {
      if (!s.busy) {
        // Nothing runs and nothing was typed: the shell has no line editor (no history or cursor
        // keys), so only control keys and Enter mean something to it, and only some make it prompt.
        const bad = keyRefusedAtPrompt(keys);
        if (bad !== undefined) {
          throw new AcpTerminalError(
            'ERR_NO_RUNNING_COMMAND',
            `command: no program is running in session ${JSON.stringify(id)} to receive ${JSON.stringify(bad)}; ` +
              'the shell has no line editing (history and cursor keys do nothing): send the command itself',
            { field: 'command', terminalId: id },
          );
        }
        previous = await s.takePrevious();
        if (keysPrompt(keys)) {
          s.command = command;
          s.waitFor('any');
        }
      }
      await send(() => terminal.sendKeys(keys));
      mode = 'input';
    } else if (isInput) {
      if (!s.busy) {
        throw new AcpTerminalError(
          'ERR_NO_RUNNING_COMMAND',
          `isInput: no command is running in session ${JSON.stringify(id)}; send the text as a command instead`,
          { field: 'isInput', terminalId: id },
        );
      }
      await send(() => terminal.write(inputText(command, noEnter)));
      mode = 'input';
    } else if (s.busy) {
      throw new AcpTerminalError(
        'ERR_COMMAND_RUNNING',
        `command: a command is still running in session ${JSON.stringify(id)}; send "" to collect its output, ` +
          'isInput: true to answer it, "C-c" or interrupt() to interrupt it, restart() for a fresh shell in the same directory, ' +
          'or use another terminalId',
        { field: 'command', terminalId: id },
      );
    } else if (noEnter) {
      // The shell has no line editor: text typed at its prompt could be neither seen nor completed,
      // and it would run glued to whatever comes next. Refused; nothing is typed.
      throw new AcpTerminalError(
        'ERR_NO_RUNNING_COMMAND',
        `noEnter: no program is running in session ${JSON.stringify(id)} to type into; the prompt has no line ` +
          'editor, so text typed there without Enter could not be seen or completed: send the whole command without noEnter',
        { field: 'noEnter', terminalId: id },
      );
    } else {
      const text = commandText(command);
      const open = await this.findOpenHereDocument(command, text);
      if (open) {
        throw new AcpTerminalError(
          'ERR_INVALID_ARG',
          `command: unterminated here-document (line ${open.line}): bash reached the end of the command looking for ` +
            `its delimiter \`${open.delimiter}\`; nothing was run: send the whole command, delimiter line included`,
          { field: 'command', terminalId: id, incomplete: 'here-document', delimiter: open.delimiter },
        );
      }
      previous = await s.takePrevious();
      s.restoreModes();
      s.seq += 1;
      s.command = command;
      s.waitFor(s.seq);
      const line = commandLine(s.seq, text);
      s.typedLine = line;
      await send(() => terminal.write(commandInput(line)));
      mode = 'command';
    }
    const early = await s.settle(mode, timeoutMs, this.settleMs, { inputWait: this.inputWait, quietMs });
    return this.result(s, command, undefined, { early, previous });
  }

  /** The session's result (and the session forgotten when its shell ended). */
  private async result(
    session: Session,
    command: string,
    interrupt?: InterruptReport,
    extra?: { early?: Early | undefined; previous?: PreviousCommand | undefined },
  ): Promise<ExecuteResult> {
    const result = await session.result(command, this.screen, interrupt, extra);
    if (result.sessionEnded || session.exit) await this.destroy(session);
    return result;
  }

  private async waitForResult(session: Session, mode: 'command' | 'input', timeoutMs: number): Promise<void> {
    await session.settle(mode, timeoutMs, this.settleMs);
  }

  private async open(id: string, cwd: string | undefined = this.cwd): Promise<Session> {
    const pending = this.opening.get(id);
    if (pending) return pending;
    // A call that waited for its turn past closeAll() (which waits only for the shells already starting).
    this.assertOpen();
    // start() runs after `opening` counts this session, so eviction sees it.
    const promise = Promise.resolve()
      .then(() => this.start(id, cwd))
      .finally(() => this.opening.delete(id));
    this.opening.set(id, promise);
    return promise;
  }

  private async start(id: string, cwd: string | undefined): Promise<Session> {
    await this.evictFor();
    const session = new Session(id, this.maxOutputBytes, cwd ?? '', this.maxContentChars);
    session.onData = (bytes) => {
      for (const listener of this.outputListeners) {
        try {
          listener(id, bytes);
        } catch {
          // A listener's failure is its own: the session reads on.
        }
      }
    };
    session.size = { cols: this.cols, rows: this.rows };
    try {
      const backend: PtyCreateTerminalFn = this.backend ?? nativeCreateTerminal();
      // Inherited variables the host drops are left out here, and the shell starts from the rest.
      // Every process the session starts inherits its tag, which close() finds them by.
      const tag = [{ name: SESSION_TAG_VAR, value: session.tag }];
      const env = mergeEnv(this.dropEnv ? mergeEnv(filteredInheritedEnv(this.dropEnv, await this.inheritedEnv(), { pty: true }), this.env) : this.env, tag);
      const inheritEnv = this.dropEnv ? false : this.inheritEnv;
      if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the shell sessions were closed while a session was starting');
      const terminal = await backend(
        {
          command: this.bash(),
          args: ['--noprofile', '--norc', '--noediting', '-i'],
          ...(cwd !== undefined ? { cwd } : {}),
          env,
          outputByteLimit: 64 * 1024,
        },
        {
          pty: { cols: this.cols, rows: this.rows },
          // Text mode for its emulator (query answers, full-screen programs); the scrollback is not used.
          ...(this.screen ? { output: 'text' as const, scrollback: 0 } : {}),
          ...(inheritEnv !== undefined ? { inheritEnv } : {}),
          // The sandbox as given: the session adds no writable root (it keeps no file of its own).
          ...(this.sandbox !== undefined ? { sandbox: this.sandbox } : {}),
          ...(this.proxied ? { onNetwork: (e: NetworkConnectionEvent) => this.network(id, e) } : {}),
        },
      );
      session.attach(terminal);
      // The rc is typed rather than given by `--rcfile`, which would also read the system bashrc (and
      // be a file); its echo and the default prompt come before the first marker and are dropped.
      await terminal.write(session.rcInput());
      const deadline = Date.now() + this.startTimeoutMs;
      while (!session.ready && !session.exit && Date.now() < deadline) await session.changed(deadline - Date.now());
      await session.baseline;
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
      throw error;
    }
    if (this.closed) {
      await this.kill(session);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the shell sessions were closed while a session was starting');
    }
    session.lastUsed = performanceNow();
    this.sessions.set(id, session);
    return session;
  }

  /**
   * The bash sessions run: `options.shell`, else the core's `sessionBash()` (`bash`, looked up in
   * PATH; on Windows Git for Windows' bash.exe, or `ERR_BASH_NOT_FOUND` saying what to install).
   */
  private bash(): string {
    // At a far end: `bash` in its PATH (this machine's bash says nothing about it).
    this.shell ??= this.far ? 'bash' : loadNative().sessionBash();
    return this.shell;
  }

  /** The environment the shells inherit: this process's, or with `backend` the far end's server's. */
  private async inheritedEnv(): Promise<NodeJS.ProcessEnv> {
    if (!this.far) return process.env;
    const { env } = await this.far.lookup({ env: true });
    return Object.fromEntries((env ?? []).map((e) => [e.name, e.value]));
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
    if (session.closed) return this.ending.get(session);
    session.closed = true;
    const ending = this.kill(session).finally(() => this.ending.delete(session));
    this.ending.set(session, ending);
    await ending;
  }

  private async kill(session: Session): Promise<void> {
    const terminal = session.terminal;
    if (!terminal) return;
    await session.cwd();
    // Where the shell runs: its session tree and what carries the session's tag.
    await session.sweep().catch(() => undefined);
    session.detach();
    await terminal.release().catch(() => undefined);
  }
}

function performanceNow(): number {
  return performance.now();
}

/**
 * `options.sandbox` configured once, at construction, for the native backend: its writable roots are
 * resolved, checked and opened now (`SandboxConfig`), so a command that relinks a root's path cannot
 * point a later session elsewhere. A `SandboxConfig` is used as it is; a substitute backend gets the
 * options as given.
 */
function pinSandbox(sandbox: ShellSessionsOptions['sandbox'], substitute: boolean): ShellSessionsOptions['sandbox'] {
  if (sandbox === undefined || sandbox === null || substitute) return sandbox;
  if (typeof sandbox !== 'object') throw invalidArg('options.sandbox', 'must be an object');
  const { SandboxConfig } = loadNative();
  return sandbox instanceof SandboxConfig ? sandbox : new SandboxConfig(sandbox, 'options.sandbox');
}
