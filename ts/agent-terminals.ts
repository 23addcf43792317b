/**
 * Agent-side terminals: an ACP agent (SDK 2.x) runs a command on the native core and the kit shows it
 * live to the client in the best form that client understands, chosen from its `initialize`:
 *
 * - `v2`: the connection speaks ACP v2: a display terminal (`terminal_update`, base64
 *   `terminal_output_chunk`, `terminal/cancel`, `tool_call/cancel`, background list).
 * - `terminal_output` / `terminal_output_delta`: a v1 client that advertised the `_meta` terminal
 *   convention (`clientCapabilities._meta.terminal_output` / `terminal_output_delta`, as codex-acp reads
 *   it): `terminal_info` in the `tool_call`, text increments in `tool_call_update._meta`, `terminal_exit`.
 * - `content`: any other v1 client: the tool call's text content, replaced at a bounded rate, ending
 *   with the exact tail and the exit status.
 *
 * The kit sees `initialize` because it wraps the agent's app(s) as the connectors the SDK's
 * `agentProtocolRouter()` (or a direct `connect`) uses: `kit.v1(app)`, `kit.v2(app)`. The wrap taps the
 * message stream without taking any handler from the agent: it reads `initialize`, `session/cancel`,
 * `session/close`, `session/load` / `session/resume` (replay after the response) and the end of each
 * `session/prompt` (what still runs then is background work).
 *
 * Invariants: updates of one terminal leave in order, never duplicate or reorder bytes, and the exit
 * update follows the last output update; output updates leave at most once per `updateIntervalMs` per
 * terminal; memory per terminal is bounded by its byte limit (below three times it); a handle's
 * `waitForExit()` resolves after its exit update was handed to the connection.
 */

import { AcpTerminalError, errorCode, errorMessage, invalidArg } from './errors';
import { loadNativeCreateTerminal } from './native';
import { sdkV2ForApp } from './sdk';
import { completeUtf8Length, OutputTail, utf8Start } from './agent-output';
import { shellLine } from './v2';
import {
  readOutputBytes,
  type AcpTerminalHandle,
  type CreateTerminalFn,
  type CreateTerminalOptions,
  type CreateTerminalParams,
  type ExitStatus,
  type OutputSnapshot,
  type TerminalLike,
} from './types';
import { optionalAbsolutePath, requireString } from './validate';
import { parseKeys } from './session-input';
import type { ExecuteRequest, ExecuteResult } from './session-types';

/** How a terminal is shown to the client. */
export type AgentTerminalForm = 'v2' | 'terminal_output' | 'terminal_output_delta' | 'content';

/** Default bytes of output a reporter keeps (its memory bound) when the request sets no `outputByteLimit`. */
export const DEFAULT_REPORT_BYTES = 1024 * 1024;
/** Default minimum interval between two output updates of one terminal. */
export const DEFAULT_UPDATE_INTERVAL_MS = 50;
/** Default bytes of text the `content` form shows (the tail). */
export const DEFAULT_CONTENT_BYTES = 64 * 1024;
/** How long the reporter waits, after the exit, for output still on its way to JS. */
const CATCH_UP_MS = 2000;

/** Options of `agentTerminals()`. */
export interface AgentTerminalsOptions {
  /** Force one form for every terminal (default: chosen from each client's `initialize`). */
  form?: AgentTerminalForm;
  /** Minimum milliseconds between two output updates of one terminal (default 50). */
  updateIntervalMs?: number;
  /** Bytes of text the `content` form shows (default 65 536). */
  contentBytes?: number;
  /** Backend (default: the native `createTerminal`); must honour `options.onOutput` or replay in `onOutput`. */
  createTerminal?: CreateTerminalFn;
  /** Backend options for every terminal (shell, limits, sandbox, killGraceMs, ...). */
  terminalOptions?: CreateTerminalOptions;
  /**
   * Called when a session's background list changes (a terminal still running when its prompt's
   * response went out enters it; its exit, after the exit update was sent, removes it). The agent puts
   * the list in its own `state_update` (the kit never sends state updates: the foreground state is the agent's).
   */
  onBackgroundChange?: (sessionId: string, background: BackgroundTerminal[]) => void;
}

/** What a wrapped app's `connect()` returns (the SDK's `AgentConnection`, by the parts the router uses). */
export interface AgentConnectionLike {
  /** Resolves when the connection ended. */
  readonly closed?: Promise<void>;
  /** Starts the app's `onConnect` handlers (the router defers them until it routed). */
  startConnectHandlers?(): void;
}

/** A wrapped app: give it to `agentProtocolRouter().withV1()` / `.withV2()`, or `connect(stream)` it directly. */
export interface AgentTerminalsConnector {
  /** Connects the wrapped app to an SDK stream (`ndJsonStream(...)`), tapping it for the kit. */
  connect(stream: unknown, options?: unknown): AgentConnectionLike;
}

/** One entry of a v2 state update's `background` list. */
export interface BackgroundTerminal {
  type: 'terminal';
  terminalId: string;
}

/** Per-call options of `kit.createTerminal()`. */
export interface AgentTerminalOptions {
  /** Report into this tool call (the agent's own); default: the kit opens one. */
  toolCallId?: string;
  /** Title of the tool call (default: the command line). */
  title?: string;
  /** Force the form for this terminal. */
  form?: AgentTerminalForm;
  /** `'client'`: use the client's own `terminal/create` when it advertises `terminal: true` (v1). */
  prefer?: 'local' | 'client';
  /** Backend options for this terminal (merged over the kit's). */
  terminalOptions?: CreateTerminalOptions;
  /** Run on a pseudo-terminal of this size (v2 announces it as `size`). */
  pty?: { cols?: number; rows?: number };
}

