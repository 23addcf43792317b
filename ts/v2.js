"use strict";
/**
 * ACP v2 (draft) bridge: in v2 the agent owns terminals. It runs the command itself and reports it to the
 * client with `terminal_update` / `terminal_output_chunk` session updates; the client may send
 * `terminal/cancel`. This module turns a TerminalHandle into exactly those updates.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.V2TerminalRegistry = void 0;
exports.shellLine = shellLine;
exports.bridgeTerminalToV2 = bridgeTerminalToV2;
exports.startV2Terminal = startV2Terminal;
const errors_1 = require("./errors");
const native_1 = require("./native");
const sdk_1 = require("./sdk");
const types_1 = require("./types");
const shell_quote_1 = require("./shell-quote");
const tail_buffer_1 = require("./tail-buffer");
const validate_1 = require("./validate");
/** Bytes of streamed output kept to check the streamed chunks against the final snapshot. */
const VERIFY_TAIL_BYTES = 1024 * 1024;
/** Quotes `words` as a POSIX shell line (for display). */
function shellLine(command, args) {
    if (!args || args.length === 0)
        return command;
    return [command, ...args].map(shell_quote_1.shellWord).join(' ');
}
/**
 * Starts reporting `terminal` as a v2 agent-owned terminal: a first `terminal_update` (command, cwd,
 * cancel capability), a `terminal_output_chunk` per output chunk (base64, bytes as produced), and a final
 * `terminal_update` with `exitStatus`. Call it right after the terminal was created, in the same tick, so
 * no output chunk is missed (a missed chunk is repaired with an output snapshot in the final update).
 */
function bridgeTerminalToV2(terminal, options) {
    // replay: what the terminal wrote before the bridge existed is streamed first, so the client
    // sees the whole output (within the terminal's limit), not only what came after.
    return bridge(terminal, options, (listener) => terminal.onOutput(listener, { replay: true }), false);
}
/** How long the bridge waits, after the exit, for output chunks still on their way to JS. */
const CATCH_UP_MS = 2000;
/**
 * `everyByte`: the source delivers every byte from the first (a create-time listener), so after the
 * exit the bridge waits (at most `CATCH_UP_MS`) for the chunks still on their way before it ends.
 */
function bridge(terminal, options, source, everyByte) {
    const sessionId = (0, validate_1.requireString)(options?.sessionId, 'sessionId');
    const command = (0, validate_1.requireString)(options.command, 'command');
    if (typeof options.send !== 'function')
        throw new errors_1.AcpTerminalError('ERR_INVALID_ARG', 'send: must be a function', { field: 'send' });
    const cwd = (0, validate_1.optionalAbsolutePath)(options.cwd, 'cwd') ?? process.cwd();
    const terminalId = options.terminalId === undefined ? terminal.id : (0, validate_1.requireString)(options.terminalId, 'terminalId');
    const cancellable = options.cancellable ?? true;
    let size = options.size == null ? undefined : checkSize(options.size.cols, options.size.rows, 'size.');
    let sendError;
    let queue = Promise.resolve();
    const send = (update) => {
        queue = queue.then(async () => {
            if (sendError !== undefined)
                return;
            try {
                await options.send({ sessionId, update });
            }
            catch (error) {
                sendError = error;
            }
        });
    };
    const chunk = (bytes) => send({ sessionUpdate: 'terminal_output_chunk', terminalId, data: bytes.toString('base64') });
    send({
        sessionUpdate: 'terminal_update',
        terminalId,
        command: shellLine(command, options.args),
        cwd,
        ...(size ? { size: { ...size } } : {}),
        ...(cancellable ? { capabilities: { cancel: {} } } : {}),
    });
    const streamed = new tail_buffer_1.TailBuffer(VERIFY_TAIL_BYTES);
    let dropped = 0;
    let caughtUp;
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
    const allStreamed = () => {
        const done = () => {
            const total = (0, types_1.readOutputBytes)(terminal);
            return !everyByte || total === undefined || streamed.total + dropped >= total;
        };
        if (done())
            return Promise.resolve();
        return new Promise((resolve) => {
            const finish = () => {
                clearTimeout(timer);
                caughtUp = undefined;
                resolve();
            };
            const timer = setTimeout(finish, CATCH_UP_MS);
            caughtUp = () => {
                if (done())
                    finish();
            };
        });
    };
    let exited = false;
    const done = (async () => {
        let status;
        try {
            const { exitCode, signal } = await terminal.waitForExit();
            status = { exitCode, signal };
            await allStreamed();
        }
        finally {
            exited = true;
            unsubscribe();
        }
        const final = {
            sessionUpdate: 'terminal_update',
            terminalId,
            exitStatus: status,
            ...(cancellable ? { capabilities: null } : {}),
        };
        try {
            const snapshot = await terminal.currentOutput();
            const repair = reconcile(streamed, Buffer.from(snapshot.output, 'utf8'), snapshot.truncated);
            if (repair.kind === 'append')
                chunk(repair.bytes);
            if (repair.kind === 'replace')
                final.output = { data: repair.bytes.toString('base64') };
        }
        catch {
            // Released by its owner meanwhile: the streamed chunks are all there is.
        }
        send(final);
        await queue;
        if (sendError !== undefined)
            throw sendError;
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
                throw new errors_1.AcpTerminalError('ERR_TERMINAL_EXITED', `terminalId: terminal ${JSON.stringify(terminalId)} already exited`, {
                    terminalId,
                });
            }
            await terminal.kill();
        },
        async resize(cols, rows) {
            const next = checkSize(cols, rows, '');
            const resizable = terminal;
            if (typeof resizable.resize !== 'function' || resizable.isPty === false) {
                throw new errors_1.AcpTerminalError('ERR_NOT_A_PTY', `terminalId: terminal ${JSON.stringify(terminalId)} is not a pty`, {
                    terminalId,
                });
            }
            if (exited) {
                throw new errors_1.AcpTerminalError('ERR_TERMINAL_EXITED', `terminalId: terminal ${JSON.stringify(terminalId)} already exited`, {
                    terminalId,
                });
            }
            const previous = size;
            size = next;
            // Announced first: what the command redraws after its SIGWINCH is rendered at the new size.
            send({ sessionUpdate: 'terminal_update', terminalId, size: { ...next } });
            try {
                await resizable.resize(next.cols, next.rows);
            }
            catch (error) {
                size = previous;
                send({ sessionUpdate: 'terminal_update', terminalId, size: previous ? { ...previous } : null });
                throw error;
            }
        },
    };
}
/** Checks a pty size (`ERR_INVALID_ARG` naming `<prefix>cols` / `<prefix>rows`). */
function checkSize(cols, rows, prefix) {
    for (const [name, value] of [['cols', cols], ['rows', rows]]) {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
            throw (0, errors_1.invalidArg)(`${prefix}${name}`, `must be an integer from 1 to 65535, got ${JSON.stringify(value) ?? String(value)}`);
        }
    }
    return { cols: cols, rows: rows };
}
/**
 * Compares the streamed bytes with the final snapshot: nothing to do, a missing tail to append, or a
 * replacement snapshot when the stream missed bytes elsewhere.
 */
