/**
 * The public types of `TerminalHost`: the ACP v1 `terminal/*` params and results it serves, what its
 * `onCreate` and `approve` callbacks receive, and its options.
 */

import type { TerminalAuditListener, TerminalCallListener } from './events';
import type { CommandPolicy, PolicyCommand } from './policy';
import type { EnvNamePattern, EnvPolicy } from './policy-env';
import type { CreateTerminalFn, EnvVariable, ResolveProgramFn, ResourceLimits, SandboxConfig, SandboxOptions, TerminalLike } from './types';
import type { LookupBackend } from './backends/far';

/** A remote backend as `TerminalHost` uses it (what `backends.podman()`, `backends.ssh()`, ... return). */
export interface TerminalBackend extends LookupBackend {
  /** Starts a terminal at the far end (the native `createTerminal`'s shape). */
  createTerminal: CreateTerminalFn;
}

/**
 * `terminal/create` params: the ACP v1 `CreateTerminalRequest` field for field, so the SDK's type and this
 * one are assignable to each other (a `null` `args`/`env` from the wire is still accepted as absent).
 */
export interface HostCreateTerminalRequest {
  /** Session that will own the terminal. */
  sessionId: string;
  /** A shell line (no args) or an executable (with args). */
  command: string;
  /** Arguments; when non-empty, `command` is executed directly. */
  args?: string[];
  /** Variables set for the command (they win over the host's overlay and the inherited environment). */
  env?: EnvVariable[];
  /** Absolute working directory; the host's `cwd` option when absent. */
  cwd?: string | null;
  /** Output limit in bytes; the host's default when absent, clamped to `maxOutputByteLimit`. */
  outputByteLimit?: number | null;
  /** Opaque metadata (ignored). */
  _meta?: { [key: string]: unknown } | null;
}

/** Params of `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` and `terminal/release`. */
export interface HostTerminalRequest {
  /** Session that owns the terminal. */
  sessionId: string;
  /** Terminal id returned by `createTerminal`. */
  terminalId: string;
  /** Opaque metadata (ignored). */
  _meta?: { [key: string]: unknown } | null;
}

/** `terminal/create` result. */
export interface HostCreateTerminalResponse {
  /** Id to use in later requests. */
  terminalId: string;
}

/** Emitted by `onCreate` for every terminal the host creates. */
export interface TerminalCreatedEvent {
  /** Host-issued terminal id (what the agent sees). */
  terminalId: string;
  /** Owning session. */
  sessionId: string;
  /** The live terminal (subscribe to `onOutput` to stream it into a UI). */
  terminal: TerminalLike;
  /**
   * The request as the host applied it, for a UI's header or log: `command` and `args` as the agent sent
   * them, `cwd` the directory the command really got (the session's or the host's when the agent sent
   * none; resolved when `allowedRoots` is set), `outputByteLimit` the effective limit (default applied,
   * clamped), `env` the host's `env` overlay merged with the request's (inherited variables not listed).
   */
  request: Readonly<HostCreateTerminalRequest & { outputByteLimit: number }>;
}

/** What `approve` is asked about: the request as the host will run it. */
export interface ApprovalRequest {
  /** Session asking. */
  sessionId: string;
  /** The request's `command` (a shell line when `args` is empty). */
  command: string;
  /** The request's `args`. */
  args: string[];
  /** The directory the command will start in (resolved when `allowedRoots` is set; undefined: this process's cwd). */
  cwd: string | undefined;
  /** Variables the request and the host's `env` overlay set (inherited variables are not listed). */
  env: EnvVariable[];
  /** Output limit applied. */
  outputByteLimit: number;
  /** For a request run directly (with args, or arg-less under `argless: 'auto'`): the absolute path that will be executed. */
  program?: string;
  /** The programs found in the request (for shell lines, as the analysis found them; see `shellCommandWords`). */
  commands: PolicyCommand[];
}

/**
 * What `TerminalHost.authorize` resolves with: what `approve` would be asked about, and what would run,
 * for a front end that runs the command in a runner of its own (a persistent shell).
 */
export interface AuthorizedRequest extends ApprovalRequest {
  /**
   * What runs: the request's `command`, or under an allow list the line (or, run directly, the program)
   * rebuilt from what was checked, each program by the real path that was checked.
   */
  runCommand: string;
  /** The arguments that run with `runCommand` run directly (under an allow list, the checked argv's); undefined for a shell line. */
  runArgs: string[] | undefined;
  /** True when `runCommand` is a shell line (no arguments, run by the host's shell). */
  shellLine: boolean;
}

