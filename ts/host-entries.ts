/**
 * The terminals of one `TerminalHost`: their ids, the live entries and what the host saw of each (exit,
 * kills), the kill / wait / release lifecycle with the order its answers keep, and the snapshots kept
 * after release.
 */

import { AsyncResource } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { AcpTerminalError, invalidArg } from './errors';
import type { KillReason, ReleaseReason, TerminalAuditEvent } from './events';
import type { HostTerminalRequest } from './host-types';
import { readOutputBytes, type ExitStatus, type OutputSnapshot, type TerminalLike } from './types';
import { requireString } from './validate';

/** What the host recorded of a terminal's command when it created it. */
export interface EntryCommand {
  /** The request's `command`. */
  readonly command: string;
  /** The request's `args`. */
  readonly args: readonly string[];
  /** The directory the command got. */
  readonly cwd: string | undefined;
  /** `command` and `args` as one line (see `AuditCommand.commandLine`). */
  readonly commandLine: string;
}

/** A live terminal as `TerminalHost.listTerminals()` reports it (for leak checks and UIs). */
export interface LiveTerminalInfo {
  /** Host-issued terminal id. */
  terminalId: string;
  /** Owning session. */
  sessionId: string;
  /** The request's `command`. */
  command: string;
  /** The request's `args`. */
  args: string[];
  /** The command as one line. */
  commandLine: string;
  /** The directory the command got. */
  cwd: string | undefined;
  /** Process id of the command. */
  pid: number;
  /** False once the host saw the command exit (the terminal is still not released). */
  running: boolean;
  /** Milliseconds since the host created the terminal. */
  ageMs: number;
}

/**
 * An async resource per live terminal, so that jest's `--detectOpenHandles` names a terminal a test never
 * released: its type reads `acp-terminal <id>: <command line> (session <id>) was never released`, and
 * `hasRef()` (how jest asks whether a handle is still alive) is true until the release. jest lists only
 * resources it traces to the test's own code; a terminal is created deep in promise continuations, so
 * its resource is triggered by the host's (`HostAnchor`), made where the test made the host.
 */
export class LiveTerminalHandle extends AsyncResource {
  private live = true;
  constructor(terminalId: string, sessionId: string, line: string, triggerAsyncId: number | undefined) {
    const shown = line.length > 120 ? `${line.slice(0, 117)}...` : line;
    super(`acp-terminal ${terminalId}: ${shown} (session ${sessionId}) was never released`, {
      requireManualDestroy: true,
      ...(triggerAsyncId !== undefined ? { triggerAsyncId } : {}),
    });
  }
  hasRef(): boolean {
    return this.live;
  }
  close(): void {
    if (!this.live) return;
    this.live = false;
    this.emitDestroy();
  }
}

/**
 * The async resource of a host, made in its constructor (in the caller's stack: a test's body or hook),
 * that its terminals' `LiveTerminalHandle`s name as their trigger. Never reported itself (`hasRef()` false).
 */
export class HostAnchor extends AsyncResource {
  constructor() {
    super('acp-terminal TerminalHost');
  }
  hasRef(): boolean {
    return false;
  }
}

/** One live terminal of a host. */
export interface LiveEntry {
  readonly sessionId: string;
  readonly terminal: TerminalLike;
  /** The command, as created. */
  readonly command: EntryCommand;
  /** `performance.now()` at creation. */
  readonly startedAt: number;
  /** Bytes counted by the host for a backend that does not count (`outputBytes`), else undefined. */
  counted: { bytes: number; stop: () => void } | undefined;
  /** Named in jest's open-handle report while the terminal is live. */
  readonly handle: LiveTerminalHandle;
  /** Settles once the host saw the exit and emitted `exited` (or the wait failed). */
  exited: Promise<void>;
  hasExited: boolean;
  /**
   * Set by the first `terminal/kill` of this terminal, replaced by each later one; settles once that kill
   * was answered by the host (resolved or rejected). Kept after it settled (a wait whose exit the kill
   * caused may resume after it); waits answer after it: see `TerminalEntries.wait`.
   */
  killAnswered: Promise<void> | undefined;
}

/** The terminals a host issued: live ones by id, releases in flight, the final snapshots kept. */
export class TerminalEntries {
  private readonly live = new Map<string, LiveEntry>();
  private readonly releasing = new Map<string, Promise<void>>();
  private readonly snapshots = new Map<string, { snapshot: OutputSnapshot; expiry: ReturnType<typeof setTimeout> | undefined }>();
  private readonly idPrefix = `term-${randomBytes(4).toString('hex')}-`;
  private nextId = 1;

