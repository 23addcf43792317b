"use strict";
/**
 * The terminals of one `TerminalHost`: their ids, the live entries and what the host saw of each (exit,
 * kills), the kill / wait / release lifecycle with the order its answers keep, and the snapshots kept
 * after release.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.TerminalEntries = void 0;
exports.normalizeSnapshot = normalizeSnapshot;
const node_crypto_1 = require("node:crypto");
const node_perf_hooks_1 = require("node:perf_hooks");
const errors_1 = require("./errors");
const types_1 = require("./types");
const validate_1 = require("./validate");
/** The terminals a host issued: live ones by id, releases in flight, the final snapshots kept. */
class TerminalEntries {
    maxSnapshots;
    emit;
    ignoreUnknownRelease;
    live = new Map();
    releasing = new Map();
    snapshots = new Map();
    idPrefix = `term-${(0, node_crypto_1.randomBytes)(4).toString('hex')}-`;
    nextId = 1;
    /**
     * @param maxSnapshots how many released terminals keep their final snapshot
     * @param emit the host's audit stream
     */
    constructor(maxSnapshots, emit, ignoreUnknownRelease = false) {
        this.maxSnapshots = maxSnapshots;
        this.emit = emit;
        this.ignoreUnknownRelease = ignoreUnknownRelease;
    }
    /** Number of live (created, not yet released) terminals. */
    get size() {
        return this.live.size;
    }
    /** The live entry behind `terminalId`, whatever its session. */
    get(terminalId) {
        return this.live.get(terminalId);
    }
    /** Issues an id for a new live terminal of `sessionId`. */
    add(sessionId, terminal) {
        const terminalId = `${this.idPrefix}${this.nextId++}`;
        const entry = { sessionId, terminal, exited: Promise.resolve(), hasExited: false, killAnswered: undefined };
        this.live.set(terminalId, entry);
        return { terminalId, entry };
    }
    /** Watches the entry's exit: marks it and emits `exited` (duration counted from `startedAt`). */
    watchExit(terminalId, entry, startedAt) {
        const { terminal, sessionId } = entry;
        entry.exited = terminal.waitForExit().then((status) => {
            entry.hasExited = true;
            this.emit({
                type: 'exited',
                time: Date.now(),
                sessionId,
                terminalId,
                exitStatus: { exitCode: status.exitCode, signal: status.signal },
                durationMs: Math.round(node_perf_hooks_1.performance.now() - startedAt),
                outputBytes: (0, types_1.readOutputBytes)(terminal),
            });
        }, () => undefined);
    }
    /** The live entry a request names, for its session; else `ERR_TERMINAL_NOT_FOUND` (saying when it was released). */
    lookup(request) {
        const { sessionId, terminalId } = validateTerminalRequest(request);
        const entry = this.live.get(terminalId);
        if (!entry || entry.sessionId !== sessionId)
            throw notFound(terminalId, this.issued(terminalId) && !entry);
        return entry;
    }
    /**
     * `terminal/wait_for_exit`: resolves after the host recorded the exit; when a `terminal/kill` of this
     * terminal is in flight, only once the kill was answered and one macrotask more (see
     * `TerminalHost.waitForTerminalExit`).
     */
    async wait(request) {
        const entry = this.lookup(request);
        const { exitCode, signal } = await entry.terminal.waitForExit();
        await entry.exited;
        const killAnswered = entry.killAnswered;
        if (killAnswered) {
            await killAnswered;
            await new Promise((resolve) => setImmediate(resolve));
        }
        return { exitCode, signal };
    }
    /** `terminal/kill`: emits `killed`, stops the command; its answer settles `killAnswered`. */
    async kill(request) {
        const { terminalId } = request;
        const entry = this.lookup(request);
        this.emit({ type: 'killed', time: Date.now(), sessionId: entry.sessionId, terminalId, wasRunning: !entry.hasExited });
        let answered;
        const killAnswered = new Promise((resolve) => (answered = resolve));
        entry.killAnswered = killAnswered;
        try {
            await entry.terminal.kill();
            return {};
        }
        finally {
            // Settled in the same microtask as this method's promise: the caller's continuation (the SDK's
            // response write) is queued before any wait that awaits `killAnswered` can resume.
            answered();
        }
    }
    /**
     * `terminal/release`: idempotent for ids this host issued; waits for a release already in flight. Any
     * other id is `ERR_TERMINAL_NOT_FOUND`, or `{}` (nothing released) under `ignoreUnknownRelease`.
     */
    async release(request) {
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
        if ((!entry && this.issued(terminalId)) || this.ignoreUnknownRelease)
            return {};
        throw notFound(terminalId);
    }
    /** Releases every live entry `predicate` selects, and waits for the releases already in flight. */
    async releaseWhere(predicate, reason) {
        const work = [...this.releasing.values()];
        for (const [terminalId, entry] of this.live) {
            if (predicate(entry))
                work.push(this.releaseEntry(terminalId, entry, reason));
        }
        await Promise.all(work);
    }
    /** The last snapshot of a released terminal (the newest `maxSnapshots` are kept), or undefined. */
    finalOutput(terminalId) {
        return this.snapshots.get(terminalId);
    }
    releaseEntry(terminalId, entry, reason) {
        this.live.delete(terminalId);
        const done = this.finish(terminalId, entry, reason).finally(() => this.releasing.delete(terminalId));
        this.releasing.set(terminalId, done);
        return done;
    }
    async finish(terminalId, entry, reason) {
        const { terminal } = entry;
        const wasRunning = !entry.hasExited;
        try {
            // Stop first so the kept snapshot holds all output and the exit status.
            await terminal.kill();
            await terminal.waitForExit();
            this.keepSnapshot(terminalId, normalizeSnapshot(await terminal.currentOutput()));
        }
        catch {
            // Snapshot is best effort; the release below must still happen.
        }
        finally {
            await terminal.release().catch(() => undefined);
        }
        await entry.exited; // `exited` comes before `released`
        this.emit({ type: 'released', time: Date.now(), sessionId: entry.sessionId, terminalId, reason, wasRunning });
    }
    keepSnapshot(terminalId, snapshot) {
        if (this.maxSnapshots === 0)
            return;
        this.snapshots.set(terminalId, snapshot);
        while (this.snapshots.size > this.maxSnapshots) {
            const oldest = this.snapshots.keys().next().value;
            this.snapshots.delete(oldest);
        }
    }
    issued(terminalId) {
        if (!terminalId.startsWith(this.idPrefix))
            return false;
        const n = Number(terminalId.slice(this.idPrefix.length));
        return Number.isSafeInteger(n) && n >= 1 && n < this.nextId && String(n) === terminalId.slice(this.idPrefix.length);
    }
}
exports.TerminalEntries = TerminalEntries;
function validateTerminalRequest(request) {
    if (typeof request !== 'object' || request === null)
        throw (0, errors_1.invalidArg)('params', 'must be an object');
    return {
        sessionId: (0, validate_1.requireString)(request.sessionId, 'sessionId'),
        terminalId: (0, validate_1.requireString)(request.terminalId, 'terminalId'),
    };
}
function notFound(terminalId, released = false) {
    return new errors_1.AcpTerminalError('ERR_TERMINAL_NOT_FOUND', released
        ? `terminalId: terminal ${JSON.stringify(terminalId)} was released`
        : `terminalId: unknown terminal ${JSON.stringify(terminalId)} for this session`, { terminalId });
}
/** Copies a backend snapshot into the protocol shape (no `exitStatus` key while running). */
function normalizeSnapshot(snapshot) {
    const { output, truncated, exitStatus } = snapshot;
    return exitStatus
        ? { output, truncated, exitStatus: { exitCode: exitStatus.exitCode, signal: exitStatus.signal } }
        : { output, truncated };
}
