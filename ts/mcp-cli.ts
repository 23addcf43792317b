/**
 * The `acp-terminal` command line: `acp-terminal mcp [flags]` serves the terminal tools over stdio (or
 * streamable HTTP on 127.0.0.1 with `--http PORT`, every request carrying the bearer token). Flags and
 * an optional JSON config file map onto `TerminalHost`'s options; every value is checked before serving
 * (a bad one: a message and exit 2).
 *
 * Invariants: nothing is started or written before the first tool call except the audit file's open
 * and, with `--http`, the token file's creation (an MCP client may spawn a stdio server only to probe
 * it); when the client goes (stdin ends) or on
 * SIGTERM/SIGINT/SIGHUP, every process the server started is killed before it exits.
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from './errors';
import type { TerminalHostOptions } from './host-types';
import { createMcpServer, HTTP_TOKEN_PATTERN, packageVersion, type McpTerminalServer } from './mcp';
import type { CommandPolicy } from './policy';
import { SECRET_ENV_PATTERNS, type EnvPolicy } from './policy-env';
import type { ResourceLimits, SandboxOptions } from './types';
import { loadNative } from './native';
import { backendFromSpec, type Backend } from './backends';

/** A usage error: printed with the hint to `--help`, exit status 2. */
export class UsageError extends Error {}

interface FlagSpec {
  name: string;
  value?: string;
  repeat?: boolean;
  help: string;
}

const FLAGS: FlagSpec[] = [
  { name: 'config', value: 'FILE', help: 'JSON file with any of the options below (keys: the flag names in camelCase); flags win over it' },
  { name: 'http', value: 'PORT', help: 'serve streamable HTTP on 127.0.0.1:PORT at /mcp instead of stdio (0: any free port, printed on stderr)' },
  {
    name: 'http-token-file',
    value: 'FILE',
    help: 'with --http: the bearer token clients must send, read from FILE (yours, mode 0600); a FILE that does not exist is created (0600) with a new token. Default: a new token, printed on stderr',
  },
  { name: 'cwd', value: 'DIR', help: 'working directory of commands that name none (default: the current directory)' },
  { name: 'allowed-root', value: 'DIR', repeat: true, help: 'commands may only start in DIR or below (symlinks resolved); repeatable' },
  { name: 'allow', value: 'RULE', repeat: true, help: 'allow only programs matching RULE (a name glob like `git`, `python*`, or a path glob with /); repeatable' },
  { name: 'deny', value: 'RULE', repeat: true, help: 'refuse programs matching RULE, wherever they appear in a shell line; repeatable' },
  { name: 'code-runner', value: 'RULE', repeat: true, help: 'under --allow, programs matching RULE may run code given in their arguments (`python3 -c`); repeatable' },
  { name: 'env-allow', value: 'PATTERN', repeat: true, help: 'variable names a call may set under --allow besides the data-only ones (locale, TERM, TZ, ...); repeatable' },
  { name: 'env-deny', value: 'PATTERN', repeat: true, help: 'variable names a call may not set (globs like `LD_*`; replaces the default list of dangerous ones); repeatable' },
  { name: 'drop-inherited-env', value: 'PATTERN', repeat: true, help: 'drop inherited variables matching PATTERN (`*_TOKEN`; `secrets` for the built-in list of secret names); repeatable' },
  { name: 'sandbox', help: 'run every command in the OS sandbox: read-only filesystem except --writable dirs, no network unless --network' },
  { name: 'writable', value: 'DIR', repeat: true, help: 'with --sandbox: a directory commands may write under; repeatable' },
  { name: 'network', help: 'with --sandbox: allow network access' },
  { name: 'network-allow', value: 'HOST', repeat: true, help: "with --sandbox: let commands reach HOST (name, *.domain or IP, optionally :PORT) through the host's proxy; repeatable" },
  { name: 'limit', value: 'NAME=N', repeat: true, help: 'resource limit per command: processes=N, openFiles=N, cpuSeconds=SECONDS, addressSpaceBytes=BYTES, fileSizeBytes=BYTES; repeatable' },
  { name: 'timeout', value: 'SECONDS', help: 'kill any command still running after SECONDS (default: none; a tool call\'s own timeout only stops waiting)' },
  { name: 'max-terminals', value: 'N', help: 'commands running at once (default 64)' },
  { name: 'output-limit', value: 'BYTES', help: 'output kept per command, its end (default 65536)' },
  { name: 'audit', value: 'FILE', help: 'append every audit event (created, exited, killed, released, denied, failed, session) to FILE as JSON lines' },
  { name: 'shell', value: 'SHELL', help: 'shell for shell lines of `run` (a path, or a name found in PATH; default /bin/sh)' },
  { name: 'backend', value: 'SPEC', help: 'run every command at the far end: podman:NAME, docker:NAME, ssh:[USER@]HOST, kubectl:POD[/CONTAINER][@NS] (docs/remote.md); paths then name the far end\'s, and terminal_execute\'s sessions run there too' },
  { name: 'ask', help: 'ask the user (through the MCP client) before each command runs; clients that cannot ask get a refusal' },
  { name: 'no-sessions', help: 'do not offer the persistent-session tool terminal_execute' },
  { name: 'help', help: 'show this help' },
  { name: 'version', help: 'print the version' },
];