function reconcile(streamed, snapshot, truncated) {
    const kept = streamed.peek();
    const complete = !streamed.truncated;
    // The snapshot is decoded text: also compare like with like when the output is not valid UTF-8.
    const candidates = complete ? [kept, Buffer.from(kept.toString('utf8'), 'utf8')] : [kept];
    const endsWith = (a, b) => a.length >= b.length && a.subarray(a.length - b.length).equals(b);
    for (const bytes of candidates) {
        if (truncated) {
            // The snapshot holds the newest bytes: the stream is complete when it ends with them.
            if (endsWith(bytes, snapshot) || (endsWith(snapshot, bytes) && streamed.total >= snapshot.length)) {
                return { kind: 'none' };
            }
        }
        else if (streamed.total === snapshot.length || bytes.length === snapshot.length) {
            if (endsWith(snapshot, bytes))
                return { kind: 'none' };
        }
        else if (complete && snapshot.length > bytes.length && snapshot.subarray(0, bytes.length).equals(bytes)) {
            return { kind: 'append', bytes: snapshot.subarray(bytes.length) };
        }
    }
    return { kind: 'replace', bytes: snapshot };
}
/** Creates a terminal and bridges it at once (no output can be missed): the usual v2 agent entry point. */
async function startV2Terminal(params, options) {
    const pty = options.pty == null ? undefined : checkSize(options.pty.cols ?? 80, options.pty.rows ?? 24, 'pty.');
    const terminalOptions = pty ? { ...options.terminalOptions, pty } : options.terminalOptions;
    const bridgeOptions = {
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
    const early = [];
    let deliver;
    const terminal = await (0, native_1.loadNativeCreateTerminal)()(params, {
        ...terminalOptions,
        onOutput: (chunk, info) => (deliver ? deliver(chunk, info) : early.push([chunk, info])),
    });
    const source = (listener) => {
        deliver = listener;
        for (const [chunk, info] of early.splice(0))
            listener(chunk, info);
        return () => {
            deliver = () => undefined;
        };
    };
    return bridge(terminal, bridgeOptions, source, true);
}
/** Tracks an agent's running v2 terminals and serves `terminal/cancel` for them. */
class V2TerminalRegistry {
    bridges = new Map();
    /** Tracks `bridge` until its command exited. */
    add(bridge) {
        const key = keyOf(bridge.sessionId, bridge.terminalId);
        this.bridges.set(key, bridge);
        const forget = () => {
            if (this.bridges.get(key) === bridge)
                this.bridges.delete(key);
        };
        bridge.done.then(forget, forget);
        return bridge;
    }
    /** The running bridge for a terminal, if any. */
    get(sessionId, terminalId) {
        return this.bridges.get(keyOf(sessionId, terminalId));
    }
    /**
     * Cancels a running terminal; unknown or exited terminals reject with `ERR_TERMINAL_NOT_FOUND` /
     * `ERR_TERMINAL_EXITED`.
     */
    async cancel(params) {
        const sessionId = (0, validate_1.requireString)(params?.sessionId, 'sessionId');
        const terminalId = (0, validate_1.requireString)(params.terminalId, 'terminalId');
        const bridge = this.get(sessionId, terminalId);
        if (!bridge) {
            throw new errors_1.AcpTerminalError('ERR_TERMINAL_NOT_FOUND', `terminalId: no running terminal ${JSON.stringify(terminalId)} in this session`, {
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
    register(app) {
        return app.onRequest('terminal/cancel', async (ctx) => {
            try {
                return await this.cancel(ctx.params);
            }
            catch (error) {
                // The RequestError of the SDK copy the app comes from: the SDK keeps the code only for its own class.
                const { RequestError } = await (0, sdk_1.sdkV2ForApp)(app);
                const code = (0, errors_1.errorCode)(error);
                throw new RequestError(-32602, (0, errors_1.errorMessage)(error), { ...(code ? { code } : {}), terminalId: ctx.params.terminalId });
            }
        });
    }
}
exports.V2TerminalRegistry = V2TerminalRegistry;
function keyOf(sessionId, terminalId) {
    return `${sessionId}\0${terminalId}`;
}
