/**
 * ACP v2 (draft) bridge: in v2 the agent owns terminals. It runs the command itself and reports it to the
 * client with `terminal_update` / `terminal_output_chunk` session updates; the client may send
 * `terminal/cancel`. This module turns a TerminalHandle into exactly those updates.
 */

import type {
  V2AgentApp,
  V2CancelTerminalRequest as CancelTerminalRequest,
  V2UpdateSessionNotification as UpdateSessionNotification,
} from './sdk-types';
import { AcpTerminalError, errorCode, errorMessage, invalidArg } from './errors';
import { loadNativeCreateTerminal } from './native';
import { sdkV2ForApp } from './sdk';
import {
  readOutputBytes,
  type CreateTerminalFn,
  type CreateTerminalOptions,
  type CreateTerminalParams,
  type ExitStatus,
  type TerminalLike,
} from './types';
import { shellWord } from './shell-quote';
import { TailBuffer } from './tail-buffer';
import { optionalAbsolutePath, requireString } from './validate';

/** Receives each v2 `session/update` notification, in order; e.g. `(n) => ctx.client.notify('session/update', n)`. */
export type V2UpdateSink = (notification: UpdateSessionNotification) => Promise<void> | void;

/** Options of `bridgeTerminalToV2()`. */
export interface V2BridgeOptions {
  /** Session the terminal is reported to. */
  sessionId: string;
  /** Sends one notification to the client. */
  send: V2UpdateSink;
  /** Command shown to the user (with `args`, quoted like a shell line). */
  command: string;
  /** Arguments shown after the command. */
  args?: readonly string[] | null;
  /** Absolute working directory shown to the user (default: this process's cwd). */
  cwd?: string | null;
  /** Terminal id announced to the client (default: the handle's `id`). */
  terminalId?: string;
  /** Advertise `capabilities.cancel` until the command exits (default true). */
  cancellable?: boolean;
  /**
   * For a pty terminal: the size the command runs with, sent as `size` in the first `terminal_update`
   * so the client renders the output at that size (`startV2Terminal` fills it from its `pty` option).
   * Absent: the size is not announced (the client treats it as unknown).
   */
  size?: V2TerminalSize | null;
}

/** The size of a pty terminal in character cells (the v2 `TerminalSize`). */
export interface V2TerminalSize {
  /** Columns, 1 to 65535. */
  cols: number;
  /** Rows, 1 to 65535. */
  rows: number;
}

/** A running bridge from one terminal to v2 session updates. */
export interface V2TerminalBridge {
  /** Terminal id announced to the client. */
  readonly terminalId: string;
  /** Session the updates go to. */
  readonly sessionId: string;
  /** The bridged terminal. */
  readonly terminal: TerminalLike;
  /** True once the command exited. */
  readonly exited: boolean;
  /** Resolves with the exit status after the final `terminal_update` was sent; rejects if a send failed. */
  readonly done: Promise<ExitStatus>;
  /** Kills the command (what `terminal/cancel` does); rejects with `ERR_TERMINAL_EXITED` once it exited. */
  cancel(): Promise<void>;
  /**
   * Resizes the pty (the command gets SIGWINCH) and tells the client with a `terminal_update` carrying
   * the new `size`, sent before any output the command writes at the new size. Rejects with
   * `ERR_INVALID_ARG` naming `cols` or `rows` (integers 1 to 65535), `ERR_NOT_A_PTY` when the terminal
   * cannot be resized, `ERR_TERMINAL_EXITED` once it exited; when the resize itself fails, a second
   * update restores the previous size.
   */
  resize(cols: number, rows: number): Promise<void>;
}

/** Bytes of streamed output kept to check the streamed chunks against the final snapshot. */
const VERIFY_TAIL_BYTES = 1024 * 1024;

/** Quotes `words` as a POSIX shell line (for display). */
export function shellLine(command: string, args?: readonly string[] | null): string {
  if (!args || args.length === 0) return command;
  return [command, ...args].map(shellWord).join(' ');
}

/**
 * Starts reporting `terminal` as a v2 agent-owned terminal: a first `terminal_update` (command, cwd,
 * cancel capability), a `terminal_output_chunk` per output chunk (base64, bytes as produced), and a final
 * `terminal_update` with `exitStatus`. Call it right after the terminal was created, in the same tick, so
 * no output chunk is missed (a missed chunk is repaired with an output snapshot in the final update).
 */
