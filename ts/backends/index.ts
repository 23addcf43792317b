/**
 * Remote backends: terminals run by an `acp-terminal-server` at the far end of a stdio transport
 * (docs/remote.md). `backends.podman(container)`, `backends.docker(container)`,
 * `backends.kubectl(pod, { namespace, container })`, `backends.ssh(destination, options)` build the
 * transport's argv; `backends.command(argv)` takes any argv that starts the server itself, and
 * `backends.local()` runs the server on this machine (over a pipe, for tests and comparison).
 *
 * A backend keeps one connection per far side and multiplexes every terminal over it. Exec-style
 * backends install the server binary when it is missing at its path (or answers with another
 * version), through the same transport: `sh -c 'cat > path && chmod +x path'`. `createTerminal` has
 * the shape and guarantees of the native one; program lookup, the cwd and `allowedRoots` are decided at
 * the far end (its PATH, its filesystem).
 */

import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { AcpTerminalError, invalidArg } from '../errors';
import { platformId } from '../native';
import { shellQuote } from '../shell-quote';
import type * as Native from '../../index.js';
import type { CreateTerminalParams } from '../types';
import { Connection, backendLost, type ConnectionListeners } from './connection';
import type { LookupRequest, LookupResult } from './far';
import { RemoteTerminal, type RemoteOutputListener, type TerminalSubs, type CreatedInfo } from './terminal';

export { Connection, RemoteError, backendLost } from './connection';
export { RemoteTerminal } from './terminal';
export { FarEnd } from './far';
export { backendFromSpec, BACKEND_SPEC_FORMS } from './spec';
export type { FarFacts, LookupBackend, LookupRequest, LookupResult } from './far';
export type { RemoteChunkInfo, RemoteOutputListener } from './terminal';

const ROOT = path.resolve(__dirname, '..', '..');

/** This package's version: the server version a backend expects at the far end. */
export const SERVER_VERSION: string = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

/** The far ends a server is built for: static musl binaries, one per Linux machine architecture. */
export type ServerArch = 'x64' | 'arm64';
const SERVER_ARCHES: readonly ServerArch[] = ['x64', 'arm64'];
const TRIPLES: Record<ServerArch, string> = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' };
/** ELF `e_machine` of each arch's executables (EM_X86_64, EM_AARCH64). */
const ELF_MACHINES: Record<ServerArch, number> = { x64: 62, arm64: 183 };

/** The far end's `uname -m` as the server build it runs (`x86_64` -> `x64`, `aarch64` -> `arm64`); `undefined` for others. */
export function serverArchOf(machine: string): ServerArch | undefined {
  const m = machine.trim();
  if (m === 'x86_64' || m === 'amd64') return 'x64';
  if (m === 'aarch64' || m === 'arm64') return 'arm64';
  return undefined;
}

/**
 * The arch a file is an executable for, from its ELF header (a 64-bit little-endian ELF of x86_64 or
 * aarch64); `undefined` for anything else (another machine, a script, a file that cannot be read).
 */
export function elfArchOf(file: string): ServerArch | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const b = Buffer.alloc(20);
    if (fs.readSync(fd, b, 0, 20, 0) < 20) return undefined;
    if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return undefined;
    const machine = b.readUInt16LE(18);
    return SERVER_ARCHES.find((a) => ELF_MACHINES[a] === machine);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The file a release ships the server for `arch` as, in each platform package: `acp-terminal-server.linux-<arch>-musl`. */
export function serverFileName(arch: ServerArch): string {
  return `acp-terminal-server.linux-${arch}-musl`;
}

/** This process's platform package's directory, when it is installed (where the release ships the servers). */
function platformPackageDir(): string | undefined {
  try {
    return path.dirname(require.resolve(`acp-terminal-${platformId()}/package.json`, { paths: [ROOT] }));
  } catch {
    return undefined;
  }
}

/**
 * Where the server binary for a far end of `arch` is looked for on this machine, first found wins: the
 * package itself, this platform's package (both ship every arch's server), then the builds of
 * `scripts/remote/build-server.sh` (and, for this machine's own arch, the host build).
 */
