"use strict";
/**
 * TerminalHost: the client side of ACP v1 `terminal/*`, with method names matching the SDK's legacy
 * `Client` interface so a client can delegate to it one to one. It also enforces the client's policy
 * (allowed roots, command rules, approval, environment filter, limits) and reports an audit stream.
 *
 * This file is the class; its parts: `host-types.ts` (the public types), `host-options.ts` (options
 * read once, defaults), `host-create.ts` (the checks of a create, the spawn, the audit of a refusal),
 * `host-entries.ts` (ids, live terminals, kill / wait / release, kept snapshots).
 */
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.TerminalHost = exports.normalizeSnapshot = exports.DEFAULT_OUTPUT_BYTE_LIMIT = exports.DEFAULT_MAX_TERMINALS = exports.DEFAULT_MAX_RELEASED_SNAPSHOTS = void 0;
const path = __importStar(require("node:path"));
const node_perf_hooks_1 = require("node:perf_hooks");
const errors_1 = require("./errors");
const host_create_1 = require("./host-create");
const host_entries_1 = require("./host-entries");
const host_options_1 = require("./host-options");
const validate_1 = require("./validate");
var host_options_2 = require("./host-options");
Object.defineProperty(exports, "DEFAULT_MAX_RELEASED_SNAPSHOTS", { enumerable: true, get: function () { return host_options_2.DEFAULT_MAX_RELEASED_SNAPSHOTS; } });
Object.defineProperty(exports, "DEFAULT_MAX_TERMINALS", { enumerable: true, get: function () { return host_options_2.DEFAULT_MAX_TERMINALS; } });
Object.defineProperty(exports, "DEFAULT_OUTPUT_BYTE_LIMIT", { enumerable: true, get: function () { return host_options_2.DEFAULT_OUTPUT_BYTE_LIMIT; } });
var host_entries_2 = require("./host-entries");
Object.defineProperty(exports, "normalizeSnapshot", { enumerable: true, get: function () { return host_entries_2.normalizeSnapshot; } });
/**
 * Runs ACP v1 terminals for a client: one host per client (or per connection), shared by its sessions.
 *
 * ```ts
 * const host = new TerminalHost({ cwd: workspace, allowedRoots: [workspace], onEvent: (e) => log(e) });
 * const { terminalId } = await host.createTerminal({ sessionId, command: 'npm test' });
 * ```
 */
