/**
 * One connection to an `acp-terminal-server`: a child process (any argv whose stdin and stdout reach
 * the server: `podman exec -i`, `ssh`, `kubectl exec -i`, the server itself) carrying requests and
 * their answers, the terminals' exit events and their output, multiplexed.
 *
 * Invariants:
 * - Every request is answered, or rejected with `ERR_BACKEND_LOST` when the connection is lost;
 *   once lost, every later call rejects with it (a released terminal's `release()` resolves).
 * - Nothing the far end sends is used before {@link Connection.receive} checked it (its kind's fields
 *   and types, a reply's id among the pending requests, a subscription this side opened): anything
 *   else fails the connection with `ERR_BACKEND_PROTOCOL`, which every pending and later call rejects
 *   with, as with a lost one; no stream event handler throws.
 * - A listener that throws (an `onOutput` listener) is reported as an uncaught exception, as the
 *   native core does, on the next tick: every other message of that read (others' output, exits,
 *   answers) is still dispatched and counted in the resume cursor.
 * - Reconnect: with a grace (`hello {graceMs}`, the default 30 s), a transport that dies while the
 *   server lives is replaced: `attachArgv` runs `acp-terminal-server --attach PATH` through the same
 *   transport, `resume` presents the session token and this side's cursor (the stream bytes read),
 *   the server resends what it wrote from there and says how many of this side's frames it read; the
 *   frames after are sent again. Calls made meanwhile wait. Nothing is lost or delivered twice. The
 *   connection is lost (`ERR_BACKEND_LOST`) when the grace ends without a resume, when the server is
 *   gone (`--attach` says so), or when the dead link swallowed more than the server's replay ring
 *   keeps (`ERR_REPLAY_LOST`: the server then ends everything).
 * - `close()` says `shutdown` first, so the server then kills every command it started without a grace;
 *   a server killed outright leaves that to its guardian.
 * - Output arrives per subscription, in order; the server bounds what waits for a slow reader.
 */

import { spawn, type ChildProcess } from 'node:child_process';

import { AcpTerminalError } from '../errors';
import {
  FrameReader,
  MAX_FRAME,
  PROTOCOL,
  ProtocolViolation,
  checkServerMessage,
  inputFrame,
  jsonFrame,
  type Banner,
  type CheckedMessage,
  type ServerMessage,
} from './protocol';

/** An error the server answered with: its `code`, message and details. */
export class RemoteError extends Error {
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>>;
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'RemoteError';
    this.code = code;
    this.details = details;
  }
}

/** The transport (or the server) ended: what was pending is lost. */
export function backendLost(reason: string): AcpTerminalError {
  return new AcpTerminalError('ERR_BACKEND_LOST', `acp-terminal: the connection to the terminal server was lost (${reason})`, {
    reason,
  });
}

/** The far end sent what the protocol does not allow: the connection is failed, nothing it said is used. */
export function backendProtocol(reason: string): AcpTerminalError {
  return new AcpTerminalError('ERR_BACKEND_PROTOCOL', `acp-terminal: the terminal server broke the protocol (${reason})`, {
    reason,
  });
}

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: Error): void;
  /** Its frame, and its place among the frames this side sent (a resume resends the unread ones). */
  frame: Buffer;
  index: number;
}

/** What a connection tells about a subscription and a terminal. */
export interface ConnectionListeners {
  output(sub: number, data: Buffer, dropped: number): void;
  end(sub: number): void;
  exit(term: number, status: Record<string, unknown>): void;
  lost(error: Error): void;
}

/** The result of starting the transport: a connection, or the launcher's word that the binary is missing. */
export type OpenResult = { connection: Connection } | { missing: true; machine: string; noise: string } | { mismatch: Banner };

