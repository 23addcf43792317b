"use strict";
/**
 * The create path of `TerminalHost`: a `terminal/create` request checked (shape, allowed roots,
 * environment, command policy, the user's approval) and spawned exactly as checked; and the audit event
 * of a create that was refused or failed.
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
exports.validateCreate = validateCreate;
exports.spawnChecked = spawnChecked;
exports.linkedSignal = linkedSignal;
exports.refusalEvent = refusalEvent;
const path = __importStar(require("node:path"));
const errors_1 = require("./errors");
const host_options_1 = require("./host-options");
const native_1 = require("./native");
const policy_1 = require("./policy");
const policy_env_1 = require("./policy-env");
const validate_1 = require("./validate");
const POLICY_CODES = new Set([
    'ERR_POLICY_DENIED',
    'ERR_CWD_OUTSIDE_ROOTS',
    'ERR_NOT_APPROVED',
    'ERR_TOO_MANY_TERMINALS',
]);
/** Checks a `terminal/create` request's shape and applies the host's defaults (`ERR_INVALID_ARG` naming the field). */
function validateCreate(request, settings) {
    if (typeof request !== 'object' || request === null)
        throw (0, errors_1.invalidArg)('params', 'must be an object');
    const sessionId = (0, validate_1.requireString)(request.sessionId, 'sessionId');
    const command = (0, validate_1.requireString)(request.command, 'command');
    (0, validate_1.rejectNul)(command, 'command');
    if (request.args !== undefined && request.args !== null) {
        if (!Array.isArray(request.args))
            throw (0, errors_1.invalidArg)('args', 'must be an array of strings');
        request.args.forEach((arg, i) => {
            if (typeof arg !== 'string')
                throw (0, errors_1.invalidArg)(`args[${i}]`, 'must be a string');
            (0, validate_1.rejectNul)(arg, `args[${i}]`);
        });
    }
    if (request.cwd !== undefined && request.cwd !== null && typeof request.cwd !== 'string') {
        throw (0, errors_1.invalidArg)('cwd', `must be an absolute path string, got ${JSON.stringify(request.cwd)}`);
    }
    if (typeof request.cwd === 'string' && request.cwd.includes('\0'))
        throw (0, errors_1.invalidArg)('cwd', 'contains a NUL byte');
    const requested = (settings.clampLimits ? validate_1.clampedCount : validate_1.optionalCount)(request.outputByteLimit, 'outputByteLimit');
    const outputByteLimit = Math.min(requested ?? settings.defaultLimit, settings.maxLimit);
    const env = (0, validate_1.mergeEnv)(settings.envOverlay, request.env == null ? [] : (0, validate_1.normalizeEnv)(request.env, 'env'));
    const cwd = request.cwd ?? settings.cwd;
    return {
        sessionId,
        command,
        ...(request.args ? { args: [...request.args] } : {}),
        ...(env.length > 0 ? { env } : {}),
        ...(cwd !== undefined ? { cwd } : {}),
        outputByteLimit,
    };
}
/**
 * Checks `req` (validated from `request`) against the host's policy, asks for approval, and starts exactly
 * what was checked. `seen.cwd` follows the directory as it gets resolved (for the audit of a refusal);
 * `req.cwd` becomes the directory the command really got. `isClosed` tells whether the host was closed
 * while the approval was pending; `signal` is the approver's (the call's, aborted by the host's close too).
 */
