/**
 * The create path of `TerminalHost`: a `terminal/create` request checked (shape, allowed roots,
 * environment, command policy, the user's approval) and spawned exactly as checked; and the audit event
 * of a create that was refused or failed.
 */

import * as path from 'node:path';
import { AcpTerminalError, errorCode, errorMessage, invalidArg, type PolicyErrorCode } from './errors';
import type { TerminalAuditEvent } from './events';
import type { FarFacts } from './backends/far';
import { childPath, hostPath, type HostSettings, type RemoteSettings } from './host-options';
import type { ApprovalRequest, ArglessMode, HostCreateTerminalRequest } from './host-types';
import { loadNativeCreateTerminal, loadNativeResolveProgram } from './native';
import { type NetworkListener, networkRulesOf } from './network-proxy';
import {
  checkCommand,
  checkCommandAsync,
  resolveCwdInRoots,
  resolveHostShell,
  shellDialect,
  type CommandCheck,
  type CommandCheckResult,
  type CompiledCommandPolicy,
  type PolicyCommand,
} from './policy';
import { checkRequestEnv, filteredInheritedEnv } from './policy-env';
import { shellWord } from './shell-quote';
import type { CreateTerminalOptions, EnvVariable, ResolveProgramFn, TerminalLike } from './types';
import { abortable, clampedCount, mergeEnv, normalizeEnv, optionalCount, rejectNul, requireString } from './validate';

/** A create request as the host applies it: checked, with the default cwd, the effective limit, the merged env. */
export type AppliedCreateRequest = HostCreateTerminalRequest & { outputByteLimit: number };

/** What `spawnChecked` started. */
export interface Spawned {
  /** The backend's terminal. */
  terminal: TerminalLike;
  /** The absolute path executed for a direct request (argv, or arg-less run directly under `argless: 'auto'`) when a policy or an approver resolved it, or `argless` did. */
  program: string | undefined;
}

const POLICY_CODES: ReadonlySet<string> = new Set<PolicyErrorCode>([
  'ERR_POLICY_DENIED',
  'ERR_CWD_OUTSIDE_ROOTS',
  'ERR_NOT_APPROVED',
  'ERR_TOO_MANY_TERMINALS',
]);

