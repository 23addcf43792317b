/**
 * Structural types of the terminal backend this layer drives.
 *
 * They describe the native core (`createTerminal()` / `TerminalHandle` from `../index.js`) by shape, so
 * the ACP layer can also run on a substitute backend (a sandbox wrapper, a test fake).
 */

import type * as Native from '../index.js';
import type { NetworkListener } from './network-proxy';

/**
 * How a command ended: `exitCode` is null when a signal killed it, `signal` is a name such as `"SIGTERM"`.
 * The ACP `TerminalExitStatus` / `WaitForTerminalExitResponse` field for field, so the SDK's values and
 * ours are assignable to each other: this package always sets both fields (null when not applicable);
 * they are optional in the type because they are in the protocol.
 */
export interface ExitStatus {
  /** Exit code (0..2^32-1), or null when the process was killed by a signal. Always set by this package. */
  exitCode?: number | null;
  /** Signal name (`"SIGKILL"`), or null when the process exited normally. Always set by this package. */
  signal?: string | null;
  /** Opaque metadata (this package sets none). */
  _meta?: AcpMeta;
}

/**
 * A snapshot of a terminal's retained output: the ACP `TerminalOutputResponse` field for field (its
 * `exitStatus` may be null on the wire; this package omits it while the command runs).
 */
export interface OutputSnapshot {
  /** The retained output (the newest bytes, cut on a UTF-8 boundary). */
  output: string;
  /** True once any output was dropped because of the byte limit (sticky). */
  truncated: boolean;
  /** Present only after the command exited. */
  exitStatus?: ExitStatus | null;
  /** Opaque metadata (this package sets none). */
  _meta?: AcpMeta;
}

/** One environment variable, as ACP sends it. */
export interface EnvVariable {
  /** Variable name (no `=`, no NUL). */
  name: string;
  /** Variable value. */
  value: string;
}

/**
 * Parameters accepted by `createTerminal` (and a backend's): the ACP `CreateTerminalRequest` field for
 * field with `sessionId` optional, so the SDK's request and these are assignable to each other (ours to
 * the SDK's once it has a `sessionId`). A `null` `args` or `env` from the wire is still accepted as absent.
 */
export interface CreateTerminalParams {
  /** Owning ACP session. */
  sessionId?: string;
  /** A shell line (no args) or an executable (with args). */
  command: string;
  /** Arguments; when non-empty, `command` is executed directly. */
  args?: string[];
  /** Variables added on top of the inherited environment. */
  env?: EnvVariable[];
  /** Absolute working directory. */
  cwd?: string | null;
  /** Keep at most this many bytes of output (the newest ones). */
  outputByteLimit?: number | null;
  /** Opaque metadata (ignored). */
  _meta?: AcpMeta;
}

/**
 * Backend options that are not part of the ACP request: the native option schema (declared once,
 * in the Rust binding, and generated into `index.d.ts` with its documentation), narrowed to what the
 * ACP layer passes. A substitute backend must honour `allowedRoots` (open the cwd once, check that
 * directory, start the command in it) or refuse it, and must refuse a `sandbox` it cannot provide.
 */
export type CreateTerminalOptions = Pick<
  Native.CreateTerminalOptions,
  'allowedRoots' | 'shell' | 'inheritEnv' | 'killGraceMs' | 'timeoutMs' | 'limits' | 'sandbox' | 'onOutput'
> & {
  /**
   * With `sandbox.network: { allow }`: receives every connection through the terminal's network proxy when
   * it is over (see docs/sandbox.md). Served by the package's `createTerminal`, not by the native core.
   */
  onNetwork?: NetworkListener | null;
};

/** The OS sandbox of a command: the native schema (see `index.d.ts`). */
export type SandboxOptions = Native.SandboxOptions;

/** A sandbox configured once, its writable roots pinned (see `sandboxConfig`). */
export type SandboxConfig = Native.SandboxConfig;

/** Resource limits for a command: the native schema (see `index.d.ts`). */
export type ResourceLimits = Native.ResourceLimits;

/** Options of `resolveProgram()`. */
export interface ResolveProgramOptions {
  /** Directory a relative program path (`./x`) is resolved against (default: the process's cwd). */
  cwd?: string | null;
  /** The `PATH` to search (default: the process's `PATH`). */
  path?: string | null;
}

/**
 * Resolves the program a direct (argv) request would execute to an absolute path, exactly as spawning
 * does; throws an error with `code` `ENOENT` (not found) or `EACCES` (not executable).
 */
