/**
 * acp-terminal: the native core (`createTerminal`, `TerminalHandle`) plus the ACP layer: `TerminalHost`
 * for clients, `registerTerminalHandlers` for SDK 2.x `ClientApp`s, `createTestClient` for agent tests,
 * and the ACP v2 bridge. The SDK (`@agentclientprotocol/sdk`) is an optional peer dependency: only the
 * SDK helpers load it, on first use.
 */

import * as native from '../index.js';
import type { PtyCreateTerminalFn } from './sessions';
import type { CreateTerminalFn } from './types';

export * from '../index.js';
export { AcpTerminalError, type AcpTerminalErrorCode, type PolicyErrorCode } from './errors';
export {
  TerminalHost,
  DEFAULT_MAX_RELEASED_SNAPSHOTS,
  DEFAULT_MAX_TERMINALS,
  DEFAULT_OUTPUT_BYTE_LIMIT,
  type HostCreateTerminalRequest,
  type HostCreateTerminalResponse,
  type HostTerminalRequest,
  type ApprovalRequest,
  type TerminalCreatedEvent,
  type TerminalHostOptions,
} from './host';
export type {
  AuditCommand,
  AuditEventBase,
  ReleaseReason,
  TerminalAuditEvent,
  TerminalAuditListener,
  TerminalCreatedAuditEvent,
  TerminalDeniedAuditEvent,
  TerminalExitedAuditEvent,
  TerminalFailedAuditEvent,
  TerminalKilledAuditEvent,
  TerminalReleasedAuditEvent,
} from './events';
export {
  checkCommand,
  globToRegExp,
  SECRET_ENV_PATTERNS,
  type CommandCheck,
  type CommandCheckResult,
  type CommandPolicy,
  type CommandRule,
  type EnvNamePattern,
  type PolicyCommand,
} from './policy';
export {
  argvCommandWords,
  SAFE_SHELL_BUILTINS,
  SHELL_BUILTINS,
  shellCommandWords,
  type CommandWord,
  type ShellAnalysis,
} from './shellwords';
export { INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, jsonRpcCodeFor, registerTerminalHandlers, toRequestError } from './handlers';
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
  type V2TerminalBridge,
  type V2UpdateSink,
} from './v2';
export type {
  CreateTerminalFn,
  ExitStatus,
  OutputSnapshot,
  ResolveProgramFn,
  ResolveProgramOptions,
  ResourceLimits,
  SandboxOptions,
  TerminalLike,
} from './types';
export {
  DEFAULT_INPUT_SETTLE_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_ID,
  DEFAULT_SESSION_OUTPUT_BYTES,
  DEFAULT_SESSION_TIMEOUT_MS,
  isKeyName,
  parseKeys,
  sessionTreePids,
  ShellSessions,
  type ExecuteRequest,
  type ExecuteResult,
  type PtyCreateTerminalFn,
  type PtyCreateTerminalOptions,
  type PtyTerminalLike,
  type ShellSessionsOptions,
} from './sessions';
export { renderTerminalText, type RenderTextOptions } from './screen-text';

/** Compile-time proof that the native core satisfies the structural contract the ACP layer relies on. */
const nativeSatisfiesContract: CreateTerminalFn = native.createTerminal;
void nativeSatisfiesContract;
/// Same for the pty contract `ShellSessions` drives (write, sendKeys, resize, outputBytes).
const nativeSatisfiesPtyContract: PtyCreateTerminalFn = native.createTerminal;
void nativeSatisfiesPtyContract;