/** Checks a `terminal/create` request's shape and applies the host's defaults (`ERR_INVALID_ARG` naming the field). */
export function validateCreate(request: HostCreateTerminalRequest, settings: HostSettings): AppliedCreateRequest {
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
  if (typeof request.cwd === 'string') rejectNul(request.cwd, 'cwd');
  const requested = (settings.clampLimits ? clampedCount : optionalCount)(request.outputByteLimit, 'outputByteLimit');
  const outputByteLimit = Math.min(requested ?? settings.defaultLimit, settings.maxLimit);
  const env = mergeEnv(settings.envOverlay, request.env == null ? [] : normalizeEnv(request.env, 'env'));
  const cwd = request.cwd ?? settings.cwd;
  return {
    sessionId,
    command,
    ...(request.args ? { args: [...request.args] } : {}),
    ...(env.length > 0 ? { env } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
    outputByteLimit,
  };
}

/** What the synchronous part of `checkRequest` (program lookup and the command policy) found. */
interface Judged {
  program: string | undefined;
  commands: PolicyCommand[];
  runCommand: string;
  runArgs: string[] | undefined;
  shell: CreateTerminalOptions['shell'];
}

/**
 * A backend's far end as a create needs it: its PATH, cwd and environment, and the host's roots and
 * shell settled there (once; again after a failure, such as a lost connection).
 */
async function remoteFacts(
  remote: RemoteSettings,
  settings: HostSettings,
): Promise<{ facts: FarFacts; roots: string[] | undefined; shell: string | undefined }> {
  const facts = await remote.far.standing();
  if (!remote.settled) {
    const p = (async () => {
      const roots = remote.roots ? await remote.far.roots(remote.roots, 'options.allowedRoots') : undefined;
      const name = remote.shell;
      const shell =
        name === undefined
          ? undefined
          : await remote.far.judge({ path: facts.path, cwd: facts.cwd }, (resolve) =>
              resolveHostShell(name, childPath(settings.envOverlay) ?? facts.path, settings.cwd, resolve),
            );
      return { roots, shell };
    })();
    remote.settled = p;
    p.catch(() => {
      if (remote.settled === p) remote.settled = undefined;
    });
  }
  return { facts, ...(await remote.settled) };
}

/** What `checkRequest` found: the request as it will be spawned, and what an approver is asked about. */
export interface CheckedRequest {
  /** The backend options of this create (shell, inheritEnv, allowedRoots settled). */
  options: CreateTerminalOptions;
  /** The environment passed to the backend (filtered inherited variables, overlay, the request's). */
  env: EnvVariable[];
  /** The directory the command starts in (resolved when `allowedRoots` is set). */
  cwd: string | undefined;
  /** The absolute program a direct request executes, when known. */
  program: string | undefined;
  /** The command that runs: the request's, or under an allow list the line rebuilt from what was checked. */
  runCommand: string;
  /** The arguments that run: the request's, or under an allow list those of the argv that was checked. */
  runArgs: string[] | undefined;
  /** What `approve` is asked about. */
  approval: ApprovalRequest;
}

/**
 * Checks `req` (validated from `request`) against the host's policy (allowed roots, environment,
 * command policy), without the approval and without starting anything. `seen.cwd` follows the directory
 * as it gets resolved (for the audit of a refusal).
 */
export async function checkRequest(
  settings: HostSettings,
  request: HostCreateTerminalRequest,
  req: AppliedCreateRequest,
  seen: { cwd: string | undefined },
): Promise<CheckedRequest> {
  // With a backend, the far end answers what this machine would (its PATH, cwd, environment, files).
  const far = settings.remote ? await remoteFacts(settings.remote, settings) : undefined;
  const roots = far ? far.roots : settings.roots;
  // 1. Working directory inside the allowed roots (resolved here for the policy and the approval; the
  //    backend checks it again on the directory it opens and starts the command in: see allowedRoots).
  let cwd = req.cwd ?? undefined;
  if (roots) {
    const target = cwd ?? (far ? far.facts.cwd : process.cwd());
    if (!(far ? path.posix : path).isAbsolute(target)) {
      throw new AcpTerminalError('ERR_INVALID_CWD', `cwd: must be an absolute path, got ${JSON.stringify(target)}`, { field: 'cwd' });
    }
    cwd = far ? await settings.remote!.far.cwdInRoots(target, roots) : await resolveCwdInRoots(target, roots);
    seen.cwd = cwd;
  }
  // 2. Environment: inherited variables filtered by name, then the overlay and the request's env.
  const options: CreateTerminalOptions = {
    ...settings.backendOptions,
    ...(far?.shell !== undefined ? { shell: far.shell } : {}),
    ...(roots ? { allowedRoots: roots } : {}),
  };
  let env = req.env ?? [];
  if (settings.dropEnv) {
    env = mergeEnv(filteredInheritedEnv(settings.dropEnv, far ? far.facts.env : process.env), env);
    options.inheritEnv = false;
  }
  if (settings.envPolicy && request.env != null) checkRequestEnv(settings.envPolicy, normalizeEnv(request.env, 'env'));
  const args = req.args ?? [];
  const inherit = options.inheritEnv !== false;
  // The PATH inherited by a command: the far end's with a backend.
  const inheritedPath = (overlay: readonly EnvVariable[], inherits: boolean): string | undefined =>
    far ? (childPath(overlay) ?? (inherits ? far.facts.path : undefined)) : hostPath(overlay, inherits);
  // 3. How an arg-less request is read (`argless`): a shell line, or a program run directly.
  const auto = args.length === 0 && options.shell !== false && arglessMode(settings, req) === 'auto';
  // 3-4 in two halves around the policy's check: what to check, then what the check decided. Locally the
  // check runs off the JS thread (checkCommandAsync); with a backend the halves run synchronously against
  // the far end's answers (FarEnd.judge asks again with what the check was missing).
  const toCheck = (resolve: ResolveProgramFn, realPath: ((file: string) => string | undefined) | undefined) => {
    let direct: string | undefined;
    const opts = { ...options };
    if (auto) {
      direct = directProgram(req.command, cwd, childPath(env) ?? inheritedPath([], inherit), resolve);
      if (direct !== undefined) opts.shell = false;
    }
    // 4. Command policy (and the program list the approver sees): it judges what will run.
    if (!settings.commandPolicy && !settings.approve) return { direct, opts, policy: undefined, check: undefined };
    const policy: CompiledCommandPolicy = settings.commandPolicy ?? { allow: undefined, deny: [], shellLines: 'check' };
    const shellLine = args.length === 0 && opts.shell !== false;
    const check: CommandCheck = {
      command: direct ?? req.command,
      args,
      shellLine,
      // where the command starts: a backend's far end starts it in its own cwd when none is given
      cwd: cwd ?? far?.facts.cwd,
      // A program is found through the host's PATH (and then run by its absolute path); the words of a
      // shell line through the PATH the shell will have, which the request may set only if envPolicy allows.
      path: shellLine
        ? (childPath(env) ?? inheritedPath([], inherit))
        : inheritedPath(settings.envOverlay, settings.backendOptions.inheritEnv !== false),
      resolve,
      ...(realPath ? { realPath } : {}),
      // The far end is a Linux server: its shell lines are POSIX.
      dialect: far ? 'posix' : shellDialect(typeof opts.shell === 'string' ? opts.shell : undefined),
      ...(settings.envPolicy ? { env: settings.envPolicy } : {}),
    };
    return { direct, opts, policy, check };
  };
  const decided = (input: ReturnType<typeof toCheck>, result: CommandCheckResult | undefined): Judged => {
    const judged: Judged = {
      program: input.direct,
      commands: [],
      runCommand: req.command,
      runArgs: req.args ? [...req.args] : undefined,
      shell: input.opts.shell,
    };
    if (result) {
      judged.program = result.program;
      judged.commands = result.commands;
      // Under an allow list what runs is the rebuild of what was checked, never the agent's text.
      if (result.line !== undefined) judged.runCommand = result.line;
      if (result.argv !== undefined) judged.runArgs = result.argv.slice(1);
    }
    return judged;
  };
  let judged: Judged;
  if (far) {
    judged = await settings.remote!.far.judge({ path: far.facts.path, cwd: far.facts.cwd }, (resolve, realPath) => {
      const input = toCheck(resolve, realPath);
      return decided(input, input.check ? checkCommand(input.policy!, input.check) : undefined);
    });
  } else {
    const input = toCheck(settings.resolveProgram ?? loadNativeResolveProgram(), undefined);
    judged = decided(input, input.check ? await checkCommandAsync(input.policy!, input.check) : undefined);
  }
  const { program, commands, runCommand, runArgs } = judged;
  if (judged.shell === false) options.shell = false;
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
  return { options, env, cwd, program, runCommand, runArgs, approval };
}

/**
 * Checks `req` (validated from `request`) against the host's policy, asks for approval, and starts exactly
 * what was checked. `seen.cwd` follows the directory as it gets resolved (for the audit of a refusal);
 * `req.cwd` becomes the directory the command really got. `isClosed` tells whether the host was closed
 * while the approval was pending; `signal` is the approver's (the call's, aborted by the host's close too).
 */
export async function spawnChecked(
  settings: HostSettings,
  request: HostCreateTerminalRequest,
  req: AppliedCreateRequest,
  seen: { cwd: string | undefined },
  isClosed: () => boolean,
  signal: AbortSignal,
  assertActive?: () => void,
  onNetwork?: NetworkListener,
): Promise<Spawned> {
  const { options, env, cwd, program, runCommand, runArgs, approval } = await checkRequest(settings, request, req, seen);
  // The sandbox's proxy reports its connections to the host's audit stream.
  if (onNetwork && networkRulesOf(options.sandbox, 'options.sandbox')) options.onNetwork = onNetwork;
  // 5. The user's approval.
  if (settings.approve) {
    const args = req.args ?? [];
    // What the approver throws (its prompt had no TTY, was cancelled) reaches the caller unchanged.
    // Not waited for past the signal (the call cancelled, the host closed): `close()` waits for the
    // creates in flight, and an approver that ignores its signal must not hold it.
    const asked = settings.approve(approval, { signal });
    const approved: unknown = await abortable(Promise.resolve(asked), signal);
    if (approved !== true) {
      if (settings.declinedError) throw declinedBy(settings.declinedError, approval);
      throw new AcpTerminalError(
        'ERR_NOT_APPROVED',
        `terminal/create of ${commandLine(req.command, args)} was not approved by the user; do not retry the same command: ` +
          'ask the user what to do instead',
        { reason: 'declined', command: req.command, args: [...args], ...(program !== undefined ? { program } : {}) },
      );
    }
    if (isClosed()) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the command awaited approval');
    assertActive?.(); // the client's liveness check: the connection or turn may have ended during the prompt
  }
  // 6. Spawn exactly what was checked: the resolved program for a direct request; a shell line under a
  //    shell given with its arguments (a login shell) as that shell's argv with the line last.
  const backend = settings.backend ?? loadNativeCreateTerminal();
  const shellLine = (runArgs === undefined || runArgs.length === 0) && typeof options.shell === 'string';
  const withArgs = shellLine && settings.shellArgs !== undefined;
  const terminal = await backend(
    {
      sessionId: req.sessionId,
      command: withArgs ? (options.shell as string) : (program ?? runCommand),
      ...(withArgs ? { args: [...settings.shellArgs!, runCommand] } : runArgs ? { args: runArgs } : {}),
      ...(env.length > 0 ? { env } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      outputByteLimit: req.outputByteLimit,
    },
    withArgs ? { ...options, shell: false } : options,
  );
  // What onCreate and the audit report: the directory the command really got, as the backend says.
  const gotCwd = handleCwd(terminal) ?? cwd;
  if (gotCwd !== undefined) req.cwd = gotCwd;
  return { terminal, program };
}

/**
 * A signal aborted (with the same reason) as soon as any of `signals` is; `unlink()` detaches it from
 * them once it is no longer needed (a host's close signal outlives every call).
 */
export function linkedSignal(signals: ReadonlyArray<AbortSignal | undefined>): { signal: AbortSignal; unlink(): void } {
  const controller = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const onAbort = (event: Event): void => controller.abort((event.target as AbortSignal).reason);
  const unlink = (): void => sources.forEach((s) => s.removeEventListener('abort', onAbort));
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    source.addEventListener('abort', onAbort, { once: true });
  }
  controller.signal.addEventListener('abort', unlink, { once: true });
  return { signal: controller.signal, unlink };
}

/** Errors made by a host's `declinedError`: a decline in the client's own class, sent as `ERR_NOT_APPROVED`. */
const declinedErrors = new WeakSet<object>();

/** Whether `error` is a decline made by a host's `declinedError` (see `TerminalHostOptions.declinedError`). */
export function isDeclined(error: unknown): boolean {
  return typeof error === 'object' && error !== null && declinedErrors.has(error);
}

/** The client's own error for a declined approval, recorded as a decline. */
function declinedBy(make: (request: ApprovalRequest) => unknown, approval: ApprovalRequest): unknown {
  const error = make(approval);
  if (typeof error !== 'object' || error === null) {
    throw invalidArg('options.declinedError', `must return an Error object, got ${JSON.stringify(error)}`);
  }
  declinedErrors.add(error);
  return error;
}

/** A bare program name: no shell syntax, nothing a shell would expand or split. */
const BARE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+,@%-]*$/;