export type ResolveProgramFn = (command: string, options?: ResolveProgramOptions) => string;

/** A running (or finished) command with bounded output: the shape of the native `TerminalHandle`. */
export interface TerminalLike {
  /** Backend identifier of the terminal. */
  readonly id: string;
  /** Process id of the command (the leader of its process group). */
  readonly pid: number;
  /**
   * The working directory the command really got (absolute, symlinks resolved), when the backend knows
   * it (the native handle does).
   */
  readonly cwd?: string;
  /** Total bytes the command wrote so far, retained or not (absent on backends that do not count). */
  readonly outputBytes?: number;
  /** Current retained output; includes `exitStatus` once the command exited. */
  currentOutput(): Promise<OutputSnapshot>;
  /** Resolves when the command exited. */
  waitForExit(): Promise<ExitStatus>;
  /** Stops the command (SIGTERM to the group, SIGKILL after the grace period); the terminal stays valid. */
  kill(): Promise<unknown>;
  /** Kills the command if needed and frees the terminal; later calls reject. */
  release(): Promise<unknown>;
  /**
   * Subscribes to raw output bytes as they arrive; with `{ replay: true }` the output retained so
   * far is delivered first (no gap, no overlap). Returns an unsubscribe function.
   */
  onOutput(listener: (chunk: Buffer) => void, options?: { replay?: boolean | null } | null): () => void;
}
/** A terminal's `outputBytes`, or `undefined` where the backend does not count (or its getter throws). */
export function readOutputBytes(terminal: TerminalLike): number | undefined {
  try {
    const n = terminal.outputBytes;
    return typeof n === 'number' ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The backend entry point: the native `createTerminal` or a substitute with the same contract. */
export type CreateTerminalFn = (
  params: CreateTerminalParams,
  options?: CreateTerminalOptions,
) => Promise<TerminalLike>;

/** ACP's `_meta` field: free-form metadata, or null. */
export type AcpMeta = { [key: string]: unknown } | null;

/**
 * An exit status as ACP puts it on the wire (the SDK's `TerminalExitStatus` / `WaitForTerminalExitResponse`):
 * both fields optional. What this package returns (`ExitStatus`) always has both, so it fits here, and
 * so does the SDK's.
 */
export interface ExitStatusLike {
  /** Exit code, or null/absent when a signal ended the command. */
  exitCode?: number | null;
  /** Signal name, or null/absent when the command exited normally. */
  signal?: string | null;
  /** Opaque metadata. */
  _meta?: AcpMeta;
}

/**
 * Terminal output as ACP puts it on the wire (the SDK's `TerminalOutputResponse`): `exitStatus` may be
 * null or absent. Our `OutputSnapshot` and the native `TerminalOutputResponse` fit here, and so does the SDK's.
 */
export interface TerminalOutputLike {
  /** The retained output. */
  output: string;
  /** True once output was dropped because of the byte limit. */
  truncated: boolean;
  /** The exit status once the command exited. */
  exitStatus?: ExitStatusLike | null;
  /** Opaque metadata. */
  _meta?: AcpMeta;
}

/**
 * The terminal-shaped object ACP agent code works with: the public surface of the SDK's `TerminalHandle`
 * (what `ctx.createTerminal()` returns on the agent side), typed by shape. Both the SDK's handle and ours
 * (`createTerminal()`, `TerminalHandle`) satisfy it, so agent code written against `AcpTerminalHandle`
 * (or against `Pick<TerminalHandle, 'id' | 'currentOutput' | 'waitForExit' | 'kill' | 'release'>` of the
 * SDK) runs on either: over the wire through a client, or in-process in tests and local tools.
 *
 * Our handle is not assignable to the SDK's `TerminalHandle` class itself: that class has private members
 * (`connection`, `sessionId`), which TypeScript matches by declaration, not by shape; type such
 * parameters with this interface or a `Pick` of the SDK class instead.
 */
export interface AcpTerminalHandle extends AsyncDisposable {
  /** Terminal id. */
  readonly id: string;
  /** Current output without waiting; includes `exitStatus` once the command exited. */
  currentOutput(): Promise<TerminalOutputLike>;
  /** Resolves with the exit status when the command exited. */
  waitForExit(): Promise<ExitStatusLike>;
  /** Kills the command; the terminal stays valid (output still readable). */
  kill(): Promise<unknown>;
  /** Kills the command if needed and frees the terminal. */
  release(): Promise<unknown>;
}
