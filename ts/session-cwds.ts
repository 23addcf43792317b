/**
 * What the host learns from a client's connection, on the wire: the client's `session/new` (the `cwd` it
 * sent, the `sessionId` the agent answered), `session/load` and `session/resume` (both name the session and
 * its `cwd`) tell the host the session's directory (`TerminalHost.setSessionCwd`), which then applies to
 * that session's `terminal/create` requests without `cwd` (a relative one is recorded as refused,
 * `refuseSessionCwd`, never dropped in silence); the client's `session/cancel` tells it the session was
 * cancelled (`TerminalHost.cancelSession`); and the client's `initialize` gets
 * `clientCapabilities.terminal: true`. `registerTerminalHandlers` makes every `connect`/`connectWith` of
 * the app do this.
 */

import * as path from 'node:path';
import type { RegisterTerminalHandlersOptions, TerminalHost } from './host';
import type { AgentApp, AgentConnection, AnyMessage, ClientApp, ClientConnection, ClientContext, Stream } from './sdk-types';

/** Client requests whose params carry `cwd` and `sessionId`. */
const NAMES_SESSION = new Set(['session/load', 'session/resume']);
/** Client requests whose params carry `cwd` and whose result carries the new `sessionId`. */
const CREATES_SESSION = new Set(['session/new', 'session/fork']);

/**
 * `stream` (a client's connection to an agent) passing every message through unchanged, and telling
 * `host` the `cwd` of each session the client creates, loads or resumes through it. Use it when you
 * connect a `ClientApp` yourself and want the host to learn the sessions' directories.
 */
export function trackSessionCwds(stream: Stream, host: TerminalHost, options: RegisterTerminalHandlersOptions = {}): Stream {
  const advertise = options.advertiseTerminal !== false;
  /** `session/new` requests sent and not yet answered: request id -> the `cwd` they sent. */
  const pending = new Map<string | number, string>();
  const record = (sessionId: unknown, cwd: unknown): void => {
    if (typeof sessionId !== 'string' || typeof cwd !== 'string') return;
    try {
      if (cwd !== '' && !cwd.includes('\0') && !path.isAbsolute(cwd)) {
        // ACP requires an absolute cwd; some builders pass a relative one on. Its commands must not run in
        // whatever directory this process has: refuse them, saying why.
        host.refuseSessionCwd(sessionId, cwd);
        process.emitWarning(
          `acp-terminal: session ${JSON.stringify(sessionId)} was opened with the relative cwd ${JSON.stringify(cwd)} ` +
            '(ACP requires an absolute path); its terminal/create requests without cwd are refused with ERR_INVALID_CWD',
          { code: 'ACP_TERMINAL_RELATIVE_SESSION_CWD' },
        );
      } else host.setSessionCwd(sessionId, cwd);
    } catch {
      // A malformed cwd (empty, NUL): the agent refuses the session itself; nothing to learn.
    }
  };
  const outgoing = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      const m = message as { id?: unknown; method?: unknown; params?: { sessionId?: unknown; cwd?: unknown } };
      if (m.method === 'initialize' && advertise) message = withTerminalCapability(message);
      if (typeof m.method === 'string' && m.params && typeof m.params === 'object') {
        if (m.method === 'session/cancel' && typeof m.params.sessionId === 'string') void host.cancelSession(m.params.sessionId).catch(() => undefined);
        if (NAMES_SESSION.has(m.method)) record(m.params.sessionId, m.params.cwd);
        else if (CREATES_SESSION.has(m.method) && (typeof m.id === 'string' || typeof m.id === 'number') && typeof m.params.cwd === 'string') {
          pending.set(m.id, m.params.cwd);
        }
      }
      controller.enqueue(message);
    },
  });
  const incoming = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      const m = message as { id?: unknown; method?: unknown; result?: { sessionId?: unknown } };
      // A response (no method) to a pending session/new: recorded before the SDK sees it, so before any
      // terminal/create the agent sends for the new session.
      if (m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number') && pending.has(m.id)) {
        const cwd = pending.get(m.id);
        pending.delete(m.id);
        if (m.result && typeof m.result === 'object') record(m.result.sessionId, cwd);
      }
      controller.enqueue(message);
    },
  });
  void outgoing.readable.pipeTo(stream.writable).catch(() => undefined);
  return { writable: outgoing.writable, readable: stream.readable.pipeThrough(incoming) };
}

/** An `initialize` request with `clientCapabilities.terminal: true` (a copy; the client's object is not changed). */
function withTerminalCapability(message: AnyMessage): AnyMessage {
  const m = message as { params?: unknown };
  const params = (typeof m.params === 'object' && m.params !== null ? m.params : {}) as { clientCapabilities?: unknown };
  const caps = (typeof params.clientCapabilities === 'object' && params.clientCapabilities !== null ? params.clientCapabilities : {}) as {
    terminal?: unknown;
  };
  if (caps.terminal === true) return message;
  return { ...m, params: { ...params, clientCapabilities: { ...caps, terminal: true } } } as AnyMessage;
}

/** Two in-memory streams of JSON-RPC messages connected to each other. */
function memoryStreamPair(): [Stream, Stream] {
  const toPeer = new TransformStream<AnyMessage, AnyMessage>();
  const fromPeer = new TransformStream<AnyMessage, AnyMessage>();
  return [
    { writable: toPeer.writable, readable: fromPeer.readable },
    { writable: fromPeer.writable, readable: toPeer.readable },
  ];
}

function isStream(target: Stream | AgentApp): target is Stream {
  return typeof target === 'object' && target !== null && 'readable' in target && 'writable' in target;
}

/**
 * Makes `app.connect(target)` and `app.connectWith(target, op)` go through `trackSessionCwds`: for a
 * stream (an agent process) the stream is wrapped; for an in-process `AgentApp` the agent is connected to
 * one end of an in-memory pair, the client to the other, wrapped, and each side closes with the other.
 */
export function trackConnections(app: ClientApp, host: TerminalHost, options: RegisterTerminalHandlersOptions = {}): void {
  const connect = app.connect.bind(app) as (stream: Stream) => ClientConnection;
  const connectWith = app.connectWith.bind(app) as <T>(stream: Stream, op: (context: ClientContext) => T | Promise<T>) => Promise<T>;
  const tracked = (target: Stream | AgentApp): { stream: Stream; agent: AgentConnection | undefined } => {
    if (isStream(target)) return { stream: trackSessionCwds(target, host, options), agent: undefined };
    const [mine, theirs] = memoryStreamPair();
    return { stream: trackSessionCwds(mine, host, options), agent: target.connect(theirs) };
  };
  app.connect = ((target: Stream | AgentApp): ClientConnection => {
    const { stream, agent } = tracked(target);
    const connection = connect(stream);
    if (agent) {
      void connection.closed.then(() => agent.close());
      void agent.closed.then(() => connection.close());
    }
    return connection;
  }) as ClientApp['connect'];
  app.connectWith = (async <T>(target: Stream | AgentApp, op: (context: ClientContext) => T | Promise<T>): Promise<T> => {
    const { stream, agent } = tracked(target);
    try {
      return await connectWith(stream, op);
    } finally {
      agent?.close();
    }
  }) as ClientApp['connectWith'];
}
