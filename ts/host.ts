/**
 * TerminalHost: the client side of ACP v1 `terminal/*`, with method names matching the SDK's legacy
 * `Client` interface so a client can delegate to it one to one. It also enforces the client's policy
 * (allowed roots, command rules, approval, environment filter, limits) and reports an audit stream.
 *
 * This file is the class; its parts: `host-types.ts` (the public types), `host-options.ts` (options
 * read once, defaults), `host-create.ts` (the checks of a create, the spawn, the audit of a refusal),
 * `host-entries.ts` (ids, live terminals, kill / wait / release, kept snapshots).
 */

import { performance } from 'node:perf_hooks';
import { AcpTerminalError, invalidArg } from './errors';
import type { TerminalAuditEvent, TerminalAuditListener } from './events';
import { refusalEvent, spawnChecked, validateCreate, type Spawned } from './host-create';
import { normalizeSnapshot, TerminalEntries } from './host-entries';
import { readHostOptions, type HostSettings } from './host-options';
import type {
  HostCreateTerminalRequest,
  HostCreateTerminalResponse,
  HostTerminalRequest,
  TerminalCreatedEvent,
  TerminalHostOptions,
} from './host-types';
import type { ExitStatus, OutputSnapshot, TerminalLike } from './types';
import { requireString } from './validate';

export { DEFAULT_MAX_RELEASED_SNAPSHOTS, DEFAULT_MAX_TERMINALS, DEFAULT_OUTPUT_BYTE_LIMIT } from './host-options';
export type {
  ApprovalRequest,
  ArglessMode,
  HostCreateTerminalRequest,
  HostCreateTerminalResponse,
  HostTerminalRequest,
  TerminalCreatedEvent,
  TerminalHostOptions,
} from './host-types';
export { normalizeSnapshot } from './host-entries';

/**
 * Runs ACP v1 terminals for a client: one host per client (or per connection), shared by its sessions.
 *
 * ```ts
 * const host = new TerminalHost({ cwd: workspace, allowedRoots: [workspace], onEvent: (e) => log(e) });
 * const { terminalId } = await host.createTerminal({ sessionId, command: 'npm test' });
 * ```
 */
export class TerminalHost implements AsyncDisposable {
  private readonly settings: HostSettings;
  private readonly entries: TerminalEntries;
  private readonly createListeners = new Set<(event: TerminalCreatedEvent) => void>();
  private readonly eventListeners = new Set<TerminalAuditListener>();
  private pendingCreates = 0;
  private closed = false;

  /** Creates a host; invalid options throw `ERR_INVALID_ARG` naming the option. */
  constructor(options: TerminalHostOptions = {}) {
    this.settings = readHostOptions(options);
    this.entries = new TerminalEntries(this.settings.maxSnapshots, (event) => this.emit(event), this.settings.ignoreUnknownRelease);
    if (options.onEvent) this.eventListeners.add(options.onEvent);
  }

  /** Number of live (created, not yet released) terminals. */
  get liveTerminals(): number {
    return this.entries.size;
  }

  /** True after `close()`. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * `terminal/create`: checks the request against the host's policy, starts the command and answers
   * with its id once it was spawned. Refusals reject with `ERR_CWD_OUTSIDE_ROOTS`, `ERR_POLICY_DENIED`,
   * `ERR_NOT_APPROVED` or `ERR_TOO_MANY_TERMINALS` (and emit `denied`); other failures emit `failed`.
   */
  async createTerminal(request: HostCreateTerminalRequest): Promise<HostCreateTerminalResponse> {
    const seen: { cwd: string | undefined } = { cwd: undefined };
    try {
      return await this.create(request, seen);
    } catch (error) {
      if (this.eventListeners.size > 0) this.emit(refusalEvent(request, seen.cwd, error));
      throw error;
    }
  }