/** Options of {@link Connection.open}. */
export interface OpenOptions {
  /** Milliseconds to wait for the banner (default 30000). */
  handshakeTimeoutMs?: number;
  /** The server version this client expects (mismatch: reinstall). */
  expectVersion?: string;
  /** Extra environment of the transport process. */
  env?: NodeJS.ProcessEnv;
  /**
   * Milliseconds the server keeps a session whose transport died, waiting for a reattach (default
   * 30000; 0: none, a lost transport ends everything at once).
   */
  reconnectGraceMs?: number;
  /** Bytes of written output the server keeps for a resume (default: the server's, 8 MiB). */
  replayBytes?: number;
  /** The argv that runs `acp-terminal-server --attach PATH` through the transport (no argv: no reconnect). */
  attachArgv?: (socketPath: string) => string[];
}

/** A link's transport process and the reader of its stream. */
interface Link {
  child: ChildProcess;
  reader: FrameReader;
}

/** Starts `argv` and reads up to the banner (past any noise); resolves with what came. */
function startLink(
  argv: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
  timeoutMs: number,
): Promise<{ link: Link; msgs: ServerMessage[]; stderr: string } | { missing: true; machine: string; noise: string } | { gone: string }> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) throw new AcpTerminalError('ERR_INVALID_ARG', 'argv must name a program');
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
  const reader = new FrameReader();
  return new Promise((resolve, reject) => {
    let stderr = '';
    const early: Buffer[] = [];
    const onErr = (c: Buffer): void => {
      stderr = (stderr + c.toString('utf8')).slice(-4096);
    };
    const done = (): void => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onErr);
      child.off('close', onClose);
      child.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      early.push(chunk);
      let msgs: ServerMessage[];
      try {
        msgs = reader.push(chunk);
      } catch (e) {
        done();
        child.kill('SIGKILL');
        reject(e instanceof ProtocolViolation ? backendProtocol(e.message) : backendLost((e as Error).message));
        return;
      }
      if (reader.missing || reader.gone) {
        done();
        child.stdin!.end();
        child.once('close', () => resolve(reader.gone ? { gone: stderr.trim() } : { missing: true, machine: reader.machine, noise: reader.noise }));
        return;
      }
      if (reader.banner === undefined) return;
      done();
      resolve({ link: { child, reader }, msgs, stderr });
    };
    const onClose = (code: number | null, signal: string | null): void => {
      done();
      const out = Buffer.concat(early).toString('utf8').trim();
      reject(
        backendLost(
          `the transport ${argv.join(' ')} ended before the server answered (${signal ?? `exit code ${code}`})` +
            (stderr.trim() ? `: ${stderr.trim()}` : '') +
            (out ? ` (output: ${out.slice(0, 200)})` : ''),
        ),
      );
    };
    const onError = (e: Error): void => {
      done();
      reject(backendLost(`the transport ${cmd} could not be started: ${e.message}`));
    };
    const timer = setTimeout(() => {
      done();
      child.kill('SIGKILL');
      reject(backendLost(`no answer from the server within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onErr);
    child.once('close', onClose);
    child.once('error', onError);
    child.stdin!.on('error', () => {});
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * What the native core does with a listener that throws: the error becomes an uncaught exception
 * (`process.on('uncaughtException')`, or the end of the process without a handler), and delivery goes
 * on. Here it is thrown from the next tick, so the caller's loop is not left.
 */
export function rethrowLater(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

/** A live connection to one server (over one transport at a time: see the reconnect invariant). */
export class Connection {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextSub = 1;
  private lostError: Error | undefined;
  /** Stderr of the transport, its last 4 KiB (for error messages). */
  private stderr = '';
  private link: Link;
  /** The transport is being replaced: calls wait. */
  private reconnecting = false;
  private closing = false;
  /** The id of the `shutdown` request `close()` sent (its answer is the one reply nobody waits for). */
  private shutdownId = -1;
  /** What `hello` answered about reattaching (none: a lost transport loses the connection). */
  private attach: { path: string; token: string; graceMs: number } | undefined;
  /** This side's frames so far (the in-band ones; a resume's own frame is not counted). */
  private framesSent = 0;
  /** The resume cursor: stream bytes read so far (after the first banner; out-of-band answers aside). */
  private offset = 0;
  /** How many times the transport was replaced (for tests and diagnostics). */
  reconnects = 0;
  /** The server's pid at the far end (from `hello`). */
  serverPid: number | undefined;

  private constructor(
    link: Link,
    private readonly listeners: ConnectionListeners,
    /** The server's banner. */
    readonly banner: Banner,
    private readonly options: OpenOptions,
  ) {
    this.link = link;
    this.adopt(link);
  }

  /** Starts `argv` and waits for the server's banner (past any noise); then says `hello`. */
  static async open(argv: readonly string[], listeners: ConnectionListeners, options: OpenOptions = {}): Promise<OpenResult> {
    const r = await startLink(argv, options.env, options.handshakeTimeoutMs ?? 30000);
    if ('missing' in r) return r;
    if ('gone' in r) throw backendLost('the server is gone');
    const { link, msgs } = r;
    const banner = link.reader.banner!;
    if (banner.protocol !== PROTOCOL || (options.expectVersion !== undefined && banner.version !== options.expectVersion)) {
      link.child.stdin!.end();
      await new Promise<void>((resolve) => link.child.once('close', () => resolve()));
      return { mismatch: banner };
    }
    const c = new Connection(link, listeners, banner, options);
    c.stderr = r.stderr;
    c.receive(link, msgs);
    const graceMs = options.reconnectGraceMs ?? 30000;
    const hello = c.call('hello', { graceMs: options.attachArgv ? graceMs : 0, replayBytes: options.replayBytes });
    hello.then(
      (h) => {
        c.serverPid = Number.isSafeInteger(h.pid) ? (h.pid as number) : undefined;
        const a = h.attach as { path?: unknown; token?: unknown; graceMs?: unknown } | undefined;
        if (typeof a === 'object' && a !== null && typeof a.path === 'string' && a.path && typeof a.token === 'string' && a.token) {
          c.attach = { path: a.path, token: a.token, graceMs: Number.isSafeInteger(a.graceMs) && (a.graceMs as number) >= 0 ? (a.graceMs as number) : graceMs };
        }
      },
      () => {},
    );
    await hello.catch(() => {});
    if (c.lostError) throw c.lostError;
    return { connection: c };
  }

  /** Listens to a link's stream and its end. */
  private adopt(link: Link): void {
    const { child, reader } = link;
    child.stdout!.on('data', (chunk: Buffer) => {
      if (this.link !== link || this.lostError) return;
      let msgs: ServerMessage[];
      try {
        msgs = reader.push(chunk);
      } catch (e) {
        this.violate(link, `the server's stream is corrupt: ${(e as Error).message}`);
        return;
      }
      this.receive(link, msgs);
    });
    child.stderr!.on('data', (c: Buffer) => {
      this.stderr = (this.stderr + c.toString('utf8')).slice(-4096);
    });
    child.stdin!.on('error', () => {});
    child.once('close', (code, signal) => {
      if (this.link !== link) return;
      const why = signal ? `the transport was killed by ${signal}` : `the transport exited with code ${code}`;
      const reason = this.stderr.trim() ? `${why}: ${this.stderr.trim().split('\n').slice(-2).join(' | ')}` : why;
      if (this.attach && this.options.attachArgv && !this.closing && !this.lostError) void this.reconnect(reason);
      else this.lose(reason);
    });
  }

  /** Replaces a dead transport within the grace, or loses the connection. */
  private async reconnect(reason: string): Promise<void> {
    const attach = this.attach!;
    this.reconnecting = true;
    const deadline = Date.now() + attach.graceMs;
    let last = reason;
    for (let delay = 50; Date.now() < deadline && !this.closing; delay = Math.min(delay * 2, 1000)) {
      try {
        const timeout = Math.max(1, Math.min(this.options.handshakeTimeoutMs ?? 30000, deadline - Date.now()));
        const r = await startLink(this.options.attachArgv!(attach.path), this.options.env, timeout);
        if ('gone' in r || 'missing' in r) {
          this.reconnecting = false;
          this.lose(`${reason}; the server is gone${'gone' in r && r.gone ? `: ${r.gone}` : ''}`);
          return;
        }
        if (await this.resume(r.link, r.msgs, attach.token)) return;
        if (this.lostError) return;
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
    }
    this.reconnecting = false;
    this.lose(`${reason}; no reattach within ${attach.graceMs} ms (${last})`);
  }

  /** Sends `resume` on a new link and, once answered, continues on it. False: it died first. */
  private resume(link: Link, early: ServerMessage[], token: string): Promise<boolean> {
    link.child.stdin!.on('error', () => {});
    link.child.stdin!.write(jsonFrame({ id: 0, op: 'resume', token, offset: this.offset }));
    return new Promise((resolve) => {
      let queue = early;
      const finish = (msgs: ServerMessage[]): boolean => {
        if (msgs.length === 0) return false;
        let answer: CheckedMessage;
        try {
          answer = checkServerMessage(msgs[0]!);
          if ((answer.kind !== 'reply' && answer.kind !== 'refused') || answer.id !== 0) {
            throw new ProtocolViolation('the reattached server did not answer resume first');
          }
          if (answer.kind === 'reply' && !(Number.isSafeInteger(answer.result.received) && (answer.result.received as number) >= 0)) {
            throw new ProtocolViolation('the resume answer has no count of frames received');
          }
        } catch (e) {
          this.reconnecting = false;
          this.violate(link, (e as Error).message);
          return true;
        }
        link.child.stdout!.off('data', onData);
        link.child.off('close', onClose);
        if (answer.kind === 'refused') {
          this.reconnecting = false;
          this.lose(`the server refused the resume: ${answer.error.code}: ${answer.error.message}`);
          link.child.kill('SIGKILL');
          return true;
        }
        const result = answer.result as { received: number };
        const old = this.link;
        this.link = link;
        this.reconnecting = false;
        this.reconnects++;
        old.child.stdout!.removeAllListeners('data');
        this.adopt(link);
        const resend = [...this.pending.values()].filter((p) => p.index >= result.received).sort((a, b) => a.index - b.index);
        for (const p of resend) link.child.stdin!.write(p.frame);
        this.receive(link, msgs.slice(1));
        resolve(true);
        return true;
      };
      const onData = (chunk: Buffer): void => {
        try {
          queue = queue.concat(link.reader.push(chunk));
        } catch (e) {
          this.reconnecting = false;
          this.violate(link, `the reattached stream is corrupt: ${(e as Error).message}`);
          resolve(true);
          return;
        }
        if (finish(queue)) resolve(true);
      };
      const onClose = (): void => {
        link.child.stdout!.off('data', onData);
        resolve(false);
      };
      if (finish(queue)) return;
      link.child.stdout!.on('data', onData);
      link.child.once('close', onClose);
    });
  }

  /** The transport process's pid. */
  get pid(): number | undefined {
    return this.link.child.pid;
  }

  /** Why the connection is gone, if it is. */
  get lost(): Error | undefined {
    return this.lostError;
  }

  /** A new subscription number. */
  newSub(): number {
    return this.nextSub++;
  }

  /** Sends a request; resolves with its result, rejects with the server's error or `ERR_BACKEND_LOST`. */
  call(op: string, fields: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    if (this.lostError) return Promise.reject(this.lostError);
    const id = this.nextId++;
    const frame = jsonFrame({ ...fields, id, op });
    if (frame.length - 4 > MAX_FRAME) {
      return Promise.reject(new AcpTerminalError('ERR_INVALID_ARG', `the ${op} request is over the ${MAX_FRAME}-byte frame bound`));
    }
    return this.send(id, frame);
  }

  /** Sends input for terminal `term` as a binary frame. */
  write(term: number, data: Buffer): Promise<Record<string, unknown>> {
    if (this.lostError) return Promise.reject(this.lostError);
    const id = this.nextId++;
    if (data.length + 9 > MAX_FRAME) {
      // Split: writes are queued in order at the far end, so the pieces arrive as one.
      const parts: Promise<unknown>[] = [];
      for (let off = 0; off < data.length; off += MAX_FRAME - 9) {
        parts.push(this.write(term, data.subarray(off, off + MAX_FRAME - 9)));
      }
      return Promise.all(parts).then(() => ({}));
    }
    return this.send(id, inputFrame(id, term, data));
  }

  private send(id: number, frame: Buffer): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, frame, index: this.framesSent++ });
      // While the transport is replaced the frame waits: the resume sends it.
      if (!this.reconnecting) this.link.child.stdin!.write(frame);
    });
  }

  /**
   * The frame boundary: checks each message (its kind's fields and types, then that a reply answers a
   * pending request and output names a subscription this side opened) and only then acts on it. The
   * first message that breaks the protocol fails the connection; nothing after it is read.
   */
  private receive(link: Link, msgs: ServerMessage[]): void {
    for (const raw of msgs) {
      if (this.lostError) return;
      let m: CheckedMessage;
      try {
        m = checkServerMessage(raw);
        if ((m.kind === 'reply' || m.kind === 'refused') && !this.pending.has(m.id) && m.id !== this.shutdownId) {
          throw new ProtocolViolation(`a reply to request ${m.id}, which is not pending`);
        }
        if ((m.kind === 'output' || m.kind === 'end') && m.sub >= this.nextSub) {
          throw new ProtocolViolation(`${m.kind === 'end' ? 'an end event' : 'output'} for subscription ${m.sub}, which this side never opened`);
        }
      } catch (e) {
        this.violate(link, (e as Error).message);
        return;
      }
      try {
        this.dispatch(m);
      } catch (e) {
        rethrowLater(e);
      }
    }
  }

  private dispatch(m: CheckedMessage): void {
    this.offset += m.size;
    switch (m.kind) {
      case 'output':
        this.listeners.output(m.sub, m.data, m.dropped);
        return;
      case 'reply':
      case 'refused': {
        const p = this.pending.get(m.id);
        if (!p) return; // the answer to `shutdown`
        this.pending.delete(m.id);
        if (m.kind === 'refused') p.reject(new RemoteError(m.error.code, m.error.message, m.error.details));
        else p.resolve(m.result);
        return;
      }
      case 'exit':
        this.listeners.exit(m.term, m.status);
        return;
      case 'end':
        this.listeners.end(m.sub);
        return;
    }
  }

  /** The far end broke the protocol: the connection fails with `ERR_BACKEND_PROTOCOL` and its transport is killed. */
  private violate(link: Link, reason: string): void {
    this.fail(backendProtocol(reason));
    link.child.kill('SIGKILL');
  }

  private lose(reason: string): void {
    this.fail(backendLost(reason));
  }

  private fail(error: AcpTerminalError): void {
    if (this.lostError) return;
    this.lostError = error;
    for (const p of this.pending.values()) p.reject(this.lostError);
    this.pending.clear();
    this.listeners.lost(this.lostError);
  }

  /**
   * Ends the connection: says `shutdown` (no grace), then ends the server's input; it kills every
   * command it started and exits. Resolves when the transport exited (after `graceMs`, it is killed).
   */
  async close(graceMs = 30000): Promise<void> {
    this.closing = true;
    const child = this.link.child;
    if (!this.lostError && !this.reconnecting) {
      this.shutdownId = this.nextId++;
      child.stdin!.write(jsonFrame({ id: this.shutdownId, op: 'shutdown' }));
    }
    const closed = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('close', () => r()));
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await closed;
    clearTimeout(timer);
  }

  /** Kills the transport process (a fault, as when `podman exec` is killed). */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.link.child.kill(signal);
  }
}
