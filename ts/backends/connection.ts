/**
 * One connection to an `acp-terminal-server`: a child process (any argv whose stdin and stdout reach
 * the server: `podman exec -i`, `ssh`, `kubectl exec -i`, the server itself) carrying requests and
 * their answers, the terminals' exit events and their output, multiplexed.
 *
 * Invariants:
 * - Every request is answered, or rejected with `ERR_BACKEND_LOST` when the transport ends first;
 *   once lost, every later call rejects with it (a released terminal's `release()` resolves).
 * - Ending the connection (`close()`, or the transport dying) ends the server's input, and the server
 *   then kills every command it started; a server killed outright leaves that to its guardian.
 * - Output arrives per subscription, in order; the server bounds what waits for a slow reader.
 */

import { spawn, type ChildProcess } from 'node:child_process';

import { AcpTerminalError } from '../errors';
import { FrameReader, MAX_FRAME, PROTOCOL, inputFrame, jsonFrame, type Banner, type ServerMessage } from './protocol';

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

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: Error): void;
}

/** What a connection tells about a subscription and a terminal. */
export interface ConnectionListeners {
  output(sub: number, data: Buffer, dropped: number): void;
  end(sub: number): void;
  exit(term: number, status: Record<string, unknown>): void;
  lost(error: Error): void;
}

/** The result of starting the transport: a connection, or the launcher's word that the binary is missing. */
export type OpenResult = { connection: Connection } | { missing: true; noise: string } | { mismatch: Banner };

/** Options of {@link Connection.open}. */
export interface OpenOptions {
  /** Milliseconds to wait for the banner (default 30000). */
  handshakeTimeoutMs?: number;
  /** The server version this client expects (mismatch: reinstall). */
  expectVersion?: string;
  /** Extra environment of the transport process. */
  env?: NodeJS.ProcessEnv;
}

/** A live connection to one server. */
export class Connection {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextSub = 1;
  private lostError: Error | undefined;
  private readonly closed: Promise<void>;
  /** Stderr of the transport, its last 4 KiB (for error messages). */
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly reader: FrameReader,
    private readonly listeners: ConnectionListeners,
    /** The server's banner. */
    readonly banner: Banner,
  ) {
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    child.stdout!.on('data', (chunk: Buffer) => {
      let msgs: ServerMessage[];
      try {
        msgs = this.reader.push(chunk);
      } catch (e) {
        this.lose(`the server's stream is corrupt: ${(e as Error).message}`);
        child.kill('SIGKILL');
        return;
      }
      for (const m of msgs) this.dispatch(m);
    });
    child.stderr!.on('data', (c: Buffer) => {
      this.stderr = (this.stderr + c.toString('utf8')).slice(-4096);
    });
    child.stdin!.on('error', () => {});
    child.once('close', (code, signal) => {
      const why = signal ? `the transport was killed by ${signal}` : `the transport exited with code ${code}`;
      this.lose(this.stderr.trim() ? `${why}: ${this.stderr.trim().split('\n').slice(-2).join(' | ')}` : why);
    });
  }

  /** Starts `argv` and waits for the server's banner (past any noise). */
  static open(argv: readonly string[], listeners: ConnectionListeners, options: OpenOptions = {}): Promise<OpenResult> {
    const [cmd, ...args] = argv;
    if (cmd === undefined) throw new AcpTerminalError('ERR_INVALID_ARG', 'argv must name a program');
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    const reader = new FrameReader();
    return new Promise<OpenResult>((resolve, reject) => {
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
          reject(backendLost((e as Error).message));
          return;
        }
        if (reader.missing) {
          done();
          child.stdin!.end();
          child.once('close', () => resolve({ missing: true, noise: reader.noise }));
          return;
        }
        if (reader.banner === undefined) return;
        done();
        const banner = reader.banner;
        if (banner.protocol !== PROTOCOL || (options.expectVersion !== undefined && banner.version !== options.expectVersion)) {
          child.stdin!.end();
          child.once('close', () => resolve({ mismatch: banner }));
          return;
        }
        const c = new Connection(child, reader, listeners, banner);
        c.stderr = stderr;
        resolve({ connection: c });
        for (const m of msgs) c.dispatch(m);
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
        reject(backendLost(`no answer from the server within ${options.handshakeTimeoutMs ?? 30000} ms`));
      }, options.handshakeTimeoutMs ?? 30000);
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onErr);
      child.once('close', onClose);
      child.once('error', onError);
      child.stdin!.on('error', () => {});
    });
  }

  /** The transport process's pid. */
  get pid(): number | undefined {
    return this.child.pid;
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
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(frame);
    });
  }

  private dispatch(m: ServerMessage): void {
    if (m.kind === 'output') {
      this.listeners.output(m.sub, m.data, m.dropped);
      return;
    }
    const v = m.value;
    if (typeof v.id === 'number') {
      const p = this.pending.get(v.id);
      if (!p) return;
      this.pending.delete(v.id);
      const err = v.error as { code?: string; message?: string; details?: Record<string, unknown> } | undefined;
      if (err) p.reject(new RemoteError(err.code ?? 'ERR_REMOTE', err.message ?? 'the server refused the request', err.details));
      else p.resolve((v.result ?? {}) as Record<string, unknown>);
    } else if (v.event === 'exit') {
      this.listeners.exit(v.term as number, v.status as Record<string, unknown>);
    } else if (v.event === 'end') {
      this.listeners.end(v.sub as number);
    }
  }

  private lose(reason: string): void {
    if (this.lostError) return;
    this.lostError = backendLost(reason);
    for (const p of this.pending.values()) p.reject(this.lostError);
    this.pending.clear();
    this.listeners.lost(this.lostError);
  }

  /**
   * Ends the connection: the server's input ends, it kills every command it started and exits.
   * Resolves when the transport exited (after `graceMs`, it is killed).
   */
  async close(graceMs = 30000): Promise<void> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.closed;
    clearTimeout(timer);
  }

  /** Kills the transport process (a fault, as when `podman exec` is killed). */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.child.kill(signal);
  }
}