export function serverBinaryCandidates(arch: ServerArch = hostArch()): string[] {
  const pkg = platformPackageDir();
  const out = [path.join(ROOT, serverFileName(arch))];
  if (pkg) out.push(path.join(pkg, serverFileName(arch)));
  out.push(path.join(ROOT, 'target', TRIPLES[arch], 'release', 'acp-terminal-server'));
  if (process.platform === 'linux' && arch === hostArch()) out.push(path.join(ROOT, 'target', 'release', 'acp-terminal-server'));
  return out;
}

function hostArch(): ServerArch {
  return process.arch === 'arm64' ? 'arm64' : 'x64';
}

/** Where the server binary for this machine's arch is looked for (see {@link serverBinaryCandidates}). */
export const SERVER_BINARY_CANDIDATES: readonly string[] = serverBinaryCandidates();

/**
 * The server binary to upload or run for a far end of `arch` (default: this machine's):
 * `ACP_TERMINAL_SERVER_BINARY` when it is an executable of that arch, else the first of
 * {@link serverBinaryCandidates}.
 */
export function findServerBinary(arch: ServerArch = hostArch()): string {
  const found = lookServerBinary(arch);
  if (!found) {
    throw new AcpTerminalError(
      'ERR_NATIVE_UNAVAILABLE',
      `acp-terminal: no acp-terminal-server binary for linux-${arch} (looked in ${serverBinaryCandidates(arch).join(', ')}); ` +
        `build it with \`bash scripts/remote/build-server.sh ${arch === 'x64' ? 'musl' : 'musl-arm64'}\` or pass options.serverBinaries.${arch}`,
    );
  }
  return found;
}

function lookServerBinary(arch: ServerArch): string | undefined {
  const env = process.env.ACP_TERMINAL_SERVER_BINARY;
  if (env && (elfArchOf(env) ?? hostArch()) === arch) return env;
  return serverBinaryCandidates(arch).find((p) => fs.existsSync(p));
}

const digests = new Map<string, string>();
/** The SHA-256 of a server binary (hex), what the far end's launcher checks before running its file. */
function binaryDigest(file: string): string {
  let h = digests.get(file);
  if (h === undefined) {
    h = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    digests.set(file, h);
  }
  return h;
}

/** Options of every backend. */
export interface BackendOptions {
  /**
   * A server binary uploaded to far ends of its own machine, as its ELF header says (an x86_64 build to
   * x86_64 far ends, an aarch64 one to aarch64 far ends); far ends of the other arch get theirs from
   * `serverBinaries` or {@link findServerBinary}. Not a Linux x86_64 or aarch64 executable: `ERR_INVALID_ARG`.
   */
  serverBinary?: string;
  /**
   * The binary per far-end arch (`{ x64, arm64 }`), before `serverBinary`; each must be an executable of
   * its arch (`ERR_INVALID_ARG` naming the field otherwise).
   */
  serverBinaries?: Partial<Record<ServerArch, string>>;
  /** Its path at the far end (default `/tmp/acp-terminal-server-<version>-<hash of the binaries>`). */
  serverPath?: string;
  /** Upload the binary when it is missing or of another version (default true). */
  install?: boolean;
  /** Milliseconds to wait for the server's banner (default 30000). */
  handshakeTimeoutMs?: number;
  /** Environment of the transport process (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * Milliseconds the far end keeps its terminals when the transport dies, for this side to reattach
   * and resume them (default 30000; 0: a lost transport ends them at once). See docs/remote.md.
   */
  reconnectGraceMs?: number;
  /** Bytes of sent output the server keeps for a resume (default 8 MiB). */
  replayBytes?: number;
}

/** How a backend reaches its far side. */
export interface Transport {
  /** For messages: `podman:name`, `ssh:host`. */
  name: string;
  /** The local argv that runs `command` (an argv) at the far end with stdin and stdout passed through. */
  exec?: (command: string[]) => string[];
  /** An argv that starts the server itself (no install). */
  argv?: readonly string[];
}