/** The default `--output-limit`: what a model reads of a command's output at most. */
export const DEFAULT_MCP_OUTPUT_LIMIT = 65536;

/** The text of `acp-terminal mcp --help`. */
export function helpText(): string {
  const rows = FLAGS.map((f) => [`  --${f.name}${f.value ? ` ${f.value}` : ''}`, f.help] as const);
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return [
    'Usage: acp-terminal mcp [flags]',
    '',
    'Serves terminals as MCP tools (run, output, wait, kill, release, list, terminal_execute) over stdio,',
    'every command checked by the flags below. Example, for an MCP host\'s config:',
    '  npx acp-terminal mcp --sandbox --writable .',
    '',
    'Flags:',
    ...rows.map(([flag, help]) => flag.padEnd(width) + help),
    '',
    'Exit status: 0 when the client went away, 2 for a bad flag or value, 1 for another failure.',
  ].join('\n');
}

/** The flags as read (from the config file, then the command line). */
export interface McpCliConfig {
  http?: number;
  httpTokenFile?: string;
  cwd?: string;
  allowedRoot?: string[];
  allow?: string[];
  deny?: string[];
  codeRunner?: string[];
  envAllow?: string[];
  envDeny?: string[];
  dropInheritedEnv?: string[];
  sandbox?: boolean;
  writable?: string[];
  network?: boolean;
  networkAllow?: string[];
  limit?: string[] | ResourceLimits;
  timeout?: number;
  maxTerminals?: number;
  outputLimit?: number;
  audit?: string;
  shell?: string;
  ask?: boolean;
  noSessions?: boolean;
  backend?: string;
}

const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const NUMBER_FLAGS = new Set(['http', 'timeout', 'maxTerminals', 'outputLimit']);

/** Reads `argv` (after `mcp`); throws `UsageError` naming the flag. `help`/`version` come back as such. */
export function parseArgs(argv: readonly string[]): { config: McpCliConfig; help: boolean; version: boolean } {
  const given: Record<string, unknown> = {};
  let configFile: string | undefined;
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h') {
      help = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(arg)} (flags start with --)`);
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const spec = FLAGS.find((f) => f.name === name);
    if (!spec) throw new UsageError(`unknown flag --${name}`);
    let value: string | undefined;
    if (spec.value) {
      value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value (${spec.value})`);
    } else if (eq !== -1) {
      throw new UsageError(`--${name} takes no value`);
    }
    if (name === 'help') help = true;
    else if (name === 'version') version = true;
    else if (name === 'config') configFile = value;
    else {
      const key = camel(name);
      if (!spec.value) given[key] = true;
      else if (spec.repeat) ((given[key] ??= []) as string[]).push(value!);
      else if (key in given) throw new UsageError(`--${name} given twice`);
      else given[key] = NUMBER_FLAGS.has(key) ? number(`--${name}`, value!) : value;
    }
  }
  const config: McpCliConfig = configFile !== undefined ? { ...readConfigFile(configFile), ...given } : (given as McpCliConfig);
  return { config, help, version };
}

function number(flag: string, text: string): number {
  if (!/^\d+(\.\d+)?$/.test(text)) throw new UsageError(`${flag}: ${JSON.stringify(text)} is not a non-negative number`);
  return Number(text);
}

