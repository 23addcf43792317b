/**
 * `new TerminalHost(options)`: the options read and checked once (errors name the option), their
 * defaults, and the settings every create then uses.
 */

import * as os from 'node:os';
import * as path from 'node:path';
import { FarEnd } from './backends/far';
import { refuseNetworkRules } from './backends/index';
import { errorMessage, invalidArg } from './errors';
import type { ApprovalOptions, ApprovalRequest, ArglessMode, HostCreateTerminalRequest, TerminalHostOptions } from './host-types';
import { loadNative, loadNativeResolveProgram } from './native';
import { networkRulesOf } from './network-proxy';
import { compileCommandPolicy, compileRoots, refuseStartupShell, resolveHostShell, type CompiledCommandPolicy } from './policy';
import { compileEnvPatterns, compileEnvPolicy, lockedEditorEnv, type CompiledEnvPolicy } from './policy-env';
import type { CreateTerminalFn, CreateTerminalOptions, EnvVariable, OutputSnapshot, ResolveProgramFn, ResourceLimits } from './types';
import { clampedCount, normalizeEnv, optionalAbsolutePath, optionalCount } from './validate';

/** Default `defaultOutputByteLimit`: 1 MiB, so an agent that omits the limit cannot exhaust memory. */
export const DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;
/** Default `maxTerminals`. */
export const DEFAULT_MAX_TERMINALS = 64;
/** Default `maxReleasedSnapshots`. */
export const DEFAULT_MAX_RELEASED_SNAPSHOTS = 32;
/** Default `killAfterCancelMs`: how long after a `session/cancel` the host kills what the agent left running. */
export const DEFAULT_KILL_AFTER_CANCEL_MS = 2000;
/** The notice `truncationNotice: true` puts at the head of a truncated `terminal/output`. */
export const DEFAULT_TRUNCATION_NOTICE = '[output truncated: only the newest bytes are shown]';

/** A host's options as checked, with defaults applied and policies compiled. */
export interface HostSettings {
  /** Working directory for requests without `cwd` (undefined: this process's). */
  readonly cwd: string | undefined;
  /** Output limit for requests without one (already clamped to `maxLimit`). */
  readonly defaultLimit: number;
  /** Ceiling of every terminal's output limit. */
  readonly maxLimit: number;
  /** Live (and pending) terminals allowed at once (`Infinity`: no bound). */
  readonly maxTerminals: number;
  /** Whether a request's `outputByteLimit` is clamped instead of refused (`clampLimits`). */
  readonly clampLimits: boolean;
  /** Whether releasing an id this host never issued (to that session) answers `{}` (`ignoreUnknownRelease`). */
  readonly ignoreUnknownRelease: boolean;
  /** Released terminals whose final snapshot is kept. */
  readonly maxSnapshots: number;
  /** How long a final snapshot is kept (undefined: until pushed out by `maxSnapshots`). */
  readonly snapshotTtlMs: number | undefined;
  /** Grace after a `session/cancel` before the session's running terminals are killed (`false`: never). */
  readonly killAfterCancelMs: number | false;
  /** The line put at the head of a truncated `terminal/output` (undefined: none). */
  readonly truncationNotice: string | undefined;
  /** The host's `env` overlay. */
  readonly envOverlay: EnvVariable[];
  /** What every create passes to the backend (grace, shell, inheritEnv, timeout, limits, sandbox). */
  readonly backendOptions: CreateTerminalOptions;
  /**
   * When `shell` was given with its arguments (`['bash', '-l', '-c']`): those arguments. A shell line then
   * runs as `[backendOptions.shell, ...shellArgs, line]`, directly (`shell: false` to the backend).
   */
  readonly shellArgs?: readonly string[];
  /** How arg-less requests are read (`argless`). */
  readonly argless: ArglessMode | ((request: Readonly<HostCreateTerminalRequest>) => ArglessMode);
  /** The backend given as `createTerminal` (undefined: the native one). */
  readonly backend: CreateTerminalFn | undefined;
  /** Allowed roots, resolved. */
  readonly roots: string[] | undefined;
  /** The command policy, compiled. */
  readonly commandPolicy: CompiledCommandPolicy | undefined;
  /** The environment policy, compiled (undefined: requests' env is not judged). */
  readonly envPolicy: CompiledEnvPolicy | undefined;
  /** The client's error class for a declined approval (`declinedError`). */
  readonly declinedError: ((request: ApprovalRequest) => Error) | undefined;
  /** The approval callback. */
  readonly approve: ((request: ApprovalRequest, options: ApprovalOptions) => boolean | Promise<boolean>) | undefined;
  /** Which inherited variables to drop (undefined: none, or nothing inherited). */
  readonly dropEnv: ((name: string) => boolean) | undefined;
  /** Program resolution given as `resolveProgram` (undefined: the core's). */
  readonly resolveProgram: ResolveProgramFn | undefined;
  /** Set with `options.backend`: the far end, and what is resolved there on first use. */
  readonly remote: RemoteSettings | undefined;
}

