/**
 * The create path of `TerminalHost`: a `terminal/create` request checked (shape, allowed roots,
 * environment, command policy, the user's approval) and spawned exactly as checked; and the audit event
 * of a create that was refused or failed.
 */

import * as path from 'node:path';
import { AcpTerminalError, errorCode, errorMessage, invalidArg, type PolicyErrorCode } from './errors';
import type { TerminalAuditEvent } from './events';
import { childPath, hostPath, type HostSettings } from './host-options';
import type { ApprovalRequest, HostCreateTerminalRequest } from './host-types';
import { loadNativeCreateTerminal, loadNativeResolveProgram } from './native';
import { checkCommand, resolveCwdInRoots, type CompiledCommandPolicy, type PolicyCommand } from './policy';
import { checkRequestEnv, filteredInheritedEnv } from './policy-env';
import type { CreateTerminalOptions, TerminalLike } from './types';
import { mergeEnv, normalizeEnv, optionalCount, rejectNul, requireString } from './validate';

/** A create request as the host applies it: checked, with the default cwd, the effective limit, the merged env. */
export type AppliedCreateRequest = HostCreateTerminalRequest & { outputByteLimit: number };

/** What `spawnChecked` started. */
export interface Spawned {
  /** The backend's terminal. */
  terminal: TerminalLike;
  /** For a direct (argv) request under a policy or an approver: the absolute path that was executed. */
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
  if (typeof request.cwd === 'string' && request.cwd.includes('\0')) throw invalidArg('cwd', 'contains a NUL byte');
  const requested = optionalCount(request.outputByteLimit, 'outputByteLimit');
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

/**
 * Checks `req` (validated from `request`) against the host's policy, asks for approval, and starts exactly
 * what was checked. `seen.cwd` follows the directory as it gets resolved (for the audit of a refusal);
 * `req.cwd` becomes the directory the command really got. `isClosed` tells whether the host was closed
 * while the approval was pending.
 */
export async function spawnChecked(
  settings: HostSettings,
  request: HostCreateTerminalRequest,
  req: AppliedCreateRequest,
  seen: { cwd: string | undefined },
  isClosed: () => boolean,
): Promise<Spawned> {
  let program: string | undefined;
  // 1. Working directory inside the allowed roots (resolved here for the policy and the approval; the
  //    backend checks it again on the directory it opens and starts the command in: see allowedRoots).
  let cwd = req.cwd ?? undefined;
  if (settings.roots) {
    const target = cwd ?? process.cwd();
    if (!path.isAbsolute(target)) {
      throw new AcpTerminalError('ERR_INVALID_CWD', `cwd: must be an absolute path, got ${JSON.stringify(target)}`, { field: 'cwd' });
    }
    cwd = await resolveCwdInRoots(target, settings.roots);
    seen.cwd = cwd;
  }
  // 2. Environment: inherited variables filtered by name, then the overlay and the request's env.
  const options: CreateTerminalOptions = { ...settings.backendOptions, ...(settings.roots ? { allowedRoots: settings.roots } : {}) };
  let env = req.env ?? [];
  if (settings.dropEnv) {
    env = mergeEnv(filteredInheritedEnv(settings.dropEnv), env);
    options.inheritEnv = false;
  }
  // 3. Environment and command policy (and the program list the approver sees).
  if (settings.envPolicy && request.env != null) checkRequestEnv(settings.envPolicy, normalizeEnv(request.env, 'env'));
  const args = req.args ?? [];
  let commands: PolicyCommand[] = [];
  if (settings.commandPolicy || settings.approve) {
    const policy: CompiledCommandPolicy = settings.commandPolicy ?? { allow: undefined, deny: [], shellLines: 'check' };
    const shellLine = args.length === 0 && settings.backendOptions.shell !== false;
    const inherit = options.inheritEnv !== false;
    const result = checkCommand(policy, {
      command: req.command,
      args,
      shellLine,
      cwd,
      // A program is found through the host's PATH (and then run by its absolute path); the words of a
      // shell line through the PATH the shell will have, which the request may set only if envPolicy allows.
      path: shellLine ? (childPath(env) ?? hostPath([], inherit)) : hostPath(settings.envOverlay, settings.backendOptions.inheritEnv !== false),
      resolve: settings.resolveProgram ?? loadNativeResolveProgram(),
      ...(settings.envPolicy ? { env: settings.envPolicy } : {}),
    });
    program = result.program;
    commands = result.commands;
  }
  // 4. The user's approval.
  if (settings.approve) {
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
      approved = await settings.approve(approval);
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
    if (isClosed()) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the terminal host was closed while the command awaited approval');
  }
  // 5. Spawn exactly what was checked: the resolved program for a direct request.
  const backend = settings.backend ?? loadNativeCreateTerminal();
  const terminal = await backend(
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
  return { terminal, program };
}

/**
 * The audit event of a create that did not happen: `denied` for a policy refusal, `failed` otherwise.
 * `cwd` is the directory as far as it was resolved; the request may be malformed.
 */
export function refusalEvent(request: HostCreateTerminalRequest, cwd: string | undefined, error: unknown): TerminalAuditEvent {
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
    return { type: 'denied', ...base, code: code as PolicyErrorCode, reason: errorMessage(error) };
  }
  return { type: 'failed', ...base, code, message: errorMessage(error) };
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
