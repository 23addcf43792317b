/// TerminalHost: the client side of ACP v1 `terminal/*`, with method names matching the SDK's legacy
/// `Client` interface so a client can delegate to it one to one.

import { randomBytes } from 'node:crypto';
import { AcpTerminalError, invalidArg } from './errors';
import { loadNativeCreateTerminal } from './native';
import type { CreateTerminalFn, CreateTerminalOptions, EnvVariable, ExitStatus, OutputSnapshot, TerminalLike } from './types';
import { mergeEnv, normalizeEnv, optionalAbsolutePath, optionalCount, requireString } from './validate';

/// Default `defaultOutputByteLimit`: 1 MiB, so an agent that omits the limit cannot exhaust memory.
export const DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;
/// Default `maxTerminals`.
export const DEFAULT_MAX_TERMINALS = 64;
/// Default `maxReleasedSnapshots`.
export const DEFAULT_MAX_RELEASED_SNAPSHOTS = 32;

/// `terminal/create` params (ACP v1 `CreateTerminalRequest`).
export interface HostCreateTerminalRequest {
  /// Session that will own the terminal.
  sessionId: string;
  /// A shell line (no args) or an executable (with args).
  command: string;
  /// Arguments; when non-empty, `command` is executed directly.
  args?: string[] | null;
  /// Variables set for the command (they win over the host's overlay and the inherited environment).
  env?: EnvVariable[] | null;
  /// Absolute working directory; the host's `cwd` option when absent.
  cwd?: string | null;
  /// Output limit in bytes; the host's default when absent, clamped to `maxOutputByteLimit`.
  outputByteLimit?: number | null;
  /// Opaque metadata (ignored).
  _meta?: { [key: string]: unknown } | null;
}

/// Params of `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` and `terminal/release`.
export interface HostTerminalRequest {
  /// Session that owns the terminal.
  sessionId: string;
  /// Terminal id returned by `createTerminal`.
  terminalId: string;
  /// Opaque metadata (ignored).
  _meta?: { [key: string]: unknown } | null;
}

/// `terminal/create` result.
export interface HostCreateTerminalResponse {
  /// Id to use in later requests.
  terminalId: string;
}

/// Emitted by `onCreate` for every terminal the host creates.
export interface TerminalCreatedEvent {
  /// Host-issued terminal id (what the agent sees).
  terminalId: string;
  /// Owning session.
  sessionId: string;
  /// The live terminal (subscribe to `onOutput` to stream it into a UI).
  terminal: TerminalLike;
  /// The request as the host applied it (default cwd, effective limit, merged env).
  request: Readonly<HostCreateTerminalRequest & { outputByteLimit: number }>;
}

/// Options of `new TerminalHost()`.
export interface TerminalHostOptions {
  /// Absolute working directory for requests without `cwd` (default: this process's cwd).
  cwd?: string;
  /// Output limit for requests without `outputByteLimit` (default 1 MiB).
  defaultOutputByteLimit?: number;
  /// Ceiling for every terminal's output limit; larger requests are clamped (default: no ceiling).
  maxOutputByteLimit?: number;
  /// Live terminals allowed at once; creating more fails with `ERR_TOO_MANY_TERMINALS` (default 64).
  maxTerminals?: number;
  /// Grace period between SIGTERM and SIGKILL (backend default when absent).
  killGraceMs?: number;
  /// Variables added to every command: inherited environment < this overlay < the request's `env`.
  env?: Readonly<Record<string, string>> | readonly EnvVariable[];
  /// Whether commands inherit this process's environment (default true).
  inheritEnv?: boolean;
  /// `false` never uses a shell; a path selects the shell for arg-less commands.
  shell?: false | string;
  /// How many released terminals keep their final snapshot for `finalOutput()` (default 32).
  maxReleasedSnapshots?: number;
  /// Terminal backend (default: the native `createTerminal`); substitute it to sandbox or fake commands.
  createTerminal?: CreateTerminalFn;
}

