/**
 * TerminalHost: the client side of ACP v1 `terminal/*`, with method names matching the SDK's legacy
 * `Client` interface so a client can delegate to it one to one. It also enforces the client's policy
 * (allowed roots, command rules, approval, environment filter, limits) and reports an audit stream.
 */

import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AcpTerminalError, errorCode, errorMessage, invalidArg, type PolicyErrorCode } from './errors';
import type { ReleaseReason, TerminalAuditEvent, TerminalAuditListener } from './events';
import { loadNativeCreateTerminal, loadNativeResolveProgram } from './native';
import {
  checkCommand,
  compileCommandPolicy,
  compileEnvPatterns,
  compileRoots,
  filteredInheritedEnv,
  resolveCwdInRoots,
  resolveHostShell,
  type CommandPolicy,
  type CompiledCommandPolicy,
  type EnvNamePattern,
  type PolicyCommand,
} from './policy';
import type {
  CreateTerminalFn,
  CreateTerminalOptions,
  EnvVariable,
  ExitStatus,
  OutputSnapshot,
  ResolveProgramFn,
  ResourceLimits,
  SandboxOptions,
  TerminalLike,
} from './types';
import { checkRequestEnv, compileEnvPolicy, type CompiledEnvPolicy, type EnvPolicy } from './policy-env';
import { mergeEnv, normalizeEnv, optionalAbsolutePath, optionalCount, rejectNul, requireString } from './validate';

/** Default `defaultOutputByteLimit`: 1 MiB, so an agent that omits the limit cannot exhaust memory. */
export const DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;
/** Default `maxTerminals`. */
export const DEFAULT_MAX_TERMINALS = 64;
/** Default `maxReleasedSnapshots`. */
export const DEFAULT_MAX_RELEASED_SNAPSHOTS = 32;

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
  /** The request as the host applied it (default cwd, effective limit, merged env). */
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
  /** For a direct (argv) request: the absolute path that will be executed. */
  program?: string;
  /** The programs found in the request (best effort for shell lines; see `shellCommandWords`). */
  commands: PolicyCommand[];
}

/** Options of `new TerminalHost()`. */
export interface TerminalHostOptions {
  /** Absolute working directory for requests without `cwd` (default: this process's cwd). */
  cwd?: string;
  /** Output limit for requests without `outputByteLimit` (default 1 MiB). */
  defaultOutputByteLimit?: number;
  /** Ceiling for every terminal's output limit; larger requests are clamped (default: no ceiling). */
  maxOutputByteLimit?: number;
  /** Live terminals allowed at once; creating more fails with `ERR_TOO_MANY_TERMINALS` (default 64). */
  maxTerminals?: number;
  /** Grace period between SIGTERM and SIGKILL (backend default when absent). */
  killGraceMs?: number;
  /** Variables added to every command: inherited environment < this overlay < the request's `env`. */
  env?: Readonly<Record<string, string>> | readonly EnvVariable[];
  /** Whether commands inherit this process's environment (default true). */
  inheritEnv?: boolean;
  /** `false` never uses a shell; a path selects the shell for arg-less commands. */
  shell?: false | string;
  /** How many released terminals keep their final snapshot for `finalOutput()` (default 32). */
  maxReleasedSnapshots?: number;
  /** Terminal backend (default: the native `createTerminal`); substitute it to sandbox or fake commands. */
  createTerminal?: CreateTerminalFn;
  /**
   * Directories a command may start in. The cwd (the request's, else the host's `cwd`, else this
   * process's), with symlinks and `..` resolved by realpath, must be one of them or lie below one;
   * otherwise `ERR_CWD_OUTSIDE_ROOTS`. The roots are resolved once, when the host is created. The check
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
   * requests the policy would allow). Only `true` approves; `false`, another value, a throw or a
   * rejection refuse with `ERR_NOT_APPROVED`. Pending approvals count against `maxTerminals`.
   */
  approve?: (request: ApprovalRequest) => boolean | Promise<boolean>;
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
  /** Run every command in the OS sandbox (passed to each create; checked there, see `SandboxOptions`). */
  sandbox?: SandboxOptions;
  /** Audit listener, same as calling `onEvent(listener)` right after construction. */
  onEvent?: TerminalAuditListener;
  /** Program resolution for the command policy (default: the core's `resolveProgram`). */
  resolveProgram?: ResolveProgramFn;
}

