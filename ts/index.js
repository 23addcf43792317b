"use strict";
/**
 * acp-terminal: the native core (`createTerminal`, `TerminalHandle`) plus the ACP layer: `TerminalHost`
 * for clients, `registerTerminalHandlers` for SDK 2.x `ClientApp`s, `createTestClient` for agent tests,
 * and the ACP v2 bridge. The SDK (`@agentclientprotocol/sdk`) is an optional peer dependency: only the
 * SDK helpers load it, on first use. The native core too is loaded on first use (`ts/native.ts`), so
 * importing this module never fails: an unsupported platform gets `ERR_NATIVE_UNAVAILABLE` from the
 * first call that needs the core.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.renderTerminalText = exports.ShellSessions = exports.parseKeys = exports.isKeyName = exports.DEFAULT_SESSION_TIMEOUT_MS = exports.DEFAULT_SESSION_OUTPUT_BYTES = exports.DEFAULT_SESSION_ID = exports.DEFAULT_MAX_SESSIONS = exports.DEFAULT_INTERRUPT_GRACE_MS = exports.DEFAULT_INPUT_SETTLE_MS = exports.DEFAULT_UPDATE_INTERVAL_MS = exports.DEFAULT_REPORT_BYTES = exports.DEFAULT_CONTENT_BYTES = exports.AgentTerminals = exports.agentTerminals = exports.V2TerminalRegistry = exports.startV2Terminal = exports.shellLine = exports.bridgeTerminalToV2 = exports.createTestClient = exports.trackSessionCwds = exports.toRequestError = exports.registerTerminalHandlers = exports.jsonRpcCodeFor = exports.RESOURCE_NOT_FOUND = exports.INVALID_PARAMS = exports.INTERNAL_ERROR = exports.shellCommandWords = exports.SHELL_BUILTINS = exports.SAFE_SHELL_BUILTINS = exports.argvCommandWords = exports.SECRET_ENV_PATTERNS = exports.DEFAULT_ENV_ALLOW = exports.DANGEROUS_ENV_PATTERNS = exports.checkRequestEnv = exports.checkCommand = exports.globToRegExp = exports.DEFAULT_OUTPUT_BYTE_LIMIT = exports.DEFAULT_MAX_TERMINALS = exports.DEFAULT_MAX_RELEASED_SNAPSHOTS = exports.TerminalHost = exports.AcpTerminalError = exports.SUPPORTED_PLATFORMS = exports.platformId = exports.sessionBash = exports.processCwd = exports.killProcessGroup = exports.killSessionTree = exports.sessionTreePids = void 0;
exports.createTerminal = createTerminal;
exports.containmentInfo = containmentInfo;
exports.resolveProgram = resolveProgram;
exports.renderTerminalOutput = renderTerminalOutput;
exports.renderTerminalOutputAsync = renderTerminalOutputAsync;
const native_1 = require("./native");
/**
 * Starts a command (see `CreateTerminalParams`); resolves with its `TerminalHandle`. Loads the native
 * core on first use (`ERR_NATIVE_UNAVAILABLE` when this platform has none).
 */
async function createTerminal(params, options) {
    return (0, native_1.loadNative)().createTerminal(params, options);
}
/** What this machine's containment provides (see `ContainmentInfo`). Loads the native core on first use. */
function containmentInfo() {
    return (0, native_1.loadNative)().containmentInfo();
}
/**
 * Resolves the program a direct (argv) request would execute to an absolute path, exactly as spawning
 * does; throws `ENOENT` / `EACCES`. Loads the native core on first use.
 */