/** The `argless` mode for this request (a function option decides per request). */
function arglessMode(settings: HostSettings, req: AppliedCreateRequest): ArglessMode {
  const mode = typeof settings.argless === 'function' ? settings.argless(Object.freeze({ ...req })) : settings.argless;
  if (mode !== 'shell' && mode !== 'auto') throw invalidArg('options.argless', `returned ${JSON.stringify(mode)}, not 'shell' or 'auto'`);
  return mode;
}

/**
 * Under `argless: 'auto'`: the absolute path of the program an arg-less `command` names (the exact path of
 * an existing executable, or a bare name found in `pathVar`), or undefined when it is a shell line.
 */
function directProgram(command: string, cwd: string | undefined, pathVar: string | undefined, resolve: ResolveProgramFn): string | undefined {
  if (!command.includes('/') && !BARE_NAME.test(command)) return undefined;
  try {
    return resolve(command, { cwd: cwd ?? null, path: pathVar ?? null });
  } catch {
    return undefined; // not an executable: a shell line (which reports what is wrong, as under 'shell')
  }
}

/**
 * The audit event of a create that did not happen: `denied` for a policy refusal, `failed` otherwise.
 * `cwd` is the directory as far as it was resolved; the request may be malformed.
 */
export function refusalEvent(request: HostCreateTerminalRequest, cwd: string | undefined, error: unknown): TerminalAuditEvent {
  const r = (typeof request === 'object' && request !== null ? request : {}) as Partial<HostCreateTerminalRequest>;
  const command = typeof r.command === 'string' ? r.command : '';
  const args = Array.isArray(r.args) ? r.args.filter((a): a is string => typeof a === 'string') : [];
  const base = {
    time: Date.now(),
    sessionId: typeof r.sessionId === 'string' ? r.sessionId : '',
    command,
    args,
    cwd: resolvedCwdOf(error) ?? cwd ?? (typeof r.cwd === 'string' ? r.cwd : undefined),
    commandLine: commandLine(command, args),
  };
  const code = isDeclined(error) ? 'ERR_NOT_APPROVED' : errorCode(error);
  if (code !== undefined && POLICY_CODES.has(code)) {
    return { type: 'denied', ...base, code: code as PolicyErrorCode, reason: errorMessage(error) };
  }
  return { type: 'failed', ...base, code, message: errorMessage(error) };
}

