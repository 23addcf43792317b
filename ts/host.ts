/**
 * TerminalHost: the client side of ACP v1 `terminal/*`, with method names matching the SDK's legacy
 * `Client` interface so a client can delegate to it one to one. It also enforces the client's policy
 * (allowed roots, command rules, approval, environment filter, limits) and reports an audit stream.
 *
 * This file is the class; its parts: `host-types.ts` (the public types), `host-options.ts` (options
 * read once, defaults), `host-create.ts` (the checks of a create, the spawn, the audit of a refusal),
 * `host-entries.ts` (ids, live terminals, kill / wait / release, kept snapshots).
 */

import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AcpTerminalError, errorCode, errorMessage, invalidArg } from './errors';
import type {
  TerminalAuditEvent,
  TerminalAuditListener,
  TerminalCallEvent,
  TerminalCallListener,
  TerminalCallMethod,
  TerminalCallPhase,
} from './events';
import {
  checkRequest,
  commandLine,
  linkedSignal,
  refusalEvent,
  selfContained,
  spawnChecked,
  validateCreate,
  type AppliedCreateRequest,
  type Spawned,
} from './host-create';
import { normalizeSnapshot, TerminalEntries, type LiveTerminalInfo } from './host-entries';
import { readHostOptions, type HostSettings } from './host-options';
import type {
  AuthorizedRequest,
  HostCreateTerminalRequest,
  HostCreateTerminalResponse,
  HostTerminalRequest,
  TerminalCreatedEvent,
  TerminalHostOptions,
} from './host-types';
import type { ExitStatus, OutputSnapshot, TerminalLike } from './types';
import type { NetworkConnectionEvent } from './network-proxy';
import { withTruncationNotice } from './host-options';
import {
  abortable,
  optionalAbsolutePath,
  optionalAssertActive,
  optionalSignal,
  rejectNul,
  requireString,
  type CallOptions,
} from './validate';