// The launcher runs the far-end file only when it is this side's binary for the far end's machine: it picks
// the digest of the build for `uname -m` (one digest per arch this side has, `-` for none), opens the file
// once, checks the SHA-256 of what it opened against that digest (`sha256sum`: busybox and coreutils have
// it), and runs that very file through its descriptor (/proc/self/fd/3), never the path looked up again. A
// file a command at the far end put there (renamed over it, planted by another user in /tmp, or another
// arch's build) is not run: it reads as missing, the marker names the machine, and the install replaces it
// with that machine's build. Only a regular file of the far end's user (not a link) is opened.
// Its arguments: the x86_64 digest, the aarch64 digest, the path, then the server's (`--attach SOCKET`).
const LAUNCH =
  `hx="$1"; ha="$2"; p="$3"; shift 3; m=$(uname -m); ` +
  `case "$m" in x86_64|amd64) h="$hx" ;; aarch64|arm64) h="$ha" ;; *) h=- ;; esac; ` +
  `command -v sha256sum >/dev/null || { echo "acp-terminal-launch: no sha256sum here to verify the server with" >&2; exit 127; }; ` +
  `if [ "$h" != - ] && [ -f "$p" ] && [ ! -L "$p" ] && [ -O "$p" ] && [ -x "$p" ] && command exec 3<"$p" && [ "$(sha256sum <&3)" = "$h  -" ]; ` +
  `then exec /proc/self/fd/3 "$@"; fi; printf '\\036ACP-TERMINAL-SERVER-MISSING %s\\n' "$m"`;
// Written beside it, then renamed over it (a running server keeps its file); read-only, so even its owner
// must change the mode before writing it in place.
const INSTALL = `set -e; p="$1"; mkdir -p "$(dirname "$p")"; t=$(mktemp "$p.XXXXXX"); cat > "$t"; chmod 555 "$t"; mv -f "$t" "$p"`;

/**
 * `sandbox.network: { allow, deny }` cannot be served at a far end: its allow-list proxy runs in this
 * Node process, and the far end's network namespace has no way back to it. Refused before anything is
 * sent (`ERR_INVALID_ARG` naming the field), as the server refuses it too.
 */
export function refuseNetworkRules(sandbox: unknown, field: string): void {
  if (typeof sandbox !== 'object' || sandbox === null) return;
  const network = (sandbox as { network?: unknown }).network;
  if (typeof network === 'object' && network !== null) {
    throw invalidArg(
      `${field}.network`,
      '{ allow, deny } is not supported through a backend: the allow-list proxy runs in this Node process, not at the far end; give true or false',
    );
  }
}

/** Terminals on one far side, over one connection at a time. */
export class Backend {
  /** The native `createTerminal`'s shape, run at the far end. */
  readonly createTerminal: (params: CreateTerminalParams, options?: Native.CreateTerminalOptions | null) => Promise<RemoteTerminal>;
  private conn: Promise<Connection> | undefined;
  private readonly terms = new Map<number, RemoteTerminal>();
  /** Exits heard before their create's answer: only while creates are in flight, at most one each. */
  private readonly earlyExits = new Map<number, Record<string, unknown>>();
  private creating = 0;
  private readonly routes = new Map<number, { listener: RemoteOutputListener; terminal: RemoteTerminal | undefined }>();
  private closed = false;

  constructor(
    readonly transport: Transport,
    private readonly options: BackendOptions = {},
  ) {
    if (!transport.exec && !transport.argv) throw new AcpTerminalError('ERR_INVALID_ARG', 'a transport needs exec or argv');
    this.createTerminal = (params, opts) => this.create(params, opts);
  }

  /**
   * The far-end path of the server (exec-style transports). The default names the version and the
   * digests of the binaries this side would install (every arch's it has), so a rebuilt server is
   * installed anew; a far end has one arch, so one path serves whichever of them it got.
   */
  get serverPath(): string {
    if (this.options.serverPath) return this.options.serverPath;
    const digests = this.digests();
    if (SERVER_ARCHES.every((a) => digests[a] === '-')) findServerBinary();
    const hash = createHash('sha256')
      .update(SERVER_ARCHES.map((a) => `${a}:${digests[a]}`).join(' '))
      .digest('hex')
      .slice(0, 16);
    return `/tmp/acp-terminal-server-${SERVER_VERSION}-${hash}`;
  }