/** A host's settings that only the far end of its backend can settle (`options.backend`). */
export interface RemoteSettings {
  /** The far end's answers. */
  readonly far: FarEnd;
  /** `allowedRoots` as given (resolved at the far end on first use). */
  readonly roots: readonly string[] | undefined;
  /** `shell` as given, when it is a name to look up at the far end. */
  readonly shell: string | undefined;
  /** The roots and shell once settled there (undefined until the first create; again after a failure). */
  settled?: Promise<{ roots: string[] | undefined; shell: string | undefined }>;
}

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

/** Reads `new TerminalHost()`'s options; invalid options throw `ERR_INVALID_ARG` naming the option. */
export function readHostOptions(options: TerminalHostOptions): HostSettings {
  if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
  const cwd = optionalAbsolutePath(options.cwd, 'options.cwd');
  const maxLimit = optionalCount(options.maxOutputByteLimit, 'options.maxOutputByteLimit') ?? Number.MAX_SAFE_INTEGER;
  const defaultLimit = Math.min(
    optionalCount(options.defaultOutputByteLimit, 'options.defaultOutputByteLimit') ?? DEFAULT_OUTPUT_BYTE_LIMIT,
    maxLimit,
  );
  for (const flag of ['clampLimits', 'ignoreUnknownRelease'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') throw invalidArg(`options.${flag}`, 'must be a boolean');
  }
  const clampLimits = options.clampLimits === true;
  const count = clampLimits ? clampedCount : optionalCount;
  const maxTerminals =
    options.maxTerminals === Infinity
      ? Infinity
      : (optionalCount(options.maxTerminals, 'options.maxTerminals', 1) ?? DEFAULT_MAX_TERMINALS);
  const maxSnapshots =
    optionalCount(options.maxReleasedSnapshots, 'options.maxReleasedSnapshots') ?? DEFAULT_MAX_RELEASED_SNAPSHOTS;
  const snapshotTtlMs = optionalCount(options.releasedSnapshotTtlMs, 'options.releasedSnapshotTtlMs');
  const killAfterCancelMs =
    options.killAfterCancelMs === false
      ? false
      : (optionalCount(options.killAfterCancelMs, 'options.killAfterCancelMs') ?? DEFAULT_KILL_AFTER_CANCEL_MS);
  const notice = options.truncationNotice;
  if (notice !== undefined && typeof notice !== 'boolean' && (typeof notice !== 'string' || notice === '' || notice.includes('\n'))) {
    throw invalidArg('options.truncationNotice', 'must be a boolean or a non-empty one-line string');
  }
  const truncationNotice = notice === true ? DEFAULT_TRUNCATION_NOTICE : typeof notice === 'string' ? notice : undefined;
  let envOverlay = normalizeEnv(options.env, 'options.env');
  const killGraceMs = count(options.killGraceMs, 'options.killGraceMs');
  const timeoutMs = optionalCount(options.timeoutMs, 'options.timeoutMs', 1);
  const limits = validateLimits(options.limits, 'options.limits');
  if (options.inheritEnv !== undefined && typeof options.inheritEnv !== 'boolean') {
    throw invalidArg('options.inheritEnv', 'must be a boolean');
  }
  if (options.argless !== undefined && options.argless !== 'shell' && options.argless !== 'auto' && typeof options.argless !== 'function') {
    throw invalidArg('options.argless', `must be 'shell', 'auto' or a function, got ${JSON.stringify(options.argless)}`);
  }
  const remote = readBackend(options);
  for (const fn of ['createTerminal', 'approve', 'declinedError', 'onEvent', 'onCall', 'resolveProgram', 'cwdForSession'] as const) {
    if (options[fn] !== undefined && typeof options[fn] !== 'function') throw invalidArg(`options.${fn}`, 'must be a function');
  }
  const roots = remote ? undefined : compileRoots(options.allowedRoots, 'options.allowedRoots');
  const commandPolicy = compileCommandPolicy(options.commandPolicy, 'options.commandPolicy');
  const envPolicy = compileEnvPolicy(options.envPolicy, 'options.envPolicy', commandPolicy !== undefined, commandPolicy?.allow !== undefined);
  const dropEnv = options.inheritEnv === false ? undefined : compileEnvPatterns(options.dropInheritedEnv, 'options.dropInheritedEnv');
  const approve = options.approve;
  const resolveProgram = options.resolveProgram;
  // The shell for shell lines is found once, through the host's PATH, never the request's.
  const { shell, shellArgs } = remote
    ? farHostShell(options.shell)
    : hostShell(options.shell, hostPath(envOverlay, options.inheritEnv !== false), cwd, resolveProgram);
  const sandbox = options.sandbox !== undefined ? (remote ? options.sandbox : configureSandbox(options.sandbox)) : undefined;
  if (commandPolicy?.allow !== undefined) {
    // Editors an allowed program starts read commands from the line's stdin (`git commit <<EOF :!cmd`).
    const refuser = remote ? 'false' : refusingProgram(hostPath(envOverlay, options.inheritEnv !== false), cwd, resolveProgram);
    envOverlay = lockedEditorEnv(envOverlay, refuser);
  }
  if (shellArgs !== undefined && typeof shell === 'string') {
    const home = envOverlay.find((e) => e.name === 'HOME')?.value ?? (options.inheritEnv !== false ? process.env.HOME : undefined) ?? os.homedir();
    const pinned = sandbox instanceof loadNative().SandboxConfig ? { writableRoots: sandbox.writableRoots } : undefined;
    refuseStartupShell(commandPolicy, [shell, ...shellArgs], home, pinned, envPolicy);
  }
  const backendOptions: CreateTerminalOptions = {
    ...(killGraceMs !== undefined ? { killGraceMs } : {}),
    ...(shell !== undefined ? { shell } : {}),
    ...(options.inheritEnv !== undefined ? { inheritEnv: options.inheritEnv } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(limits !== undefined ? { limits } : {}),
    ...(options.sandbox !== undefined ? { sandbox } : {}),
  };
  return {
    cwd,
    defaultLimit,
    maxLimit,
    maxTerminals,
    clampLimits,
    ignoreUnknownRelease: options.ignoreUnknownRelease === true,
    maxSnapshots,
    snapshotTtlMs,
    killAfterCancelMs,
    truncationNotice,
    envOverlay,
    backendOptions,
    ...(shellArgs !== undefined ? { shellArgs } : {}),
    argless: options.argless ?? 'shell',
    backend: options.createTerminal ?? (remote ? options.backend!.createTerminal.bind(options.backend) : undefined),
    roots,
    commandPolicy,
    envPolicy,
    approve,
    declinedError: options.declinedError,
    dropEnv,
    resolveProgram,
    remote: remote && {
      far: remote,
      roots: options.allowedRoots === undefined || options.allowedRoots === null ? undefined : rootsShape(options.allowedRoots),
      shell: typeof options.shell === 'string' && !path.posix.isAbsolute(options.shell) ? options.shell : undefined,
    },
  };
}

/** `options.backend`, checked: a remote backend (not with `createTerminal` or `resolveProgram`). */
function readBackend(options: TerminalHostOptions): FarEnd | undefined {
  const b = options.backend;
  if (b === undefined) return undefined;
  if (typeof b !== 'object' || b === null || typeof b.createTerminal !== 'function' || typeof b.lookup !== 'function') {
    throw invalidArg('options.backend', 'must be a remote backend (backends.podman(), backends.ssh(), ...)');
  }
  for (const other of ['createTerminal', 'resolveProgram'] as const) {
    if (options[other] !== undefined) {
      throw invalidArg('options.backend', `cannot be combined with options.${other}: the far end starts the commands and finds their programs`);
    }
  }
  const sandbox = options.sandbox as unknown;
  if (sandbox !== undefined && sandbox !== null && (typeof sandbox !== 'object' || sandbox instanceof loadNative().SandboxConfig)) {
    throw invalidArg('options.sandbox', 'with options.backend must be plain sandbox options (a SandboxConfig pins directories of this machine)');
  }
  refuseNetworkRules(sandbox, 'options.sandbox');
  return new FarEnd(b);
}

/** `allowedRoots` checked for shape only (they are resolved at the far end). */
function rootsShape(roots: unknown): string[] {
  if (!Array.isArray(roots)) throw invalidArg('options.allowedRoots', 'must be an array of absolute directory paths');
  return roots.map((root: unknown, i) => {
    if (typeof root !== 'string' || !path.posix.isAbsolute(root) || root.includes('\0')) {
      throw invalidArg(`options.allowedRoots[${i}]`, `must be an absolute path, got ${JSON.stringify(root)}`);
    }
    return root;
  });
}

/** A shell for a backend's host: an absolute path as it is; a name is looked up at the far end on first use. */
function farShell(shell: string): string | undefined {
  if (shell.length === 0 || shell.includes('\0')) throw invalidArg('options.shell', 'must be false or a non-empty path');
  return path.posix.isAbsolute(shell) ? shell : undefined;
}

/**
 * `snapshot` with `notice` as its first line when it is truncated, for agents that drop `truncated` before
 * their model sees the output. The output loses as many of its oldest bytes as the line takes (cut on a
 * UTF-8 character boundary), so the answer stays within the terminal's byte limit.
 */
export function withTruncationNotice(snapshot: OutputSnapshot, notice: string): OutputSnapshot {
  if (!snapshot.truncated) return snapshot;
  const head = Buffer.from(`${notice}\n`, 'utf8');
  const body = Buffer.from(snapshot.output, 'utf8');
  let cut = Math.min(head.length, body.length);
  while (cut < body.length && (body[cut]! & 0xc0) === 0x80) cut++; // not inside a character
  return { ...snapshot, output: `${notice}\n${body.subarray(cut).toString('utf8')}` };
}

/** The host's own PATH: its `env` overlay's, else this process's when inherited (undefined: the resolver's default). */
export function hostPath(overlay: readonly EnvVariable[], inherit: boolean): string | undefined {
  return childPath(overlay) ?? (inherit ? process.env.PATH : undefined);
}

/**
 * The PATH the child will see when the explicit env sets it (undefined: the resolver's default). On
 * Windows names compare without case, as the core applies them there (`Path` is `PATH`).
 */
export function childPath(env: readonly EnvVariable[], platform: NodeJS.Platform = process.platform): string | undefined {
  const isPath = platform === 'win32' ? (name: string) => name.toUpperCase() === 'PATH' : (name: string) => name === 'PATH';
  let found: string | undefined;
  for (const e of env) if (isPath(e.name)) found = e.value;
  return found;
}

/**
 * The host's sandbox, configured once, at construction: its writable roots are resolved, checked and
 * opened now, and every create binds those directories (a command relinking a root's path cannot
 * point a later terminal elsewhere). A `SandboxConfig` is used as it is.
 */
function configureSandbox(sandbox: CreateTerminalOptions['sandbox']): CreateTerminalOptions['sandbox'] {
  if (sandbox === null || sandbox === undefined) return sandbox;
  const { SandboxConfig } = loadNative();
  const config = sandbox instanceof SandboxConfig ? sandbox : new SandboxConfig(sandbox, 'options.sandbox');
  networkRulesOf(config, 'options.sandbox'); // the allow list's patterns, checked now too
  return config;
}

/** The host's `shell` option with a backend: a shell (looked up at the far end) or `false`; no arguments. */
function farHostShell(option: unknown): { shell: false | string | undefined; shellArgs?: string[] } {
  if (typeof option === 'string') return { shell: farShell(option) };
  if (Array.isArray(option)) throw invalidArg('options.shell', 'a shell with arguments is not supported with options.backend: name the far shell alone');
  return { shell: option as false | undefined };
}

/**
 * The host's `shell` option checked and resolved: `false`, a shell, or a shell with the arguments that come
 * before the line it runs (`['bash', '-l', '-c']`, `['wsl.exe', '-e', 'sh', '-c']`). The program is found
 * through the host's PATH (`resolveHostShell`); a bad value is `ERR_INVALID_ARG` naming the field.
 */
function hostShell(
  option: unknown,
  pathVar: string | undefined,
  cwd: string | undefined,
  resolveProgram: ResolveProgramFn | undefined,
): { shell: false | string | undefined; shellArgs?: string[] } {
  if (option === undefined || option === false) return { shell: option };
  const resolve = (program: string, field: string): string => {
    try {
      return resolveHostShell(program, pathVar, cwd, resolveProgram ?? loadNativeResolveProgram());
    } catch (error) {
      throw invalidArg(field, errorMessage(error).replace(/^options\.shell: /, ''));
    }
  };
  if (typeof option === 'string') return { shell: resolve(option, 'options.shell') };
  if (!Array.isArray(option)) {
    throw invalidArg('options.shell', `must be false, a shell, or a shell with its arguments (['bash', '-l', '-c']), got ${JSON.stringify(option)}`);
  }
  if (option.length === 0) throw invalidArg('options.shell', "must name the shell first (['bash', '-l', '-c']), got []");
  option.forEach((word: unknown, i) => {
    if (typeof word !== 'string') throw invalidArg(`options.shell[${i}]`, `must be a string, got ${JSON.stringify(word)}`);
    if (word.includes('\0')) throw invalidArg(`options.shell[${i}]`, 'contains a NUL byte');
  });
  const words = option as string[];
  return { shell: resolve(words[0]!, 'options.shell[0]'), shellArgs: words.slice(1) };
}

/**
 * The program the editor variables name under an allow list: `false` found through the host's PATH
 * (an absolute path, so no directory of the command's PATH or cwd can supply another), or the bare
 * name where the host has none.
 */
export function refusingProgram(pathVar: string | undefined, cwd: string | undefined, resolveProgram: ResolveProgramFn | undefined): string {
  try {
    return resolveHostShell('false', pathVar, cwd, resolveProgram ?? loadNativeResolveProgram());
  } catch {
    return 'false';
  }
}