function resolveProgram(command, options) {
    return (0, native_1.loadNative)().resolveProgram(command, options);
}
/** Renders raw terminal output to text with the core's emulator (see `renderTerminalText` for the friendly form). */
function renderTerminalOutput(data, options) {
    return (0, native_1.loadNative)().renderTerminalOutput(data, options);
}
/** `renderTerminalOutput` off the main thread. */
async function renderTerminalOutputAsync(data, options) {
    return (0, native_1.loadNative)().renderTerminalOutputAsync(data, options);
}
/** The live processes of a shell's session tree: its session and every descendant, even after `setsid`. */
const sessionTreePids = (shellPid) => (0, native_1.loadNative)().sessionTreePids(shellPid);
exports.sessionTreePids = sessionTreePids;
/** SIGKILLs a shell's session tree (see `sessionTreePids`), repeating while anything is left. */
const killSessionTree = (shellPid) => (0, native_1.loadNative)().killSessionTree(shellPid);
exports.killSessionTree = killSessionTree;
/** TERM (and CONT) to a process group, KILL after `graceMs` (default 2000) if anything is left. */
const killProcessGroup = (pgid, graceMs) => (0, native_1.loadNative)().killProcessGroup(pgid, graceMs);
exports.killProcessGroup = killProcessGroup;
/** The current working directory of a process, or null when it cannot be read. */
const processCwd = (pid) => (0, native_1.loadNative)().processCwd(pid);
exports.processCwd = processCwd;
/**
 * The bash a `ShellSessions` session runs unless `options.shell` names one: `bash` on Unix; on Windows Git for
 * Windows' `bash.exe` (throws `ERR_BASH_NOT_FOUND`, saying what to install, where there is none).
 */
