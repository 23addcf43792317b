"use strict";
/**
 * `new TerminalHost(options)`: the options read and checked once (errors name the option), their
 * defaults, and the settings every create then uses.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_MAX_RELEASED_SNAPSHOTS = exports.DEFAULT_MAX_TERMINALS = exports.DEFAULT_OUTPUT_BYTE_LIMIT = void 0;
exports.readHostOptions = readHostOptions;
exports.hostPath = hostPath;
exports.childPath = childPath;
const errors_1 = require("./errors");
const native_1 = require("./native");
const policy_1 = require("./policy");
const policy_env_1 = require("./policy-env");
const validate_1 = require("./validate");
/** Default `defaultOutputByteLimit`: 1 MiB, so an agent that omits the limit cannot exhaust memory. */
exports.DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;
/** Default `maxTerminals`. */
exports.DEFAULT_MAX_TERMINALS = 64;
/** Default `maxReleasedSnapshots`. */
exports.DEFAULT_MAX_RELEASED_SNAPSHOTS = 32;
const LIMIT_FIELDS = ['cpuSeconds', 'addressSpaceBytes', 'openFiles', 'fileSizeBytes', 'processes'];
function validateLimits(value, field) {
    if (value === undefined || value === null)
        return undefined;
    if (typeof value !== 'object')
        throw (0, errors_1.invalidArg)(field, 'must be an object');
    const limits = {};
    for (const key of Object.keys(value)) {
        if (!LIMIT_FIELDS.includes(key)) {
            throw (0, errors_1.invalidArg)(`${field}.${key}`, `unknown limit (known: ${LIMIT_FIELDS.join(', ')})`);
        }
    }
    for (const key of LIMIT_FIELDS) {
        const n = (0, validate_1.optionalCount)(value[key], `${field}.${key}`);
        if (n !== undefined)
            limits[key] = n;
    }
    return limits;
}
/** Reads `new TerminalHost()`'s options; invalid options throw `ERR_INVALID_ARG` naming the option. */
function readHostOptions(options) {
    if (typeof options !== 'object' || options === null)
        throw (0, errors_1.invalidArg)('options', 'must be an object');
    const cwd = (0, validate_1.optionalAbsolutePath)(options.cwd, 'options.cwd');
    const maxLimit = (0, validate_1.optionalCount)(options.maxOutputByteLimit, 'options.maxOutputByteLimit') ?? Number.MAX_SAFE_INTEGER;
    const defaultLimit = Math.min((0, validate_1.optionalCount)(options.defaultOutputByteLimit, 'options.defaultOutputByteLimit') ?? exports.DEFAULT_OUTPUT_BYTE_LIMIT, maxLimit);
    for (const flag of ['clampLimits', 'ignoreUnknownRelease']) {
        if (options[flag] !== undefined && typeof options[flag] !== 'boolean')
            throw (0, errors_1.invalidArg)(`options.${flag}`, 'must be a boolean');
    }
    const clampLimits = options.clampLimits === true;
    const count = clampLimits ? validate_1.clampedCount : validate_1.optionalCount;
    const maxTerminals = options.maxTerminals === Infinity
        ? Infinity
        : ((0, validate_1.optionalCount)(options.maxTerminals, 'options.maxTerminals', 1) ?? exports.DEFAULT_MAX_TERMINALS);
    const maxSnapshots = (0, validate_1.optionalCount)(options.maxReleasedSnapshots, 'options.maxReleasedSnapshots') ?? exports.DEFAULT_MAX_RELEASED_SNAPSHOTS;
    const envOverlay = (0, validate_1.normalizeEnv)(options.env, 'options.env');
    const killGraceMs = count(options.killGraceMs, 'options.killGraceMs');
    const timeoutMs = (0, validate_1.optionalCount)(options.timeoutMs, 'options.timeoutMs', 1);
    const limits = validateLimits(options.limits, 'options.limits');
    if (options.shell !== undefined && options.shell !== false && typeof options.shell !== 'string') {
        throw (0, errors_1.invalidArg)('options.shell', 'must be false or a path');
    }
    if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
        throw (0, errors_1.invalidArg)('options.inheritEnv', 'must be a boolean');
    }
    if (options.argless !== undefined && options.argless !== 'shell' && options.argless !== 'auto' && typeof options.argless !== 'function') {
        throw (0, errors_1.invalidArg)('options.argless', `must be 'shell', 'auto' or a function, got ${JSON.stringify(options.argless)}`);
    }
    for (const fn of ['createTerminal', 'approve', 'onEvent', 'onCall', 'resolveProgram', 'cwdForSession']) {
        if (options[fn] !== undefined && typeof options[fn] !== 'function')
            throw (0, errors_1.invalidArg)(`options.${fn}`, 'must be a function');
    }
    const roots = (0, policy_1.compileRoots)(options.allowedRoots, 'options.allowedRoots');
    const commandPolicy = (0, policy_1.compileCommandPolicy)(options.commandPolicy, 'options.commandPolicy');
    const envPolicy = (0, policy_env_1.compileEnvPolicy)(options.envPolicy, 'options.envPolicy', commandPolicy !== undefined);
    const dropEnv = options.inheritEnv === false ? undefined : (0, policy_env_1.compileEnvPatterns)(options.dropInheritedEnv, 'options.dropInheritedEnv');
    const approve = options.approve;
    const resolveProgram = options.resolveProgram;
    // The shell for shell lines is found once, through the host's PATH, never the request's.
    const shell = typeof options.shell === 'string'
        ? (0, policy_1.resolveHostShell)(options.shell, hostPath(envOverlay, options.inheritEnv !== false), cwd, resolveProgram ?? (0, native_1.loadNativeResolveProgram)())
        : options.shell;
    const backendOptions = {
        ...(killGraceMs !== undefined ? { killGraceMs } : {}),
        ...(shell !== undefined ? { shell } : {}),
        ...(options.inheritEnv !== undefined ? { inheritEnv: options.inheritEnv } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(limits !== undefined ? { limits } : {}),
        ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
    };
    return {
        cwd,
        defaultLimit,
        maxLimit,
        maxTerminals,
        clampLimits,
        ignoreUnknownRelease: options.ignoreUnknownRelease === true,
        maxSnapshots,
        envOverlay,
        backendOptions,
        argless: options.argless ?? 'shell',
        backend: options.createTerminal,
        roots,
        commandPolicy,
        envPolicy,
        approve,
        dropEnv,
        resolveProgram,
    };
}
/** The host's own PATH: its `env` overlay's, else this process's when inherited (undefined: the resolver's default). */
function hostPath(overlay, inherit) {
    return childPath(overlay) ?? (inherit ? process.env.PATH : undefined);
}
/**
 * The PATH the child will see when the explicit env sets it (undefined: the resolver's default). On
 * Windows names compare without case, as the core applies them there (`Path` is `PATH`).
 */
function childPath(env, platform = process.platform) {
    const isPath = platform === 'win32' ? (name) => name.toUpperCase() === 'PATH' : (name) => name === 'PATH';
    let found;
    for (const e of env)
        if (isPath(e.name))
            found = e.value;
    return found;
}