/** A session command being reported. */
interface SessionCommand {
  /** False once `execute` accepted the command (a later refusal does not end it). */
  isNew: boolean;
  deliver(chunk: Buffer): void;
  finish(result: ExecuteResult | null): void;
}

/** The parts of a `ShellSessions` the kit drives. */
export interface ShellSessionsLike {
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
  interrupt(terminalId?: string): Promise<ExecuteResult>;
  onOutput(listener: (terminalId: string, chunk: Buffer) => void): () => void;
  shellPid(terminalId?: string): number | undefined;
}

/** Per-call options of a reported `execute`. */
export interface ReportedExecuteOptions {
  /** Report into this tool call (the agent's own); default: the kit opens one per command. */
  toolCallId?: string;
  /** Title of the tool call (default: the command). */
  title?: string;
  /** Force the form for this command. */
  form?: AgentTerminalForm;
}

/** `ShellSessions` whose commands are shown live in the client (see `AgentTerminals.shellSessions`). */
export interface ReportedShellSessions {
  /**
   * `shells.execute(request)`, reported: a command gets its own display terminal (or tool call), which
   * stays live across `running` results until the command ends; input and keys sent to it are shown
   * as a terminal shows them.
   */
  execute(ctx: unknown, sessionId: string, request: ExecuteRequest, options?: ReportedExecuteOptions): Promise<ExecuteResult>;
  /** Stops the subscription to the sessions' output (running displays end as the sessions end). */
  close(): void;
}

/** What `createTerminal()` returns: the SDK's `TerminalHandle` shape, plus what the kit knows. */
export interface AgentTerminal extends AcpTerminalHandle {
  /** Terminal id shown to the client. */
  readonly id: string;
  /** The tool call the terminal is reported in. */
  readonly toolCallId: string;
  /** How it is shown (`'client'` when the client runs it). */
  readonly form: AgentTerminalForm | 'client';
  /** Process id of the command (undefined when the client runs it). */
  readonly pid: number | undefined;
}

/** The parts of an SDK `AgentContext` the kit uses. */
interface ClientSide {
  notify(method: string, params: unknown): Promise<void>;
  createTerminal?(params: unknown): Promise<AcpTerminalHandle & { id: string }>;
}

/** A message on the wire, loosely. */
interface WireMessage {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

/** What the kit knows about one connection. */
class Connection {
  initialize: Record<string, unknown> | undefined;
  client: ClientSide | undefined;
  closed = false;
  /** Resolves when the connection ended (a send still pending on it is then abandoned). */
  readonly whenClosed: Promise<void>;
  private resolveClosed: () => void = () => undefined;
  /** Request ids of `session/prompt` → session. */
  readonly prompts = new Map<string | number, string>();
  /** Request ids of `session/load` / `session/resume` → session. */
  readonly loads = new Map<string | number, string>();
  constructor(readonly version: 1 | 2) {
    this.whenClosed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  /** Marks the connection ended. */
  close(): void {
    this.closed = true;
    this.resolveClosed();
  }

  /** The form the client understands best, from its `initialize`. */
  form(): AgentTerminalForm {
    if (this.version === 2) return 'v2';
    const meta = (this.initialize?.clientCapabilities as { _meta?: Record<string, unknown> } | undefined)?._meta;
    if (meta?.terminal_output === true) return 'terminal_output';
    if (meta?.terminal_output_delta === true) return 'terminal_output_delta';
    return 'content';
  }

  /** Whether the (v1) client runs terminals itself. */
  clientTerminals(): boolean {
    return this.version === 1 && (this.initialize?.clientCapabilities as { terminal?: unknown } | undefined)?.terminal === true;
  }
}

/** The symbol-keyed method through which SDK contexts name their connection (`connectionOf`). */
function connectionKey(value: unknown): object | undefined {
  const target = (value as { client?: unknown } | null)?.client ?? value;
  for (let proto = target as object | null; proto; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const sym of Object.getOwnPropertySymbols(proto)) {
      if (sym.description === 'connectionContextOf') {
        const fn = (target as Record<symbol, unknown>)[sym];
        if (typeof fn === 'function') return (fn as () => object).call(target);
      }
    }
  }
  return undefined;
}

/** Exit status text for the `content` form. */
function exitLine(status: ExitStatus): string {
  if (status.signal) return `[killed by ${status.signal}]`;
  return `[exit code ${status.exitCode ?? 'unknown'}]`;
}

/** One reported terminal. */
class Report {
  readonly tail: OutputTail;
  /** Bytes of output already reported (for the text forms: up to a character boundary). */
  private sent = 0;
  /** The text form skipped output at least once (the content form shows a marker line first). */
  private skippedAny = false;
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = 0;
  private queue: Promise<void> = Promise.resolve();
  exitStatus: ExitStatus | undefined;
  /** Resolves after the exit update was handed to the connection. */
  readonly done: Promise<ExitStatus>;
  background = false;
  released = false;
  /** Output bytes (base64 or text) handed to `send` and not yet written to the connection. */
  queuedBytes = 0;
  /** Most output bytes ever queued at once (diagnostics). */
  peakQueuedBytes = 0;

