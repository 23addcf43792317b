/**
 * A terminal at the far end of a {@link Connection}: the native `TerminalHandle`'s shape (what
 * `TerminalLike` and the pty calls of ShellSessions use), each call one request to the server.
 *
 * Invariants:
 * - The exit status comes from the server's `exit` event, sent once the command exited and its
 *   output was collected (as the native `waitForExit`). It is held (`waitForExit` stays pending)
 *   until every subscription asked for before the event arrived was answered: the server sends a
 *   `subscribe` answer after the output it replayed or held for it, so a listener attached in the
 *   tick that received the handle, or a `replay` listener attached before the exit was heard, has
 *   its bytes before `waitForExit` resolves (the server may have queued the exit before it read the
 *   `subscribe`). Nothing else delays it.
 * - On a lost connection every pending and later call rejects with `ERR_BACKEND_LOST` (waits too: the
 *   exit status cannot be known); `release()` then resolves (the server killed everything).
 */

import { AcpTerminalError } from '../errors';
import type { ShellInspection } from '../session-types';
import type { ExitStatus, OutputSnapshot, TerminalLike } from '../types';
import { RemoteError, type Connection } from './connection';

/** What `onOutput` listeners get with each chunk (the native `OutputChunkInfo`). */
export interface RemoteChunkInfo {
  /** Bytes dropped before this chunk because the listener (or the link) fell behind. */
  dropped: number;
}

/** A listener of raw output. */
export type RemoteOutputListener = (chunk: Buffer, info: RemoteChunkInfo) => void;

/** What the server answered to `create`. */
export interface CreatedInfo {
  term: number;
  id: string;
  sessionId: string;
  pid: number;
  cwd: string;
  isPty: boolean;
}

/** The book-keeping a terminal shares with its backend. */
export interface TerminalSubs {
  /** Routes a subscription's output and end to a listener. */
  route(sub: number, listener: RemoteOutputListener, terminal: RemoteTerminal): void;
  unroute(sub: number): void;
  forget(terminal: RemoteTerminal): void;
}

function toStatus(s: Record<string, unknown>): ExitStatus {
  return { exitCode: (s.exitCode as number | null) ?? null, signal: (s.signal as string | null) ?? null };
}

/** A command run by an `acp-terminal-server`. */
export class RemoteTerminal implements TerminalLike {
  readonly id: string;
  readonly sessionId: string;
  /** The pid at the far end (its own PID namespace, when it runs in a container). */
  readonly pid: number;
  readonly cwd: string;
  readonly isPty: boolean;
  /** The server's number for this terminal. */
  readonly term: number;
  private exit: ExitStatus | undefined;
  private readonly exitWaiters: { resolve(s: ExitStatus): void; reject(e: Error): void }[] = [];
  /** Subscriptions asked for and not answered yet. */
  private readonly opening = new Set<number>();
  /** The exit event heard while subscriptions were opening: it waits for those (`waiting`) to be answered. */
  private heldExit: { status: ExitStatus; waiting: Set<number> } | undefined;
  private released = false;
  private lostError: Error | undefined;
  private lastBytes = 0;
  private lastTimedOut = false;

  constructor(
    private readonly conn: Connection,
    info: CreatedInfo,
    private readonly subs: TerminalSubs,
  ) {
    this.term = info.term;
    this.id = info.id;
    this.sessionId = info.sessionId;
    this.pid = info.pid;
    this.cwd = info.cwd;
    this.isPty = info.isPty;
  }

  /** Total bytes written, as of the last `currentOutput()` (the far end counts; reading it is a request). */
  get outputBytes(): number {
    return this.lastBytes;
  }

  /** Whether `timeoutMs` expired, as of the last `currentOutput()` or the exit. */
  get timedOut(): boolean {
    return this.lastTimedOut;
  }

  /**
   * Called by the backend on the `exit` event (for an exit heard before the create was answered: once
   * the creating tick is over). Reported at once, or when the subscriptions opening now are answered.
   */
  exited(status: Record<string, unknown>): void {
    if (this.exit || this.heldExit) return;
    if (this.opening.size === 0) return this.report(toStatus(status));
    this.heldExit = { status: toStatus(status), waiting: new Set(this.opening) };
  }

  /** A subscription was answered (or refused, or the connection lost): a held exit may go out. */
  private opened(sub: number): void {
    this.opening.delete(sub);
    const held = this.heldExit;
    if (!held) return;
    held.waiting.delete(sub);
    if (held.waiting.size === 0) {
      this.heldExit = undefined;
      this.report(held.status);
    }
  }

  private report(status: ExitStatus): void {
    this.exit = status;
    for (const w of this.exitWaiters.splice(0)) w.resolve(status);
  }