interface LiveEntry {
  readonly sessionId: string;
  readonly terminal: TerminalLike;
  /** Settles once the host saw the exit and emitted `exited` (or the wait failed). */
  exited: Promise<void>;
  hasExited: boolean;
  /**
   * Set by the first `terminal/kill` of this terminal, replaced by each later one; settles once that kill
   * was answered by the host (resolved or rejected). Kept after it settled (a wait whose exit the kill
   * caused may resume after it); waits answer after it: see `waitForTerminalExit`.
   */
  killAnswered: Promise<void> | undefined;
}

const POLICY_CODES: ReadonlySet<string> = new Set<PolicyErrorCode>([
  'ERR_POLICY_DENIED',
  'ERR_CWD_OUTSIDE_ROOTS',
  'ERR_NOT_APPROVED',
  'ERR_TOO_MANY_TERMINALS',
]);

const LIMIT_FIELDS = ['cpuSeconds', 'addressSpaceBytes', 'openFiles', 'fileSizeBytes', 'processes'] as const;

function validateLimits(value: unknown, field: string): ResourceLimits | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object') throw invalidArg(field, 'must be an object');
  const limits: ResourceLimits = {};
  for (const key of Object.keys(value)) {
    if (!(LIMIT_FIELDS as readonly string[]).includes(key)) {
      throw invalidArg(`${field}.${key}`, `unknown limit (known: ${LIMIT_FIELDS.join(', ')})`);
    }
  }
  for (const key of LIMIT_FIELDS) {
    const n = optionalCount((value as Record<string, unknown>)[key], `${field}.${key}`);
    if (n !== undefined) limits[key] = n;
  }
  return limits;
}

/**
 * Runs ACP v1 terminals for a client: one host per client (or per connection), shared by its sessions.
 *
 * ```ts
 * const host = new TerminalHost({ cwd: workspace, allowedRoots: [workspace], onEvent: (e) => log(e) });
 * const { terminalId } = await host.createTerminal({ sessionId, command: 'npm test' });
 * ```
 */
export class TerminalHost implements AsyncDisposable {
  private readonly live = new Map<string, LiveEntry>();
  private readonly releasing = new Map<string, Promise<void>>();
  private readonly snapshots = new Map<string, OutputSnapshot>();
  private readonly createListeners = new Set<(event: TerminalCreatedEvent) => void>();
  private readonly eventListeners = new Set<TerminalAuditListener>();
  private readonly idPrefix = `term-${randomBytes(4).toString('hex')}-`;
  private nextId = 1;
  private pendingCreates = 0;
  private closed = false;
  private readonly cwd: string | undefined;
  private readonly defaultLimit: number;
  private readonly maxLimit: number;
  private readonly maxTerminals: number;
  private readonly maxSnapshots: number;
  private readonly envOverlay: EnvVariable[];
  private readonly backendOptions: CreateTerminalOptions;
  private readonly backend: CreateTerminalFn | undefined;
  private readonly roots: string[] | undefined;
  private readonly commandPolicy: CompiledCommandPolicy | undefined;
  private readonly envPolicy: CompiledEnvPolicy | undefined;
  private readonly approve: ((request: ApprovalRequest) => boolean | Promise<boolean>) | undefined;
  private readonly dropEnv: ((name: string) => boolean) | undefined;
  private readonly resolveProgram: ResolveProgramFn | undefined;