/** Reads a JSON config file; its keys are the flags' camelCase names, checked like flags. */
function readConfigFile(file: string): McpCliConfig {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--config ${file}: ${errorMessage(error)}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new UsageError(`--config ${file}: must hold a JSON object`);
  const known = new Map(FLAGS.filter((f) => !['config', 'help', 'version'].includes(f.name)).map((f) => [camel(f.name), f]));
  for (const [key, value] of Object.entries(data)) {
    const spec = known.get(key);
    if (!spec) throw new UsageError(`--config ${file}: unknown key ${JSON.stringify(key)} (known: ${[...known.keys()].join(', ')})`);
    const where = `--config ${file}: ${key}`;
    if (!spec.value) {
      if (typeof value !== 'boolean') throw new UsageError(`${where}: must be true or false`);
    } else if (key === 'limit') {
      if (!Array.isArray(value) && (typeof value !== 'object' || value === null)) throw new UsageError(`${where}: must be an object like {"processes": 64}`);
    } else if (spec.repeat) {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new UsageError(`${where}: must be an array of strings`);
    } else if (NUMBER_FLAGS.has(key)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new UsageError(`${where}: must be a non-negative number`);
    } else if (typeof value !== 'string') {
      throw new UsageError(`${where}: must be a string`);
    }
  }
  return data as McpCliConfig;
}

function existingDir(flag: string, dir: string): string {
  const abs = path.resolve(dir);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(abs);
  } catch {
    throw new UsageError(`${flag}: ${JSON.stringify(dir)} does not exist`);
  }
  if (!stat.isDirectory()) throw new UsageError(`${flag}: ${JSON.stringify(dir)} is not a directory`);
  return fs.realpathSync(abs);
}

const LIMIT_NAMES = ['processes', 'openFiles', 'cpuSeconds', 'addressSpaceBytes', 'fileSizeBytes'] as const;

function readLimits(value: string[] | ResourceLimits): ResourceLimits {
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item) => {
        const eq = item.indexOf('=');
        if (eq === -1) throw new UsageError(`--limit ${JSON.stringify(item)}: expected NAME=N (${LIMIT_NAMES.join(', ')})`);
        return [item.slice(0, eq), number(`--limit ${item.slice(0, eq)}`, item.slice(eq + 1))];
      })
    : Object.entries(value);
  const limits: Record<string, number> = {};
  for (const [name, n] of entries) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) throw new UsageError(`--limit ${name}: unknown limit (known: ${LIMIT_NAMES.join(', ')})`);
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new UsageError(`--limit ${name}: must be a whole number`);
    limits[name] = n;
  }
  return limits as ResourceLimits;
}

/** The shell `--shell` names, resolved and checked to be an executable file. */
function checkShell(shell: string): string {
  let found: string;
  try {
    found = path.isAbsolute(shell) ? shell : loadNative().resolveProgram(shell, { path: process.env.PATH ?? null });
    fs.accessSync(found, fs.constants.X_OK);
    if (!fs.statSync(found).isFile()) throw new Error('not a file');
  } catch {
    throw new UsageError(`--shell: ${JSON.stringify(shell)} is not an executable found here`);
  }
  return found;
}

