/**
 * Errors raised by the JS layer. Each carries a stable string `code` (like Node's system errors) and a
 * message that names the offending field.
 */

/**
 * Error codes raised by this layer (the native core adds `ENOENT`, `EACCES`, `E2BIG`, `ENOTSUP`,
 * `ERR_INVALID_CWD`, `ERR_INVALID_ARG`, `ERR_TERMINAL_RELEASED`, and for a `ShellSessions` session
 * on Windows without Git for Windows' bash, `ERR_BASH_NOT_FOUND`).
 *
 * Host policy refusals (each also emits a `denied` audit event):
 * - `ERR_POLICY_DENIED`: the command policy refused a program (a deny rule matched, or it is not on
 *   the allow list, or a shell line could not be verified against the allow list).
 * - `ERR_CWD_OUTSIDE_ROOTS`: the working directory, symlinks and `..` resolved, is outside `allowedRoots`.
 * - `ERR_NOT_APPROVED`: the host's `approve` callback declined (answered anything but `true`).
 * - `ERR_TOO_MANY_TERMINALS`: `maxTerminals` live terminals already exist.
 *
 * Loading: `ERR_NATIVE_UNAVAILABLE` (no binary for this platform, or it did not load: the message says
 * which platform and what to do); `ERR_SDK_NOT_FOUND` (the optional peer `@agentclientprotocol/sdk` is
 * not installed); `ERR_SDK_LOAD_FAILED` (it is installed but could not be loaded).
 */
export type AcpTerminalErrorCode =
  | 'ERR_INVALID_ARG'
  | 'ERR_INVALID_CWD'
  | 'ERR_TERMINAL_NOT_FOUND'
  | 'ERR_TOO_MANY_TERMINALS'
  | 'ERR_HOST_CLOSED'
  | 'ERR_TERMINAL_EXITED'
  | 'ERR_NOT_A_PTY'
  | 'ERR_SDK_NOT_FOUND'
  | 'ERR_SDK_LOAD_FAILED'
  | 'ERR_NATIVE_UNAVAILABLE'
  | 'ERR_POLICY_DENIED'
  | 'ERR_CWD_OUTSIDE_ROOTS'
  | 'ERR_NOT_APPROVED'
  | 'ERR_COMMAND_RUNNING'
  | 'ERR_NO_RUNNING_COMMAND'
  | 'ERR_SESSION_START'
  /** `AgentTerminals.createTerminal()` got a context of an app the kit did not wrap. */
  | 'ERR_NOT_ATTACHED'
  /** A `ShellSessions` session stopped answering (`status: 'broken'`): call `restart()`. */
  | 'ERR_SESSION_BROKEN'
  /** A remote backend's transport ended (docs/remote.md): what was pending on it is lost. */
  | 'ERR_BACKEND_LOST'
  | 'ERR_BACKEND_PROTOCOL'
  /** The sandbox part asked for cannot be provided here (the core's code; also a backend without the network proxy's listener). */
  | 'ERR_SANDBOX_UNAVAILABLE'
  /** `TestClient.assertNoLiveTerminals()`: terminals the agent never released (listed in the message and `details.terminals`). */
  | 'ERR_LIVE_TERMINALS';

/** The codes of host policy refusals (the ones reported as `denied` audit events). */
export type PolicyErrorCode = 'ERR_POLICY_DENIED' | 'ERR_CWD_OUTSIDE_ROOTS' | 'ERR_NOT_APPROVED' | 'ERR_TOO_MANY_TERMINALS';

/** An error of the JS layer with a machine-readable `code`. */
export class AcpTerminalError extends Error {
  /** Machine-readable error code. */
  readonly code: AcpTerminalErrorCode;
  /** Extra structured details (the field name, the terminal id, the limit that was hit). */
  readonly details: Readonly<Record<string, unknown>>;

  /** Creates an error with `code`, `message` and optional structured `details`. */
  constructor(code: AcpTerminalErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'AcpTerminalError';
    this.code = code;
    this.details = details;
  }
}

/** Builds an `ERR_INVALID_ARG` error whose message starts with the field name. */
export function invalidArg(field: string, problem: string): AcpTerminalError {
  return new AcpTerminalError('ERR_INVALID_ARG', `${field}: ${problem}`, { field });
}

/** Reads the string `code` of an error-like value (native errors come from another realm, so no instanceof). */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Reads the message of an error-like value. */
export function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error) {
    const message = (error as { message: unknown }).message;
    if (typeof message === 'string') return message;
  }
  return String(error);
}
