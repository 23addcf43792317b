"use strict";
/// ShellSessions: persistent, named bash sessions on pseudo-terminals, the robust version of the
/// "interactive terminal tool" of agent frameworks (a shell per id, `is_input`, special keys,
/// `no_enter`, timeouts that return `running` instead of killing). This file is the manager (options,
/// the session cap, per-session call order, what a request sends); `session.ts` is one shell,
/// `session-protocol.ts` the marker protocol, `session-input.ts` how a request's text is read.
///
/// How a command is run, and why it is robust:
/// - Each session is `bash --noprofile --norc --noediting -i` on a pty created by the native
///   `createTerminal(..., { pty })`, told to source a private rc (which deletes itself): echo off, the
///   completion marker as the prompt, history in memory only. No system or user rc runs; no line
///   editor, so nothing is redrawn or echoed and the stream holds only output.
/// - The command text is never typed: it is written to a file in a private (0700) directory and the
///   shell is sent one short line that sources it with `.` in POSIX mode (so no function can stand in
///   for `.`). Heredocs, multi-line scripts and quotes are parsed by bash from the file as one unit, the
///   4095-byte line limit does not apply, and the command runs in the shell itself (cd, export,
///   functions, `set` options and background jobs persist). A here-document left open is refused
///   before anything runs (`bash -n`), as bash would run it with exit status 0.
/// - Completion: bash's own prompt prints `ESC ] 6973 ; <token> ; E ; <seq> ; <$?> BEL` (prompt
///   expansion: no command runs, so redefining `builtin` or `printf` changes nothing; PS1 is reset
///   from a read-only copy before every prompt). The 128-bit token exists in the shell only as octal
///   escapes; a stale prompt has an older sequence number. The marker is matched byte-exactly in the
///   raw stream and removed. Before it completes a command it is confirmed from outside the shell: the
///   pty's foreground process group is the shell's own and the shell is blocked reading the terminal.
///   A marker that fails that (printed by a command that goes on running) completes nothing, and
///   the command's completion then reports `exitCode: null`. While the shell's stderr is not the
///   terminal, `PROMPT_COMMAND` prints a marker without a status: completions then say `exitCode: null`.
/// - `exitCode` is `$?` from the prompt, the shell's exit code when the shell itself ended, otherwise
///   null: never invented. `workingDir` is read from `/proc/<shell pid>/cwd`.
/// - Content is the raw output of the command alone, rendered by the native terminal emulator at the
///   pty's size (escapes consumed, `\r` overwrites applied); the terminal runs in text mode for its
///   emulator, which answers terminal queries and shows a full-screen program's screen while it runs.
///
/// Limits, by design: the prompt has no line editor, so cursor and history keys with nothing running
/// are refused (`ERR_NO_RUNNING_COMMAND`) and commands are not in `history`; `set -x` traces carry one
/// `+` more (the command is sourced); PS1, PS0, `PROMPT_COMMAND`, the SIGINT trap and the terminal
/// modes are the session's; a command that deliberately imitates a prompt while it waits for terminal
/// input in the shell itself can still pass for finished (an OS sandbox is the answer to hostile
/// commands). Linux only (/proc).
///
/// No command leaves a session wedged: terminal modes are put back before each command line, stdout,
/// stderr and the SIGINT trap before each command, a stopped shell is continued; what bash cannot
/// prevent (a read-only session variable, an extdebug DEBUG trap, `exec bash`, a shell that loops
/// ignoring C-c) makes the session `broken` (with `why`) until `restart()`. Every process of a session
/// carries its tag in its environment, and closing kills those as well as the shell's session tree.
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
exports.ShellSessions = exports.DEFAULT_INTERRUPT_GRACE_MS = exports.DEFAULT_SESSION_ID = exports.DEFAULT_SESSION_OUTPUT_BYTES = exports.DEFAULT_INPUT_SETTLE_MS = exports.DEFAULT_SESSION_TIMEOUT_MS = exports.DEFAULT_MAX_SESSIONS = exports.parseKeys = exports.isKeyName = void 0;
const fs = __importStar(require("node:fs"));
const path = __importStar(require("node:path"));
const errors_1 = require("./errors");
const policy_env_1 = require("./policy-env");
const session_input_1 = require("./session-input");
const native_1 = require("./native");
const session_protocol_1 = require("./session-protocol");
const session_1 = require("./session");
const validate_1 = require("./validate");
var session_input_2 = require("./session-input");
Object.defineProperty(exports, "isKeyName", { enumerable: true, get: function () { return session_input_2.isKeyName; } });
Object.defineProperty(exports, "parseKeys", { enumerable: true, get: function () { return session_input_2.parseKeys; } });
/** Default `maxSessions` of {@link ShellSessions}. */
exports.DEFAULT_MAX_SESSIONS = 16;
/** Default `timeoutMs` of {@link ShellSessions.execute}: 30 s. */
exports.DEFAULT_SESSION_TIMEOUT_MS = 30_000;
/** Default `inputSettleMs`: how long input or keys wait for output to go quiet. */
exports.DEFAULT_INPUT_SETTLE_MS = 500;
/** Default `maxOutputBytes`: unreported output kept per session (the newest bytes). */
exports.DEFAULT_SESSION_OUTPUT_BYTES = 1024 * 1024;
/** Id of the session used when `execute` gets no `terminalId`. */
exports.DEFAULT_SESSION_ID = 'default';
/** Default `graceMs` of {@link ShellSessions.interrupt}. */
exports.DEFAULT_INTERRUPT_GRACE_MS = 1000;
/**
 * Named, persistent bash sessions on pseudo-terminals: the interactive terminal tool of an agent.
 *
 * ```ts
 * await using shells = new ShellSessions({ cwd: workspace });
 * await shells.execute({ command: 'cd /tmp && export X=1' });
 * const r = await shells.execute({ command: 'echo $X; pwd' }); // { content: '1\n/tmp', exitCode: 0, ... }
 * await shells.execute({ command: 'python3 -i', timeoutMs: 2000 }); // status 'running'
 * await shells.execute({ command: '1+1', isInput: true });
 * await shells.execute({ command: 'C-d' });
 * ```
 *
 * Calls on one session are serialized; different sessions run concurrently.
 */
