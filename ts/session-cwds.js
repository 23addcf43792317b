"use strict";
/**
 * Per-session working directories, learned from the wire: the client's `session/new` (the `cwd` it sent,
 * the `sessionId` the agent answered), `session/load` and `session/resume` (both name the session and
 * its `cwd`) go through a connection's stream, and each tells the host the session's directory
 * (`TerminalHost.setSessionCwd`), which then applies to that session's `terminal/create` requests
 * without `cwd`. `registerTerminalHandlers` makes every `connect`/`connectWith` of the app do this.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.trackSessionCwds = trackSessionCwds;
exports.trackConnections = trackConnections;
/** Client requests whose params carry `cwd` and `sessionId`. */
const NAMES_SESSION = new Set(['session/load', 'session/resume']);
/** Client requests whose params carry `cwd` and whose result carries the new `sessionId`. */
const CREATES_SESSION = new Set(['session/new', 'session/fork']);
/**
 * `stream` (a client's connection to an agent) passing every message through unchanged, and telling
 * `host` the `cwd` of each session the client creates, loads or resumes through it. Use it when you
 * connect a `ClientApp` yourself and want the host to learn the sessions' directories.
 */
function trackSessionCwds(stream, host) {
    /** `session/new` requests sent and not yet answered: request id -> the `cwd` they sent. */
    const pending = new Map();
    const record = (sessionId, cwd) => {
        if (typeof sessionId !== 'string' || typeof cwd !== 'string')
            return;
        try {
            host.setSessionCwd(sessionId, cwd);
        }
        catch {
            // A relative or malformed cwd: the agent will refuse the session itself; nothing to learn.
        }
    };
    const outgoing = new TransformStream({
        transform(message, controller) {
            const m = message;
            if (typeof m.method === 'string' && m.params && typeof m.params === 'object') {
                if (NAMES_SESSION.has(m.method))
                    record(m.params.sessionId, m.params.cwd);
                else if (CREATES_SESSION.has(m.method) && (typeof m.id === 'string' || typeof m.id === 'number') && typeof m.params.cwd === 'string') {
                    pending.set(m.id, m.params.cwd);
                }
            }
            controller.enqueue(message);
        },
    });
    const incoming = new TransformStream({
        transform(message, controller) {
            const m = message;
            // A response (no method) to a pending session/new: recorded before the SDK sees it, so before any
            // terminal/create the agent sends for the new session.
            if (m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number') && pending.has(m.id)) {
                const cwd = pending.get(m.id);
                pending.delete(m.id);
                if (m.result && typeof m.result === 'object')
                    record(m.result.sessionId, cwd);
            }
            controller.enqueue(message);
        },
    });
    void outgoing.readable.pipeTo(stream.writable).catch(() => undefined);
    return { writable: outgoing.writable, readable: stream.readable.pipeThrough(incoming) };
}
/** Two in-memory streams of JSON-RPC messages connected to each other. */
function memoryStreamPair() {
    const toPeer = new TransformStream();
    const fromPeer = new TransformStream();
    return [
        { writable: toPeer.writable, readable: fromPeer.readable },
        { writable: fromPeer.writable, readable: toPeer.readable },
    ];
}
function isStream(target) {
    return typeof target === 'object' && target !== null && 'readable' in target && 'writable' in target;
}
/**
 * Makes `app.connect(target)` and `app.connectWith(target, op)` go through `trackSessionCwds`: for a
 * stream (an agent process) the stream is wrapped; for an in-process `AgentApp` the agent is connected to
 * one end of an in-memory pair, the client to the other, wrapped, and each side closes with the other.
 */
function trackConnections(app, host) {
    const connect = app.connect.bind(app);
    const connectWith = app.connectWith.bind(app);
    const tracked = (target) => {
        if (isStream(target))
            return { stream: trackSessionCwds(target, host), agent: undefined };
        const [mine, theirs] = memoryStreamPair();
        return { stream: trackSessionCwds(mine, host), agent: target.connect(theirs) };
    };
    app.connect = ((target) => {
        const { stream, agent } = tracked(target);
        const connection = connect(stream);
        if (agent) {
            void connection.closed.then(() => agent.close());
            void agent.closed.then(() => connection.close());
        }
        return connection;
    });
    app.connectWith = (async (target, op) => {
        const { stream, agent } = tracked(target);
        try {
            return await connectWith(stream, op);
        }
        finally {
            agent?.close();
        }
    });
}