  /** Creates a host; invalid options throw `ERR_INVALID_ARG` naming the option. */
  constructor(options: TerminalHostOptions = {}) {
    if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
    this.cwd = optionalAbsolutePath(options.cwd, 'options.cwd');
    this.maxLimit = optionalCount(options.maxOutputByteLimit, 'options.maxOutputByteLimit') ?? Number.MAX_SAFE_INTEGER;
    this.defaultLimit = Math.min(
      optionalCount(options.defaultOutputByteLimit, 'options.defaultOutputByteLimit') ?? DEFAULT_OUTPUT_BYTE_LIMIT,
      this.maxLimit,
    );
    this.maxTerminals = optionalCount(options.maxTerminals, 'options.maxTerminals', 1) ?? DEFAULT_MAX_TERMINALS;
    this.maxSnapshots =
      optionalCount(options.maxReleasedSnapshots, 'options.maxReleasedSnapshots') ?? DEFAULT_MAX_RELEASED_SNAPSHOTS;
    this.envOverlay = normalizeEnv(options.env, 'options.env');
    const killGraceMs = optionalCount(options.killGraceMs, 'options.killGraceMs');
    const timeoutMs = optionalCount(options.timeoutMs, 'options.timeoutMs', 1);
    const limits = validateLimits(options.limits, 'options.limits');
    if (options.shell !== undefined && options.shell !== false && typeof options.shell !== 'string') {
      throw invalidArg('options.shell', 'must be false or a path');
    }
    if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
      throw invalidArg('options.inheritEnv', 'must be a boolean');
    }
    for (const fn of ['createTerminal', 'approve', 'onEvent', 'resolveProgram'] as const) {
      if (options[fn] !== undefined && typeof options[fn] !== 'function') throw invalidArg(`options.${fn}`, 'must be a function');
    }
    this.roots = compileRoots(options.allowedRoots, 'options.allowedRoots');
    this.commandPolicy = compileCommandPolicy(options.commandPolicy, 'options.commandPolicy');
    this.envPolicy = compileEnvPolicy(options.envPolicy, 'options.envPolicy', this.commandPolicy !== undefined);
    this.dropEnv = options.inheritEnv === false ? undefined : compileEnvPatterns(options.dropInheritedEnv, 'options.dropInheritedEnv');
    this.approve = options.approve;
    this.resolveProgram = options.resolveProgram;
    // The shell for shell lines is found once, through the host's PATH, never the request's.
    const shell =
      typeof options.shell === 'string'
        ? resolveHostShell(options.shell, hostPath(this.envOverlay, options.inheritEnv !== false), this.cwd, this.resolveProgram ?? loadNativeResolveProgram())
        : options.shell;
    this.backendOptions = {
      ...(killGraceMs !== undefined ? { killGraceMs } : {}),
      ...(shell !== undefined ? { shell } : {}),
      ...(options.inheritEnv !== undefined ? { inheritEnv: options.inheritEnv } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(limits !== undefined ? { limits } : {}),
      ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
    };
    this.backend = options.createTerminal;
    if (options.onEvent) this.eventListeners.add(options.onEvent);
  }

  /** Number of live (created, not yet released) terminals. */
  get liveTerminals(): number {
    return this.live.size;
  }

  /** True after `close()`. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * `terminal/create`: checks the request against the host's policy, starts the command and answers
   * with its id once it was spawned. Refusals reject with `ERR_CWD_OUTSIDE_ROOTS`, `ERR_POLICY_DENIED`,
   * `ERR_NOT_APPROVED` or `ERR_TOO_MANY_TERMINALS` (and emit `denied`); other failures emit `failed`.
   */
  async createTerminal(request: HostCreateTerminalRequest): Promise<HostCreateTerminalResponse> {
    const seen: { cwd: string | undefined } = { cwd: undefined };
    try {
      return await this.create(request, seen);
    } catch (error) {
      this.auditRefusal(request, seen.cwd, error);
      throw error;
    }
  }