async function spawnChecked(settings, request, req, seen, isClosed, signal) {
    let program;
    // 1. Working directory inside the allowed roots (resolved here for the policy and the approval; the
    //    backend checks it again on the directory it opens and starts the command in: see allowedRoots).
    let cwd = req.cwd ?? undefined;
    if (settings.roots) {
        const target = cwd ?? process.cwd();
        if (!path.isAbsolute(target)) {
            throw new errors_1.AcpTerminalError('ERR_INVALID_CWD', `cwd: must be an absolute path, got ${JSON.stringify(target)}`, { field: 'cwd' });
        }
        cwd = await (0, policy_1.resolveCwdInRoots)(target, settings.roots);
        seen.cwd = cwd;
    }
    // 2. Environment: inherited variables filtered by name, then the overlay and the request's env.
    const options = { ...settings.backendOptions, ...(settings.roots ? { allowedRoots: settings.roots } : {}) };
    let env = req.env ?? [];
    if (settings.dropEnv) {
        env = (0, validate_1.mergeEnv)((0, policy_env_1.filteredInheritedEnv)(settings.dropEnv), env);
        options.inheritEnv = false;
    }
    // 3. How an arg-less request is read (`argless`): a shell line, or a program run directly.
    if (settings.envPolicy && request.env != null)
        (0, policy_env_1.checkRequestEnv)(settings.envPolicy, (0, validate_1.normalizeEnv)(request.env, 'env'));
    const args = req.args ?? [];
    const inherit = options.inheritEnv !== false;
    const resolve = settings.resolveProgram ?? (0, native_1.loadNativeResolveProgram)();
    let direct;
    if (args.length === 0 && settings.backendOptions.shell !== false && arglessMode(settings, req) === 'auto') {
        direct = directProgram(req.command, cwd, (0, host_options_1.childPath)(env) ?? (0, host_options_1.hostPath)([], inherit), resolve);
        if (direct !== undefined)
            options.shell = false;
    }
    program = direct;
    // 4. Command policy (and the program list the approver sees): it judges what will run.
    let commands = [];
    if (settings.commandPolicy || settings.approve) {
        const policy = settings.commandPolicy ?? { allow: undefined, deny: [], shellLines: 'check' };
        const shellLine = args.length === 0 && options.shell !== false;
        const result = (0, policy_1.checkCommand)(policy, {
            command: direct ?? req.command,
            args,
            shellLine,
            cwd,
            // A program is found through the host's PATH (and then run by its absolute path); the words of a
            // shell line through the PATH the shell will have, which the request may set only if envPolicy allows.
            path: shellLine ? ((0, host_options_1.childPath)(env) ?? (0, host_options_1.hostPath)([], inherit)) : (0, host_options_1.hostPath)(settings.envOverlay, settings.backendOptions.inheritEnv !== false),
            resolve,
            dialect: (0, policy_1.shellDialect)(typeof options.shell === 'string' ? options.shell : undefined),
            ...(settings.envPolicy ? { env: settings.envPolicy } : {}),
        });
        program = result.program;
        commands = result.commands;
    }
    // 5. The user's approval.
    if (settings.approve) {
        const approval = {
            sessionId: req.sessionId,
            command: req.command,
            args: [...args],
            cwd,
            env: (req.env ?? []).map((e) => ({ ...e })),
            outputByteLimit: req.outputByteLimit,
            ...(program !== undefined ? { program } : {}),
            commands,
        };
        // What the approver throws (its prompt had no TTY, was cancelled) reaches the caller unchanged.
        const approved = await settings.approve(approval, { signal });
        if (approved !== true) {
            throw new errors_1.AcpTerminalError('ERR_NOT_APPROVED', 'terminal/create was not approved by the user; do not retry the same command', {
                reason: 'declined',
            });
        }
        if (isClosed())
            throw new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the command awaited approval');
    }
    // 6. Spawn exactly what was checked: the resolved program for a direct request.
    const backend = settings.backend ?? (0, native_1.loadNativeCreateTerminal)();
    const terminal = await backend({
        sessionId: req.sessionId,
        command: program ?? req.command,
        ...(req.args ? { args: [...req.args] } : {}),
        ...(env.length > 0 ? { env } : {}),
        ...(cwd !== undefined ? { cwd } : {}),
        outputByteLimit: req.outputByteLimit,
    }, options);
    // What onCreate and the audit report: the directory the command really got, as the backend says.
    const gotCwd = handleCwd(terminal) ?? cwd;
    if (gotCwd !== undefined)
        req.cwd = gotCwd;
    return { terminal, program };
}
/**
 * A signal aborted (with the same reason) as soon as any of `signals` is; `unlink()` detaches it from
 * them once it is no longer needed (a host's close signal outlives every call).
 */
function linkedSignal(signals) {
    const controller = new AbortController();
    const sources = signals.filter((s) => s !== undefined);
    const onAbort = (event) => controller.abort(event.target.reason);
    const unlink = () => sources.forEach((s) => s.removeEventListener('abort', onAbort));
    for (const source of sources) {
        if (source.aborted) {
            controller.abort(source.reason);
            break;
        }
        source.addEventListener('abort', onAbort, { once: true });
    }
    controller.signal.addEventListener('abort', unlink, { once: true });
    return { signal: controller.signal, unlink };
}
/** A bare program name: no shell syntax, nothing a shell would expand or split. */
const BARE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+,@%-]*$/;
/** The `argless` mode for this request (a function option decides per request). */
function arglessMode(settings, req) {
    const mode = typeof settings.argless === 'function' ? settings.argless(Object.freeze({ ...req })) : settings.argless;
    if (mode !== 'shell' && mode !== 'auto')
        throw (0, errors_1.invalidArg)('options.argless', `returned ${JSON.stringify(mode)}, not 'shell' or 'auto'`);
    return mode;
}
/**
 * Under `argless: 'auto'`: the absolute path of the program an arg-less `command` names (the exact path of
 * an existing executable, or a bare name found in `pathVar`), or undefined when it is a shell line.
 */
function directProgram(command, cwd, pathVar, resolve) {
    if (!command.includes('/') && !BARE_NAME.test(command))
        return undefined;
    try {
        return resolve(command, { cwd: cwd ?? null, path: pathVar ?? null });
    }
    catch {
        return undefined; // not an executable: a shell line (which reports what is wrong, as under 'shell')
    }
}
/**
 * The audit event of a create that did not happen: `denied` for a policy refusal, `failed` otherwise.
 * `cwd` is the directory as far as it was resolved; the request may be malformed.
 */
function refusalEvent(request, cwd, error) {
    const r = (typeof request === 'object' && request !== null ? request : {});
    const base = {
        time: Date.now(),
        sessionId: typeof r.sessionId === 'string' ? r.sessionId : '',
        command: typeof r.command === 'string' ? r.command : '',
        args: Array.isArray(r.args) ? r.args.filter((a) => typeof a === 'string') : [],
        cwd: resolvedCwdOf(error) ?? cwd ?? (typeof r.cwd === 'string' ? r.cwd : undefined),
    };
    const code = (0, errors_1.errorCode)(error);
    if (code !== undefined && POLICY_CODES.has(code)) {
        return { type: 'denied', ...base, code: code, reason: (0, errors_1.errorMessage)(error) };
    }
    return { type: 'failed', ...base, code, message: (0, errors_1.errorMessage)(error) };
}
/** The working directory a backend's handle says its command got (the native `TerminalHandle.cwd`). */
function handleCwd(terminal) {
    try {
        const cwd = terminal.cwd;
        return typeof cwd === 'string' && cwd !== '' ? cwd : undefined;
    }
    catch {
        return undefined;
    }
}
/** The resolved cwd an `ERR_CWD_OUTSIDE_ROOTS` error carries. */
function resolvedCwdOf(error) {
    const details = error?.details;
    return typeof details?.resolved === 'string' ? details.resolved : undefined;
}