interface LiveEntry {
  readonly sessionId: string;
  readonly terminal: TerminalLike;
}

/// Runs ACP v1 terminals for a client: one host per client (or per connection), shared by its sessions.
///
/// ```ts
/// const host = new TerminalHost({ cwd: workspace });
/// const { terminalId } = await host.createTerminal({ sessionId, command: 'npm test' });
/// ```
export class TerminalHost implements AsyncDisposable {
  private readonly live = new Map<string, LiveEntry>();
  private readonly releasing = new Map<string, Promise<void>>();
  private readonly snapshots = new Map<string, OutputSnapshot>();
  private readonly createListeners = new Set<(event: TerminalCreatedEvent) => void>();
  private readonly idPrefix = `term-${randomBytes(4).toString('hex')}-`;
  private nextId = 1;
  private pendingCreates = 0;
  private closed = false;
  private readonly cwd: string | undefined;
  private readonly defaultLimit: number;
  private readonly maxLimit: number;
  private readonly maxTerminals: number;
  private readonly maxSnapshots: number;
  private readonly envOverlay: EnvVariable[];
  private readonly backendOptions: CreateTerminalOptions;
  private readonly backend: CreateTerminalFn | undefined;

  /// Creates a host; invalid options throw `ERR_INVALID_ARG` naming the option.
  constructor(options: TerminalHostOptions = {}) {
    if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
    this.cwd = optionalAbsolutePath(options.cwd, 'options.cwd');
    this.maxLimit = optionalCount(options.maxOutputByteLimit, 'options.maxOutputByteLimit') ?? Number.MAX_SAFE_INTEGER;
    this.defaultLimit = Math.min(
      optionalCount(options.defaultOutputByteLimit, 'options.defaultOutputByteLimit') ?? DEFAULT_OUTPUT_BYTE_LIMIT,
      this.maxLimit,
    );
    this.maxTerminals = optionalCount(options.maxTerminals, 'options.maxTerminals', 1) ?? DEFAULT_MAX_TERMINALS;
    this.maxSnapshots =
      optionalCount(options.maxReleasedSnapshots, 'options.maxReleasedSnapshots') ?? DEFAULT_MAX_RELEASED_SNAPSHOTS;
    this.envOverlay = normalizeEnv(options.env, 'options.env');
    const killGraceMs = optionalCount(options.killGraceMs, 'options.killGraceMs');
    if (options.shell !== undefined && options.shell !== false && typeof options.shell !== 'string') {
      throw invalidArg('options.shell', 'must be false or a path');
    }
    if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
      throw invalidArg('options.inheritEnv', 'must be a boolean');
    }
    if (options.createTerminal !== undefined && typeof options.createTerminal !== 'function') {
      throw invalidArg('options.createTerminal', 'must be a function');
    }
    this.backendOptions = {
      ...(killGraceMs !== undefined ? { killGraceMs } : {}),
      ...(options.shell !== undefined ? { shell: options.shell } : {}),
      ...(options.inheritEnv !== undefined ? { inheritEnv: options.inheritEnv } : {}),
    };
    this.backend = options.createTerminal;
  }

  /// Number of live (created, not yet released) terminals.
  get liveTerminals(): number {
    return this.live.size;
  }

  /// True after `close()`.
  get isClosed(): boolean {
    return this.closed;
  }

  /// `terminal/create`: starts the command and answers with its id once it was spawned.
  async createTerminal(request: HostCreateTerminalRequest): Promise<HostCreateTerminalResponse> {
    const req = this.validateCreate(request);
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host is closed');
    if (this.live.size + this.pendingCreates >= this.maxTerminals) {
      throw new AcpTerminalError(
        'ERR_TOO_MANY_TERMINALS',
        `too many terminals: maxTerminals (${this.maxTerminals}) live terminals already exist; release one first`,
        { maxTerminals: this.maxTerminals },
      );
    }
    this.pendingCreates++;
    let terminal: TerminalLike;
    try {
      const backend = this.backend ?? loadNativeCreateTerminal();
      terminal = await backend(req, this.backendOptions);
    } finally {
      this.pendingCreates--;
    }
    if (this.closed) {
      await terminal.release().catch(() => undefined);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the terminal was created');
    }
    const terminalId = `${this.idPrefix}${this.nextId++}`;
    this.live.set(terminalId, { sessionId: req.sessionId, terminal });
    const event: TerminalCreatedEvent = { terminalId, sessionId: req.sessionId, terminal, request: req };
    for (const listener of this.createListeners) {
      try {
        listener(event);
      } catch {
        // A faulty UI listener must not fail the agent's request.
      }
    }
    return { terminalId };
  }

  /// `terminal/output`: the retained output, with `exitStatus` once the command exited.
  async terminalOutput(request: HostTerminalRequest): Promise<OutputSnapshot> {
    return normalizeSnapshot(await this.lookup(request).currentOutput());
  }

  /// `terminal/wait_for_exit`: resolves when the command exited.
  async waitForTerminalExit(request: HostTerminalRequest): Promise<ExitStatus> {
    const { exitCode, signal } = await this.lookup(request).waitForExit();
    return { exitCode, signal };
  }

  /// `terminal/kill`: stops the command; the id stays valid.
  async killTerminal(request: HostTerminalRequest): Promise<Record<string, never>> {
    await this.lookup(request).kill();
    return {};
  }

  /// `terminal/release`: kills if running, keeps a final snapshot, frees the terminal. Idempotent for ids
  /// this host issued.
  async releaseTerminal(request: HostTerminalRequest): Promise<Record<string, never>> {
    const { sessionId, terminalId } = validateTerminalRequest(request);
    const pending = this.releasing.get(terminalId);
    if (pending) {
      await pending;
      return {};
    }
    const entry = this.live.get(terminalId);
    if (entry && entry.sessionId === sessionId) {
      await this.releaseEntry(terminalId, entry);
      return {};
    }
    if (!entry && this.issued(terminalId)) return {};
    throw notFound(terminalId);
  }

  /// The live terminal behind `terminalId` (to embed in a tool-call UI), or undefined once released.
  terminal(terminalId: string): TerminalLike | undefined {
    return this.live.get(terminalId)?.terminal;
  }

  /// The last snapshot of a released terminal (the newest `maxReleasedSnapshots` are kept), or undefined.
  finalOutput(terminalId: string): OutputSnapshot | undefined {
    return this.snapshots.get(terminalId);
  }

  /// Calls `listener` for every terminal created from now on; returns an unsubscribe function.
  onCreate(listener: (event: TerminalCreatedEvent) => void): () => void {
    this.createListeners.add(listener);
    return () => {
      this.createListeners.delete(listener);
    };
  }

  /// Releases every terminal of `sessionId` (e.g. on `session/close` or when the agent disconnects).
  async releaseSession(sessionId: string): Promise<void> {
    requireString(sessionId, 'sessionId');
    await this.releaseWhere((entry) => entry.sessionId === sessionId);
  }

  /// Releases every terminal and refuses new ones.
  async close(): Promise<void> {
    this.closed = true;
    await this.releaseWhere(() => true);
  }

  /// Same as `close()`, for `await using host = new TerminalHost()`.
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async releaseWhere(predicate: (entry: LiveEntry) => boolean): Promise<void> {
    const work: Promise<void>[] = [...this.releasing.values()];
    for (const [terminalId, entry] of this.live) {
      if (predicate(entry)) work.push(this.releaseEntry(terminalId, entry));
    }
    await Promise.all(work);
  }

  private releaseEntry(terminalId: string, entry: LiveEntry): Promise<void> {
    this.live.delete(terminalId);
    const done = this.finish(terminalId, entry.terminal).finally(() => this.releasing.delete(terminalId));
    this.releasing.set(terminalId, done);
    return done;
  }

  private async finish(terminalId: string, terminal: TerminalLike): Promise<void> {
    try {
      // Stop first so the kept snapshot holds all output and the exit status.
      await terminal.kill();
      await terminal.waitForExit();
      this.keepSnapshot(terminalId, normalizeSnapshot(await terminal.currentOutput()));
    } catch {
      // Snapshot is best effort; the release below must still happen.
    } finally {
      await terminal.release().catch(() => undefined);
    }
  }

  private keepSnapshot(terminalId: string, snapshot: OutputSnapshot): void {
    if (this.maxSnapshots === 0) return;
    this.snapshots.set(terminalId, snapshot);
    while (this.snapshots.size > this.maxSnapshots) {
      const oldest = this.snapshots.keys().next().value as string;
      this.snapshots.delete(oldest);
    }
  }

  private issued(terminalId: string): boolean {
    if (!terminalId.startsWith(this.idPrefix)) return false;
    const n = Number(terminalId.slice(this.idPrefix.length));
    return Number.isSafeInteger(n) && n >= 1 && n < this.nextId && String(n) === terminalId.slice(this.idPrefix.length);
  }

  private lookup(request: HostTerminalRequest): TerminalLike {
    const { sessionId, terminalId } = validateTerminalRequest(request);
    const entry = this.live.get(terminalId);
    if (!entry || entry.sessionId !== sessionId) throw notFound(terminalId, this.issued(terminalId) && !entry);
    return entry.terminal;
  }

  private validateCreate(request: HostCreateTerminalRequest): HostCreateTerminalRequest & { outputByteLimit: number } {
    if (typeof request !== 'object' || request === null) throw invalidArg('params', 'must be an object');
    const sessionId = requireString(request.sessionId, 'sessionId');
    const command = requireString(request.command, 'command');
    if (request.args !== undefined && request.args !== null) {
      if (!Array.isArray(request.args)) throw invalidArg('args', 'must be an array of strings');
      request.args.forEach((arg, i) => {
        if (typeof arg !== 'string') throw invalidArg(`args[${i}]`, 'must be a string');
      });
    }
    const requested = optionalCount(request.outputByteLimit, 'outputByteLimit');
    const outputByteLimit = Math.min(requested ?? this.defaultLimit, this.maxLimit);
    const env = mergeEnv(this.envOverlay, request.env == null ? [] : normalizeEnv(request.env, 'env'));
    const cwd = request.cwd ?? this.cwd;
    return {
      sessionId,
      command,
      ...(request.args ? { args: [...request.args] } : {}),
      ...(env.length > 0 ? { env } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      outputByteLimit,
    };
  }
}

function validateTerminalRequest(request: HostTerminalRequest): HostTerminalRequest {
  if (typeof request !== 'object' || request === null) throw invalidArg('params', 'must be an object');
  return {
    sessionId: requireString(request.sessionId, 'sessionId'),
    terminalId: requireString(request.terminalId, 'terminalId'),
  };
}

function notFound(terminalId: string, released = false): AcpTerminalError {
  return new AcpTerminalError(
    'ERR_TERMINAL_NOT_FOUND',
    released
      ? `terminalId: terminal ${JSON.stringify(terminalId)} was released`
      : `terminalId: unknown terminal ${JSON.stringify(terminalId)} for this session`,
    { terminalId },
  );
}

/// Copies a backend snapshot into the protocol shape (no `exitStatus` key while running).
export function normalizeSnapshot(snapshot: OutputSnapshot): OutputSnapshot {
  const { output, truncated, exitStatus } = snapshot;
  return exitStatus
    ? { output, truncated, exitStatus: { exitCode: exitStatus.exitCode, signal: exitStatus.signal } }
    : { output, truncated };
}
