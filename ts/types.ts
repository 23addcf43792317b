/**
 * Structural types of the terminal backend this layer drives.
 *
 * They describe the native core (`createTerminal()` / `TerminalHandle` from `../index.js`) by shape, so
 * the ACP layer can also run on a substitute backend (a sandbox wrapper, a test fake).
 */

/** How a command ended: `exitCode` is null when a signal killed it, `signal` is a name such as `"SIGTERM"`. */
export interface ExitStatus {
  /** Exit code (0..2^32-1), or null when the process was killed by a signal. */
  exitCode: number | null;
  /** Signal name (`"SIGKILL"`), or null when the process exited normally. */
  signal: string | null;
}

/** A snapshot of a terminal's retained output. */
export interface OutputSnapshot {
  /** The retained output (the newest bytes, cut on a UTF-8 boundary). */
  output: string;
  /** True once any output was dropped because of the byte limit (sticky). */
  truncated: boolean;
  /** Present only after the command exited. */
  exitStatus?: ExitStatus;
}

/** One environment variable, as ACP sends it. */
export interface EnvVariable {
  /** Variable name (no `=`, no NUL). */
  name: string;
  /** Variable value. */
  value: string;
}

/** Parameters accepted by the backend's `createTerminal`. */
export interface CreateTerminalParams {
  /** Owning ACP session. */
  sessionId?: string;
  /** A shell line (no args) or an executable (with args). */
  command: string;
  /** Arguments; when non-empty, `command` is executed directly. */
  args?: string[] | null;
  /** Variables added on top of the inherited environment. */
  env?: EnvVariable[] | null;
  /** Absolute working directory. */
  cwd?: string | null;
  /** Keep at most this many bytes of output (the newest ones). */
  outputByteLimit?: number | null;
  /** Opaque metadata. */
  _meta?: unknown;
}

/** Backend options that are not part of the ACP request. */
export interface CreateTerminalOptions {
  /** `false` never uses a shell; a path selects the shell used for arg-less commands. */
  shell?: false | string;
  /** Whether the child inherits this process's environment (default true). */
  inheritEnv?: boolean;
  /** Milliseconds between SIGTERM and SIGKILL on kill (default 2000). */
  killGraceMs?: number;
  /**
   * Kill the command (SIGTERM, then SIGKILL after `killGraceMs`) when it still runs after this many
   * milliseconds; its exit status is then the signal's.
   */
  timeoutMs?: number;
  /** Resource limits applied to the child before it executes (soft = hard = value). */
  limits?: ResourceLimits;
  /**
   * A listener attached before the command starts: every output byte, exactly once, in order, from the
   * first (`info.dropped`: bytes a listener that fell more than 8 MiB behind lost). Backends that do not
   * stream may ignore it.
   */
  onOutput?: ((chunk: Buffer, info: { dropped: number }) => void) | null;
}

/**
 * Resource limits for a command (setrlimit in the child before exec; soft = hard = value). They apply
 * to the command and are inherited by everything it starts.
 */
export interface ResourceLimits {
  /** CPU time in seconds (`RLIMIT_CPU`): SIGXCPU, then SIGKILL, when exceeded. */
  cpuSeconds?: number;
  /** Virtual address space in bytes (`RLIMIT_AS`): allocations fail beyond it. */
  addressSpaceBytes?: number;
  /** Open file descriptors (`RLIMIT_NOFILE`): the highest descriptor number + 1. */
  openFiles?: number;
  /** Largest file the command may write, in bytes (`RLIMIT_FSIZE`): SIGXFSZ beyond it. */
  fileSizeBytes?: number;
  /**
   * Processes (`RLIMIT_NPROC`). Linux counts every process of the user (real uid), not only the
   * command's, and does not enforce it for root or a process with CAP_SYS_RESOURCE / CAP_SYS_ADMIN.
   */
  processes?: number;
}

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

/** The backend entry point: the native `createTerminal` or a substitute with the same contract. */
export type CreateTerminalFn = (
  params: CreateTerminalParams,
  options?: CreateTerminalOptions,
) => Promise<TerminalLike>;