/** The host options and MCP options `config` asks for; throws `UsageError` on any bad value. */
export function hostOptionsFrom(config: McpCliConfig): { host: TerminalHostOptions; ask: boolean; sessions: boolean; audit: string | undefined } {
  const host: TerminalHostOptions = {};
  // With --backend, directories are the far end's: checked there (absolute here), its cwd the default.
  const far = config.backend !== undefined ? readBackend(config.backend) : undefined;
  if (far) host.backend = far;
  const dir = far ? farDir : existingDir;
  if (!far || config.cwd !== undefined) host.cwd = dir('--cwd', config.cwd ?? process.cwd());
  if (config.allowedRoot) host.allowedRoots = config.allowedRoot.map((d) => dir('--allowed-root', d));
  const policy: { allow?: string[]; deny?: string[]; codeRunners?: string[] } = {};
  if (config.allow) policy.allow = config.allow;
  if (config.deny) policy.deny = config.deny;
  if (config.codeRunner) {
    if (!config.allow) throw new UsageError('--code-runner: only means something with --allow');
    policy.codeRunners = config.codeRunner;
  }
  if (Object.keys(policy).length > 0) host.commandPolicy = policy as CommandPolicy;
  if (config.envDeny || config.envAllow) {
    host.envPolicy = { ...(config.envDeny ? { deny: config.envDeny } : {}), ...(config.envAllow ? { allow: config.envAllow } : {}) } as EnvPolicy;
  }
  if (config.dropInheritedEnv) {
    host.dropInheritedEnv = config.dropInheritedEnv.flatMap((p) => (p === 'secrets' ? [...SECRET_ENV_PATTERNS] : [p]));
  }
  if (config.sandbox) {
    const info = loadNative().containmentInfo().sandbox;
    if (!far && !info.available) {
      throw new UsageError(`--sandbox: this machine cannot sandbox commands (${JSON.stringify(info.promises)}); see docs/sandbox.md`);
    }
    const sandbox: SandboxOptions = { writableRoots: (config.writable ?? []).map((d) => dir('--writable', d)) };
    if (sandbox.writableRoots.includes('/')) throw new UsageError('--writable: / would make the sandbox pointless');
    if (config.network) sandbox.network = true;
    if (config.networkAllow && config.network) throw new UsageError('--network-allow: not with --network (which allows every host)');
    if (config.networkAllow) sandbox.network = { allow: config.networkAllow };
    host.sandbox = sandbox;
  } else if (config.writable || config.network || config.networkAllow) {
    throw new UsageError(`${config.writable ? '--writable' : config.network ? '--network' : '--network-allow'}: only means something with --sandbox`);
  }
  if (config.limit) host.limits = readLimits(config.limit);
  if (config.timeout !== undefined) {
    if (config.timeout <= 0) throw new UsageError('--timeout: must be more than 0 seconds');
    host.timeoutMs = Math.round(config.timeout * 1000);
  }
  if (config.maxTerminals !== undefined) {
    if (!Number.isSafeInteger(config.maxTerminals) || config.maxTerminals < 1) throw new UsageError('--max-terminals: must be a whole number of at least 1');
    host.maxTerminals = config.maxTerminals;
  }
  const outputLimit = config.outputLimit ?? DEFAULT_MCP_OUTPUT_LIMIT;
  if (!Number.isSafeInteger(outputLimit) || outputLimit < 1) throw new UsageError('--output-limit: must be a whole number of bytes, at least 1');
  host.defaultOutputByteLimit = outputLimit;
  host.maxOutputByteLimit = outputLimit;
  if (config.shell !== undefined) host.shell = far ? config.shell : checkShell(config.shell);
  if (config.audit !== undefined) {
    const dir = path.dirname(path.resolve(config.audit));
    if (!fs.existsSync(dir)) throw new UsageError(`--audit: the directory of ${JSON.stringify(config.audit)} does not exist`);
  }
  if (config.http !== undefined && (!Number.isSafeInteger(config.http) || config.http > 65535)) throw new UsageError('--http: must be a port number (0-65535)');
  if (config.httpTokenFile !== undefined && config.http === undefined) throw new UsageError('--http-token-file: only means something with --http');
  // With --backend, terminal_execute's sessions run at the far end too (the host's backend).
  return { host, ask: config.ask === true, sessions: config.noSessions !== true, audit: config.audit };
}

/** `--backend SPEC`, read strictly. */
function readBackend(spec: string): Backend {
  try {
    return backendFromSpec(spec);
  } catch (error) {
    throw new UsageError(`--backend ${errorMessage(error)}`);
  }
}

/** A far-end directory: absolute (it is checked at the far end). */
function farDir(flag: string, dir: string): string {
  if (!path.posix.isAbsolute(dir)) throw new UsageError(`${flag}: ${JSON.stringify(dir)} must be absolute with --backend (a directory of the far end)`);
  return dir;
}

/**
 * The bearer token of `--http`: read from `file` when it exists (it must be this user's, readable by no one
 * else, and hold a token), else made and written there (created 0600, never over an existing file); without
 * `file`, made here. `created` says whether it was written.
 */