  constructor(
    private readonly kit: AgentTerminals,
    public conn: Connection,
    readonly sessionId: string,
    readonly terminalId: string,
    readonly toolCallId: string,
    public form: AgentTerminalForm,
    readonly ownsToolCall: boolean,
    readonly title: string,
    readonly commandLine: string,
    readonly cwd: string,
    readonly size: { cols: number; rows: number } | undefined,
    readonly terminal: TerminalLike,
    limit: number,
    private readonly intervalMs: number,
    private readonly contentBytes: number,
    subscribe: (listener: (chunk: Buffer, info?: { dropped?: number }) => void) => () => void,
  ) {
    this.tail = new OutputTail(limit);
    this.announce();
    let caughtUp: (() => void) | undefined;
    const unsubscribe = subscribe((chunk, info) => {
      this.tail.gap(info?.dropped ?? 0);
      this.tail.push(chunk);
      this.schedule();
      caughtUp?.();
    });
    const allArrived = (): Promise<void> => {
      const arrived = (): boolean => {
        const total = readOutputBytes(terminal);
        return total === undefined || this.tail.total >= total;
      };
      if (arrived()) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          caughtUp = undefined;
          resolve();
        }, CATCH_UP_MS);
        caughtUp = () => {
          if (arrived()) {
            clearTimeout(timer);
            caughtUp = undefined;
            resolve();
          }
        };
      });
    };
    this.done = (async () => {
      let status: ExitStatus;
      try {
        const { exitCode, signal } = await terminal.waitForExit();
        status = { exitCode: exitCode ?? null, signal: signal ?? null };
        await allArrived();
      } finally {
        unsubscribe();
      }
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.flush(true);
      this.exitStatus = status;
      this.finish(status);
      await this.queue;
      this.kit.exited(this);
      return status;
    })();
    this.done.catch(() => undefined);
  }

  /** Sends one session update through the connection's client (in order; failures are dropped: the client left). */
  private send(update: Record<string, unknown>, bytes = 0): void {
    const conn = this.conn;
    const notification = { sessionId: this.sessionId, update };
    this.queuedBytes += bytes;
    if (this.queuedBytes > this.peakQueuedBytes) this.peakQueuedBytes = this.queuedBytes;
    this.queue = this.queue.then(async () => {
      try {
        if (conn.closed || !conn.client) return;
        // A client that left never reads again: the write would wait forever, holding up this
        // terminal's later updates (which a session/load or session/resume redirects elsewhere).
        await Promise.race([conn.client.notify('session/update', notification), conn.whenClosed]);
      } catch {
        // The connection closed: a later session/load or session/resume replays the state.
      } finally {
        this.queuedBytes -= bytes;
      }
    });
  }

  /** The tool call (opened or the agent's) and, in v2, the terminal's first update. */
  private announce(): void {
    const terminalContent = [{ type: 'terminal', terminalId: this.terminalId }];
    if (this.form === 'v2') {
      this.send({
        sessionUpdate: 'terminal_update',
        terminalId: this.terminalId,
        command: this.commandLine,
        cwd: this.cwd,
        ...(this.size ? { size: { ...this.size } } : {}),
        capabilities: { cancel: {} },
      });
      this.send({
        sessionUpdate: 'tool_call_update',
        toolCallId: this.toolCallId,
        ...(this.ownsToolCall ? { title: this.title, kind: 'execute', status: 'in_progress', capabilities: { cancel: {} } } : {}),
        content: terminalContent,
      });
    } else if (this.form === 'content') {
      if (this.ownsToolCall) {
        this.send({ sessionUpdate: 'tool_call', toolCallId: this.toolCallId, title: this.title, kind: 'execute', status: 'in_progress' });
      }
    } else {
      // Zed reads terminal_info from the tool_call itself, so it is a tool_call even for the agent's own id.
      this.send({
        sessionUpdate: 'tool_call',
        toolCallId: this.toolCallId,
        title: this.title,
        kind: 'execute',
        status: 'in_progress',
        content: terminalContent,
        _meta: { terminal_info: { terminal_id: this.terminalId, cwd: this.cwd } },
      });
    }
  }

  /** Arranges a flush no sooner than `intervalMs` after the previous one. */
  private schedule(): void {
    if (this.timer || this.exitStatus) return;
    const wait = Math.max(0, this.lastFlush + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A slow client: the previous output update is still being written. Waiting keeps at most one
      // output update queued (memory stays bounded by the tail); the next flush sends a snapshot or marker.
      if (this.queuedBytes > 0) {
        this.lastFlush = Date.now();
        this.schedule();
        return;
      }
      this.flush(false);
    }, wait);
  }

  /** Reports what was not reported yet: a chunk when it is all held, else a snapshot (v2) or a marker and the tail (v1). */
  flush(final: boolean): void {
    this.lastFlush = Date.now();
    const unsent = this.tail.total - this.sent;
    if (unsent === 0) return;
    const skipped = unsent > this.tail.held;
    if (this.form === 'v2') {
      if (skipped) {
        const data = this.tail.all().toString('base64');
        this.send({ sessionUpdate: 'terminal_update', terminalId: this.terminalId, output: { data } }, data.length);
      } else {
        const data = this.tail.last(unsent).toString('base64');
        this.send({ sessionUpdate: 'terminal_output_chunk', terminalId: this.terminalId, data }, data.length);
      }
      this.sent = this.tail.total;
      return;
    }
    let bytes = skipped ? this.tail.all() : this.tail.last(unsent);
    let marker = '';
    if (skipped) {
      const start = utf8Start(bytes);
      marker = `\r\n[acp-terminal: ${unsent - bytes.length + start} bytes not shown]\r\n`;
      bytes = bytes.subarray(start);
      this.skippedAny = true;
    }
    const end = final ? bytes.length : completeUtf8Length(bytes);
    const text = marker + bytes.subarray(0, end).toString('utf8');
    this.sent = this.tail.total - (bytes.length - end);
    if (this.form === 'content') {
      if (!final) this.send(this.contentUpdate(undefined), Math.min(this.tail.held, this.contentBytes));
      return;
    }
    if (text.length === 0) return;
    this.send(
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: this.toolCallId,
        _meta: { [this.form]: { terminal_id: this.terminalId, data: text } },
      },
      text.length,
    );
  }

  /** The `content` form's replacement: the tail as text (a marker line first when output was skipped). */
  private contentUpdate(status: ExitStatus | undefined): Record<string, unknown> {
    let bytes = this.tail.all();
    let prefix = '';
    if (bytes.length > this.contentBytes || this.skippedAny || this.tail.total > bytes.length) {
      bytes = bytes.subarray(Math.max(0, bytes.length - this.contentBytes));
      bytes = bytes.subarray(utf8Start(bytes));
      if (this.tail.total > bytes.length) prefix = `[acp-terminal: ${this.tail.total - bytes.length} earlier bytes not shown]\n`;
    }
    const end = status ? bytes.length : completeUtf8Length(bytes);
    let text = prefix + bytes.subarray(0, end).toString('utf8');
    if (status) text += `${text === '' || text.endsWith('\n') ? '' : '\n'}${exitLine(status)}`;
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: this.toolCallId,
      content: [{ type: 'content', content: { type: 'text', text } }],
      ...(status && this.ownsToolCall ? { status: status.exitCode === 0 ? 'completed' : 'failed' } : {}),
    };
  }

  /** The exit update(s), after the last output update. */
  private finish(status: ExitStatus): void {
    const ok = status.exitCode === 0;
    const cancelled = this.kit.wasCancelled(this);
    if (this.form === 'v2') {
      this.send({ sessionUpdate: 'terminal_update', terminalId: this.terminalId, exitStatus: status, capabilities: null });
      if (this.ownsToolCall) {
        this.send({
          sessionUpdate: 'tool_call_update',
          toolCallId: this.toolCallId,
          status: cancelled ? 'cancelled' : ok ? 'completed' : 'failed',
          capabilities: null,
        });
      }
    } else if (this.form === 'content') {
      this.send(this.contentUpdate(status));
    } else {
      this.send({
        sessionUpdate: 'tool_call_update',
        toolCallId: this.toolCallId,
        ...(this.ownsToolCall ? { status: ok ? 'completed' : 'failed' } : {}),
        _meta: { terminal_exit: { terminal_id: this.terminalId, exit_code: status.exitCode ?? null, signal: status.signal ?? null } },
      });
    }
  }

  /** Moves the report to a connection that loaded or resumed its session: the current state, then live updates. */
  replay(conn: Connection): void {
    this.conn = conn;
    const form = conn.form();
    this.form = this.kit.forcedForm ?? form;
    this.announce();
    const tail = this.tail.all();
    if (this.form === 'v2') {
      if (tail.length > 0 || this.tail.total > 0) {
        this.send({ sessionUpdate: 'terminal_update', terminalId: this.terminalId, output: { data: tail.toString('base64') } });
      }
      this.sent = this.tail.total;
    } else {
      // Text forms cannot replace output: the held tail is shown once more, from a character boundary.
      this.sent = this.tail.total - tail.length;
      this.flush(this.exitStatus !== undefined);
    }
    if (this.exitStatus) this.finish(this.exitStatus);
  }

  /** Whether the report is in flight on `conn`'s queue (used to await the last update in tests and release). */
  settled(): Promise<void> {
    return this.queue;
  }
}