  /**
   * The binary for a far end of `arch`: `serverBinaries[arch]`, `serverBinary` when it is an executable of
   * that arch, else {@link findServerBinary} (`undefined` when none and not `required`). A binary named by
   * an option that is not an executable of its arch is `ERR_INVALID_ARG` naming the option.
   */
  private binaryFor(arch: ServerArch, required: boolean): string | undefined {
    const o = this.options;
    const named = o.serverBinaries?.[arch];
    if (named !== undefined) {
      const is = elfArchOf(named);
      if (is !== arch) throw invalidArg(`options.serverBinaries.${arch}`, `${named} is ${is ? `a linux-${is}` : 'not a Linux x86_64 or aarch64'} executable, not linux-${arch}`);
      return named;
    }
    if (o.serverBinary !== undefined) {
      const is = elfArchOf(o.serverBinary);
      if (is === undefined) throw invalidArg('options.serverBinary', `${o.serverBinary} is not a Linux x86_64 or aarch64 executable`);
      if (is === arch) return o.serverBinary;
    }
    return required ? findServerBinary(arch) : lookServerBinary(arch);
  }

  /** The SHA-256 of the binary this side has for each arch (`-`: none), what the launcher checks. */
  private digests(): Record<ServerArch, string> {
    const out = {} as Record<ServerArch, string>;
    for (const a of SERVER_ARCHES) {
      const bin = this.binaryFor(a, false);
      out[a] = bin === undefined ? '-' : binaryDigest(bin);
    }
    return out;
  }