class ShellSessions {
    sessions = new Map();
    opening = new Map();
    locks = new Map();
    closed = false;
    maxSessions;
    cwd;
    env;
    inheritEnv;
    dropEnv;
    /** `options.shell`, else the platform's bash (`sessionBash()`) once a session needs it. */
    shell;
    cols;
    rows;
    timeoutMs;
    settleMs;
    maxOutputBytes;
    startTimeoutMs;
    screen;
    backend;
    sandbox;
    /** Creates a session manager; invalid options throw `ERR_INVALID_ARG` naming the option. */
    constructor(options = {}) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_1.invalidArg)('options', 'must be an object');
        this.maxSessions = (0, validate_1.optionalCount)(options.maxSessions, 'options.maxSessions', 1) ?? exports.DEFAULT_MAX_SESSIONS;
        this.cwd = (0, validate_1.optionalAbsolutePath)(options.cwd, 'options.cwd') ?? process.cwd();
        this.env = (0, validate_1.normalizeEnv)(options.env, 'options.env');
        if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
            throw (0, errors_1.invalidArg)('options.inheritEnv', 'must be a boolean');
        }
        this.inheritEnv = options.inheritEnv;
        const drop = (0, policy_env_1.compileEnvPatterns)(options.dropInheritedEnv, 'options.dropInheritedEnv');
        this.dropEnv = options.inheritEnv === false ? undefined : drop;
        if (options.shell !== undefined && (typeof options.shell !== 'string' || options.shell === '')) {
            throw (0, errors_1.invalidArg)('options.shell', 'must be a non-empty string');
        }
        this.shell = options.shell;
        this.cols = (0, validate_1.optionalCount)(options.cols, 'options.cols', 1) ?? 160;
        this.rows = (0, validate_1.optionalCount)(options.rows, 'options.rows', 1) ?? 40;
        this.timeoutMs = (0, validate_1.optionalCount)(options.timeoutMs, 'options.timeoutMs') ?? exports.DEFAULT_SESSION_TIMEOUT_MS;
        this.settleMs = (0, validate_1.optionalCount)(options.inputSettleMs, 'options.inputSettleMs') ?? exports.DEFAULT_INPUT_SETTLE_MS;
        this.maxOutputBytes = (0, validate_1.optionalCount)(options.maxOutputBytes, 'options.maxOutputBytes', 1) ?? exports.DEFAULT_SESSION_OUTPUT_BYTES;
        this.startTimeoutMs = (0, validate_1.optionalCount)(options.startTimeoutMs, 'options.startTimeoutMs', 1) ?? 30_000;
        if (options.screen !== undefined && typeof options.screen !== 'boolean') {
            throw (0, errors_1.invalidArg)('options.screen', 'must be a boolean');
        }
        this.screen = options.screen ?? true;
        if (options.createTerminal !== undefined && typeof options.createTerminal !== 'function') {
            throw (0, errors_1.invalidArg)('options.createTerminal', 'must be a function');
        }
        this.backend = options.createTerminal;
        this.sandbox = options.sandbox;
    }
    /** Ids of the live sessions, least recently used first. */
    get ids() {
        return [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed).map((s) => s.id);
    }
    /** Pid of a session's shell, or undefined when there is no such live session. */
    shellPid(terminalId = exports.DEFAULT_SESSION_ID) {
        return this.sessions.get(terminalId)?.terminal?.pid;
    }
    /**
     * Runs a command in a session (opened on first use), sends input or keys to its running program,
     * or collects more output. Resolves with the output since the previous result of that session.
     *
     * Rejects with `ERR_INVALID_ARG` (a bad field, named), `ERR_COMMAND_RUNNING` (a new command while
     * one runs: collect with `""`, answer with `isInput`, or interrupt with `C-c`), `ERR_NO_RUNNING_COMMAND`
     * (`isInput` with nothing running), `ERR_SESSION_START` (bash did not start), `ERR_HOST_CLOSED`.
     */
    async execute(request) {
        if (typeof request !== 'object' || request === null)
            throw (0, errors_1.invalidArg)('params', 'must be an object');
        const { command } = request;
        if (typeof command !== 'string')
            throw (0, errors_1.invalidArg)('command', 'must be a string');
        if (command.includes('\0'))
            throw (0, errors_1.invalidArg)('command', 'must not contain NUL bytes');
        const terminalId = request.terminalId ?? exports.DEFAULT_SESSION_ID;
        if (typeof terminalId !== 'string' || terminalId === '' || terminalId.length > 256 || terminalId.includes('\0')) {
            throw (0, errors_1.invalidArg)('terminalId', 'must be a non-empty string of at most 256 characters without NUL');
        }
        for (const field of ['isInput', 'noEnter']) {
            if (request[field] !== undefined && request[field] !== null && typeof request[field] !== 'boolean') {
                throw (0, errors_1.invalidArg)(field, 'must be a boolean');
            }
        }
        const timeoutMs = (0, validate_1.optionalCount)(request.timeoutMs, 'timeoutMs') ?? this.timeoutMs;
        this.assertOpen();
        return this.withLock(terminalId, () => this.run(terminalId, command, request.isInput === true, request.noEnter === true, timeoutMs));
    }
    /** Resizes a session's pty (programs get SIGWINCH). Resolves false for an unknown id. */
    async resize(terminalId, cols, rows) {
        if (typeof terminalId !== 'string' || terminalId === '')
            throw (0, errors_1.invalidArg)('terminalId', 'must be a non-empty string');
        const c = (0, validate_1.optionalCount)(cols, 'cols', 1);
        const r = (0, validate_1.optionalCount)(rows, 'rows', 1);
        if (c === undefined || r === undefined)
            throw (0, errors_1.invalidArg)(c === undefined ? 'cols' : 'rows', 'must be an integer >= 1');
        const session = this.sessions.get(terminalId);
        const terminal = session?.terminal;
        if (!session || !terminal?.resize)
            return false;
        await terminal.resize(c, r);
        session.size = { cols: c, rows: r };
        return true;
    }
    /**
     * Interrupts the command running in a session and always gets the prompt back without losing the
     * session: C-c first; if the prompt is not back within `graceMs`, the pty's foreground process group
     * (when it is not the shell's own) is terminated: SIGTERM (and SIGCONT), then SIGKILL if it still
     * runs `graceMs` later. Resolves with the output since the previous result, like `execute`, plus
     * `interrupt` saying what it took. With nothing running, nothing is sent (`interrupt.signal` null).
     * Waits for a call on the same session that is still running, as every call does.
     * Rejects with `ERR_INVALID_ARG` naming `terminalId` or `graceMs`, or `ERR_HOST_CLOSED`.
     */
    async interrupt(terminalId = exports.DEFAULT_SESSION_ID, options = {}) {
        if (typeof terminalId !== 'string' || terminalId === '')
            throw (0, errors_1.invalidArg)('terminalId', 'must be a non-empty string');
        if (typeof options !== 'object' || options === null)
            throw (0, errors_1.invalidArg)('options', 'must be an object');
        const graceMs = (0, validate_1.optionalCount)(options.graceMs, 'graceMs') ?? exports.DEFAULT_INTERRUPT_GRACE_MS;
        if (graceMs > 600_000)
            throw (0, errors_1.invalidArg)('graceMs', `must be at most 600000 (10 minutes), got ${graceMs}`);
        this.assertOpen();
        return this.withLock(terminalId, () => this.interruptLocked(terminalId, graceMs));
    }
    async interruptLocked(id, graceMs) {
        const session = this.sessions.get(id);
        if (!session || session.closed) {
            return {
                content: '',
                exitCode: null,
                status: 'completed',
                workingDir: this.cwd,
                command: 'C-c',
                terminalId: id,
                truncated: false,
                sessionEnded: false,
                interrupt: { signal: null, processGroup: null },
            };
        }
        const terminal = session.terminal;
        const report = { signal: null, processGroup: null };
        if (session.busy && !session.completion && !session.exit) {
            report.signal = 'SIGINT';
            await terminal.sendKeys(['C-c']).catch(() => undefined);
            await this.waitForResult(session, 'command', graceMs);
            const group = session.busy && !session.completion ? terminal.foregroundProcessGroup?.() : null;
            if (typeof group === 'number' && group !== terminal.pid) {
                // signal null: the group ended by itself meanwhile (C-c took effect late); nothing was signalled.
                const { signal } = await (0, native_1.loadNative)().killProcessGroup(group, graceMs);
                if (signal !== null) {
                    report.signal = signal;
                    report.processGroup = group;
                }
                // The shell prompts once its job is gone (unless the shell itself goes on: still running).
                await this.waitForResult(session, 'command', Math.max(graceMs, 5000));
            }
            else if (typeof group === 'number' && session.busy && !session.completion && (0, session_1.promptState)(terminal) !== 'prompt') {
                // What runs is the shell itself, and C-c did not stop it: nothing can end it but its end.
                session.markBroken('the shell itself ignores C-c (a trap or a loop of its own builtins): nothing but ending the shell ' +
                    'stops it; restart() gives a fresh shell');
            }
        }
        return this.result(session, 'C-c', report);
    }
    /**
     * Replaces a session's shell with a fresh one in the directory the old shell was in: the way back
     * from `status: 'broken'`, or a clean slate on request. Everything the old session started is killed
     * first, as `close()` does. Waits for a call on the same session that is still running, as every call
     * does. Rejects with `ERR_INVALID_ARG` naming `terminalId`, `ERR_SESSION_START` (the fresh shell did
     * not start; the session is then closed), `ERR_HOST_CLOSED`.
     */
    async restart(terminalId = exports.DEFAULT_SESSION_ID) {
        if (typeof terminalId !== 'string' || terminalId === '')
            throw (0, errors_1.invalidArg)('terminalId', 'must be a non-empty string');
        this.assertOpen();
        return this.withLock(terminalId, async () => {
            const pending = this.opening.get(terminalId);
            if (pending)
                await pending.catch(() => undefined);
            const old = this.sessions.get(terminalId);
            let cwd = this.cwd;
            let previous = null;
            if (old) {
                cwd = old.cwd();
                previous = old.broken;
                await this.destroy(old);
            }
            const fresh = await this.open(terminalId, fs.existsSync(cwd) ? cwd : this.cwd);
            return { terminalId, workingDir: fresh.cwd(), previous };
        });
    }
    /**
     * Closes a session: kills its shell and every process of its tree, then frees the terminal.
     * Resolves false for an unknown id.
     */
    async close(terminalId) {
        if (typeof terminalId !== 'string' || terminalId === '')
            throw (0, errors_1.invalidArg)('terminalId', 'must be a non-empty string');
        const pending = this.opening.get(terminalId);
        if (pending)
            await pending.catch(() => undefined);
        const session = this.sessions.get(terminalId);
        if (!session)
            return false;
        await this.destroy(session);
        return true;
    }
    /** Closes every session and refuses new calls. */
    async closeAll() {
        this.closed = true;
        await Promise.all([...this.opening.values()].map((p) => p.catch(() => undefined)));
        await Promise.all([...this.sessions.values()].map((s) => this.destroy(s)));
    }
    /** Same as `closeAll()`, for `await using shells = new ShellSessions()`. */
    async [Symbol.asyncDispose]() {
        await this.closeAll();
    }
    assertOpen() {
        if (this.closed)
            throw new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the shell sessions were closed');
    }
    async withLock(id, fn) {
        const previous = this.locks.get(id) ?? Promise.resolve();
        const next = previous.catch(() => undefined).then(fn);
        const tail = next.catch(() => undefined);
        this.locks.set(id, tail);
        try {
            return await next;
        }
        finally {
            if (this.locks.get(id) === tail)
                this.locks.delete(id);
        }
    }
    async run(id, command, isInput, noEnter, timeoutMs) {
        let session = this.sessions.get(id);
        if (session && (session.exit || session.closed) && !(command === '' && session.completion)) {
            // The shell ended (its end was reported, or is collected only by an empty command): start afresh.
            await this.destroy(session);
            session = undefined;
        }
        session ??= await this.open(id);
        if (session.broken !== null) {
            throw new errors_1.AcpTerminalError('ERR_SESSION_BROKEN', `terminalId: session ${JSON.stringify(id)} is broken: ${session.broken}`, { terminalId: id, why: session.broken });
        }
        session.lastUsed = performanceNow();
        const s = session;
        const terminal = s.terminal;
        const send = async (op) => {
            try {
                await op();
            }
            catch (error) {
                // A write to a shell that just ended fails; its end is then reported as the result.
                const deadline = Date.now() + 2000;
                while (!s.exit && Date.now() < deadline)
                    await s.changed(deadline - Date.now());
                if (!s.exit)
                    throw error;
            }
        };
        const keys = (0, session_input_1.requestKeys)(command, isInput);
        let mode;
        if (command !== '' && !s.busy)
            s.absorbCompletion();
        if (command === '') {
            // Running: wait for it as for a command. Idle: collect what background jobs print, until quiet.
            mode = s.busy ? 'command' : 'input';
        }
        else if (keys) {
            if (!s.busy) {
                // Nothing runs and nothing was typed: the shell has no line editor (no history or cursor
                // keys), so only control keys and Enter mean something to it, and only some make it prompt.
                const bad = (0, session_input_1.keyRefusedAtPrompt)(keys);
                if (bad !== undefined) {
                    throw new errors_1.AcpTerminalError('ERR_NO_RUNNING_COMMAND', `command: no program is running in session ${JSON.stringify(id)} to receive ${JSON.stringify(bad)}; ` +
                        'the shell has no line editing (history and cursor keys do nothing): send the command itself', { field: 'command', terminalId: id });
                }
                if ((0, session_input_1.keysPrompt)(keys))
                    s.waitFor('any');
            }
            await send(() => terminal.sendKeys(keys));
            mode = 'input';
        }
        else if (isInput) {
            if (!s.busy) {
                throw new errors_1.AcpTerminalError('ERR_NO_RUNNING_COMMAND', `isInput: no command is running in session ${JSON.stringify(id)}; send the text as a command instead`, { field: 'isInput', terminalId: id });
            }
            await send(() => terminal.write((0, session_input_1.inputText)(command, noEnter)));
            mode = 'input';
        }
        else if (s.busy) {
            throw new errors_1.AcpTerminalError('ERR_COMMAND_RUNNING', `command: a command is still running in session ${JSON.stringify(id)}; send "" to collect its output, ` +
                'isInput: true to answer it, "C-c" or interrupt() to interrupt it, restart() for a fresh shell in the same directory, ' +
                'or use another terminalId', { field: 'command', terminalId: id });
        }
        else if (noEnter) {
            // Text typed at the prompt without Enter: it runs when Enter (or more input with Enter) follows.
            s.waitFor('any');
            await send(() => terminal.write(command));
            mode = 'input';
        }
        else {
            fs.mkdirSync(s.dir, { recursive: true, mode: 0o700 });
            fs.writeFileSync(s.commandFile, (0, session_protocol_1.commandFileText)(command), { mode: 0o600 });
            const open = await (0, session_input_1.findOpenHereDocument)(this.bash(), command, s.commandFile);
            if (open) {
                throw new errors_1.AcpTerminalError('ERR_INVALID_ARG', `command: unterminated here-document (line ${open.line}): bash reached the end of the command looking for ` +
                    `its delimiter \`${open.delimiter}\`; nothing was run: send the whole command, delimiter line included`, { field: 'command', terminalId: id, incomplete: 'here-document', delimiter: open.delimiter });
            }
            s.restoreModes();
            s.seq += 1;
            s.waitFor(s.seq);
            const line = (0, session_protocol_1.commandLine)(s.seq, s.commandFile);
            s.typedLine = line;
            await send(() => terminal.write((0, session_protocol_1.commandInput)(line)));
            mode = 'command';
        }
        await this.waitForResult(s, mode, timeoutMs);
        return this.result(s, command);
    }
    /** The session's result (and the session forgotten when its shell ended). */
    async result(session, command, interrupt) {
        const result = await session.result(command, this.screen, interrupt);
        if (result.sessionEnded || session.exit)
            await this.destroy(session);
        return result;
    }
    waitForResult(session, mode, timeoutMs) {
        return session.settle(mode, timeoutMs, this.settleMs);
    }
    async open(id, cwd = this.cwd) {
        const pending = this.opening.get(id);
        if (pending)
            return pending;
        // start() runs after `opening` counts this session, so eviction sees it.
        const promise = Promise.resolve()
            .then(() => this.start(id, cwd))
            .finally(() => this.opening.delete(id));
        this.opening.set(id, promise);
        return promise;
    }
    async start(id, cwd) {
        await this.evictFor();
        const dir = (0, session_1.makeSessionDir)();
        const session = new session_1.Session(id, dir, this.maxOutputBytes, cwd);
        session.size = { cols: this.cols, rows: this.rows };
        const rcPath = path.join(dir, 'rc');
        try {
            fs.writeFileSync(rcPath, session.rcText(rcPath), { mode: 0o600 });
            const backend = this.backend ?? (0, native_1.loadNative)().createTerminal;
            // Inherited variables the host drops are left out here, and the shell starts from the rest.
            // Every process the session starts inherits its tag, which close() finds them by.
            const tag = [{ name: session_1.SESSION_TAG_VAR, value: session.tag }];
            const env = (0, validate_1.mergeEnv)(this.dropEnv ? (0, validate_1.mergeEnv)((0, policy_env_1.filteredInheritedEnv)(this.dropEnv, process.env, { pty: true }), this.env) : this.env, tag);
            const inheritEnv = this.dropEnv ? false : this.inheritEnv;
            const terminal = await backend({
                command: this.bash(),
                args: ['--noprofile', '--norc', '--noediting', '-i'],
                cwd,
                env,
                outputByteLimit: 64 * 1024,
            }, {
                pty: { cols: this.cols, rows: this.rows },
                // Text mode for its emulator (query answers, full-screen programs); the scrollback is not used.
                ...(this.screen ? { output: 'text', scrollback: 0 } : {}),
                ...(inheritEnv !== undefined ? { inheritEnv } : {}),
                // A sandbox hides the host's /tmp, where the session's rc is: its directory is bound in.
                ...(this.sandbox !== undefined ? { sandbox: { ...this.sandbox, writableRoots: [...this.sandbox.writableRoots, dir] } } : {}),
            });
            session.attach(terminal);
            // The rc is sourced by a typed line rather than `--rcfile`, which would also read the system
            // bashrc; this echo and the default prompt come before the first marker and are dropped.
            await terminal.write((0, session_protocol_1.rcLine)(rcPath));
            const deadline = Date.now() + this.startTimeoutMs;
            while (!session.ready && !session.exit && Date.now() < deadline)
                await session.changed(deadline - Date.now());
            if (!session.ready) {
                const why = session.exit ? `it exited (${JSON.stringify(session.exit)})` : `no prompt within ${this.startTimeoutMs} ms`;
                await this.kill(session);
                throw new errors_1.AcpTerminalError('ERR_SESSION_START', `terminalId: the shell of session ${JSON.stringify(id)} did not start: ${why}`, { terminalId: id });
            }
        }
        catch (error) {
            await this.kill(session).catch(() => undefined);
            (0, session_1.removeSessionDir)(dir);
            throw error;
        }
        if (this.closed) {
            await this.kill(session);
            (0, session_1.removeSessionDir)(dir);
            throw new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the shell sessions were closed while a session was starting');
        }
        session.lastUsed = performanceNow();
        this.sessions.set(id, session);
        return session;
    }
    /**
     * The bash sessions run: `options.shell`, else the core's `sessionBash()` (`bash`, looked up in
     * PATH; on Windows Git for Windows' bash.exe, or `ERR_BASH_NOT_FOUND` saying what to install).
     */
    bash() {
        this.shell ??= (0, native_1.loadNative)().sessionBash();
        return this.shell;
    }
    /** Closes least recently used sessions until one more fits (idle ones first). */
    async evictFor() {
        while (this.sessions.size + this.opening.size > this.maxSessions) {
            const candidates = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed);
            const victim = candidates.find((s) => !this.locks.has(s.id)) ?? candidates[0];
            if (!victim)
                return;
            await this.destroy(victim);
        }
    }
    async destroy(session) {
        if (this.sessions.get(session.id) === session)
            this.sessions.delete(session.id);
        if (session.closed)
            return;
        session.closed = true;
        await this.kill(session);
        (0, session_1.removeSessionDir)(session.dir);
    }
    async kill(session) {
        const terminal = session.terminal;
        if (!terminal)
            return;
        session.cwd();
        // Sweep the session's processes unless the shell's pid now belongs to another process (reused
        // after the shell was reaped); the native release still kills what it contains.
        const native = (0, native_1.loadNative)();
        const start = native.processStartTime(terminal.pid);
        const sweepTree = start === null || start === session.shellStart;
        // The shell's session tree, and what carries the session's tag (a `setsid` child orphaned outside
        // the tree, out of the terminal's cgroup), again while anything is left: they may fork meanwhile.
        for (let round = 0; round < 10; round++) {
            if (sweepTree)
                killSessionTree(native, terminal.pid);
            const tagged = native.processesWithEnvironment(`${session_1.SESSION_TAG_VAR}=${session.tag}`);
            if (tagged.length === 0)
                break;
            for (const pid of tagged) {
                try {
                    process.kill(pid, 'SIGKILL');
                }
                catch {
                    // gone meanwhile
                }
            }
        }
        session.detach();
        await terminal.release().catch(() => undefined);
    }
}
exports.ShellSessions = ShellSessions;
/**
 * SIGKILLs the shell's session tree. Windows has no sessions (`ENOTSUP`): there the terminal's Job
 * Object holds the whole tree, and the release that follows ends it.
 */
function killSessionTree(native, shellPid) {
    try {
        native.killSessionTree(shellPid);
    }
    catch (error) {
        if (error.code !== 'ENOTSUP')
            throw error;
    }
}
function performanceNow() {
    return performance.now();
}