const sessionBash = () => (0, native_1.loadNative)().sessionBash();
exports.sessionBash = sessionBash;
var native_2 = require("./native");
Object.defineProperty(exports, "platformId", { enumerable: true, get: function () { return native_2.platformId; } });
Object.defineProperty(exports, "SUPPORTED_PLATFORMS", { enumerable: true, get: function () { return native_2.SUPPORTED_PLATFORMS; } });
var errors_1 = require("./errors");
Object.defineProperty(exports, "AcpTerminalError", { enumerable: true, get: function () { return errors_1.AcpTerminalError; } });
var host_1 = require("./host");
Object.defineProperty(exports, "TerminalHost", { enumerable: true, get: function () { return host_1.TerminalHost; } });
Object.defineProperty(exports, "DEFAULT_MAX_RELEASED_SNAPSHOTS", { enumerable: true, get: function () { return host_1.DEFAULT_MAX_RELEASED_SNAPSHOTS; } });
Object.defineProperty(exports, "DEFAULT_MAX_TERMINALS", { enumerable: true, get: function () { return host_1.DEFAULT_MAX_TERMINALS; } });
Object.defineProperty(exports, "DEFAULT_OUTPUT_BYTE_LIMIT", { enumerable: true, get: function () { return host_1.DEFAULT_OUTPUT_BYTE_LIMIT; } });
var glob_1 = require("./glob");
Object.defineProperty(exports, "globToRegExp", { enumerable: true, get: function () { return glob_1.globToRegExp; } });
var policy_1 = require("./policy");
Object.defineProperty(exports, "checkCommand", { enumerable: true, get: function () { return policy_1.checkCommand; } });
var policy_env_1 = require("./policy-env");
Object.defineProperty(exports, "checkRequestEnv", { enumerable: true, get: function () { return policy_env_1.checkRequestEnv; } });
Object.defineProperty(exports, "DANGEROUS_ENV_PATTERNS", { enumerable: true, get: function () { return policy_env_1.DANGEROUS_ENV_PATTERNS; } });
Object.defineProperty(exports, "DEFAULT_ENV_ALLOW", { enumerable: true, get: function () { return policy_env_1.DEFAULT_ENV_ALLOW; } });
Object.defineProperty(exports, "SECRET_ENV_PATTERNS", { enumerable: true, get: function () { return policy_env_1.SECRET_ENV_PATTERNS; } });
var shell_analysis_1 = require("./shell-analysis");
Object.defineProperty(exports, "argvCommandWords", { enumerable: true, get: function () { return shell_analysis_1.argvCommandWords; } });
Object.defineProperty(exports, "SAFE_SHELL_BUILTINS", { enumerable: true, get: function () { return shell_analysis_1.SAFE_SHELL_BUILTINS; } });
Object.defineProperty(exports, "SHELL_BUILTINS", { enumerable: true, get: function () { return shell_analysis_1.SHELL_BUILTINS; } });
Object.defineProperty(exports, "shellCommandWords", { enumerable: true, get: function () { return shell_analysis_1.shellCommandWords; } });
var handlers_1 = require("./handlers");
Object.defineProperty(exports, "INTERNAL_ERROR", { enumerable: true, get: function () { return handlers_1.INTERNAL_ERROR; } });
Object.defineProperty(exports, "INVALID_PARAMS", { enumerable: true, get: function () { return handlers_1.INVALID_PARAMS; } });
Object.defineProperty(exports, "RESOURCE_NOT_FOUND", { enumerable: true, get: function () { return handlers_1.RESOURCE_NOT_FOUND; } });
Object.defineProperty(exports, "jsonRpcCodeFor", { enumerable: true, get: function () { return handlers_1.jsonRpcCodeFor; } });
Object.defineProperty(exports, "registerTerminalHandlers", { enumerable: true, get: function () { return handlers_1.registerTerminalHandlers; } });
Object.defineProperty(exports, "toRequestError", { enumerable: true, get: function () { return handlers_1.toRequestError; } });
var session_cwds_1 = require("./session-cwds");
Object.defineProperty(exports, "trackSessionCwds", { enumerable: true, get: function () { return session_cwds_1.trackSessionCwds; } });
var testclient_1 = require("./testclient");
Object.defineProperty(exports, "createTestClient", { enumerable: true, get: function () { return testclient_1.createTestClient; } });
var v2_1 = require("./v2");
Object.defineProperty(exports, "bridgeTerminalToV2", { enumerable: true, get: function () { return v2_1.bridgeTerminalToV2; } });
Object.defineProperty(exports, "shellLine", { enumerable: true, get: function () { return v2_1.shellLine; } });
Object.defineProperty(exports, "startV2Terminal", { enumerable: true, get: function () { return v2_1.startV2Terminal; } });
Object.defineProperty(exports, "V2TerminalRegistry", { enumerable: true, get: function () { return v2_1.V2TerminalRegistry; } });
var agent_terminals_1 = require("./agent-terminals");
Object.defineProperty(exports, "agentTerminals", { enumerable: true, get: function () { return agent_terminals_1.agentTerminals; } });
Object.defineProperty(exports, "AgentTerminals", { enumerable: true, get: function () { return agent_terminals_1.AgentTerminals; } });
Object.defineProperty(exports, "DEFAULT_CONTENT_BYTES", { enumerable: true, get: function () { return agent_terminals_1.DEFAULT_CONTENT_BYTES; } });
Object.defineProperty(exports, "DEFAULT_REPORT_BYTES", { enumerable: true, get: function () { return agent_terminals_1.DEFAULT_REPORT_BYTES; } });
Object.defineProperty(exports, "DEFAULT_UPDATE_INTERVAL_MS", { enumerable: true, get: function () { return agent_terminals_1.DEFAULT_UPDATE_INTERVAL_MS; } });
var sessions_1 = require("./sessions");
Object.defineProperty(exports, "DEFAULT_INPUT_SETTLE_MS", { enumerable: true, get: function () { return sessions_1.DEFAULT_INPUT_SETTLE_MS; } });
Object.defineProperty(exports, "DEFAULT_INTERRUPT_GRACE_MS", { enumerable: true, get: function () { return sessions_1.DEFAULT_INTERRUPT_GRACE_MS; } });
Object.defineProperty(exports, "DEFAULT_MAX_SESSIONS", { enumerable: true, get: function () { return sessions_1.DEFAULT_MAX_SESSIONS; } });
Object.defineProperty(exports, "DEFAULT_SESSION_ID", { enumerable: true, get: function () { return sessions_1.DEFAULT_SESSION_ID; } });
Object.defineProperty(exports, "DEFAULT_SESSION_OUTPUT_BYTES", { enumerable: true, get: function () { return sessions_1.DEFAULT_SESSION_OUTPUT_BYTES; } });
Object.defineProperty(exports, "DEFAULT_SESSION_TIMEOUT_MS", { enumerable: true, get: function () { return sessions_1.DEFAULT_SESSION_TIMEOUT_MS; } });
Object.defineProperty(exports, "isKeyName", { enumerable: true, get: function () { return sessions_1.isKeyName; } });
Object.defineProperty(exports, "parseKeys", { enumerable: true, get: function () { return sessions_1.parseKeys; } });
Object.defineProperty(exports, "ShellSessions", { enumerable: true, get: function () { return sessions_1.ShellSessions; } });
var screen_text_1 = require("./screen-text");
Object.defineProperty(exports, "renderTerminalText", { enumerable: true, get: function () { return screen_text_1.renderTerminalText; } });
/** Compile-time proof that the native core satisfies the structural contract the ACP layer relies on. */
const nativeSatisfiesContract = undefined;
void nativeSatisfiesContract;
/** Same for the pty contract `ShellSessions` drives (write, sendKeys, resize, outputBytes). */
const nativeSatisfiesPtyContract = undefined;
void nativeSatisfiesPtyContract;