  /** The far end's arch, from `uname -m` run through the transport (when no launcher said it). */
  private farMachine(exec: (c: string[]) => string[]): Promise<string> {
    const [cmd, ...args] = exec(['uname', '-m']);
    return new Promise((resolve, reject) => {
      const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: this.options.env ?? process.env });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4096)));
      child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
      child.once('error', (e) => reject(backendLost(`${this.transport.name}: uname could not start: ${e.message}`)));
      child.once('close', (code) => {
        if (code !== 0) return reject(backendLost(`${this.transport.name}: \`uname -m\` failed (exit ${code}): ${err.trim()}`));
        // The last line: a login shell's rc files may print first (ssh).
        resolve(out.trim().split('\n').pop() ?? '');
      });
    });
  }

  /** The live connection, opened (and the server installed) on first use; reopened after a loss. */
  connection(): Promise<Connection> {
    if (this.closed) return Promise.reject(new AcpTerminalError('ERR_HOST_CLOSED', `backend ${this.transport.name} was closed`));
    if (!this.conn) {
      const c = this.connect();
      this.conn = c;
      c.catch(() => {
        if (this.conn === c) this.conn = undefined;
      });
    }
    return this.conn;
  }

  private async connect(): Promise<Connection> {
    const subs = this.listeners();
    const base = {
      handshakeTimeoutMs: this.options.handshakeTimeoutMs,
      env: this.options.env,
      expectVersion: SERVER_VERSION,
      reconnectGraceMs: this.options.reconnectGraceMs,
      replayBytes: this.options.replayBytes,
    };
    if (this.transport.argv) {
      const argv = this.transport.argv;
      const open = { ...base, attachArgv: (socket: string) => [...argv, '--attach', socket] };
      const r = await Connection.open(argv, subs, open);
      if ('connection' in r) return r.connection;
      throw backendLost(`${this.transport.name}: the server did not start (${JSON.stringify(r)})`);
    }
    const exec = this.transport.exec!;
    const serverPath = this.serverPath;
    const digests = this.digests();
    const launch = (...args: string[]): string[] =>
      exec(['sh', '-c', LAUNCH, 'acp-terminal-launch', digests.x64, digests.arm64, serverPath, ...args]);
    const open = { ...base, attachArgv: (socket: string) => launch('--attach', socket) };
    for (let attempt = 0; ; attempt++) {
      const r = await Connection.open(launch(), subs, open);
      if ('connection' in r) return r.connection;
      if (attempt > 0 || this.options.install === false) {
        throw backendLost(
          `${this.transport.name}: ${
            'missing' in r
              ? `no server at ${serverPath} (missing, or not the expected binary for the far end's machine ${JSON.stringify(r.machine)}: ` +
                `${serverArchOf(r.machine) ? `sha256 ${digests[serverArchOf(r.machine)!]}` : 'no build for it'})`
              : `the server at ${serverPath} is version ${r.mismatch.version} (protocol ${r.mismatch.protocol})`
          }`,
        );
      }
      await this.install(exec, serverPath, 'missing' in r ? r.machine : await this.farMachine(exec));
    }
  }

  /**
   * Uploads the server binary built for the far end's `machine` (its `uname -m`) to `serverPath` through
   * the transport; another machine is `ERR_NATIVE_UNAVAILABLE` naming it, and nothing is uploaded.
   */
  private install(exec: (c: string[]) => string[], serverPath: string, machine: string): Promise<void> {
    const arch = serverArchOf(machine);
    if (!arch) {
      return Promise.reject(
        new AcpTerminalError(
          'ERR_NATIVE_UNAVAILABLE',
          `${this.transport.name}: no acp-terminal-server for the far end's machine ${JSON.stringify(machine)} (linux x86_64 and aarch64 only)`,
        ),
      );
    }
    let bin: string;
    try {
      bin = this.binaryFor(arch, true)!;
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const [cmd, ...args] = exec(['sh', '-c', INSTALL, 'acp-terminal-install', serverPath]);
    return new Promise((resolve, reject) => {
      const child = spawn(cmd!, args, { stdio: ['pipe', 'ignore', 'pipe'], env: this.options.env ?? process.env });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
      child.stdin.on('error', () => {});
      child.once('error', (e) => reject(backendLost(`${this.transport.name}: the install could not start: ${e.message}`)));
      child.once('close', (code) =>
        code === 0
          ? resolve()
          : reject(backendLost(`${this.transport.name}: installing the server at ${serverPath} failed (exit ${code}): ${stderr.trim()}`)),
      );
      fs.createReadStream(bin).pipe(child.stdin);
    });
  }

  private listeners(): ConnectionListeners {
    return {
      output: (sub, data, dropped) => this.routes.get(sub)?.listener(data, { dropped }),
      end: (sub) => this.routes.delete(sub),
      exit: (term, status) => {
        const t = this.terms.get(term);
        if (t) t.exited(status);
        else if (this.creating > 0) {
          // A far end that sends exits of terminals nobody is creating cannot grow this map.
          this.earlyExits.set(term, status);
          if (this.earlyExits.size > this.creating) this.earlyExits.delete(this.earlyExits.keys().next().value as number);
        }
      },
      lost: (error) => {
        for (const t of this.terms.values()) t.lost(error);
        this.terms.clear();
        this.earlyExits.clear();
        this.routes.clear();
        this.conn = undefined;
      },
    };
  }

  private subs(): TerminalSubs {
    return {
      route: (sub, listener, terminal) => this.routes.set(sub, { listener, terminal }),
      unroute: (sub) => this.routes.delete(sub),
      forget: (terminal) => {
        this.terms.delete(terminal.term);
        for (const [sub, r] of this.routes) if (r.terminal === terminal) this.routes.delete(sub);
      },
    };
  }

  /** One create answered or failed: with none left in flight, no early exit can be claimed. */
  private settleCreate(): void {
    this.creating--;
    if (this.creating === 0) this.earlyExits.clear();
  }

  private async create(params: CreateTerminalParams, options?: Native.CreateTerminalOptions | null): Promise<RemoteTerminal> {
    refuseNetworkRules(options?.sandbox, 'options.sandbox');
    const conn = await this.connection();
    const { onOutput, ...rest } = (options ?? {}) as Record<string, unknown> & { onOutput?: unknown };
    if (onOutput !== undefined && onOutput !== null && typeof onOutput !== 'function') {
      throw new AcpTerminalError('ERR_INVALID_ARG', 'options.onOutput must be a function');
    }
    let sub: number | undefined;
    const route = onOutput ? { listener: onOutput as RemoteOutputListener, terminal: undefined as RemoteTerminal | undefined } : undefined;
    if (route) {
      sub = conn.newSub();
      this.routes.set(sub, route);
    }
    let info: CreatedInfo;
    this.creating++;
    try {
      info = (await conn.call('create', { params, options: rest, subscribe: sub, hold: true })) as unknown as CreatedInfo;
    } catch (e) {
      if (sub !== undefined) this.routes.delete(sub);
      this.settleCreate();
      throw e;
    }
    const early = this.earlyExits.get(info.term);
    this.earlyExits.delete(info.term);
    this.settleCreate();
    const t = new RemoteTerminal(conn, info, this.subs());
    if (route) route.terminal = t;
    this.terms.set(t.term, t);
    // Listeners attached in this tick subscribe before the hold ends: they get the first byte on. An
    // exit heard already counts from the end of this tick, so it waits for their subscriptions too.
    setImmediate(() => {
      if (early) t.exited(early);
      conn.call('releaseHold', { term: t.term }).catch(() => {});
    });
    return t;
  }

  /**
   * Asks the far end (its PATH, its file system) where programs are, files' real paths, whether a cwd
   * lies inside roots, its environment: what `TerminalHost({ backend })` judges before anything starts.
   */
  async lookup(request: LookupRequest): Promise<LookupResult> {
    const conn = await this.connection();
    return (await conn.call('lookup', { ...request })) as unknown as LookupResult;
  }

  /** The transport process of the live connection (for fault tests), if any. */
  async transportPid(): Promise<number | undefined> {
    return (await this.connection()).pid;
  }

  /** Ends the connection: the far end kills every command it started. Later creates reject. */
  async close(): Promise<void> {
    this.closed = true;
    const c = this.conn;
    this.conn = undefined;
    if (!c) return;
    const conn = await c.catch(() => undefined);
    await conn?.close();
  }
}