  /** Called by the backend when the connection is lost. */
  lost(error: Error): void {
    this.lostError ??= error;
    for (const w of this.exitWaiters.splice(0)) w.reject(error);
  }

  private check(): Promise<never> | undefined {
    if (this.released) {
      return Promise.reject(new RemoteError('ERR_TERMINAL_RELEASED', `terminal ${this.id} was released`));
    }
    if (this.lostError) return Promise.reject(this.lostError);
    return undefined;
  }

  async currentOutput(): Promise<OutputSnapshot> {
    const bad = this.check();
    if (bad) return bad;
    const r = await this.conn.call('output', { term: this.term });
    this.lastBytes = r.outputBytes as number;
    this.lastTimedOut = r.timedOut as boolean;
    const snap: OutputSnapshot = { output: r.output as string, truncated: r.truncated as boolean };
    if (r.exitStatus) snap.exitStatus = toStatus(r.exitStatus as Record<string, unknown>);
    return snap;
  }

  waitForExit(): Promise<ExitStatus> {
    const bad = this.check();
    if (bad) return bad;
    if (this.exit) return Promise.resolve(this.exit);
    return new Promise((resolve, reject) => this.exitWaiters.push({ resolve, reject }));
  }

  async kill(): Promise<Record<string, never>> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('kill', { term: this.term });
    return {};
  }

  async release(): Promise<Record<string, never>> {
    if (this.released || this.lostError) {
      this.released = true;
      this.subs.forget(this);
      return {};
    }
    this.released = true;
    try {
      await this.conn.call('release', { term: this.term });
    } finally {
      this.subs.forget(this);
    }
    return {};
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /**
   * Subscribes to raw output from now on (`replay`: the retained output first, no gap, no overlap).
   * A listener attached in the tick that received the handle gets the output from its first byte.
   */
  onOutput(listener: RemoteOutputListener, options?: { replay?: boolean | null } | null): () => void {
    if (this.released) throw new RemoteError('ERR_TERMINAL_RELEASED', `terminal ${this.id} was released`);
    const sub = this.conn.newSub();
    this.subs.route(sub, listener, this);
    this.opening.add(sub);
    this.conn.call('subscribe', { term: this.term, sub, replay: options?.replay === true }).then(
      () => this.opened(sub),
      () => {
        this.subs.unroute(sub);
        this.opened(sub);
      },
    );
    return () => {
      this.subs.unroute(sub);
      this.conn.call('unsubscribe', { sub }).catch(() => {});
    };
  }

  async write(data: string | Uint8Array): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
      throw new AcpTerminalError('ERR_INVALID_ARG', 'data must be a string, a Buffer or a Uint8Array');
    }
    await this.conn.write(this.term, typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data));
  }

  async sendKeys(keys: string[]): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('sendKeys', { term: this.term, keys });
  }

  async closeStdin(): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('closeStdin', { term: this.term });
  }

  async resize(cols: number, rows: number): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('resize', { term: this.term, cols, rows });
  }

  // What a ShellSessions session asks about its shell, answered by the server where the shell runs
  // (src/server/inspect.rs): each one request, ordered with the writes before and after it.

  /** Saves the pty's terminal modes at the far end. */
  async savePtyModes(): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('savePtyModes', { term: this.term });
  }

  /** Puts the saved terminal modes back at the far end; true when they had changed. */
  async restorePtyModes(): Promise<boolean> {
    const bad = this.check();
    if (bad) return bad;
    return (await this.conn.call('restorePtyModes', { term: this.term })).changed === true;
  }

  /** One look at the shell (this terminal's process) and the pty's foreground group, at the far end. */
  async inspectShell(): Promise<ShellInspection> {
    const bad = this.check();
    if (bad) return bad;
    const look = (await this.conn.call('inspect', { term: this.term })) as unknown as ShellInspection;
    return { ...look, shellSite: typeof look.shellSite === 'string' ? look.shellSite : null };
  }

  /** SIGCONT to the shell's group at the far end. */
  async continueShell(): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('continueShell', { term: this.term });
  }

  /** Terminates the pty's foreground process group at the far end unless it is the shell's own. */
  async killForeground(graceMs: number): Promise<{ pgid: number | null; signal: 'SIGTERM' | 'SIGKILL' | null }> {
    const bad = this.check();
    if (bad) return bad;
    return (await this.conn.call('killForeground', { term: this.term, graceMs })) as unknown as {
      pgid: number | null;
      signal: 'SIGTERM' | 'SIGKILL' | null;
    };
  }

  /** SIGKILLs the shell's session tree and every process tagged with `entry` at the far end. */
  async sweep(entry: string, startTime: number | null): Promise<void> {
    const bad = this.check();
    if (bad) return bad;
    await this.conn.call('sweep', { term: this.term, entry, startTime });
  }
}