/** Agent-side terminals shown live in every ACP client; see the module comment. */
export class AgentTerminals implements AsyncDisposable {
  private readonly connections = new WeakMap<object, Connection>();
  private readonly reports = new Map<string, Report>();
  private readonly cancelled = new WeakSet<Report>();
  private readonly intervalMs: number;
  private readonly contentBytes: number;
  private closed = false;
  private counter = 0;
  /** Sessions with a `session/load` / `session/resume` not answered yet → how many (on any connection). */
  private readonly loading = new Map<string, number>();
  /** The form forced by the kit's options, if any. */
  readonly forcedForm: AgentTerminalForm | undefined;

  constructor(private readonly options: AgentTerminalsOptions = {}) {
    if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
    this.forcedForm = checkForm(options.form, 'options.form');
    this.intervalMs = optionalNumber(options.updateIntervalMs, 'options.updateIntervalMs', 0) ?? DEFAULT_UPDATE_INTERVAL_MS;
    this.contentBytes = optionalNumber(options.contentBytes, 'options.contentBytes', 1) ?? DEFAULT_CONTENT_BYTES;
  }

  /** Wraps a v1 `AgentApp` as the connector to give `agentProtocolRouter().withV1()` (or to `connect(stream)` directly). */
  v1<App extends { connect(stream: never, options?: unknown): unknown }>(app: App): AgentTerminalsConnector {
    return { connect: (stream, options) => this.attach(app, 1, stream, options) };
  }