/** Options of exec-style transports. */
export interface ExecOptions extends BackendOptions {
  /** Extra arguments before the container/pod/host (`--context x`, `-p 2222`). */
  extraArgs?: string[];
}

/** Any argv whose stdin and stdout are the server's (it starts `acp-terminal-server` itself). */
export function command(argv: readonly string[], options: BackendOptions = {}): Backend {
  return new Backend({ name: `command:${argv.join(' ')}`, argv }, options);
}

/** Any argv prefix that runs a far-end command (appended as argv) with stdio passed through. */
export function execPrefix(name: string, prefix: readonly string[], options: BackendOptions = {}): Backend {
  return new Backend({ name, exec: (c) => [...prefix, ...c] }, options);
}

/** The server on this machine over a pipe (the local binary, no install). */
export function local(options: BackendOptions = {}): Backend {
  return command([options.serverBinary ?? findServerBinary()], options);
}

/** `podman exec -i CONTAINER ...` (`podman` from PATH, or `options.podman`). */
export function podman(container: string, options: ExecOptions & { podman?: string } = {}): Backend {
  return execPrefix(`podman:${container}`, [options.podman ?? 'podman', ...(options.extraArgs ?? []), 'exec', '-i', container], options);
}

/** `docker exec -i CONTAINER ...` (`DOCKER_HOST` etc. through `options.env`). */
export function docker(container: string, options: ExecOptions & { docker?: string } = {}): Backend {
  return execPrefix(`docker:${container}`, [options.docker ?? 'docker', ...(options.extraArgs ?? []), 'exec', '-i', container], options);
}

/** `kubectl exec -i POD [-n NAMESPACE] [-c CONTAINER] -- ...`. */
export function kubectl(pod: string, options: ExecOptions & { namespace?: string; container?: string; kubectl?: string } = {}): Backend {
  const args = [options.kubectl ?? 'kubectl', ...(options.extraArgs ?? []), 'exec', '-i'];
  if (options.namespace) args.push('-n', options.namespace);
  if (options.container) args.push('-c', options.container);
  args.push(pod, '--');
  return execPrefix(`kubectl:${pod}`, args, options);
}

/** Options of {@link ssh}. */
export interface SshOptions extends ExecOptions {
  /** Port (`-p`). */
  port?: number;
  /** Identity file (`-i`). */
  identity?: string;
  /** `-o` options (`{ UserKnownHostsFile: '...', BatchMode: 'yes' }`). */
  sshOptions?: Record<string, string>;
  /** The ssh program (default `ssh`). */
  ssh?: string;
}

/**
 * `ssh [options] DESTINATION -- 'command'`: the far-end argv is quoted into one shell line (ssh hands it
 * to the user's login shell, whose rc files may print first: the banner is found past that).
 */
export function ssh(destination: string, options: SshOptions = {}): Backend {
  const args = [options.ssh ?? 'ssh', '-T', ...(options.extraArgs ?? [])];
  if (options.port !== undefined) args.push('-p', String(options.port));
  if (options.identity) args.push('-i', options.identity);
  for (const [k, v] of Object.entries(options.sshOptions ?? {})) args.push('-o', `${k}=${v}`);
  args.push(destination, '--');
  return new Backend({ name: `ssh:${destination}`, exec: (c) => [...args, c.map(shellQuote).join(' ')] }, options);
}