/**
 * How an arg-less `terminal/create` (no `args`, or `args: []`) is read:
 * - `'shell'`: `command` is a shell line (`sh -c command`), as the ACP spec and Zed read it. A path with a
 *   space (`/opt/x/tool with space`) runs `/opt/x/tool` with two arguments.
 * - `'auto'`: `command` is executed directly, with no arguments, when it is the exact path of an existing
 *   executable (absolute, or relative to the cwd), or a bare program name (letters, digits, `_ . + , @ % -`;
 *   no shell syntax) found in the PATH; anything else is a shell line. So `/opt/x/tool with space` runs
 *   that program, `make` runs `make` without a shell, and `make && make test` or `cd` (a builtin, not in
 *   PATH) are shell lines. Shell behaviour is lost only where it would not have applied: no expansion,
 *   no aliases, no `ENV`/`BASH_ENV` startup file for the directly run program.
 */
export type ArglessMode = 'shell' | 'auto';

/** The second argument of `approve`. */
export interface ApprovalOptions {
  /**
   * Aborted when the agent cancels the `terminal/create` (`$/cancel_request`, the caller's `signal`) or
   * the host is closed: close the prompt. The create has already been answered with the signal's reason.
   */
  signal: AbortSignal;
}

/** Options of `new TerminalHost()`. */
export interface TerminalHostOptions {
  /**
   * Absolute working directory for requests without `cwd` whose session has no directory of its own
   * (see `cwdForSession`); default: this process's cwd.
   */
  cwd?: string;
  /**
   * The working directory of a request without `cwd`, per session. Gets the session and the directory
   * the host knows for it (from `setSessionCwd`, which `registerTerminalHandlers` and `createTestClient`
   * call with the `cwd` of each `session/new`, `session/load` and `session/resume` the client sends),
   * and returns an absolute path, or undefined for the host's `cwd`. Without this hook the known
   * directory is used. A request's own `cwd` always wins; `allowedRoots` apply to the result.
   */
  cwdForSession?: (sessionId: string, known: string | undefined) => string | undefined | Promise<string | undefined>;
  /** Output limit for requests without `outputByteLimit` (default 1 MiB). */
  defaultOutputByteLimit?: number;
  /** Ceiling for every terminal's output limit; larger requests are clamped (default: no ceiling). */
  maxOutputByteLimit?: number;
  /**
   * Live terminals allowed at once; creating more fails with `ERR_TOO_MANY_TERMINALS` (default 64;
   * `Infinity`: no bound).
   */
  maxTerminals?: number;
  /**
   * Clamp sloppy numbers instead of refusing them: a request's `outputByteLimit` and this host's
   * `killGraceMs` that are fractional, negative or too large are rounded down into [0, 2^53-1] (a string or
   * NaN is still refused). Default false: such numbers fail with `ERR_INVALID_ARG` naming the field.
   */
  clampLimits?: boolean;
  /**
   * Answer `terminal/release` of an id this host never issued to that session with `{}` (as many
   * hand-written terminal managers do) instead of `ERR_TERMINAL_NOT_FOUND` (-32002). Nothing is released:
   * another session's terminal stays alive. Default false.
   */
  ignoreUnknownRelease?: boolean;
  /** Grace period between SIGTERM and SIGKILL (backend default when absent). */
  killGraceMs?: number;
  /** Variables added to every command: inherited environment < this overlay < the request's `env`. */
  env?: Readonly<Record<string, string>> | readonly EnvVariable[];
  /** Whether commands inherit this process's environment (default true). */
  inheritEnv?: boolean;
  /**
   * The shell that runs arg-less commands (shell lines), found once through the host's `PATH`: `false` never
   * uses a shell; a name or path runs `shell -c line`; a shell with its arguments runs them with the line
   * appended, as clients run the user's login shell (`['bash', '-l', '-c']`, `[process.env.SHELL, '-l',
   * '-c']`, `['wsl.exe', '-e', 'sh', '-c']`). Either way the command policy judges the line, not the shell.
   */
  shell?: false | string | readonly string[];
  /**
   * How arg-less requests are read: `'shell'` (default) or `'auto'` (see `ArglessMode`), for every
   * request or chosen per request by a function. A request run directly reaches the backend with its
   * resolved program as `command` and `shell: false`; the command policy and `approve` judge that
   * program, exactly as for a request with `args`. Ignored when `shell` is false (nothing is a shell line).
   */
  argless?: ArglessMode | ((request: Readonly<HostCreateTerminalRequest>) => ArglessMode);
  /** How many released terminals keep their final snapshot for `finalOutput()` (default 32). */
  maxReleasedSnapshots?: number;
  /**
   * How long (ms) a released terminal's final snapshot is kept for `finalOutput()`, besides the count
   * `maxReleasedSnapshots` (default: no time limit). Its timer never keeps the process alive.
   */
  releasedSnapshotTtlMs?: number;
  /**
   * Grace (ms) between the client's `session/cancel` of a session (see `cancelSession`) and the kill of that
   * session's terminals still running from before the cancel (default 2000); `false`: never kill on a cancel.
   */
  killAfterCancelMs?: number | false;
  /**
   * For agents that drop `truncated` before their model sees the output: `true` puts the line
   * `[output truncated: only the newest bytes are shown]` (or this string, one line) at the head of every
   * truncated `terminal/output`, in place of as many of the oldest bytes. Default false: output as is.
   */
  truncationNotice?: boolean | string;
  /** Terminal backend (default: the native `createTerminal`); substitute it to sandbox or fake commands. */
  createTerminal?: CreateTerminalFn;
  /**
   * Run every terminal at the far end of a remote backend (`backends.podman(name)`, `backends.ssh(host)`,
   * docs/remote.md). Program lookup, the cwd check and `allowedRoots` are then decided there (its PATH, its
   * file system, its environment for `dropInheritedEnv`), and judged by this host's policy here before
   * anything starts. Not with `createTerminal` or `resolveProgram`; a `sandbox` must be plain options.
   */
  backend?: TerminalBackend;
  /**
   * Directories a command may start in. The cwd (the request's, else the host's `cwd`, else this
   * process's), with symlinks and `..` resolved, must be one of them or lie below one; otherwise
   * `ERR_CWD_OUTSIDE_ROOTS`. The roots are resolved once, by the core, when the host is created. The check
   * is made twice: here, before the policy and the approval (which see the resolved directory), and by
   * the core at spawn (the backend gets `allowedRoots`), which opens the directory once, checks the
   * opened directory and starts the command in it: a symlink swapped in after any check changes
   * nothing. The `created` event records the directory the command really got.
   */
  allowedRoots?: readonly string[];
  /** Allow/deny rules on the programs a request would run; a refusal is `ERR_POLICY_DENIED`. */
  commandPolicy?: CommandPolicy;
  /**
   * Variables a request's `env` may not set (and, under an allow list, a shell line may not assign):
   * by default `DANGEROUS_ENV_PATTERNS` (`LD_*`, `BASH_ENV`, `GIT_SSH*`, `PATH`, ...), except a pager
   * set to `cat`. Applies when `commandPolicy` or this option is set; `{ deny: [] }` turns it off.
   * A refusal is `ERR_POLICY_DENIED` with reason `env`, naming the variable.
   */
  envPolicy?: EnvPolicy;
  /**
   * Asked before anything runs, after every other check passed (so the user is only asked about
   * requests the policy would allow). Only `true` approves; `false` or another value refuse with
   * `ERR_NOT_APPROVED`. A throw or a rejection (no TTY for the prompt, the user cancelled) fails the
   * create with that very error, so a client keeps its own error classes (over the wire: its `code`
   * mapped as usual, a `RequestError` kept as is, anything else -32603). `options.signal` aborts when the
   * agent cancels the request or the host closes. Pending approvals count against `maxTerminals`.
   */
  approve?: (request: ApprovalRequest, options: ApprovalOptions) => boolean | Promise<boolean>;
  /**
   * The error a declined approval (`approve` answered anything but `true`) rejects with, in the client's
   * own class (`(request) => new PermissionDeniedError(...)`), instead of `ERR_NOT_APPROVED`: a caller of
   * `createTerminal` keeps its `instanceof` checks, while the agent still gets -32602 with
   * `data.code: 'ERR_NOT_APPROVED'` (`toRequestError`, `registerTerminalHandlers`) and the audit a
   * `denied` event. What `approve` throws is unaffected (it reaches the caller as is).
   */
  declinedError?: (request: ApprovalRequest) => Error;
  /**
   * Inherited variables to drop, by name pattern (case-insensitive globs such as `*_TOKEN`, or RegExps),
   * before the host's `env` overlay and the request's `env` are applied (those are never filtered).
   * `SECRET_ENV_PATTERNS` is a ready-made list. Ignored when `inheritEnv` is false.
   */
  dropInheritedEnv?: readonly EnvNamePattern[];
  /** Kill a command still running after this many milliseconds (SIGTERM, SIGKILL after the grace). */
  timeoutMs?: number;
  /** Resource limits for every command (see `ResourceLimits` for what Linux enforces, and for whom). */
  limits?: ResourceLimits;
  /**
   * Run every command in the OS sandbox (see `SandboxOptions`): configured once, when the host is
   * constructed (a `SandboxConfig`: its writable roots pinned then; bad options throw
   * `ERR_INVALID_ARG` naming the field), and passed to each create.
   */
  sandbox?: SandboxOptions | SandboxConfig;
  /** Audit listener, same as calling `onEvent(listener)` right after construction. */
  onEvent?: TerminalAuditListener;
  /** Call listener (running/completed/failed of each of the five methods), same as `onCall(listener)` right after construction. */
  onCall?: TerminalCallListener;
  /** Program resolution for the command policy (default: the core's `resolveProgram`). */
  resolveProgram?: ResolveProgramFn;
}

/** Options of `registerTerminalHandlers(app, host, options)` (and of `trackSessionCwds`). */
export interface RegisterTerminalHandlersOptions {
  /**
   * Whether each `initialize` the client sends through the app's connections advertises
   * `clientCapabilities.terminal: true` (added when the client's own request leaves it out; agents call
   * `terminal/*` only when it is set). Default true; `false` sends `initialize` as the client wrote it.
   */
  advertiseTerminal?: boolean;
}