  /**
   * Wraps a v2 `AgentApp` as the connector to give `agentProtocolRouter().withV2()`; registers
   * `terminal/cancel` and `tool_call/cancel` on it (answering -32602 for what the kit does not know).
   */
  v2<App extends { connect(stream: never, options?: unknown): unknown; onRequest(method: string, handler: (ctx: never) => unknown): unknown }>(
    app: App,
  ): AgentTerminalsConnector {
    const fail = async (error: unknown, data: Record<string, unknown>): Promise<never> => {
      const { RequestError } = await sdkV2ForApp(app);
      const code = errorCode(error);
      throw new RequestError(-32602, errorMessage(error), { ...(code ? { code } : {}), ...data });
    };
    app.onRequest('terminal/cancel', (async (ctx: { params: { sessionId: string; terminalId: string } }) => {
      try {
        await this.cancel(ctx.params.sessionId, { terminalId: ctx.params.terminalId });
        return {};
      } catch (error) {
        return fail(error, { terminalId: ctx.params?.terminalId });
      }
    }) as never);
    app.onRequest('tool_call/cancel', (async (ctx: { params: { sessionId: string; toolCallId: string } }) => {
      try {
        await this.cancel(ctx.params.sessionId, { toolCallId: ctx.params.toolCallId });
        return {};
      } catch (error) {
        return fail(error, { toolCallId: ctx.params?.toolCallId });
      }
    }) as never);
    return { connect: (stream, options) => this.attach(app, 2, stream, options) };
  }

  private attach(app: { connect(stream: never, options?: unknown): unknown }, version: 1 | 2, stream: unknown, options: unknown): AgentConnectionLike {
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the agent terminal kit is closed');
    const { readable, writable } = stream as { readable: ReadableStream<WireMessage>; writable: WritableStream<WireMessage> };
    const conn = new Connection(version);
    const tapped = {
      readable: readable.pipeThrough(
        new TransformStream<WireMessage, WireMessage>({
          transform: (message, controller) => {
            this.incoming(conn, message);
            controller.enqueue(message);
          },
          flush: () => this.disconnected(conn),
        }),
      ),
      writable: new WritableStream<WireMessage>({
        write: async (message) => {
          const writer = writable.getWriter();
          try {
            await writer.write(message);
          } finally {
            writer.releaseLock();
          }
          this.outgoing(conn, message);
        },
        close: async () => {
          this.disconnected(conn);
          await writable.close();
        },
        abort: async (reason) => {
          this.disconnected(conn);
          await writable.abort(reason);
        },
      }),
    };
    const connection = app.connect(tapped as never, options) as AgentConnectionLike & { client?: ClientSide };
    conn.client = connection.client;
    const key = connectionKey(connection);
    if (key) this.connections.set(key, conn);
    void connection.closed?.then(
      () => this.disconnected(conn),
      () => this.disconnected(conn),
    );
    return connection;
  }

  private disconnected(conn: Connection): void {
    if (conn.closed) return;
    conn.close();
    // Loads that will never be answered on this connection no longer hold released terminals back.
    for (const sessionId of conn.loads.values()) this.loadEnded(sessionId);
    conn.loads.clear();
  }

  /** A `session/load` / `session/resume` of `sessionId` was answered (or its connection ended). */
  private loadEnded(sessionId: string): void {
    const n = (this.loading.get(sessionId) ?? 1) - 1;
    if (n > 0) {
      this.loading.set(sessionId, n);
      return;
    }
    this.loading.delete(sessionId);
    // Terminals released while the client was replaying were kept for that replay; it went out.
    for (const report of this.reportsOf(sessionId)) if (report.released) this.forget(report);
  }

  private forget(report: Report): void {
    if (this.reports.get(report.terminalId) === report) this.reports.delete(report.terminalId);
  }

  /** What the kit reads from the client's messages. */
  private incoming(conn: Connection, message: WireMessage): void {
    const params = message.params ?? {};
    const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
    switch (message.method) {
      case 'initialize':
        conn.initialize = params;
        break;
      case 'session/prompt':
        if (message.id != null && sessionId) conn.prompts.set(message.id, sessionId);
        break;
      case 'session/load':
      case 'session/resume':
        if (message.id != null && sessionId && !conn.loads.has(message.id)) {
          conn.loads.set(message.id, sessionId);
          this.loading.set(sessionId, (this.loading.get(sessionId) ?? 0) + 1);
        }
        break;
      case 'session/cancel':
        // v1: the turn's commands stop. v2: the turn ends, background work goes on.
        if (sessionId) {
          for (const report of this.reportsOf(sessionId)) {
            if (!(conn.version === 2 && report.background) && !report.exitStatus) this.stop(report);
          }
        }
        break;
      case 'session/close':
        if (sessionId) {
          for (const report of this.reportsOf(sessionId)) {
            if (report.released) this.forget(report);
            else void this.releaseReport(report);
          }
        }
        break;
    }
  }

  /** What the kit reads from the agent's answers. */
  private outgoing(conn: Connection, message: WireMessage): void {
    if (message.method === 'session/update') {
      // v2: the agent's idle state update ends the turn; what still runs is background work from then on.
      const update = message.params?.update as { sessionUpdate?: string; state?: string } | undefined;
      const sessionId = message.params?.sessionId;
      if (update?.sessionUpdate === 'state_update' && update.state === 'idle' && typeof sessionId === 'string') {
        if (this.markBackground(sessionId)) this.backgroundChanged(sessionId);
      }
      return;
    }
    if (message.id == null || message.method !== undefined) return;
    const prompt = conn.prompts.get(message.id);
    if (prompt !== undefined) {
      conn.prompts.delete(message.id);
      // v1: the prompt's response ends the turn.
      if (conn.version === 1 && this.markBackground(prompt)) this.backgroundChanged(prompt);
    }
    const loaded = conn.loads.get(message.id);
    if (loaded !== undefined) {
      conn.loads.delete(message.id);
      if ('result' in message) for (const report of this.reportsOf(loaded)) report.replay(conn);
      this.loadEnded(loaded);
    }
  }