  private async create(request: HostCreateTerminalRequest, seen: { cwd: string | undefined }): Promise<HostCreateTerminalResponse> {
    const req = this.validateCreate(request);
    seen.cwd = req.cwd ?? undefined;
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host is closed');
    if (this.live.size + this.pendingCreates >= this.maxTerminals) {
      throw new AcpTerminalError(
        'ERR_TOO_MANY_TERMINALS',
        `too many terminals: maxTerminals (${this.maxTerminals}) live terminals already exist; release one first`,
        { maxTerminals: this.maxTerminals },
      );
    }
    this.pendingCreates++;
    let terminal: TerminalLike;
    let program: string | undefined;
    try {
      // 1. Working directory inside the allowed roots (resolved here for the policy and the approval; the
      //    backend checks it again on the directory it opens and starts the command in: see allowedRoots).
      let cwd = req.cwd ?? undefined;
      if (this.roots) {
        const target = cwd ?? process.cwd();
        if (!path.isAbsolute(target)) {
          throw new AcpTerminalError('ERR_INVALID_CWD', `cwd: must be an absolute path, got ${JSON.stringify(target)}`, { field: 'cwd' });
        }
        cwd = await resolveCwdInRoots(target, this.roots);
        seen.cwd = cwd;
      }
      // 2. Environment: inherited variables filtered by name, then the overlay and the request's env.
      const options: CreateTerminalOptions = { ...this.backendOptions, ...(this.roots ? { allowedRoots: this.roots } : {}) };
      let env = req.env ?? [];
      if (this.dropEnv) {
        env = mergeEnv(filteredInheritedEnv(this.dropEnv), env);
        options.inheritEnv = false;
      }
      // 3. Environment and command policy (and the program list the approver sees).
      if (this.envPolicy && request.env != null) checkRequestEnv(this.envPolicy, normalizeEnv(request.env, 'env'));
      const args = req.args ?? [];
      let commands: PolicyCommand[] = [];
      if (this.commandPolicy || this.approve) {
        const policy: CompiledCommandPolicy = this.commandPolicy ?? { allow: undefined, deny: [], shellLines: 'check' };
        const shellLine = args.length === 0 && this.backendOptions.shell !== false;
        const inherit = options.inheritEnv !== false;
        const result = checkCommand(policy, {
          command: req.command,
          args,
          shellLine,
          cwd,
          // A program is found through the host's PATH (and then run by its absolute path); the words of a
          // shell line through the PATH the shell will have, which the request may set only if envPolicy allows.
          path: shellLine ? (childPath(env) ?? hostPath([], inherit)) : hostPath(this.envOverlay, this.backendOptions.inheritEnv !== false),
          resolve: this.resolveProgram ?? loadNativeResolveProgram(),
          ...(this.envPolicy ? { env: this.envPolicy } : {}),
        });
        program = result.program;
        commands = result.commands;
      }
      // 4. The user's approval.
      if (this.approve) {
        const approval: ApprovalRequest = {
          sessionId: req.sessionId,
          command: req.command,
          args: [...args],
          cwd,
          env: (req.env ?? []).map((e) => ({ ...e })),
          outputByteLimit: req.outputByteLimit,
          ...(program !== undefined ? { program } : {}),
          commands,
        };
        let approved: unknown;
        try {
          approved = await this.approve(approval);
        } catch (error) {
          throw new AcpTerminalError('ERR_NOT_APPROVED', `terminal/create was not approved: the approval failed (${errorMessage(error)})`, {
            reason: 'approval-failed',
          });
        }
        if (approved !== true) {
          throw new AcpTerminalError('ERR_NOT_APPROVED', 'terminal/create was not approved by the user; do not retry the same command', {
            reason: 'declined',
          });
        }
        if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the command awaited approval');
      }
      // 5. Spawn exactly what was checked: the resolved program for a direct request.
      const backend = this.backend ?? loadNativeCreateTerminal();
      terminal = await backend(
        {
          sessionId: req.sessionId,
          command: program ?? req.command,
          ...(req.args ? { args: [...req.args] } : {}),
          ...(env.length > 0 ? { env } : {}),
          ...(cwd !== undefined ? { cwd } : {}),
          outputByteLimit: req.outputByteLimit,
        },
        options,
      );
      // What onCreate and the audit report: the directory the command really got, as the backend says.
      const gotCwd = handleCwd(terminal) ?? cwd;
      if (gotCwd !== undefined) req.cwd = gotCwd;
    } finally {
      this.pendingCreates--;
    }
    if (this.closed) {
      await terminal.release().catch(() => undefined);
      throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the terminal was created');
    }
    const terminalId = `${this.idPrefix}${this.nextId++}`;
    const startedAt = performance.now();
    const entry: LiveEntry = { sessionId: req.sessionId, terminal, exited: Promise.resolve(), hasExited: false, killAnswered: undefined };
    this.live.set(terminalId, entry);
    this.emit({
      type: 'created',
      time: Date.now(),
      sessionId: req.sessionId,
      terminalId,
      command: req.command,
      args: [...(req.args ?? [])],
      cwd: req.cwd ?? undefined,
      pid: terminal.pid,
      ...(program !== undefined ? { program } : {}),
      outputByteLimit: req.outputByteLimit,
    });
    entry.exited = terminal.waitForExit().then(
      (status) => {
        entry.hasExited = true;
        this.emit({
          type: 'exited',
          time: Date.now(),
          sessionId: req.sessionId,
          terminalId,
          exitStatus: { exitCode: status.exitCode, signal: status.signal },
          durationMs: Math.round(performance.now() - startedAt),
          outputBytes: readOutputBytes(terminal),
        });
      },
      () => undefined,
    );
    const event: TerminalCreatedEvent = { terminalId, sessionId: req.sessionId, terminal, request: req };
    for (const listener of this.createListeners) {
      try {
        listener(event);
      } catch {
        // A faulty UI listener must not fail the agent's request.
      }
    }
    return { terminalId };
  }