  /**
   * @param maxSnapshots how many released terminals keep their final snapshot
   * @param emit the host's audit stream
   * @param snapshotTtlMs how long a final snapshot is kept after the release (undefined: until pushed out)
   */
  constructor(
    private readonly maxSnapshots: number,
    private readonly emit: (event: TerminalAuditEvent) => void,
    private readonly ignoreUnknownRelease = false,
    private readonly snapshotTtlMs: number | undefined = undefined,
  ) {}

  /** The host's async resource (see `LiveTerminalHandle`). */
  private readonly anchor = new HostAnchor();

  /** Number of live (created, not yet released) terminals. */
  get size(): number {
    return this.live.size;
  }

  /** The live entry behind `terminalId`, whatever its session. */
  get(terminalId: string): LiveEntry | undefined {
    return this.live.get(terminalId);
  }

  /** Issues an id for a new live terminal of `sessionId`. */
  add(sessionId: string, terminal: TerminalLike, command: EntryCommand): { terminalId: string; entry: LiveEntry } {
    const terminalId = `${this.idPrefix}${this.nextId++}`;
    const entry: LiveEntry = {
      sessionId,
      terminal,
      command,
      startedAt: performance.now(),
      counted: countIfUncounted(terminal),
      handle: new LiveTerminalHandle(terminalId, sessionId, command.commandLine, this.anchor.asyncId()),
      exited: Promise.resolve(),
      hasExited: false,
      killAnswered: undefined,
    };
    this.live.set(terminalId, entry);
    return { terminalId, entry };
  }

  /** The live terminals, oldest first (`selected` filters). */
  list(selected: (entry: LiveEntry) => boolean = () => true): LiveTerminalInfo[] {
    const now = performance.now();
    const out: LiveTerminalInfo[] = [];
    for (const [terminalId, entry] of this.live) {
      if (!selected(entry)) continue;
      const { command, args, cwd, commandLine } = entry.command;
      out.push({
        terminalId,
        sessionId: entry.sessionId,
        command,
        args: [...args],
        commandLine,
        cwd,
        pid: entry.terminal.pid,
        running: !entry.hasExited,
        ageMs: Math.round(now - entry.startedAt),
      });
    }
    return out;
  }

  /** Ids of `sessionId`'s live terminals whose command the host has not seen exit. */
  runningOf(sessionId: string): string[] {
    return [...this.live].filter(([, e]) => e.sessionId === sessionId && !e.hasExited).map(([id]) => id);
  }

  /** Watches the entry's exit: marks it and emits `exited` (duration counted from `startedAt`). */
  watchExit(terminalId: string, entry: LiveEntry, startedAt: number): void {
    const { terminal, sessionId } = entry;
    entry.exited = terminal.waitForExit().then(
      (status) => {
        entry.hasExited = true;
        this.emit({
          type: 'exited',
          time: Date.now(),
          sessionId,
          terminalId,
          exitStatus: { exitCode: status.exitCode, signal: status.signal },
          durationMs: Math.round(performance.now() - startedAt),
          outputBytes: readOutputBytes(terminal) ?? entry.counted?.bytes ?? 0,
        });
      },
      () => undefined,
    );
  }

  /** The live entry a request names, for its session; else `ERR_TERMINAL_NOT_FOUND` (saying when it was released). */
  lookup(request: HostTerminalRequest): LiveEntry {
    const { sessionId, terminalId } = validateTerminalRequest(request);
    const entry = this.live.get(terminalId);
    if (!entry || entry.sessionId !== sessionId) throw notFound(terminalId, this.issued(terminalId) && !entry);
    return entry;
  }