export function bridgeTerminalToV2(terminal: TerminalLike, options: V2BridgeOptions): V2TerminalBridge {
  // replay: what the terminal wrote before the bridge existed is streamed first, so the client
  // sees the whole output (within the terminal's limit), not only what came after.
  return bridge(terminal, options, (listener) => terminal.onOutput(listener, { replay: true }), false);
}

/** How long the bridge waits, after the exit, for output chunks still on their way to JS. */
const CATCH_UP_MS = 2000;

/** Subscribes a listener to a terminal's output; returns the unsubscribe function. */
type OutputSource = (listener: (chunk: Buffer, info?: { dropped?: number }) => void) => () => void;

/**
 * `everyByte`: the source delivers every byte from the first (a create-time listener), so after the
 * exit the bridge waits (at most `CATCH_UP_MS`) for the chunks still on their way before it ends.
 */
function bridge(terminal: TerminalLike, options: V2BridgeOptions, source: OutputSource, everyByte: boolean): V2TerminalBridge {
  const sessionId = requireString(options?.sessionId, 'sessionId');
  const command = requireString(options.command, 'command');
  if (typeof options.send !== 'function') throw new AcpTerminalError('ERR_INVALID_ARG', 'send: must be a function', { field: 'send' });
  const cwd = optionalAbsolutePath(options.cwd, 'cwd') ?? process.cwd();
  const terminalId = options.terminalId === undefined ? terminal.id : requireString(options.terminalId, 'terminalId');
  const cancellable = options.cancellable ?? true;
  let size = options.size == null ? undefined : checkSize(options.size.cols, options.size.rows, 'size.');

  let sendError: unknown;
  let queue: Promise<void> = Promise.resolve();
  const send = (update: UpdateSessionNotification['update']): void => {
    queue = queue.then(async () => {
      if (sendError !== undefined) return;
      try {
        await options.send({ sessionId, update });
      } catch (error) {
        sendError = error;
      }
    });
  };
  const chunk = (bytes: Buffer): void =>
    send({ sessionUpdate: 'terminal_output_chunk', terminalId, data: bytes.toString('base64') });

  send({
    sessionUpdate: 'terminal_update',
    terminalId,
    command: shellLine(command, options.args),
    cwd,
    ...(size ? { size: { ...size } } : {}),
    ...(cancellable ? { capabilities: { cancel: {} } } : {}),
  });
  const streamed = new TailBuffer(VERIFY_TAIL_BYTES);
  let dropped = 0;
  let caughtUp: (() => void) | undefined;
  const unsubscribe = source((bytes, info) => {
    dropped += info?.dropped ?? 0;
    if (bytes.length > 0) {
      streamed.push(bytes);
      chunk(bytes);
    }
    caughtUp?.();
  });
  // After the exit: every byte the command wrote was streamed (or reported dropped by a listener
  // that fell behind), or the bounded wait for chunks still on their way to JS ended.
  const allStreamed = (): Promise<void> => {
    const done = (): boolean => {
      const total = readOutputBytes(terminal);
      return !everyByte || total === undefined || streamed.total + dropped >= total;
    };
    if (done()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        caughtUp = undefined;
        resolve();
      };
      const timer = setTimeout(finish, CATCH_UP_MS);
      caughtUp = () => {
        if (done()) finish();
      };
    });
  };

  let exited = false;
  const done = (async (): Promise<ExitStatus> => {
    let status: ExitStatus;
    try {
      const { exitCode, signal } = await terminal.waitForExit();
      status = { exitCode, signal };
      await allStreamed();
    } finally {
      exited = true;
      unsubscribe();
    }
    const final: UpdateSessionNotification['update'] = {
      sessionUpdate: 'terminal_update',
      terminalId,
      exitStatus: status,
      ...(cancellable ? { capabilities: null } : {}),
    };
    try {
      const snapshot = await terminal.currentOutput();
      const repair = reconcile(streamed, Buffer.from(snapshot.output, 'utf8'), snapshot.truncated);
      if (repair.kind === 'append') chunk(repair.bytes);
      if (repair.kind === 'replace') final.output = { data: repair.bytes.toString('base64') };
    } catch {
      // Released by its owner meanwhile: the streamed chunks are all there is.
    }
    send(final);
    await queue;
    if (sendError !== undefined) throw sendError;
    return status;
  })();
  // `done` is for callers who care; an unobserved send failure must not crash the process.
  done.catch(() => undefined);

  return {
    terminalId,
    sessionId,
    terminal,
    get exited() {
      return exited;
    },
    done,
    async cancel() {
      if (exited) {
        throw new AcpTerminalError('ERR_TERMINAL_EXITED', `terminalId: terminal ${JSON.stringify(terminalId)} already exited`, {
          terminalId,
        });
      }
      await terminal.kill();
    },
    async resize(cols, rows) {
      const next = checkSize(cols, rows, '');
      const resizable = terminal as TerminalLike & { isPty?: boolean; resize?: (cols: number, rows: number) => Promise<unknown> };
      if (typeof resizable.resize !== 'function' || resizable.isPty === false) {
        throw new AcpTerminalError('ERR_NOT_A_PTY', `terminalId: terminal ${JSON.stringify(terminalId)} is not a pty`, {
          terminalId,
        });
      }
      if (exited) {
        throw new AcpTerminalError('ERR_TERMINAL_EXITED', `terminalId: terminal ${JSON.stringify(terminalId)} already exited`, {
          terminalId,
        });
      }
      const previous = size;
      size = next;
      // Announced first: what the command redraws after its SIGWINCH is rendered at the new size.
      send({ sessionUpdate: 'terminal_update', terminalId, size: { ...next } });
      try {
        await resizable.resize(next.cols, next.rows);
      } catch (error) {
        size = previous;
        send({ sessionUpdate: 'terminal_update', terminalId, size: previous ? { ...previous } : null });
        throw error;
      }
    },
  };
}

