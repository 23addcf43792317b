/**
 * The audit stream of a `TerminalHost` (`onEvent`): one event per terminal lifecycle step and per refused
 * request. Events carry no environment values (they may hold secrets).
 */

import type { PolicyErrorCode } from './errors';
import type { NetworkConnectionEvent } from './network-proxy';
import type { ExitStatus } from './types';

/** Fields every audit event has. */
export interface AuditEventBase {
  /** Milliseconds since the epoch when the host emitted the event. */
  time: number;
  /** Session of the request. */
  sessionId: string;
}

/** The command of a request, as the host was asked to run it. */
export interface AuditCommand {
  /** The request's `command` (a shell line when `args` is empty). */
  command: string;
  /** The request's `args` (empty for a shell line). */
  args: string[];
  /** Working directory: resolved (symlinks and `..`) when `allowedRoots` is set; undefined = the process's. */
  cwd: string | undefined;
  /**
   * The command as one line, for an operation log: `command` itself for a shell line, else `command` and
   * `args` each shell-quoted where needed (`git commit -m 'a b'`).
   */
  commandLine: string;
}

/** A terminal was created and its command runs. */
export interface TerminalCreatedAuditEvent extends AuditEventBase, AuditCommand {
  /** Discriminant. */
  type: 'created';
  /** Host-issued terminal id. */
  terminalId: string;
  /** Process id of the command (it leads its own process group). */
  pid: number;
  /** Absolute path executed, for a direct (argv) request checked by the command policy. */
  program?: string;
  /** Output limit applied. */
  outputByteLimit: number;
}

/** A terminal's command exited (seen by the host; emitted before `released` for the same terminal). */
export interface TerminalExitedAuditEvent extends AuditEventBase {
  /** Discriminant. */
  type: 'exited';
  /** Host-issued terminal id. */
  terminalId: string;
  /** How it ended (`exitCode` null and a `signal` when killed, e.g. by `timeoutMs`). */
  exitStatus: ExitStatus;
  /** Milliseconds from creation to the exit, as measured by the host. */
  durationMs: number;
  /**
   * Bytes the command wrote in total (retained or not): the backend's count, or for a backend that does
   * not count, the bytes the host saw from the moment it created the terminal.
   */
  outputBytes: number;
}

/** Who asked for a kill: the agent (`terminal/kill`), or the host after the client's `session/cancel`. */
export type KillReason = 'request' | 'cancel';

/**
 * A terminal is being killed: the agent asked (`terminal/kill`, emitted when the request arrives, before the
 * kill completes), or the host killed a command its session's `session/cancel` left running (`killAfterCancelMs`).
 */
export interface TerminalKilledAuditEvent extends AuditEventBase {
  /** Discriminant. */
  type: 'killed';
  /** Host-issued terminal id. */
  terminalId: string;
  /** `request`: `terminal/kill`; `cancel`: still running `killAfterCancelMs` after the session's `session/cancel`. */
  reason: KillReason;
  /** False when the host had already seen the command exit (the kill was a no-op). */
  wasRunning: boolean;
}

/** Why a terminal was released. */
export type ReleaseReason = 'request' | 'session' | 'all' | 'close';

/** A terminal was released and freed. */
export interface TerminalReleasedAuditEvent extends AuditEventBase {
  /** Discriminant. */
  type: 'released';
  /** Host-issued terminal id. */
  terminalId: string;
  /** `request`: `terminal/release`; `session`: `releaseSession()`; `all`: `releaseAll()`; `close`: `close()`. */
  reason: ReleaseReason;
  /** True when the command was still running and the release killed it. */
  wasRunning: boolean;
}

/** The host refused a `terminal/create` by policy or limit; nothing was started. */
export interface TerminalDeniedAuditEvent extends AuditEventBase, AuditCommand {
  /** Discriminant. */
  type: 'denied';
  /** The error code the agent received. */
  code: PolicyErrorCode;
  /** Why, in words (the error message the agent received). */
  reason: string;
}

/** A `terminal/create` failed for another reason (invalid request, program not found, spawn error). */
export interface TerminalFailedAuditEvent extends AuditEventBase, AuditCommand {
  /** Discriminant. */
  type: 'failed';
  /** The error code (`ERR_INVALID_ARG`, `ENOENT`, `E2BIG`, ...), when the error had one. */
  code: string | undefined;
  /** The error message the agent received. */
  message: string;
}

/**
 * A connection through a sandboxed terminal's network proxy (`sandbox.network: { allow }`), allowed or
 * refused, reported once it is over (a refused one at once): host and port asked for, protocol, decision,
 * reason, bytes each way.
 */
export interface TerminalNetworkAuditEvent extends AuditEventBase, NetworkConnectionEvent {
  /** Discriminant. */
  type: 'network';
  /** Host-issued terminal id. */
  terminalId: string;
}

/** Everything `TerminalHost.onEvent` reports; switch on `type`. */
export type TerminalAuditEvent =
  | TerminalNetworkAuditEvent
  | TerminalCreatedAuditEvent
  | TerminalExitedAuditEvent
  | TerminalKilledAuditEvent
  | TerminalReleasedAuditEvent
  | TerminalDeniedAuditEvent
  | TerminalFailedAuditEvent;

/** An audit listener. Exceptions and rejected promises it produces are ignored by the host. */
export type TerminalAuditListener = (event: TerminalAuditEvent) => void | Promise<void>;

/** The five ACP v1 terminal methods a host serves, as named on the wire. */
export type TerminalCallMethod = 'terminal/create' | 'terminal/output' | 'terminal/wait_for_exit' | 'terminal/kill' | 'terminal/release';

/** Where a call is: started, answered, or failed (refused, invalid, cancelled, backend error). */
export type TerminalCallPhase = 'running' | 'completed' | 'failed';

/**
 * One step of one call of a host method (`TerminalHost.onCall`), for a UI or a log: every call emits
 * `running` when it starts, then exactly one `completed` or `failed` with the same `callId`. A
 * `terminal/wait_for_exit` stays `running` while the command runs, so a UI can show "waiting".
 */
export interface TerminalCallEvent {
  /** Numbers the calls of this host from 1; pairs `running` with its outcome. */
  callId: number;
  /** The method called. */
  method: TerminalCallMethod;
  /** `running`, then `completed` or `failed`. */
  phase: TerminalCallPhase;
  /** Milliseconds since the epoch when the host emitted the event. */
  time: number;
  /** The request's session (empty when the request had none). */
  sessionId: string;
  /** The terminal: the request's, or for `terminal/create` the new id once `completed` (undefined before). */
  terminalId: string | undefined;
  /**
   * For `terminal/create` (every phase): the requested command as one line, for an operation log (see
   * `AuditCommand.commandLine`); empty when the request had no string `command`.
   */
  commandLine?: string;
  /** For `completed`/`failed`: milliseconds since `running`. */
  durationMs?: number;
  /** For `completed` `terminal/wait_for_exit`, and `terminal/output` of an exited command: how it ended. */
  exitStatus?: ExitStatus;
  /** For `completed` `terminal/output`: whether the retained output was truncated. */
  truncated?: boolean;
  /** For `failed`: the error's `code` (undefined when it had none) and message, as the caller received them. */
  error?: { code: string | undefined; message: string };
  /** For `failed`: true when the call's `signal` aborted it (`$/cancel_request`). */
  cancelled?: boolean;
}

/** A call listener. Exceptions and rejected promises it produces are ignored by the host. */
export type TerminalCallListener = (event: TerminalCallEvent) => void | Promise<void>;