export { DEFAULT_KILL_AFTER_CANCEL_MS, DEFAULT_MAX_RELEASED_SNAPSHOTS, DEFAULT_MAX_TERMINALS, DEFAULT_OUTPUT_BYTE_LIMIT } from './host-options';
export type {
  ApprovalOptions,
  ApprovalRequest,
  ArglessMode,
  AuthorizedRequest,
  HostCreateTerminalRequest,
  HostCreateTerminalResponse,
  HostTerminalRequest,
  RegisterTerminalHandlersOptions,
  TerminalBackend,
  TerminalCreatedEvent,
  TerminalHostOptions,
} from './host-types';
export { normalizeSnapshot } from './host-entries';
export type { LiveTerminalInfo } from './host-entries';
export type { CallOptions } from './validate';

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
  private readonly callListeners = new Set<TerminalCallListener>();
  private readonly sessionCwds = new Map<string, string>();
  /** Sessions opened with a relative `cwd`: their requests without `cwd` are refused (see `refuseSessionCwd`). */
  private readonly refusedSessionCwds = new Map<string, string>();
  private readonly cwdForSession: TerminalHostOptions['cwdForSession'];
  private nextCallId = 1;
  private pendingCreates = 0;
  /**
   * One per create whose spawn was started: settles once what it started is in `entries` or was
   * released (or nothing was started). `close()` waits for them, so it resolves with nothing running.
   */
  private readonly landing = new Set<Promise<void>>();
  /** Kills scheduled by `cancelSession`, cleared by `close()`. */
  private readonly cancelTimers = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;
  /** Aborted by `close()`: pending approvals see it through their signal. */
  private readonly closing = new AbortController();

  /** Creates a host; invalid options throw `ERR_INVALID_ARG` naming the option. */
  constructor(options: TerminalHostOptions = {}) {
    this.settings = readHostOptions(options);
    this.entries = new TerminalEntries(
      this.settings.maxSnapshots,
      (event) => this.emit(event),
      this.settings.ignoreUnknownRelease,
      this.settings.snapshotTtlMs,
    );
    if (options.onEvent) this.eventListeners.add(options.onEvent);
    if (options.onCall) this.callListeners.add(options.onCall);
    this.cwdForSession = options.cwdForSession;
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
   * Aborting `options.signal` before the answer rejects with `signal.reason` at once; a command the
   * create started meanwhile is released, so a cancelled create leaves nothing running.
   */
  createTerminal(request: HostCreateTerminalRequest, options?: CallOptions): Promise<HostCreateTerminalResponse> {
    return this.track('terminal/create', request, options, async (signal, assertActive) => {
      const seen: { cwd: string | undefined } = { cwd: undefined };
      try {
        return await this.create(request, signal, assertActive, seen);
      } catch (error) {
        const told = selfContained(error, request);
        if (this.eventListeners.size > 0) this.emit(refusalEvent(request, seen.cwd, told));
        throw told;
      }
    });
  }

  /** A create request checked (shape, the session's directory not refused); synchronous, so no await precedes the spawn. */
  private checkedRequest(request: HostCreateTerminalRequest): AppliedCreateRequest {
    const req = validateCreate(request, this.settings);
    const refused = this.refusedSessionCwds.get(req.sessionId);
    if (request.cwd == null && refused !== undefined && !this.cwdForSession) {
      throw new AcpTerminalError(
        'ERR_INVALID_CWD',
        `cwd: the session's directory ${JSON.stringify(refused)} (sent in its session/new, load or resume) is not an absolute path, ` +
          'so the command would run in an unrelated directory; the client must open the session with an absolute cwd, or the request must name one',
        { field: 'cwd', sessionCwd: refused },
      );
    }
    return req;
  }

  /**
   * Runs every check of `createTerminal` but the approval (shape, allowed roots, environment, command
   * policy) and starts nothing: resolves with what `approve` would be asked about and what would run
   * (`runCommand`: under an allow list, rebuilt from what was checked), for a front end that puts the
   * question to the user itself before it creates the terminal, or that runs the command in another
   * runner (`createMcpServer`'s persistent sessions, which must run `runCommand`, not the request's
   * text). A refusal rejects with the error `createTerminal` would give and emits `denied`; nothing else
   * is emitted.
   */
  async authorize(request: HostCreateTerminalRequest): Promise<AuthorizedRequest> {
    const seen: { cwd: string | undefined } = { cwd: undefined };
    try {
      if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host is closed');
      const req = this.checkedRequest(request);
      if (request.cwd == null) {
        const known = this.sessionCwds.get(req.sessionId);
        const sessionCwd = this.cwdForSession ? await this.askCwdForSession(req.sessionId, known) : known;
        if (sessionCwd !== undefined) req.cwd = sessionCwd;
      }
      seen.cwd = req.cwd ?? undefined;
      const checked = await checkRequest(this.settings, request, req, seen);
      const shellLine = (checked.runArgs ?? []).length === 0 && checked.options.shell !== false;
      return {
        ...checked.approval,
        runCommand: shellLine ? checked.runCommand : (checked.program ?? checked.runCommand),
        runArgs: shellLine ? undefined : [...(checked.runArgs ?? [])],
        shellLine,
      };
    } catch (error) {
      if (this.eventListeners.size > 0) this.emit(refusalEvent(request, seen.cwd, error));
      throw error;
    }
  }

  private async create(
    request: HostCreateTerminalRequest,
    signal: AbortSignal | undefined,
    assertActive: (() => void) | undefined,
    seen: { cwd: string | undefined },
  ): Promise<HostCreateTerminalResponse> {
    if (signal?.aborted) throw signal.reason;
    const req = this.checkedRequest(request);
    if (request.cwd == null) {
      // No await without a hook: nothing else runs between the checks below and the spawn's start.
      const known = this.sessionCwds.get(req.sessionId);
      const sessionCwd = this.cwdForSession ? await this.askCwdForSession(req.sessionId, known) : known;
      if (sessionCwd !== undefined) req.cwd = sessionCwd;
    }
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
    // Counted until the spawn settles, even when the caller stopped waiting for it.
    // The approver's signal: aborted when this call is cancelled or the host closes.
    const approval = linkedSignal([signal, this.closing.signal]);
    // Connections through the sandbox's network proxy, in the audit stream once the terminal has its id.
    const network: { terminalId?: string; early: NetworkConnectionEvent[] } = { early: [] };
    const onNetwork = (e: NetworkConnectionEvent): void => {
      if (network.terminalId === undefined) network.early.push(e);
      else this.emit({ type: 'network', time: Date.now(), sessionId: req.sessionId, terminalId: network.terminalId, ...e });
    };
    const spawning = spawnChecked(this.settings, request, req, seen, () => this.closed, approval.signal, assertActive, onNetwork).finally(() => {
      this.pendingCreates--;
      approval.unlink();
    });
    let landed!: () => void;
    const landing = new Promise<void>((resolve) => {
      landed = resolve;
    });
    this.landing.add(landing);
    void landing.then(() => this.landing.delete(landing));
    let spawned: Spawned;
    try {
      spawned = await abortable(spawning, signal);
    } catch (error) {
      // Cancelled while checking, awaiting approval or spawning: whatever still starts is released.
      if (signal?.aborted) {
        spawning.then(({ terminal }) => terminal.release().catch(() => undefined), () => undefined).then(landed);
      } else {
        landed();
      }
      throw error;
    }
    try {
      return await this.land(req, spawned, signal, assertActive, network, onNetwork);
    } finally {
      landed();
    }
  }

  /** A spawned create's terminal kept in `entries`, or released (and the create refused) when the host closed or the call was cancelled meanwhile. */
  private async land(
    req: AppliedCreateRequest,
    spawned: Spawned,
    signal: AbortSignal | undefined,
    assertActive: (() => void) | undefined,
    network: { terminalId?: string; early: NetworkConnectionEvent[] },
    onNetwork: (e: NetworkConnectionEvent) => void,
  ): Promise<HostCreateTerminalResponse> {
    const { terminal, program } = spawned;
    if (this.closed) {
      await terminal.release().catch(() => undefined);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the terminal was created');
    }
    if (signal?.aborted) {
      await terminal.release().catch(() => undefined);
      throw signal.reason;
    }
    try {
      assertActive?.();
    } catch (error) {
      await terminal.release().catch(() => undefined);
      throw error;
    }
    const startedAt = performance.now();
    const args = [...(req.args ?? [])];
    const line = commandLine(req.command, args);
    const cwd = req.cwd ?? undefined;
    const { terminalId, entry } = this.entries.add(req.sessionId, terminal, { command: req.command, args, cwd, commandLine: line });
    this.emit({
      type: 'created',
      time: Date.now(),
      sessionId: req.sessionId,
      terminalId,
      command: req.command,
      args,
      cwd,
      commandLine: line,
      pid: terminal.pid,
      ...(program !== undefined ? { program } : {}),
      outputByteLimit: req.outputByteLimit,
    });
    network.terminalId = terminalId;
    for (const e of network.early.splice(0)) onNetwork(e);
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

  /**
   * `terminal/output`: the retained output, with `exitStatus` once the command exited. A signal already
   * aborted rejects with its reason (the call never waits for the command, so there is nothing to stop).
   */
  terminalOutput(request: HostTerminalRequest, options?: CallOptions): Promise<OutputSnapshot> {
    // It never waits for the command, so it is not raced with the signal (`track` refuses an aborted one).
    return this.track('terminal/output', request, options, async () => {
      const snapshot = normalizeSnapshot(await this.entries.lookup(request).terminal.currentOutput());
      return this.settings.truncationNotice ? withTruncationNotice(snapshot, this.settings.truncationNotice) : snapshot;
    });
  }

  /**
   * `terminal/wait_for_exit`: resolves when the command exited, after the host recorded the exit (and
   * emitted `exited`), so a `release`/`close` that follows reports `wasRunning: false`. When a
   * `terminal/kill` of this terminal is in flight (the exit is the kill's doing, or raced it), the answer
   * waits until the kill was answered and one macrotask more, so a connection that writes responses in
   * the order its handlers settle (the SDK does: its handler chain is microtasks) sends the kill's
   * response first. Agents rely on that order: one of them releases the terminal as soon as the wait
   * resolves while another part still reads the output after its kill.
   *
   * Aborting `options.signal` (the SDK aborts `ctx.signal` on `$/cancel_request`) rejects with
   * `signal.reason` at once; the command keeps running and a later wait works.
   */
  waitForTerminalExit(request: HostTerminalRequest, options?: CallOptions): Promise<ExitStatus> {
    // Only microtasks are added to the entries' promise, so the ordering above holds (its last step is a macrotask).
    return this.track('terminal/wait_for_exit', request, options, (signal) => abortable(this.entries.wait(request), signal));
  }

  /**
   * `terminal/kill`: stops the command; the id stays valid. Emits `killed`. Its response goes out before
   * the `terminal/wait_for_exit` responses the kill causes (see `waitForTerminalExit`). A signal already
   * aborted rejects with its reason and kills nothing; a kill once started completes.
   */
  killTerminal(request: HostTerminalRequest, options?: CallOptions): Promise<Record<string, never>> {
    // A kill is not undone: an aborted signal only refuses to start one (in `track`). Its answer precedes the
    // waits it ends: see `TerminalEntries.kill`.
    return this.track('terminal/kill', request, options, () => this.entries.kill(request));
  }

  /**
   * `terminal/release`: kills if running, keeps a final snapshot, frees the terminal. Idempotent for ids
   * this host issued. Emits `released` (after `exited`). A signal already aborted rejects with its reason
   * and releases nothing; a release once started completes.
   */
  releaseTerminal(request: HostTerminalRequest, options?: CallOptions): Promise<Record<string, never>> {
    return this.track('terminal/release', request, options, () => this.entries.release(request));
  }

  /**
   * Records `cwd` as the working directory of `sessionId`'s requests that have no `cwd` (agents often omit
   * it and run in "the session's directory"); `undefined` forgets it. `registerTerminalHandlers` and
   * `createTestClient` call this with the `cwd` of each `session/new`, `session/load` and `session/resume`
   * the client sends; call it yourself when the host does not see those requests (or use `cwdForSession`).
   * A request's own `cwd` still wins, and `allowedRoots` apply to the directory used. `releaseSession`
   * and `close` forget the session's directory. Throws `ERR_INVALID_ARG` naming `sessionId` or `cwd`.
   */
  setSessionCwd(sessionId: string, cwd: string | undefined): void {
    requireString(sessionId, 'sessionId');
    const dir = optionalAbsolutePath(cwd, 'cwd');
    if (dir !== undefined) rejectNul(dir, 'cwd');
    this.refusedSessionCwds.delete(sessionId);
    if (dir === undefined) this.sessionCwds.delete(sessionId);
    else this.sessionCwds.set(sessionId, dir);
  }

  /**
   * The client's `session/cancel` of `sessionId` (`registerTerminalHandlers` and `createTestClient` call it
   * when the client sends one; call it yourself otherwise). Agents are meant to stop their commands on a
   * cancel; some neither kill nor release them. `killAfterCancelMs` (default 2000) after this call, the
   * session's terminals that were running at the cancel and still run are killed (an audit `killed`
   * event with `reason: 'cancel'`); they stay readable until released. Resolves once that is done (at once
   * when `killAfterCancelMs` is `false`). Throws `ERR_INVALID_ARG` naming `sessionId`.
   */
  cancelSession(sessionId: string): Promise<void> {
    requireString(sessionId, 'sessionId');
    const grace = this.settings.killAfterCancelMs;
    if (grace === false || this.closed) return Promise.resolve();
    const running = this.entries.runningOf(sessionId);
    if (running.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.cancelTimers.delete(timer);
        const kills = running.map((terminalId) => {
          const entry = this.entries.get(terminalId);
          if (!entry || entry.hasExited) return undefined;
          return this.entries.kill({ sessionId, terminalId }, 'cancel').catch(() => undefined);
        });
        void Promise.all(kills).then(() => resolve());
      }, grace);
      timer.unref(); // the client's exit kills everything anyway
      this.cancelTimers.add(timer);
    });
  }

  /**
   * The live (created, not yet released) terminals, oldest first, with their command and age: what a
   * test suite's leak check or a UI lists. `sessionId` limits the list to one session.
   */
  listTerminals(sessionId?: string): LiveTerminalInfo[] {
    if (sessionId !== undefined) requireString(sessionId, 'sessionId');
    return this.entries.list(sessionId === undefined ? undefined : (entry) => entry.sessionId === sessionId);
  }

  /**
   * Records that the client opened `sessionId` with a `cwd` that is not an absolute path (ACP requires one):
   * that session's requests without `cwd` are then refused with `ERR_INVALID_CWD` saying so, instead of
   * running in the host's directory. Called by the connection tracking of `registerTerminalHandlers`.
   */
  refuseSessionCwd(sessionId: string, cwd: string): void {
    requireString(sessionId, 'sessionId');
    this.sessionCwds.delete(sessionId);
    this.refusedSessionCwds.set(sessionId, String(cwd));
  }

  /** The working directory recorded for `sessionId` by `setSessionCwd`, or undefined. */
  sessionCwdOf(sessionId: string): string | undefined {
    return this.sessionCwds.get(sessionId);
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

  /**
   * Calls `listener` for every call of the five methods from now on: `running` when it starts, then
   * `completed` or `failed` (see `TerminalCallEvent`); returns an unsubscribe function. A listener that
   * throws or rejects does not affect the call, the host or the other listeners.
   */
  onCall(listener: TerminalCallListener): () => void {
    if (typeof listener !== 'function') throw invalidArg('listener', 'must be a function');
    this.callListeners.add(listener);
    return () => {
      this.callListeners.delete(listener);
    };
  }

  /** Releases every terminal of `sessionId` (e.g. on `session/close` or when the agent disconnects). */
  async releaseSession(sessionId: string): Promise<void> {
    requireString(sessionId, 'sessionId');
    this.sessionCwds.delete(sessionId);
    this.refusedSessionCwds.delete(sessionId);
    await this.entries.releaseWhere((entry) => entry.sessionId === sessionId, 'session');
  }

  /**
   * Releases every live terminal (each emits `released` with reason `all`) and stays open: for a client
   * that restarts its agent on the same host. A create still in flight (awaiting approval) is not affected.
   */
  async releaseAll(): Promise<void> {
    await this.entries.releaseWhere(() => true, 'all');
  }

  /**
   * Releases every terminal and refuses new ones; resolves once every process the host started is
   * gone, those of creates still in flight included (they reject with `ERR_HOST_CLOSED`).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort(new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed'));
    this.sessionCwds.clear();
    this.refusedSessionCwds.clear();
    for (const timer of this.cancelTimers) clearTimeout(timer);
    this.cancelTimers.clear();
    // A create in flight adds no terminal now (it sees `closed` and releases its own): waited for, so
    // nothing the host started runs once this resolves.
    await Promise.all([this.entries.releaseWhere(() => true, 'close'), ...this.landing]);
  }

  /** Same as `close()`, for `await using host = new TerminalHost()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The `cwdForSession` hook's directory for a request of `sessionId` without `cwd`, checked. */
  private async askCwdForSession(sessionId: string, known: string | undefined): Promise<string | undefined> {
    const chosen: unknown = await this.cwdForSession!(sessionId, known);
    if (chosen === undefined || chosen === null) return undefined;
    if (typeof chosen !== 'string' || !path.isAbsolute(chosen) || chosen.includes('\0')) {
      throw invalidArg('cwdForSession', `must return an absolute path or undefined, got ${JSON.stringify(chosen)} for session ${JSON.stringify(sessionId)}`);
    }
    return chosen;
  }

  /**
   * Runs one call of a host method: reads `options.signal` (refusing an aborted one before anything
   * happens) and reports the call's phases to the `onCall` listeners.
   */
  private async track<T>(
    method: TerminalCallMethod,
    request: unknown,
    options: CallOptions | undefined,
    work: (signal: AbortSignal | undefined, assertActive: (() => void) | undefined) => Promise<T>,
  ): Promise<T> {
    if (this.callListeners.size === 0) {
      const signal = optionalSignal(options);
      if (signal?.aborted) throw signal.reason;
      const assertActive = optionalAssertActive(options);
      assertActive?.();
      return work(signal, assertActive);
    }
    const r = (typeof request === 'object' && request !== null ? request : {}) as { sessionId?: unknown; terminalId?: unknown; command?: unknown; args?: unknown };
    const callId = this.nextCallId++;
    const sessionId = typeof r.sessionId === 'string' ? r.sessionId : '';
    const terminalId = method !== 'terminal/create' && typeof r.terminalId === 'string' ? r.terminalId : undefined;
    const line =
      method === 'terminal/create'
        ? commandLine(typeof r.command === 'string' ? r.command : '', Array.isArray(r.args) ? r.args.filter((a): a is string => typeof a === 'string') : [])
        : undefined;
    const started = performance.now();
    // Object literals, not spreads: a spread costs microseconds per event here.
    const event = (phase: TerminalCallPhase): TerminalCallEvent => {
      const e: TerminalCallEvent =
        phase === 'running'
          ? { callId, method, phase, time: Date.now(), sessionId, terminalId }
          : { callId, method, phase, time: Date.now(), sessionId, terminalId, durationMs: Math.round(performance.now() - started) };
      if (line !== undefined) e.commandLine = line;
      return e;
    };
    notify(this.callListeners, event('running'));
    let signal: AbortSignal | undefined;
    try {
      signal = optionalSignal(options);
      if (signal?.aborted) throw signal.reason;
      const assertActive = optionalAssertActive(options);
      assertActive?.();
      const result = await work(signal, assertActive);
      const completed = event('completed');
      describeOutcome(completed, result);
      notify(this.callListeners, completed);
      return result;
    } catch (error) {
      const failed = event('failed');
      failed.error = { code: errorCode(error), message: errorMessage(error) };
      failed.cancelled = signal?.aborted === true && error === signal.reason;
      notify(this.callListeners, failed);
      throw error;
    }
  }

  private emit(event: TerminalAuditEvent): void {
    notify(this.eventListeners, event);
  }
}