/** Checks a pty size (`ERR_INVALID_ARG` naming `<prefix>cols` / `<prefix>rows`). */
function checkSize(cols: unknown, rows: unknown, prefix: string): V2TerminalSize {
  for (const [name, value] of [['cols', cols], ['rows', rows]] as const) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
      throw invalidArg(`${prefix}${name}`, `must be an integer from 1 to 65535, got ${JSON.stringify(value) ?? String(value)}`);
    }
  }
  return { cols: cols as number, rows: rows as number };
}

type Repair = { kind: 'none' } | { kind: 'append'; bytes: Buffer } | { kind: 'replace'; bytes: Buffer };

/**
 * Compares the streamed bytes with the final snapshot: nothing to do, a missing tail to append, or a
 * replacement snapshot when the stream missed bytes elsewhere.
 */
function reconcile(streamed: TailBuffer, snapshot: Buffer, truncated: boolean): Repair {
  const kept = streamed.peek();
  const complete = !streamed.truncated;
  // The snapshot is decoded text: also compare like with like when the output is not valid UTF-8.
  const candidates = complete ? [kept, Buffer.from(kept.toString('utf8'), 'utf8')] : [kept];
  const endsWith = (a: Buffer, b: Buffer): boolean => a.length >= b.length && a.subarray(a.length - b.length).equals(b);
  for (const bytes of candidates) {
    if (truncated) {
      // The snapshot holds the newest bytes: the stream is complete when it ends with them.
      if (endsWith(bytes, snapshot) || (endsWith(snapshot, bytes) && streamed.total >= snapshot.length)) {
        return { kind: 'none' };
      }
    } else if (streamed.total === snapshot.length || bytes.length === snapshot.length) {
      if (endsWith(snapshot, bytes)) return { kind: 'none' };
    } else if (complete && snapshot.length > bytes.length && snapshot.subarray(0, bytes.length).equals(bytes)) {
      return { kind: 'append', bytes: snapshot.subarray(bytes.length) };
    }
  }
  return { kind: 'replace', bytes: snapshot };
}

/** Options of `startV2Terminal()`: the bridge options minus what the request already says. */
export interface StartV2TerminalOptions extends Pick<V2BridgeOptions, 'send' | 'terminalId' | 'cancellable'> {
  /** Backend (default: the native `createTerminal`). */
  createTerminal?: CreateTerminalFn;
  /** Backend options (shell, inheritEnv, killGraceMs). */
  terminalOptions?: CreateTerminalOptions;
  /**
   * Run the command on a pseudo-terminal of this size (80x24 for the fields left out), announced as
   * `size` in the first `terminal_update`; `bridge.resize()` changes it. Given to a substitute
   * `createTerminal` as `options.pty`.
   */
  pty?: { cols?: number; rows?: number };
}