export function httpToken(file: string | undefined): { token: string; created: boolean } {
  if (file === undefined) return { token: randomBytes(32).toString('base64url'), created: false };
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(`--http-token-file: cannot open ${JSON.stringify(file)}: ${errorMessage(error)}`);
    const token = randomBytes(32).toString('base64url');
    try {
      // O_EXCL: a file someone else put there first is never written to (nor its token used).
      fs.writeFileSync(file, `${token}\n`, { flag: 'wx', mode: 0o600 });
    } catch (writeError) {
      throw new UsageError(`--http-token-file: cannot create ${JSON.stringify(file)}: ${errorMessage(writeError)}`);
    }
    return { token, created: true };
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`--http-token-file: ${JSON.stringify(file)} is not a regular file`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
      throw new UsageError(`--http-token-file: ${JSON.stringify(file)} belongs to another user (uid ${stat.uid}), who would know the token`);
    }
    if ((stat.mode & 0o077) !== 0) {
      throw new UsageError(`--http-token-file: ${JSON.stringify(file)} is readable or writable by others (mode ${(stat.mode & 0o777).toString(8)}): chmod 600 it`);
    }
    const token = fs.readFileSync(fd, 'utf8').trim();
    if (!HTTP_TOKEN_PATTERN.test(token)) {
      throw new UsageError(`--http-token-file: ${JSON.stringify(file)} must hold one token of at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (then = padding)`);
    }
    return { token, created: false };
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens the audit file (append) and returns a writer of JSON lines. */
function auditWriter(file: string): (event: object) => void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'a', 0o600);
  } catch (error) {
    throw new UsageError(`--audit: cannot open ${JSON.stringify(file)}: ${errorMessage(error)}`);
  }
  return (event) => {
    try {
      fs.writeSync(fd, JSON.stringify(event) + '\n');
    } catch (error) {
      process.stderr.write(`acp-terminal mcp: audit write failed: ${errorMessage(error)}\n`);
    }
  };
}

/** `acp-terminal mcp ...`: serves until the client goes; resolves with the exit status to use. */
export async function runMcp(argv: readonly string[]): Promise<number> {
  let server: McpTerminalServer;
  let httpPort: number | undefined;
  let http: { token: string; created: boolean; file: string | undefined } | undefined;
  let far: Backend | undefined;
  try {
    const { config, help, version } = parseArgs(argv);
    if (help) {
      process.stdout.write(helpText() + '\n');
      return 0;
    }
    if (version) {
      process.stdout.write(packageVersion() + '\n');
      return 0;
    }
    const options = hostOptionsFrom(config);
    far = options.host.backend as Backend | undefined;
    httpPort = config.http;
    if (httpPort !== undefined) http = { ...httpToken(config.httpTokenFile), file: config.httpTokenFile };
    const audit = options.audit !== undefined ? auditWriter(options.audit) : undefined;
    server = createMcpServer(
      { ...options.host, ...(audit ? { onEvent: audit } : {}) },
      {
        ask: options.ask,
        // The sessions' connections through the proxy go to the audit as the terminals' do.
        sessions: options.sessions ? (audit ? { onNetwork: audit } : {}) : false,
        ...(audit ? { onSessionCommand: audit } : {}),
      },
    );
  } catch (error) {
    process.stderr.write(`acp-terminal mcp: ${errorMessage(error)}\n${error instanceof UsageError ? 'See acp-terminal mcp --help.\n' : ''}`);
    return 2;
  }
  let exiting: Promise<number> | undefined;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const shutdown = (code: number): Promise<number> =>
    (exiting ??= server.close().then(async () => {
      await far?.close(); // its server kills whatever is left at the far end
    }).then(
      () => code,
      () => code,
    )).then((c) => {
      finish(c);
      return c;
    });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => void shutdown(0));
  if (httpPort !== undefined) {
    try {
      const { url } = await server.listenHttp(httpPort, '127.0.0.1', { token: http!.token });
      process.stderr.write(`acp-terminal mcp: serving ${url}\n`);
      // Every request must carry the token: other users of this machine can reach the port, not the token.
      if (http!.file === undefined) process.stderr.write(`acp-terminal mcp: send the header Authorization: Bearer ${http!.token}\n`);
      else process.stderr.write(`acp-terminal mcp: send the header Authorization: Bearer <the token in ${http!.file}${http!.created ? ', just created' : ''}>\n`);
    } catch (error) {
      process.stderr.write(`acp-terminal mcp: --http ${httpPort}: ${errorMessage(error)}\n`);
      await server.close();
      return 2;
    }
  } else {
    server.serveStdio();
    // The client went away: its end of stdin closed (EOF, or it died). Nothing may outlive it.
    process.stdin.once('end', () => void shutdown(0));
    process.stdin.once('close', () => void shutdown(0));
  }
  return done;
}

/** `acp-terminal <command> ...`. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'mcp') return runMcp(rest);
  if (command === '--version') {
    process.stdout.write(packageVersion() + '\n');
    return 0;
  }
  const usage = 'Usage: acp-terminal mcp [flags]   (acp-terminal mcp --help lists the flags)\n';
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(usage);
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(`acp-terminal: unknown command ${JSON.stringify(command)}\n${usage}`);
  return 2;
}