/** Adds what a `completed` call event says of the result: the new id, the exit status, truncation. */
function describeOutcome(event: TerminalCallEvent, result: unknown): void {
  if (typeof result !== 'object' || result === null) return;
  const r = result as { terminalId?: unknown; exitCode?: unknown; signal?: unknown; exitStatus?: ExitStatus | null; truncated?: unknown };
  if (typeof r.terminalId === 'string') event.terminalId = r.terminalId;
  if ('exitCode' in r) event.exitStatus = { exitCode: (r.exitCode ?? null) as number | null, signal: (r.signal ?? null) as string | null };
  if (r.exitStatus) event.exitStatus = { exitCode: r.exitStatus.exitCode ?? null, signal: r.exitStatus.signal ?? null };
  if (typeof r.truncated === 'boolean') event.truncated = r.truncated;
}

/** Calls each listener with `event` (frozen); a listener's throw or rejection is ignored. */
function notify<E extends object>(listeners: ReadonlySet<(event: E) => void | Promise<void>>, event: E): void {
  if (listeners.size === 0) return;
  Object.freeze(event);
  for (const listener of [...listeners]) {
    try {
      const result = listener(event) as unknown;
      if (typeof result === 'object' && result !== null && typeof (result as PromiseLike<void>).then === 'function') {
        (result as PromiseLike<void>).then(undefined, () => undefined);
      }
    } catch {
      // A UI or audit sink that fails must not fail the agent's request or the host.
    }
  }
}
