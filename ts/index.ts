/**
 * acp-terminal: the native core (`createTerminal`, `TerminalHandle`) plus the ACP layer: `TerminalHost`
 * for clients, `registerTerminalHandlers` for SDK 2.x `ClientApp`s, `createTestClient` for agent tests,
 * and the ACP v2 bridge. The SDK (`@agentclientprotocol/sdk`) is an optional peer dependency: only the
 * SDK helpers load it, on first use. The native core too is loaded on first use (`ts/native.ts`), so
 * importing this module never fails: an unsupported platform gets `ERR_NATIVE_UNAVAILABLE` from the
 * first call that needs the core.
 */

import type * as Native from '../index.js';
import { loadNative, nativeCreateTerminal } from './native';
import { type NetworkListener, networkRulesOf } from './network-proxy';
import type { PtyCreateTerminalFn } from './sessions';
import type { CreateTerminalFn, CreateTerminalParams } from './types';

export type {
  ContainmentInfo,
  CreateTerminalOptions,
  DisplayFilter,
  DisplayFilterOptions,
  EnvVariable,
  OnOutputOptions,
  PtyOptions,
  RenderedTerminalOutput,
  RenderTerminalOutputOptions,
  TerminalEmptyResponse,
  TerminalHandle,
} from '../index.js';
// The ACP shapes, assignable both ways to the SDK's (the core's generated declarations are narrower or wider).
export type {
  CreateTerminalParams,
  ExitStatus as TerminalExitStatus,
  OutputSnapshot as TerminalOutputResponse,
} from './types';

/**
 * Starts a command (see `CreateTerminalParams`); resolves with its `TerminalHandle`. Loads the native
 * core on first use (`ERR_NATIVE_UNAVAILABLE` when this platform has none).
 */
export async function createTerminal(
  params: CreateTerminalParams,
  options?: (Native.CreateTerminalOptions & { onNetwork?: NetworkListener | null }) | null,
): Promise<Native.TerminalHandle> {
  return nativeCreateTerminal()(params, options);
}

/**
 * A sandbox configured once: its writable roots resolved, checked and opened now (see `SandboxConfig`).
 * Pass it as `options.sandbox` to every create that should use it; later creates bind those very
 * directories, whatever happens to their paths. Throws `ERR_INVALID_ARG` naming the field (`field`,
 * default `sandbox`). Loads the native core on first use.
 */
export function sandboxConfig(options: Native.SandboxOptions, field?: string): Native.SandboxConfig {
  const config = new (loadNative().SandboxConfig)(options, field);
  networkRulesOf(config, field ?? 'sandbox'); // the network allow list's patterns, checked now too
  return config;
}

/** What this machine's containment provides (see `ContainmentInfo`). Loads the native core on first use. */
export function containmentInfo(): Native.ContainmentInfo {
  return loadNative().containmentInfo();
}

/**
 * Resolves the program a direct (argv) request would execute to an absolute path, exactly as spawning
 * does; throws `ENOENT` / `EACCES`. Loads the native core on first use.
 */
export function resolveProgram(command: string, options?: Native.ResolveProgramOptions | null): string {
  return loadNative().resolveProgram(command, options);
}

/** Renders raw terminal output to text with the core's emulator (see `renderTerminalText` for the friendly form). */
export function renderTerminalOutput(
  data: string | Uint8Array,
  options?: Native.RenderTerminalOutputOptions | null,
): Native.RenderedTerminalOutput {
  return loadNative().renderTerminalOutput(data, options);
}

/** `renderTerminalOutput` off the main thread. */
export async function renderTerminalOutputAsync(
  data: string | Uint8Array,
  options?: Native.RenderTerminalOutputOptions | null,
): Promise<Native.RenderedTerminalOutput> {
  return loadNative().renderTerminalOutputAsync(data, options);
}

/**
 * Output made safe to write to a real terminal: text, colours and cursor movement kept; clipboard
 * (OSC 52), titles (unless `allowTitle`), DCS/APC/PM/SOS strings, queries that make the terminal answer
 * and mode changes dropped. For a whole output; a stream goes through `createDisplayFilter()` (or
 * `terminal.onOutput(fn, { display: 'safe' })`).
 */