/**
 * A request's command as one line, for logs and messages: a shell line as is, else the program and its
 * arguments each quoted where needed.
 */
export function commandLine(command: string, args: readonly string[] | null | undefined): string {
  return args && args.length > 0 ? [command, ...args].map(shellWord).join(' ') : command;
}

/** What an agent can do about each policy refusal, appended to its message (`selfContained`). */
const REMEDIES: Readonly<Record<PolicyErrorCode, string>> = {
  ERR_POLICY_DENIED:
    "This is the client's policy, not a failure of the command: do not retry it or a variant of it; " +
    'do the task another way or ask the user to run it.',
  ERR_CWD_OUTSIDE_ROOTS: 'Run it in one of the allowed directories, or omit cwd to run in the session directory.',
  ERR_NOT_APPROVED: '',
  ERR_TOO_MANY_TERMINALS: '',
};

/**
 * Makes a policy refusal's message self-contained for agents that pass only `message` to their model (not
 * `data`): the program asked for, and what to do, are added when the message does not already say them.
 * Other errors (the client's own, the backend's) are returned untouched.
 */
export function selfContained(error: unknown, request: HostCreateTerminalRequest): unknown {
  if (!(error instanceof AcpTerminalError) || !POLICY_CODES.has(error.code)) return error;
  const r = (typeof request === 'object' && request !== null ? request : {}) as Partial<HostCreateTerminalRequest>;
  const command = typeof r.command === 'string' ? r.command : '';
  const line = commandLine(command, Array.isArray(r.args) ? r.args.filter((a): a is string => typeof a === 'string') : []);
  // The message still starts with the field it is about (`cwd: ...`, `env: ...`, `command: ...`).
  let message = error.message.replace(/[.\s]*$/, '');
  if (line !== '' && !message.includes(line) && error.code !== 'ERR_TOO_MANY_TERMINALS') {
    message = `${message} (terminal/create of ${line.length > 200 ? `${line.slice(0, 197)}...` : line})`;
  }
  const remedy = REMEDIES[error.code as PolicyErrorCode];
  if (remedy !== '' && !message.endsWith(remedy)) message = `${message}. ${remedy}`;
  error.message = message;
  return error;
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