  /**
   * `terminal/wait_for_exit`: resolves after the host recorded the exit; when a `terminal/kill` of this
   * terminal is in flight, only once the kill was answered and one macrotask more (see
   * `TerminalHost.waitForTerminalExit`).
   */
  async wait(request: HostTerminalRequest): Promise<ExitStatus> {
    const entry = this.lookup(request);
    const { exitCode, signal } = await entry.terminal.waitForExit();
    await entry.exited;
    const killAnswered = entry.killAnswered;
    if (killAnswered) {
      await killAnswered;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return { exitCode, signal };
  }

  /** `terminal/kill` (or the host's kill after a `session/cancel`): emits `killed`, stops the command; its answer settles `killAnswered`. */
  async kill(request: HostTerminalRequest, reason: KillReason = 'request'): Promise<Record<string, never>> {
    const { terminalId } = request;
    const entry = this.lookup(request);
    this.emit({ type: 'killed', time: Date.now(), sessionId: entry.sessionId, terminalId, reason, wasRunning: !entry.hasExited });
    let answered!: () => void;
    const killAnswered = new Promise<void>((resolve) => (answered = resolve));
    entry.killAnswered = killAnswered;
    try {
      await entry.terminal.kill();
      return {};
    } finally {
      // Settled in the same microtask as this method's promise: the caller's continuation (the SDK's
      // response write) is queued before any wait that awaits `killAnswered` can resume.
      answered();
    }
  }

  /**
   * `terminal/release`: idempotent for ids this host issued; waits for a release already in flight. Any
   * other id is `ERR_TERMINAL_NOT_FOUND`, or `{}` (nothing released) under `ignoreUnknownRelease`.
   */
  async release(request: HostTerminalRequest): Promise<Record<string, never>> {
    const { sessionId, terminalId } = validateTerminalRequest(request);
    const pending = this.releasing.get(terminalId);
    if (pending) {
      await pending;
      return {};
    }
    const entry = this.live.get(terminalId);
    if (entry && entry.sessionId === sessionId) {
      await this.releaseEntry(terminalId, entry, 'request');
      return {};
    }
    if ((!entry && this.issued(terminalId)) || this.ignoreUnknownRelease) return {};
    throw notFound(terminalId);
  }

  /** Releases every live entry `predicate` selects, and waits for the releases already in flight. */
  async releaseWhere(predicate: (entry: LiveEntry) => boolean, reason: ReleaseReason): Promise<void> {
    const work: Promise<void>[] = [...this.releasing.values()];
    for (const [terminalId, entry] of this.live) {
      if (predicate(entry)) work.push(this.releaseEntry(terminalId, entry, reason));
    }
    await Promise.all(work);
  }

  /** The last snapshot of a released terminal (the newest `maxSnapshots` are kept), or undefined. */
  finalOutput(terminalId: string): OutputSnapshot | undefined {
    return this.snapshots.get(terminalId)?.snapshot;
  }

  private releaseEntry(terminalId: string, entry: LiveEntry, reason: ReleaseReason): Promise<void> {
    this.live.delete(terminalId);
    entry.handle.close();
    const done = this.finish(terminalId, entry, reason).finally(() => this.releasing.delete(terminalId));
    this.releasing.set(terminalId, done);
    return done;
  }

  private async finish(terminalId: string, entry: LiveEntry, reason: ReleaseReason): Promise<void> {
    const { terminal } = entry;
    const wasRunning = !entry.hasExited;
    try {
      // Stop first so the kept snapshot holds all output and the exit status.
      await terminal.kill();
      await terminal.waitForExit();
      this.keepSnapshot(terminalId, normalizeSnapshot(await terminal.currentOutput()));
    } catch {
      // Snapshot is best effort; the release below must still happen.
    } finally {
      await terminal.release().catch(() => undefined);
      entry.counted?.stop();
    }
    await entry.exited; // `exited` comes before `released`
    this.emit({ type: 'released', time: Date.now(), sessionId: entry.sessionId, terminalId, reason, wasRunning });
  }

  private keepSnapshot(terminalId: string, snapshot: OutputSnapshot): void {
    if (this.maxSnapshots === 0 || this.snapshotTtlMs === 0) return;
    let expiry: ReturnType<typeof setTimeout> | undefined;
    if (this.snapshotTtlMs !== undefined) {
      expiry = setTimeout(() => this.snapshots.delete(terminalId), this.snapshotTtlMs);
      expiry.unref(); // a kept snapshot never keeps the process alive
    }
    this.snapshots.set(terminalId, { snapshot, expiry });
    while (this.snapshots.size > this.maxSnapshots) {
      const [oldest, kept] = this.snapshots.entries().next().value as [string, { expiry: ReturnType<typeof setTimeout> | undefined }];
      if (kept.expiry) clearTimeout(kept.expiry);
      this.snapshots.delete(oldest);
    }
  }

  private issued(terminalId: string): boolean {
    if (!terminalId.startsWith(this.idPrefix)) return false;
    const n = Number(terminalId.slice(this.idPrefix.length));
    return Number.isSafeInteger(n) && n >= 1 && n < this.nextId && String(n) === terminalId.slice(this.idPrefix.length);
  }
}

/** For a backend without `outputBytes`: the host counts the bytes it sees from now on (retained ones included). */
function countIfUncounted(terminal: TerminalLike): { bytes: number; stop: () => void } | undefined {
  if (readOutputBytes(terminal) !== undefined) return undefined;
  const counted = { bytes: 0, stop: () => undefined as void };
  try {
    counted.stop = terminal.onOutput((chunk) => (counted.bytes += chunk.length), { replay: true });
  } catch {
    // A backend without a working onOutput: the count stays 0.
  }
  return counted;
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

/** Copies a backend snapshot into the protocol shape (no `exitStatus` key while running). */
export function normalizeSnapshot(snapshot: OutputSnapshot): OutputSnapshot {
  const { output, truncated, exitStatus } = snapshot;
  return exitStatus
    ? { output, truncated, exitStatus: { exitCode: exitStatus.exitCode, signal: exitStatus.signal } }
    : { output, truncated };
}