  private reportsOf(sessionId: string): Report[] {
    return [...this.reports.values()].filter((r) => r.sessionId === sessionId);
  }

  /** Marks the session's running terminals as background work; true when any was not yet. */
  private markBackground(sessionId: string): boolean {
    let changed = false;
    for (const report of this.reportsOf(sessionId)) {
      if (!report.exitStatus && !report.background) {
        report.background = true;
        changed = true;
      }
    }
    return changed;
  }

  /**
   * Ends the session's turn for the kit (v2): its running terminals become background work; returns the
   * list to put in the idle `state_update` that the agent sends next (the kit also notices that update itself).
   */
  endTurn(sessionId: string): BackgroundTerminal[] {
    this.markBackground(requireString(sessionId, 'sessionId'));
    return this.background(sessionId);
  }

  /** The session's background list (terminals still running after their prompt ended), for a v2 `state_update`. */
  background(sessionId: string): BackgroundTerminal[] {
    return this.reportsOf(sessionId)
      .filter((r) => r.background && !r.exitStatus)
      .map((r) => ({ type: 'terminal', terminalId: r.terminalId }));
  }

  private backgroundChanged(sessionId: string): void {
    this.options.onBackgroundChange?.(sessionId, this.background(sessionId));
  }

  /** Called by a report once its exit update left. */
  exited(report: Report): void {
    if (report.background) this.backgroundChanged(report.sessionId);
  }

  /** Whether the kit cancelled `report` (its tool call then ends `cancelled` in v2). */
  wasCancelled(report: Report): boolean {
    return this.cancelled.has(report);
  }

  private stop(report: Report): void {
    this.cancelled.add(report);
    void report.terminal.kill().catch(() => undefined);
  }

  /**
   * Cancels a running terminal by id or by its tool call (`terminal/cancel`, `tool_call/cancel`): the
   * process group gets SIGTERM, then SIGKILL after the grace period; the terminal stays readable.
   * Rejects with `ERR_TERMINAL_NOT_FOUND` (unknown) or `ERR_TERMINAL_EXITED`.
   */
  async cancel(sessionId: string, target: { terminalId?: string; toolCallId?: string }): Promise<void> {
    requireString(sessionId, 'sessionId');
    const report = this.reportsOf(sessionId).find((r) =>
      target.terminalId !== undefined ? r.terminalId === target.terminalId : r.toolCallId === target.toolCallId,
    );
    const name = target.terminalId !== undefined ? 'terminalId' : 'toolCallId';
    const id = JSON.stringify(target.terminalId ?? target.toolCallId);
    if (!report || report.released) {
      throw new AcpTerminalError('ERR_TERMINAL_NOT_FOUND', `${name}: no terminal ${id} in this session`, { [name]: id });
    }
    if (report.exitStatus) throw new AcpTerminalError('ERR_TERMINAL_EXITED', `${name}: terminal ${id} already exited`, { [name]: id });
    this.cancelled.add(report);
    await report.terminal.kill();
  }

  /**
   * Runs a command for the agent and shows it live to the client of `ctx` (a request handler's context,
   * or an `AgentConnection`), in the form that client understands. Returns a `TerminalHandle`-shaped
   * handle. Rejects with `ERR_INVALID_ARG` naming a bad field, `ERR_NOT_ATTACHED` when `ctx` belongs to an
   * app the kit did not wrap, or the backend's error when the command cannot start.
   */
  async createTerminal(
    ctx: unknown,
    params: CreateTerminalParams & { sessionId: string },
    options: AgentTerminalOptions = {},
  ): Promise<AgentTerminal> {
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the agent terminal kit is closed');
    const sessionId = requireString(params?.sessionId, 'sessionId');
    const command = requireString(params.command, 'command');
    const cwd = optionalAbsolutePath(params.cwd, 'cwd') ?? process.cwd();
    const conn = this.connectionOf(ctx);
    const form = checkForm(options.form, 'form') ?? this.forcedForm ?? conn.form();
    const toolCallId = options.toolCallId === undefined ? `acp-terminal-${++this.counter}` : requireString(options.toolCallId, 'toolCallId');
    const ownsToolCall = options.toolCallId === undefined;
    const title = options.title === undefined ? shellLine(command, params.args) : requireString(options.title, 'title');

    if (options.prefer === 'client' && conn.clientTerminals() && conn.client?.createTerminal) {
      return this.clientTerminal(conn, params, toolCallId, ownsToolCall, title);
    }

    const pty = options.pty == null ? undefined : { cols: options.pty.cols ?? 80, rows: options.pty.rows ?? 24 };
    const terminalOptions: CreateTerminalOptions & { pty?: { cols: number; rows: number } } = {
      ...this.options.terminalOptions,
      ...options.terminalOptions,
      ...(pty ? { pty } : {}),
    };
    const limit = params.outputByteLimit ?? DEFAULT_REPORT_BYTES;
    const early: Array<[Buffer, { dropped?: number }]> = [];
    let deliver: ((chunk: Buffer, info?: { dropped?: number }) => void) | undefined;
    let terminal: TerminalLike;
    let subscribe: (listener: (chunk: Buffer, info?: { dropped?: number }) => void) => () => void;
    if (this.options.createTerminal) {
      terminal = await this.options.createTerminal(params, terminalOptions);
      subscribe = (listener) => terminal.onOutput(listener, { replay: true });
    } else {
      // The listener is attached at creation, before the command starts: every byte is seen.
      terminal = await loadNativeCreateTerminal()(params, {
        ...terminalOptions,
        onOutput: (chunk, info) => (deliver ? deliver(chunk, info) : early.push([chunk, info])),
      });
      subscribe = (listener) => {
        deliver = listener;
        for (const [chunk, info] of early.splice(0)) listener(chunk, info);
        return () => {
          deliver = () => undefined;
        };
      };
    }
    if (this.closed) {
      // The kit closed while the command started: nothing may outlive close().
      await terminal.kill().catch(() => undefined);
      await terminal.waitForExit().catch(() => undefined);
      await terminal.release().catch(() => undefined);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the agent terminal kit is closed');
    }
    const report = new Report(
      this,
      conn,
      sessionId,
      terminal.id,
      toolCallId,
      form,
      ownsToolCall,
      title,
      shellLine(command, params.args),
      terminal.cwd ?? cwd,
      pty,
      terminal,
      Math.max(1, limit),
      this.intervalMs,
      this.contentBytes,
      subscribe,
    );
    this.reports.set(terminal.id, report);
    return this.handle(report);
  }