  /** `terminal/output`: the retained output, with `exitStatus` once the command exited. */
  async terminalOutput(request: HostTerminalRequest): Promise<OutputSnapshot> {
    return normalizeSnapshot(await this.lookup(request).terminal.currentOutput());
  }

  /**
   * `terminal/wait_for_exit`: resolves when the command exited, after the host recorded the exit (and
   * emitted `exited`), so a `release`/`close` that follows reports `wasRunning: false`. When a
   * `terminal/kill` of this terminal is in flight (the exit is the kill's doing, or raced it), the answer
   * waits until the kill was answered and one macrotask more, so a connection that writes responses in
   * the order its handlers settle (the SDK does: its handler chain is microtasks) sends the kill's
   * response first. Agents rely on that order: one of them releases the terminal as soon as the wait
   * resolves while another part still reads the output after its kill.
   */
  async waitForTerminalExit(request: HostTerminalRequest): Promise<ExitStatus> {
    const entry = this.lookup(request);
    const { exitCode, signal } = await entry.terminal.waitForExit();
    await entry.exited;
    const killAnswered = entry.killAnswered;
    if (killAnswered) {
      await killAnswered;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return { exitCode, signal };
  }

  /**
   * `terminal/kill`: stops the command; the id stays valid. Emits `killed`. Its response goes out before
   * the `terminal/wait_for_exit` responses the kill causes (see `waitForTerminalExit`).
   */
  async killTerminal(request: HostTerminalRequest): Promise<Record<string, never>> {
    const { terminalId } = request;
    const entry = this.lookup(request);
    this.emit({ type: 'killed', time: Date.now(), sessionId: entry.sessionId, terminalId, wasRunning: !entry.hasExited });
    let answered!: () => void;
    const killAnswered = new Promise<void>((resolve) => (answered = resolve));
    entry.killAnswered = killAnswered;
    try {
      await entry.terminal.kill();
      return {};
    } finally {
      // Settled in the same microtask as this method's promise: the caller's continuation (the SDK's
      // response write) is queued before any wait that awaits `killAnswered` can resume.
      answered();
    }
  }

  /**
   * `terminal/release`: kills if running, keeps a final snapshot, frees the terminal. Idempotent for ids
   * this host issued. Emits `released` (after `exited`).
   */
  async releaseTerminal(request: HostTerminalRequest): Promise<Record<string, never>> {
    const { sessionId, terminalId } = validateTerminalRequest(request);
    const pending = this.releasing.get(terminalId);
    if (pending) {
      await pending;
      return {};
    }
    const entry = this.live.get(terminalId);
    if (entry && entry.sessionId === sessionId) {
      await this.releaseEntry(terminalId, entry, 'request');
      return {};
    }
    if (!entry && this.issued(terminalId)) return {};
    throw notFound(terminalId);
  }

  /** The live terminal behind `terminalId` (to embed in a tool-call UI), or undefined once released. */
  terminal(terminalId: string): TerminalLike | undefined {
    return this.live.get(terminalId)?.terminal;
  }

  /** The last snapshot of a released terminal (the newest `maxReleasedSnapshots` are kept), or undefined. */
  finalOutput(terminalId: string): OutputSnapshot | undefined {
    return this.snapshots.get(terminalId);
  }

  /** Calls `listener` for every terminal created from now on; returns an unsubscribe function. */
  onCreate(listener: (event: TerminalCreatedEvent) => void): () => void {
    this.createListeners.add(listener);
    return () => {
      this.createListeners.delete(listener);
    };
  }

  /**
   * Calls `listener` with every audit event from now on (`created`, `exited`, `killed`, `released`,
   * `denied`, `failed`); returns an unsubscribe function. A listener that throws or rejects does not
   * affect the host or the other listeners.
   */
  onEvent(listener: TerminalAuditListener): () => void {
    if (typeof listener !== 'function') throw invalidArg('listener', 'must be a function');
    this.eventListeners.add(listener);
    return () => {
      this.eventListeners.delete(listener);
    };
  }

  /** Releases every terminal of `sessionId` (e.g. on `session/close` or when the agent disconnects). */
  async releaseSession(sessionId: string): Promise<void> {
    requireString(sessionId, 'sessionId');
    await this.releaseWhere((entry) => entry.sessionId === sessionId, 'session');
  }

  /** Releases every terminal and refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.releaseWhere(() => true, 'close');
  }

  /** Same as `close()`, for `await using host = new TerminalHost()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private emit(event: TerminalAuditEvent): void {
    if (this.eventListeners.size === 0) return;
    Object.freeze(event);
    for (const listener of [...this.eventListeners]) {
      try {
        const result = listener(event) as unknown;
        if (typeof result === 'object' && result !== null && typeof (result as PromiseLike<void>).then === 'function') {
          (result as PromiseLike<void>).then(undefined, () => undefined);
        }
      } catch {
        // An audit sink that fails must not fail the agent's request or the host.
      }
    }
  }

  private auditRefusal(request: HostCreateTerminalRequest, cwd: string | undefined, error: unknown): void {
    if (this.eventListeners.size === 0) return;
    const r = (typeof request === 'object' && request !== null ? request : {}) as Partial<HostCreateTerminalRequest>;
    const base = {
      time: Date.now(),
      sessionId: typeof r.sessionId === 'string' ? r.sessionId : '',
      command: typeof r.command === 'string' ? r.command : '',
      args: Array.isArray(r.args) ? r.args.filter((a): a is string => typeof a === 'string') : [],
      cwd: resolvedCwdOf(error) ?? cwd ?? (typeof r.cwd === 'string' ? r.cwd : undefined),
    };
    const code = errorCode(error);
    if (code !== undefined && POLICY_CODES.has(code)) {
      this.emit({ type: 'denied', ...base, code: code as PolicyErrorCode, reason: errorMessage(error) });
    } else {
      this.emit({ type: 'failed', ...base, code, message: errorMessage(error) });
    }
  }

  private async releaseWhere(predicate: (entry: LiveEntry) => boolean, reason: ReleaseReason): Promise<void> {
    const work: Promise<void>[] = [...this.releasing.values()];
    for (const [terminalId, entry] of this.live) {
      if (predicate(entry)) work.push(this.releaseEntry(terminalId, entry, reason));
    }
    await Promise.all(work);
  }

  private releaseEntry(terminalId: string, entry: LiveEntry, reason: ReleaseReason): Promise<void> {
    this.live.delete(terminalId);
    const done = this.finish(terminalId, entry, reason).finally(() => this.releasing.delete(terminalId));
    this.releasing.set(terminalId, done);
    return done;
  }

  private async finish(terminalId: string, entry: LiveEntry, reason: ReleaseReason): Promise<void> {
    const { terminal } = entry;
    const wasRunning = !entry.hasExited;
    try {
      // Stop first so the kept snapshot holds all output and the exit status.
      await terminal.kill();
      await terminal.waitForExit();
      this.keepSnapshot(terminalId, normalizeSnapshot(await terminal.currentOutput()));
    } catch {
      // Snapshot is best effort; the release below must still happen.
    } finally {
      await terminal.release().catch(() => undefined);
    }
    await entry.exited; // `exited` comes before `released`
    this.emit({ type: 'released', time: Date.now(), sessionId: entry.sessionId, terminalId, reason, wasRunning });
  }

  private keepSnapshot(terminalId: string, snapshot: OutputSnapshot): void {
    if (this.maxSnapshots === 0) return;
    this.snapshots.set(terminalId, snapshot);
    while (this.snapshots.size > this.maxSnapshots) {
      const oldest = this.snapshots.keys().next().value as string;
      this.snapshots.delete(oldest);
    }
  }

  private issued(terminalId: string): boolean {
    if (!terminalId.startsWith(this.idPrefix)) return false;
    const n = Number(terminalId.slice(this.idPrefix.length));
    return Number.isSafeInteger(n) && n >= 1 && n < this.nextId && String(n) === terminalId.slice(this.idPrefix.length);
  }

  private lookup(request: HostTerminalRequest): LiveEntry {
    const { sessionId, terminalId } = validateTerminalRequest(request);
    const entry = this.live.get(terminalId);
    if (!entry || entry.sessionId !== sessionId) throw notFound(terminalId, this.issued(terminalId) && !entry);
    return entry;
  }

  private validateCreate(request: HostCreateTerminalRequest): HostCreateTerminalRequest & { outputByteLimit: number } {
    if (typeof request !== 'object' || request === null) throw invalidArg('params', 'must be an object');
    const sessionId = requireString(request.sessionId, 'sessionId');
    const command = requireString(request.command, 'command');
    rejectNul(command, 'command');
    if (request.args !== undefined && request.args !== null) {
      if (!Array.isArray(request.args)) throw invalidArg('args', 'must be an array of strings');
      request.args.forEach((arg, i) => {
        if (typeof arg !== 'string') throw invalidArg(`args[${i}]`, 'must be a string');
        rejectNul(arg, `args[${i}]`);
      });
    }
    if (request.cwd !== undefined && request.cwd !== null && typeof request.cwd !== 'string') {
      throw invalidArg('cwd', `must be an absolute path string, got ${JSON.stringify(request.cwd)}`);
    }
    if (typeof request.cwd === 'string' && request.cwd.includes('\0')) throw invalidArg('cwd', 'contains a NUL byte');
    const requested = optionalCount(request.outputByteLimit, 'outputByteLimit');
    const outputByteLimit = Math.min(requested ?? this.defaultLimit, this.maxLimit);
    const env = mergeEnv(this.envOverlay, request.env == null ? [] : normalizeEnv(request.env, 'env'));
    const cwd = request.cwd ?? this.cwd;
    return {
      sessionId,
      command,
      ...(request.args ? { args: [...request.args] } : {}),
      ...(env.length > 0 ? { env } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      outputByteLimit,
    };
  }
}

/** The host's own PATH: its `env` overlay's, else this process's when inherited (undefined: the resolver's default). */
function hostPath(overlay: readonly EnvVariable[], inherit: boolean): string | undefined {
  return childPath(overlay) ?? (inherit ? process.env.PATH : undefined);
}

/** The PATH the child will see when the explicit env sets it (undefined: the resolver's default). */
function childPath(env: readonly EnvVariable[]): string | undefined {
  let found: string | undefined;
  for (const e of env) if (e.name === 'PATH') found = e.value;
  return found;
}

/** The working directory a backend's handle says its command got (the native `TerminalHandle.cwd`). */
function handleCwd(terminal: TerminalLike): string | undefined {
  try {
    const cwd = terminal.cwd;
    return typeof cwd === 'string' && cwd !== '' ? cwd : undefined;
  } catch {
    return undefined;
  }
}

/** The resolved cwd an `ERR_CWD_OUTSIDE_ROOTS` error carries. */
function resolvedCwdOf(error: unknown): string | undefined {
  const details = (error as { details?: { resolved?: unknown } } | null)?.details;
  return typeof details?.resolved === 'string' ? details.resolved : undefined;
}

function readOutputBytes(terminal: TerminalLike): number | undefined {
  try {
    const n = terminal.outputBytes;
    return typeof n === 'number' ? n : undefined;
  } catch {
    return undefined;
  }
}

function validateTerminalRequest(request: HostTerminalRequest): HostTerminalRequest {
  if (typeof request !== 'object' || request === null) throw invalidArg('params', 'must be an object');
  return {
    sessionId: requireString(request.sessionId, 'sessionId'),
    terminalId: requireString(request.terminalId, 'terminalId'),
  };
}

function notFound(terminalId: string, released = false): AcpTerminalError {
  return new AcpTerminalError(
    'ERR_TERMINAL_NOT_FOUND',
    released
      ? `terminalId: terminal ${JSON.stringify(terminalId)} was released`
      : `terminalId: unknown terminal ${JSON.stringify(terminalId)} for this session`,
    { terminalId },
  );
}

/** Copies a backend snapshot into the protocol shape (no `exitStatus` key while running). */
export function normalizeSnapshot(snapshot: OutputSnapshot): OutputSnapshot {
  const { output, truncated, exitStatus } = snapshot;
  return exitStatus
    ? { output, truncated, exitStatus: { exitCode: exitStatus.exitCode, signal: exitStatus.signal } }
    : { output, truncated };
}