class TerminalHost {
    settings;
    entries;
    createListeners = new Set();
    eventListeners = new Set();
    callListeners = new Set();
    sessionCwds = new Map();
    cwdForSession;
    nextCallId = 1;
    pendingCreates = 0;
    closed = false;
    /** Aborted by `close()`: pending approvals see it through their signal. */
    closing = new AbortController();
    /** Creates a host; invalid options throw `ERR_INVALID_ARG` naming the option. */
    constructor(options = {}) {
        this.settings = (0, host_options_1.readHostOptions)(options);
        this.entries = new host_entries_1.TerminalEntries(this.settings.maxSnapshots, (event) => this.emit(event), this.settings.ignoreUnknownRelease);
        if (options.onEvent)
            this.eventListeners.add(options.onEvent);
        if (options.onCall)
            this.callListeners.add(options.onCall);
        this.cwdForSession = options.cwdForSession;
    }
    /** Number of live (created, not yet released) terminals. */
    get liveTerminals() {
        return this.entries.size;
    }
    /** True after `close()`. */
    get isClosed() {
        return this.closed;
    }
    /**
     * `terminal/create`: checks the request against the host's policy, starts the command and answers
     * with its id once it was spawned. Refusals reject with `ERR_CWD_OUTSIDE_ROOTS`, `ERR_POLICY_DENIED`,
     * `ERR_NOT_APPROVED` or `ERR_TOO_MANY_TERMINALS` (and emit `denied`); other failures emit `failed`.
     * Aborting `options.signal` before the answer rejects with `signal.reason` at once; a command the
     * create started meanwhile is released, so a cancelled create leaves nothing running.
     */
    createTerminal(request, options) {
        return this.track('terminal/create', request, options, async (signal) => {
            const seen = { cwd: undefined };
            try {
                return await this.create(request, signal, seen);
            }
            catch (error) {
                if (this.eventListeners.size > 0)
                    this.emit((0, host_create_1.refusalEvent)(request, seen.cwd, error));
                throw error;
            }
        });
    }
    async create(request, signal, seen) {
        if (signal?.aborted)
            throw signal.reason;
        const req = (0, host_create_1.validateCreate)(request, this.settings);
        if (request.cwd == null) {
            // No await without a hook: nothing else runs between the checks below and the spawn's start.
            const known = this.sessionCwds.get(req.sessionId);
            const sessionCwd = this.cwdForSession ? await this.askCwdForSession(req.sessionId, known) : known;
            if (sessionCwd !== undefined)
                req.cwd = sessionCwd;
        }
        seen.cwd = req.cwd ?? undefined;
        if (this.closed)
            throw new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host is closed');
        const { maxTerminals } = this.settings;
        if (this.entries.size + this.pendingCreates >= maxTerminals) {
            throw new errors_1.AcpTerminalError('ERR_TOO_MANY_TERMINALS', `too many terminals: maxTerminals (${maxTerminals}) live terminals already exist; release one first`, { maxTerminals });
        }
        this.pendingCreates++;
        // Counted until the spawn settles, even when the caller stopped waiting for it.
        // The approver's signal: aborted when this call is cancelled or the host closes.
        const approval = (0, host_create_1.linkedSignal)([signal, this.closing.signal]);
        const spawning = (0, host_create_1.spawnChecked)(this.settings, request, req, seen, () => this.closed, approval.signal).finally(() => {
            this.pendingCreates--;
            approval.unlink();
        });
        let spawned;
        try {
            spawned = await (0, validate_1.abortable)(spawning, signal);
        }
        catch (error) {
            // Cancelled while checking, awaiting approval or spawning: whatever still starts is released.
            if (signal?.aborted)
                spawning.then(({ terminal }) => terminal.release().catch(() => undefined), () => undefined);
            throw error;
        }
        const { terminal, program } = spawned;
        if (this.closed) {
            await terminal.release().catch(() => undefined);
            throw new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the terminal was created');
        }
        if (signal?.aborted) {
            await terminal.release().catch(() => undefined);
            throw signal.reason;
        }
        const startedAt = node_perf_hooks_1.performance.now();
        const { terminalId, entry } = this.entries.add(req.sessionId, terminal);
        this.emit({
            type: 'created',
            time: Date.now(),
            sessionId: req.sessionId,
            terminalId,
            command: req.command,
            args: [...(req.args ?? [])],
            cwd: req.cwd ?? undefined,
            pid: terminal.pid,
            ...(program !== undefined ? { program } : {}),
            outputByteLimit: req.outputByteLimit,
        });
        this.entries.watchExit(terminalId, entry, startedAt);
        const event = { terminalId, sessionId: req.sessionId, terminal, request: req };
        for (const listener of this.createListeners) {
            try {
                listener(event);
            }
            catch {
                // A faulty UI listener must not fail the agent's request.
            }
        }
        return { terminalId };
    }
    /**
     * `terminal/output`: the retained output, with `exitStatus` once the command exited. A signal already
     * aborted rejects with its reason (the call never waits for the command, so there is nothing to stop).
     */
    terminalOutput(request, options) {
        // It never waits for the command, so it is not raced with the signal (`track` refuses an aborted one).
        return this.track('terminal/output', request, options, async () => (0, host_entries_1.normalizeSnapshot)(await this.entries.lookup(request).terminal.currentOutput()));
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
    waitForTerminalExit(request, options) {
        // Only microtasks are added to the entries' promise, so the ordering above holds (its last step is a macrotask).
        return this.track('terminal/wait_for_exit', request, options, (signal) => (0, validate_1.abortable)(this.entries.wait(request), signal));
    }
    /**
     * `terminal/kill`: stops the command; the id stays valid. Emits `killed`. Its response goes out before
     * the `terminal/wait_for_exit` responses the kill causes (see `waitForTerminalExit`). A signal already
     * aborted rejects with its reason and kills nothing; a kill once started completes.
     */
    killTerminal(request, options) {
        // A kill is not undone: an aborted signal only refuses to start one (in `track`). Its answer precedes the
        // waits it ends: see `TerminalEntries.kill`.
        return this.track('terminal/kill', request, options, () => this.entries.kill(request));
    }
    /**
     * `terminal/release`: kills if running, keeps a final snapshot, frees the terminal. Idempotent for ids
     * this host issued. Emits `released` (after `exited`). A signal already aborted rejects with its reason
     * and releases nothing; a release once started completes.
     */
    releaseTerminal(request, options) {
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
    setSessionCwd(sessionId, cwd) {
        (0, validate_1.requireString)(sessionId, 'sessionId');
        const dir = (0, validate_1.optionalAbsolutePath)(cwd, 'cwd');
        if (dir !== undefined)
            (0, validate_1.rejectNul)(dir, 'cwd');
        if (dir === undefined)
            this.sessionCwds.delete(sessionId);
        else
            this.sessionCwds.set(sessionId, dir);
    }
    /** The working directory recorded for `sessionId` by `setSessionCwd`, or undefined. */
    sessionCwdOf(sessionId) {
        return this.sessionCwds.get(sessionId);
    }
    /** The live terminal behind `terminalId` (to embed in a tool-call UI), or undefined once released. */
    terminal(terminalId) {
        return this.entries.get(terminalId)?.terminal;
    }
    /** The last snapshot of a released terminal (the newest `maxReleasedSnapshots` are kept), or undefined. */
    finalOutput(terminalId) {
        return this.entries.finalOutput(terminalId);
    }
    /** Calls `listener` for every terminal created from now on; returns an unsubscribe function. */
    onCreate(listener) {
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
    onEvent(listener) {
        if (typeof listener !== 'function')
            throw (0, errors_1.invalidArg)('listener', 'must be a function');
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
    onCall(listener) {
        if (typeof listener !== 'function')
            throw (0, errors_1.invalidArg)('listener', 'must be a function');
        this.callListeners.add(listener);
        return () => {
            this.callListeners.delete(listener);
        };
    }
    /** Releases every terminal of `sessionId` (e.g. on `session/close` or when the agent disconnects). */
    async releaseSession(sessionId) {
        (0, validate_1.requireString)(sessionId, 'sessionId');
        this.sessionCwds.delete(sessionId);
        await this.entries.releaseWhere((entry) => entry.sessionId === sessionId, 'session');
    }
    /**
     * Releases every live terminal (each emits `released` with reason `all`) and stays open: for a client
     * that restarts its agent on the same host. A create still in flight (awaiting approval) is not affected.
     */
    async releaseAll() {
        await this.entries.releaseWhere(() => true, 'all');
    }
    /** Releases every terminal and refuses new ones. */
    async close() {
        this.closed = true;
        this.closing.abort(new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed'));
        this.sessionCwds.clear();
        await this.entries.releaseWhere(() => true, 'close');
    }
    /** Same as `close()`, for `await using host = new TerminalHost()`. */
    async [Symbol.asyncDispose]() {
        await this.close();
    }
    /** The `cwdForSession` hook's directory for a request of `sessionId` without `cwd`, checked. */
    async askCwdForSession(sessionId, known) {
        const chosen = await this.cwdForSession(sessionId, known);
        if (chosen === undefined || chosen === null)
            return undefined;
        if (typeof chosen !== 'string' || !path.isAbsolute(chosen) || chosen.includes('\0')) {
            throw (0, errors_1.invalidArg)('cwdForSession', `must return an absolute path or undefined, got ${JSON.stringify(chosen)} for session ${JSON.stringify(sessionId)}`);
        }
        return chosen;
    }
    /**
     * Runs one call of a host method: reads `options.signal` (refusing an aborted one before anything
     * happens) and reports the call's phases to the `onCall` listeners.
     */
    async track(method, request, options, work) {
        if (this.callListeners.size === 0) {
            const signal = (0, validate_1.optionalSignal)(options);
            if (signal?.aborted)
                throw signal.reason;
            return work(signal);
        }
        const r = (typeof request === 'object' && request !== null ? request : {});
        const callId = this.nextCallId++;
        const sessionId = typeof r.sessionId === 'string' ? r.sessionId : '';
        const terminalId = method !== 'terminal/create' && typeof r.terminalId === 'string' ? r.terminalId : undefined;
        const started = node_perf_hooks_1.performance.now();
        // Object literals, not spreads: a spread costs microseconds per event here.
        const event = (phase) => phase === 'running'
            ? { callId, method, phase, time: Date.now(), sessionId, terminalId }
            : { callId, method, phase, time: Date.now(), sessionId, terminalId, durationMs: Math.round(node_perf_hooks_1.performance.now() - started) };
        notify(this.callListeners, event('running'));
        let signal;
        try {
            signal = (0, validate_1.optionalSignal)(options);
            if (signal?.aborted)
                throw signal.reason;
            const result = await work(signal);
            const completed = event('completed');
            describeOutcome(completed, result);
            notify(this.callListeners, completed);
            return result;
        }
        catch (error) {
            const failed = event('failed');
            failed.error = { code: (0, errors_1.errorCode)(error), message: (0, errors_1.errorMessage)(error) };
            failed.cancelled = signal?.aborted === true && error === signal.reason;
            notify(this.callListeners, failed);
            throw error;
        }
    }
    emit(event) {
        notify(this.eventListeners, event);
    }
}
exports.TerminalHost = TerminalHost;
/** Adds what a `completed` call event says of the result: the new id, the exit status, truncation. */
function describeOutcome(event, result) {
    if (typeof result !== 'object' || result === null)
        return;
    const r = result;
    if (typeof r.terminalId === 'string')
        event.terminalId = r.terminalId;
    if ('exitCode' in r)
        event.exitStatus = { exitCode: (r.exitCode ?? null), signal: (r.signal ?? null) };
    if (r.exitStatus)
        event.exitStatus = { exitCode: r.exitStatus.exitCode ?? null, signal: r.exitStatus.signal ?? null };
    if (typeof r.truncated === 'boolean')
        event.truncated = r.truncated;
}
/** Calls each listener with `event` (frozen); a listener's throw or rejection is ignored. */
function notify(listeners, event) {
    if (listeners.size === 0)
        return;
    Object.freeze(event);
    for (const listener of [...listeners]) {
        try {
            const result = listener(event);
            if (typeof result === 'object' && result !== null && typeof result.then === 'function') {
                result.then(undefined, () => undefined);
            }
        }
        catch {
            // A UI or audit sink that fails must not fail the agent's request or the host.
        }
    }
}