  private handle(report: Report): AgentTerminal {
    const release = (): Promise<void> => this.releaseReport(report);
    return {
      id: report.terminalId,
      toolCallId: report.toolCallId,
      form: report.form,
      pid: report.terminal.pid,
      currentOutput: (): Promise<OutputSnapshot> => report.terminal.currentOutput(),
      waitForExit: async () => report.done,
      kill: async () => {
        if (!report.exitStatus) this.cancelled.add(report);
        await report.terminal.kill();
      },
      release,
      [Symbol.asyncDispose]: release,
    };
  }

  /** Kills if needed, lets the last update out, then frees the terminal. */
  private async releaseReport(report: Report): Promise<void> {
    if (report.released) return;
    report.released = true;
    if (!report.exitStatus) await report.terminal.kill().catch(() => undefined);
    await report.done.catch(() => undefined);
    await report.settled();
    // A client replaying the session (its load/resume not answered yet) still gets this terminal's
    // final state: the report (its bounded tail) stays until that answer went out, then goes.
    if (!this.loading.has(report.sessionId)) this.forget(report);
    await report.terminal.release().catch(() => undefined);
  }

  /**
   * Internal diagnostics (not part of the API's promise; for tests and benchmarks): the memory a
   * terminal's reporter holds. `heldBytes` of output in its tail (below `3 * limit`,
   * `peakHeldBytes` the most ever; `maxChunk` the largest chunk the core delivered), `queuedBytes` of output updates handed to the connection and not yet
   * written (at most about two updates of `limit` bytes, base64), undefined for an unknown terminal.
   */
  outputStats(terminalId: string):
    | { limit: number; heldBytes: number; peakHeldBytes: number; maxChunk: number; totalBytes: number; queuedBytes: number; peakQueuedBytes: number }
    | undefined {
    const report = this.reports.get(terminalId);
    if (!report) return undefined;
    const tail = report.tail;
    return {
      limit: tail.limit,
      heldBytes: tail.held,
      peakHeldBytes: tail.peakHeld,
      maxChunk: tail.maxChunk,
      totalBytes: tail.total,
      queuedBytes: report.queuedBytes,
      peakQueuedBytes: report.peakQueuedBytes,
    };
  }

  /** `prefer: 'client'`: the client's own terminal, embedded in the tool call. */
  private async clientTerminal(
    conn: Connection,
    params: CreateTerminalParams & { sessionId: string },
    toolCallId: string,
    ownsToolCall: boolean,
    title: string,
  ): Promise<AgentTerminal> {
    const handle = await conn.client!.createTerminal!({
      sessionId: params.sessionId,
      command: params.command,
      ...(params.args ? { args: params.args } : {}),
      ...(params.env ? { env: params.env } : {}),
      ...(params.cwd ? { cwd: params.cwd } : {}),
      ...(params.outputByteLimit != null ? { outputByteLimit: params.outputByteLimit } : {}),
    });
    const content = [{ type: 'terminal', terminalId: handle.id }];
    await conn.client!.notify('session/update', {
      sessionId: params.sessionId,
      update: ownsToolCall
        ? { sessionUpdate: 'tool_call', toolCallId, title, kind: 'execute', status: 'in_progress', content }
        : { sessionUpdate: 'tool_call_update', toolCallId, content },
    });
    return Object.assign(handle, { toolCallId, form: 'client' as const, pid: undefined });
  }

  /**
   * Shows the commands of a `ShellSessions` live in the client: one display terminal per command (as
   * Zed shows one terminal per execute tool call, and the v2 RFD's terminal has one command and one exit
   * status), live across `running` results; typed input and keys (`^C`) are shown since the session's
   * shell runs without echo. `terminal/cancel` / `tool_call/cancel` / v1 `session/cancel` interrupt the
   * command (`shells.interrupt()`: C-c, then the session's escalation).
   */
  shellSessions(shells: ShellSessionsLike): ReportedShellSessions {
    const running = new Map<string, SessionCommand>();
    const unsubscribe = shells.onOutput((terminalId, chunk) => running.get(terminalId)?.deliver(chunk));
    return {
      execute: async (ctx, sessionId, request, options = {}) => {
        const terminalId = request?.terminalId ?? 'default';
        let command = running.get(terminalId);
        if (command) {
          const echo = echoOf(request);
          if (echo) command.deliver(Buffer.from(echo));
        } else if (typeof request?.command === 'string' && request.command.trim() !== '' && !request.isInput && !parseKeys(request.command)) {
          command = await this.sessionCommand(ctx, sessionId, terminalId, request.command, shells, running, options);
        }
        let result: ExecuteResult;
        try {
          result = await shells.execute(request);
        } catch (error) {
          // Refused before it ran (a bad field, a closed host): the display ends without a status.
          if (command && running.get(terminalId) === command && command.isNew) command.finish(null);
          throw error;
        }
        if (command) command.isNew = false;
        if (command && result.status !== 'running') command.finish(result);
        return result;
      },
      close: unsubscribe,
    };
  }