/** Creates a terminal and bridges it at once (no output can be missed): the usual v2 agent entry point. */
export async function startV2Terminal(
  params: CreateTerminalParams & { sessionId: string },
  options: StartV2TerminalOptions,
): Promise<V2TerminalBridge> {
  const pty = options.pty == null ? undefined : checkSize(options.pty.cols ?? 80, options.pty.rows ?? 24, 'pty.');
  const terminalOptions = pty ? { ...options.terminalOptions, pty } : options.terminalOptions;
  const bridgeOptions: V2BridgeOptions = {
    sessionId: params.sessionId,
    send: options.send,
    command: params.command,
    args: params.args,
    cwd: params.cwd,
    ...(options.terminalId !== undefined ? { terminalId: options.terminalId } : {}),
    ...(options.cancellable !== undefined ? { cancellable: options.cancellable } : {}),
    ...(pty ? { size: pty } : {}),
  };
  if (options.createTerminal) {
    // A substitute backend: subscribed (with replay) as soon as it resolves.
    return bridgeTerminalToV2(await options.createTerminal(params, terminalOptions), bridgeOptions);
  }
  // The native core: the bridge's listener is attached when the terminal is created, before the
  // command starts, so it streams every byte. Chunks that arrive before the handle are queued.
  const early: Array<[Buffer, { dropped?: number }]> = [];
  let deliver: ((chunk: Buffer, info?: { dropped?: number }) => void) | undefined;
  const terminal = await loadNativeCreateTerminal()(params, {
    ...terminalOptions,
    onOutput: (chunk, info) => (deliver ? deliver(chunk, info) : early.push([chunk, info])),
  });
  const source: OutputSource = (listener) => {
    deliver = listener;
    for (const [chunk, info] of early.splice(0)) listener(chunk, info);
    return () => {
      deliver = () => undefined;
    };
  };
  return bridge(terminal, bridgeOptions, source, true);
}

/** Tracks an agent's running v2 terminals and serves `terminal/cancel` for them. */
export class V2TerminalRegistry {
  private readonly bridges = new Map<string, V2TerminalBridge>();

  /** Tracks `bridge` until its command exited. */
  add(bridge: V2TerminalBridge): V2TerminalBridge {
    const key = keyOf(bridge.sessionId, bridge.terminalId);
    this.bridges.set(key, bridge);
    const forget = (): void => {
      if (this.bridges.get(key) === bridge) this.bridges.delete(key);
    };
    bridge.done.then(forget, forget);
    return bridge;
  }

  /** The running bridge for a terminal, if any. */
  get(sessionId: string, terminalId: string): V2TerminalBridge | undefined {
    return this.bridges.get(keyOf(sessionId, terminalId));
  }

  /**
   * Cancels a running terminal; unknown or exited terminals reject with `ERR_TERMINAL_NOT_FOUND` /
   * `ERR_TERMINAL_EXITED`.
   */
  async cancel(params: { sessionId: string; terminalId: string }): Promise<Record<string, never>> {
    const sessionId = requireString(params?.sessionId, 'sessionId');
    const terminalId = requireString(params.terminalId, 'terminalId');
    const bridge = this.get(sessionId, terminalId);
    if (!bridge) {
      throw new AcpTerminalError('ERR_TERMINAL_NOT_FOUND', `terminalId: no running terminal ${JSON.stringify(terminalId)} in this session`, {
        terminalId,
      });
    }
    await bridge.cancel();
    return {};
  }

  /**
   * Registers the `terminal/cancel` handler on a v2 `AgentApp`; every failure answers -32602 as the
   * draft requires (unknown, already exited or not cancellable). Returns `app`.
   */
  register(app: V2AgentApp): V2AgentApp {
    return app.onRequest('terminal/cancel', async (ctx) => {
      try {
        return await this.cancel(ctx.params as CancelTerminalRequest);
      } catch (error) {
        // The RequestError of the SDK copy the app comes from: the SDK keeps the code only for its own class.
        const { RequestError } = await sdkV2ForApp(app);
        const code = errorCode(error);
        throw new RequestError(-32602, errorMessage(error), { ...(code ? { code } : {}), terminalId: ctx.params.terminalId });
      }
    });
  }
}

function keyOf(sessionId: string, terminalId: string): string {
  return `${sessionId}\0${terminalId}`;
}