  private async create(request: HostCreateTerminalRequest, seen: { cwd: string | undefined }): Promise<HostCreateTerminalResponse> {
    const req = validateCreate(request, this.settings);
    seen.cwd = req.cwd ?? undefined;
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host is closed');
    const { maxTerminals } = this.settings;
    if (this.entries.size + this.pendingCreates >= maxTerminals) {
      throw new AcpTerminalError(
        'ERR_TOO_MANY_TERMINALS',
        `too many terminals: maxTerminals (${maxTerminals}) live terminals already exist; release one first`,
        { maxTerminals },
      );
    }
    this.pendingCreates++;
    let spawned: Spawned;
    try {
      spawned = await spawnChecked(this.settings, request, req, seen, () => this.closed);
    } finally {
      this.pendingCreates--;
    }
    const { terminal, program } = spawned;
    if (this.closed) {
      await terminal.release().catch(() => undefined);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the terminal was created');
    }
    const startedAt = performance.now();
    const { terminalId, entry } = this.entries.add(req.sessionId, terminal);
    this.emit({
      type: 'created',
      time: Date.now(),
      sessionId: req.sessionId,
      terminalId,
      command: req.command,
      args: [...(req.args ?? [])],
      cwd: req.cwd ?? undefined,
      pid: terminal.pid,
      ...(program !== undefined ? { program } : {}),
      outputByteLimit: req.outputByteLimit,
    });
    this.entries.watchExit(terminalId, entry, startedAt);
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

  /** `terminal/output`: the retained output, with `exitStatus` once the command exited. */
  async terminalOutput(request: HostTerminalRequest): Promise<OutputSnapshot> {
    return normalizeSnapshot(await this.entries.lookup(request).terminal.currentOutput());
  }

  /**
   * `terminal/wait_for_exit`: resolves when the command exited, after the host recorded the exit (and
   * emitted `exited`), so a `release`/`close` that follows reports `wasRunning: false`. When a
   * `terminal/kill` of this terminal is in flight (the exit is the kill's doing, or raced it), the answer
   * waits until the kill was answered and one macrotask more, so a connection that writes responses in
   * the order its handlers settle (the SDK does: its handler chain is microtasks) sends the kill's
   * response first. Agents rely on that order: one of them releases the terminal as soon as the wait
   * resolves while another part still reads the output after its kill.
   */
  waitForTerminalExit(request: HostTerminalRequest): Promise<ExitStatus> {
    // The entries' own promise, so the ordering above holds to the microtask.
    return this.entries.wait(request);
  }

  /**
   * `terminal/kill`: stops the command; the id stays valid. Emits `killed`. Its response goes out before
   * the `terminal/wait_for_exit` responses the kill causes (see `waitForTerminalExit`).
   */
  killTerminal(request: HostTerminalRequest): Promise<Record<string, never>> {
    // The entries' own promise: the kill is answered in the microtask its `killAnswered` settles.
    return this.entries.kill(request);
  }

  /**
   * `terminal/release`: kills if running, keeps a final snapshot, frees the terminal. Idempotent for ids
   * this host issued. Emits `released` (after `exited`).
   */
  releaseTerminal(request: HostTerminalRequest): Promise<Record<string, never>> {
    return this.entries.release(request);
  }

  /** The live terminal behind `terminalId` (to embed in a tool-call UI), or undefined once released. */
  terminal(terminalId: string): TerminalLike | undefined {
    return this.entries.get(terminalId)?.terminal;
  }

  /** The last snapshot of a released terminal (the newest `maxReleasedSnapshots` are kept), or undefined. */
  finalOutput(terminalId: string): OutputSnapshot | undefined {
    return this.entries.finalOutput(terminalId);
  }

  /** Calls `listener` for every terminal created from now on; returns an unsubscribe function. */
  onCreate(listener: (event: TerminalCreatedEvent) => void): () => void {
    this.createListeners.add(listener);
    return () => {
      this.createListeners.delete(listener);
    };
  }

  /**
   * Calls `listener` with every audit event from now on (`created`, `exited`, `killed`, `released`,
   * `denied`, `failed`); returns an unsubscribe function. A listener that throws or rejects does not
   * affect the host or the other listeners.
   */
  onEvent(listener: TerminalAuditListener): () => void {
    if (typeof listener !== 'function') throw invalidArg('listener', 'must be a function');
    this.eventListeners.add(listener);
    return () => {
      this.eventListeners.delete(listener);
    };
  }

  /** Releases every terminal of `sessionId` (e.g. on `session/close` or when the agent disconnects). */
  async releaseSession(sessionId: string): Promise<void> {
    requireString(sessionId, 'sessionId');
    await this.entries.releaseWhere((entry) => entry.sessionId === sessionId, 'session');
  }

  /**
   * Releases every live terminal (each emits `released` with reason `all`) and stays open: for a client
   * that restarts its agent on the same host. A create still in flight (awaiting approval) is not affected.
   */
  async releaseAll(): Promise<void> {
    await this.entries.releaseWhere(() => true, 'all');
  }

  /** Releases every terminal and refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.entries.releaseWhere(() => true, 'close');
  }

  /** Same as `close()`, for `await using host = new TerminalHost()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private emit(event: TerminalAuditEvent): void {
    if (this.eventListeners.size === 0) return;
    Object.freeze(event);
    for (const listener of [...this.eventListeners]) {
      try {
        const result = listener(event) as unknown;
        if (typeof result === 'object' && result !== null && typeof (result as PromiseLike<void>).then === 'function') {
          (result as PromiseLike<void>).then(undefined, () => undefined);
        }
      } catch {
        // An audit sink that fails must not fail the agent's request or the host.
      }
    }
  }
}