export function sanitizeForDisplay(data: string | Uint8Array, options?: Native.DisplayFilterOptions | null): string {
  return loadNative().sanitizeForDisplay(data, options);
}

/** A streaming `sanitizeForDisplay`: `filter.write(chunk)` returns what is safe to show of each chunk, across chunk boundaries. */
export function createDisplayFilter(options?: Native.DisplayFilterOptions | null): Native.DisplayFilter {
  return new (loadNative().DisplayFilter)(options);
}

/** The live processes of a shell's session tree: its session and every descendant, even after `setsid`. */
export const sessionTreePids: typeof Native.sessionTreePids = (shellPid) => loadNative().sessionTreePids(shellPid);

/** SIGKILLs a shell's session tree (see `sessionTreePids`), repeating while anything is left. */
export const killSessionTree: typeof Native.killSessionTree = (shellPid) => loadNative().killSessionTree(shellPid);

/** TERM (and CONT) to a process group, KILL after `graceMs` (default 2000) if anything is left. */
export const killProcessGroup: typeof Native.killProcessGroup = (pgid, graceMs) =>
  loadNative().killProcessGroup(pgid, graceMs);

/** The current working directory of a process, or null when it cannot be read. */
export const processCwd: typeof Native.processCwd = (pid) => loadNative().processCwd(pid);

/**
 * The bash a `ShellSessions` session runs unless `options.shell` names one: `bash` on Unix; on Windows Git for
 * Windows' `bash.exe` (throws `ERR_BASH_NOT_FOUND`, saying what to install, where there is none).
 */
export const sessionBash: typeof Native.sessionBash = () => loadNative().sessionBash();