  private async sessionCommand(
    ctx: unknown,
    sessionId: string,
    terminalId: string,
    commandText: string,
    shells: ShellSessionsLike,
    running: Map<string, SessionCommand>,
    options: ReportedExecuteOptions,
  ): Promise<SessionCommand> {
    requireString(sessionId, 'sessionId');
    const conn = this.connectionOf(ctx);
    const form = checkForm(options.form, 'form') ?? this.forcedForm ?? conn.form();
    const toolCallId = options.toolCallId === undefined ? `acp-terminal-${++this.counter}` : requireString(options.toolCallId, 'toolCallId');
    const displayId = `${terminalId}-${++this.counter}`;
    let listener: ((chunk: Buffer) => void) | undefined;
    const early: Buffer[] = [];
    let resolveExit: (status: ExitStatus) => void = () => undefined;
    const exit = new Promise<ExitStatus>((resolve) => (resolveExit = resolve));
    let finished = false;
    // Filled right below: the adapter's currentOutput reads the report's tail.
    const ref: { report?: Report } = {};
    const command: SessionCommand = {
      isNew: true,
      deliver: (chunk: Buffer): void => (listener ? listener(chunk) : void early.push(chunk)),
      finish: (result: ExecuteResult | null): void => {
        if (finished) return;
        finished = true;
        if (running.get(terminalId) === command) running.delete(terminalId);
        resolveExit({ exitCode: result?.status === 'completed' ? result.exitCode : null, signal: null });
      },
    };
    const adapter: TerminalLike = {
      id: displayId,
      get pid() {
        return shells.shellPid(terminalId) ?? 0;
      },
      currentOutput: async () => ({
        output: ref.report ? ref.report.tail.all().toString('utf8') : '',
        truncated: ref.report ? ref.report.tail.total > ref.report.tail.held : false,
      }),
      waitForExit: () => exit,
      kill: async () => {
        const result = await shells.interrupt(terminalId);
        command.finish(result);
      },
      release: async () => undefined,
      onOutput: (l) => {
        listener = l;
        for (const chunk of early.splice(0)) l(chunk);
        return () => {
          listener = undefined;
        };
      },
    };
    const report = new Report(
      this,
      conn,
      sessionId,
      displayId,
      toolCallId,
      form,
      options.toolCallId === undefined,
      options.title === undefined ? commandText : requireString(options.title, 'title'),
      commandText,
      process.cwd(),
      undefined,
      adapter,
      DEFAULT_REPORT_BYTES,
      this.intervalMs,
      this.contentBytes,
      (l) => adapter.onOutput(l),
    );
    ref.report = report;
    this.reports.set(displayId, report);
    const forget = (): void => {
      if (this.reports.get(displayId) === report) this.reports.delete(displayId);
    };
    report.done.then(forget, forget);
    running.set(terminalId, command);
    return command;
  }

  /** The connection of a handler's context, or `ERR_NOT_ATTACHED`. */
  private connectionOf(ctx: unknown): Connection {
    const key = connectionKey(ctx);
    const conn = key ? this.connections.get(key) : undefined;
    if (!conn) {
      throw new AcpTerminalError(
        'ERR_NOT_ATTACHED',
        'ctx: not a context of an app wrapped by this kit (connect through kit.v1(app) / kit.v2(app))',
        { field: 'ctx' },
      );
    }
    return conn;
  }

  /** Kills and releases every terminal (each still sends its exit update). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.reports.values()].map((r) => this.releaseReport(r)));
    this.reports.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Creates the kit; see `AgentTerminals`. */
export function agentTerminals(options: AgentTerminalsOptions = {}): AgentTerminals {
  return new AgentTerminals(options);
}

const FORMS: readonly AgentTerminalForm[] = ['v2', 'terminal_output', 'terminal_output_delta', 'content'];

function checkForm(value: unknown, field: string): AgentTerminalForm | undefined {
  if (value === undefined) return undefined;
  if (!FORMS.includes(value as AgentTerminalForm)) throw invalidArg(field, `must be one of ${FORMS.join(', ')}`);
  return value as AgentTerminalForm;
}

function optionalNumber(value: unknown, field: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw invalidArg(field, `must be an integer of at least ${min}`);
  return value;
}

/** What a terminal would show for input typed or keys pressed in a running command (the shell does not echo). */
function echoOf(request: ExecuteRequest): string {
  const text = request?.command;
  if (typeof text !== 'string' || text === '') return '';
  const keys = parseKeys(text);
  if (keys && (!request.isInput || keys.length === 1)) {
    return keys
      .map((key) => {
        const ctrl = /^C-(.)$/i.exec(key);
        if (ctrl) return `^${ctrl[1]!.toUpperCase()}`;
        if (key === 'Enter') return '\r\n';
        if (key === 'Tab') return '\t';
        if (key === 'Space') return ' ';
        return '';
      })
      .join('');
  }
  if (!request.isInput) return '';
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body.replace(/\r?\n/g, '\r\n') + (request.noEnter ? '' : '\r\n');
}