export { platformId, SUPPORTED_PLATFORMS } from './native';
export { AcpTerminalError, type AcpTerminalErrorCode, type PolicyErrorCode } from './errors';
export {
  TerminalHost,
  DEFAULT_KILL_AFTER_CANCEL_MS,
  DEFAULT_MAX_RELEASED_SNAPSHOTS,
  DEFAULT_MAX_TERMINALS,
  DEFAULT_OUTPUT_BYTE_LIMIT,
  type HostCreateTerminalRequest,
  type HostCreateTerminalResponse,
  type HostTerminalRequest,
  type ApprovalOptions,
  type ApprovalRequest,
  type AuthorizedRequest,
  type ArglessMode,
  type TerminalCreatedEvent,
  type TerminalHostOptions,
  type TerminalBackend,
  type CallOptions,
  type LiveTerminalInfo,
  type RegisterTerminalHandlersOptions,
} from './host';
export type {
  AuditCommand,
  AuditEventBase,
  KillReason,
  ReleaseReason,
  TerminalAuditEvent,
  TerminalAuditListener,
  TerminalCallEvent,
  TerminalCallListener,
  TerminalCallMethod,
  TerminalCallPhase,
  TerminalCreatedAuditEvent,
  TerminalDeniedAuditEvent,
  TerminalExitedAuditEvent,
  TerminalFailedAuditEvent,
  TerminalKilledAuditEvent,
  TerminalNetworkAuditEvent,
  TerminalReleasedAuditEvent,
} from './events';
export type { NetworkConnectionEvent, NetworkListener } from './network-proxy';
export { globToRegExp } from './glob';
export { checkCommand, checkCommandAsync, type CommandCheck, type CommandCheckResult, type CommandPolicy, type CommandRule, type PolicyCommand } from './policy';
export {
  checkRequestEnv,
  DANGEROUS_ENV_PATTERNS,
  DEFAULT_ENV_ALLOW,
  DATA_ONLY_ENV_NAMES,
  EDITOR_ENV_NAMES,
  SECRET_ENV_PATTERNS,
  type EnvNamePattern,
  type EnvPolicy,
  type EnvRule,
} from './policy-env';
export {
  argvCommandWords,
  SAFE_SHELL_BUILTINS,
  SHELL_BUILTINS,
  shellCommandWords,
  type CommandWord,
  type Redefinition,
  type ShellRefusal,
  type ShellAnalysis,
} from './shell-analysis';
export { INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, jsonRpcCodeFor, registerTerminalHandlers, toRequestError } from './handlers';
export { trackSessionCwds } from './session-cwds';
export {
  createTestClient,
  type PermissionPolicy,
  type TestClient,
  type TestClientConnection,
  type TestClientOptions,
  type WaitForUpdateOptions,
} from './testclient';
export {
  bridgeTerminalToV2,
  shellLine,
  startV2Terminal,
  V2TerminalRegistry,
  type StartV2TerminalOptions,
  type V2BridgeOptions,
  type V2TerminalSize,
  type V2TerminalBridge,
  type V2UpdateSink,
} from './v2';
export {
  agentTerminals,
  AgentTerminals,
  DEFAULT_CONTENT_BYTES,
  DEFAULT_REPORT_BYTES,
  DEFAULT_UPDATE_INTERVAL_MS,
  type AgentConnectionLike,
  type AgentTerminal,
  type AgentTerminalsConnector,
  type AgentTerminalForm,
  type AgentTerminalOptions,
  type AgentTerminalsOptions,
  type BackgroundTerminal,
  type ReportedExecuteOptions,
  type ReportedShellSessions,
  type ShellSessionsLike,
} from './agent-terminals';
export type {
  AcpTerminalHandle,
  CreateTerminalFn,
  ExitStatus,
  ExitStatusLike,
  TerminalOutputLike,
  OutputSnapshot,
  ResolveProgramFn,
  ResolveProgramOptions,
  ResourceLimits,
  SandboxConfig,
  SandboxOptions,
  TerminalLike,
} from './types';
export {
  DEFAULT_INPUT_SETTLE_MS,
  DEFAULT_INTERRUPT_GRACE_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_ID,
  DEFAULT_SESSION_OUTPUT_BYTES,
  DEFAULT_SESSION_TIMEOUT_MS,
  isKeyName,
  parseKeys,
  ShellSessions,
  type ExecuteRequest,
  type ExecuteResult,
  type InterruptOptions,
  type InterruptReport,
  type PtyCreateTerminalFn,
  type PtyCreateTerminalOptions,
  type PtyTerminalLike,
  type PreviousCommand,
  type RestartResult,
  type ShellSessionsNetworkEvent,
  type ShellSessionsNetworkListener,
  type ShellSessionsOptions,
} from './sessions';
export { renderTerminalText, type RenderTextOptions } from './screen-text';
export { quoteForPrompt } from './prompt-quote';
export type { McpHttpHandlerOptions, McpHttpOptions, McpTerminalOptions, McpTerminalServer, SessionCommandEvent } from './mcp';

/**
 * Terminals as MCP tools (see `docs/mcp.md`): builds a server over a `TerminalHost` or the options of
 * one. The MCP SDK is loaded on first call, so importing this module does not pay for it.
 */
export function createMcpServer(
  hostOrOptions?: import('./host').TerminalHost | import('./host-types').TerminalHostOptions,
  options?: import('./mcp').McpTerminalOptions,
): import('./mcp').McpTerminalServer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./mcp') as typeof import('./mcp')).createMcpServer(hostOrOptions, options);
}

/** Compile-time proof that the native core satisfies the structural contract the ACP layer relies on. */
const nativeSatisfiesContract: CreateTerminalFn = undefined as unknown as typeof Native.createTerminal;
void nativeSatisfiesContract;
/** Same for the pty contract `ShellSessions` drives (write, sendKeys, resize, outputBytes). */
const nativeSatisfiesPtyContract: PtyCreateTerminalFn = undefined as unknown as typeof Native.createTerminal;
void nativeSatisfiesPtyContract;
export * as backends from './backends';
/** Same for the remote backends' `createTerminal` (docs/remote.md). */
const remoteSatisfiesContract: CreateTerminalFn = undefined as unknown as import('./backends').Backend['createTerminal'];
void remoteSatisfiesContract;
/** And a remote backend is what `TerminalHost({ backend })` takes. */
const backendSatisfiesHost: import('./host-types').TerminalBackend = undefined as unknown as import('./backends').Backend;
void backendSatisfiesHost;
