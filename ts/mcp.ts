/**
 * `createMcpServer`: terminals as MCP tools on the official MCP TypeScript SDK (2.x). Every tool call
 * goes through one `TerminalHost` (roots, command and environment policy, sandbox, limits, timeouts,
 * audit) and the persistent-session tool through one `ShellSessions`; both live outside the SDK's
 * server objects, so the 2026-07-28 revision (a server object per request) and the 2025 one (one per
 * connection) see the same terminals. The tools themselves are in `mcp-tools.ts`.
 *
 * Invariants: building a server object starts nothing (a client probing the protocol revision spawns
 * and drops servers); `close()` releases every terminal and session, so nothing the server started
 * outlives it.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { invalidArg } from './errors';
import { TerminalHost } from './host';
import type { TerminalHostOptions } from './host-types';
import { registerTerminalTools, TerminalToolState, type SessionCommandEvent } from './mcp-tools';
import { DEFAULT_OUTPUT_BYTE_LIMIT, hostPath, refusingProgram } from './host-options';
import { lockedEditorEnv } from './policy-env';
import { normalizeEnv } from './validate';
import { ShellSessions } from './sessions';
import { nativeCreateTerminal } from './native';
import type { PtyCreateTerminalOptions, SessionBackend, ShellSessionsOptions } from './session-types';
import type { CreateTerminalOptions as NativeCreateTerminalOptions } from '../index.js';

export { MCP_SESSION_ID, MCP_TOOL_NAMES, type SessionCommandEvent } from './mcp-tools';

/** What `createMcpServer` takes besides a host (or the host's options). */
export interface McpTerminalOptions {
  /**
   * Ask the user through the MCP client (elicitation, in both protocol revisions) before each command
   * that passed the policy runs; a client that cannot ask gets `ERR_NOT_APPROVED`. Default false. Only
   * for a host built from options: a given host keeps its own `approve`.
   */
  ask?: boolean;
  /**
   * The persistent sessions of `terminal_execute`: options of the `ShellSessions` to create (`cwd`,
   * `sandbox`, `env`, `inheritEnv`, `dropInheritedEnv` default to the host options'), an existing
   * `ShellSessions`, or `false` for no `terminal_execute` tool. Default: created on first use.
   */
  sessions?: ShellSessionsOptions | ShellSessions | false;
  /** The server's name and version in `initialize` / `server/discover` (default `acp-terminal`). */
  serverInfo?: { name: string; version: string };
  /** Milliseconds between progress notifications of a long call (default 1000). */
  progressIntervalMs?: number;
  /** Called after every `terminal_execute` call (the audit of session commands; `run` is in the host's). */
  onSessionCommand?: (event: SessionCommandEvent) => void;
}

/** What `listenHttp` takes besides the port and host name. */
export interface McpHttpOptions {
  /**
   * The bearer token requests must carry (at least 16 characters of `A-Za-z0-9-._~+/=`); default: 32
   * random bytes, base64url, made at the call. Any local user can reach a loopback port: the token is
   * what keeps them out.
   */
  token?: string;
}

/** What `httpHandler` takes: the same guards as `listenHttp`, for a server the caller runs. */
export interface McpHttpHandlerOptions {
  /** The bearer token every request must carry (`Authorization: Bearer <token>`; as `McpHttpOptions.token`). */
  token: string;
  /**
   * The authorities (`host:port`, lower case, as in the Host header) this handler answers to, e.g.
   * `['127.0.0.1:8080', 'localhost:8080']`: a request addressed to another name (DNS rebinding) or coming
   * from a page of another origin is 403.
   */
  allowedHosts: readonly string[];
}

/** A token `listenHttp` accepts: printable, no space, long enough not to be guessed. */
export const HTTP_TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]{16,}=*$/;

/** A terminal MCP server: the host and sessions it uses, the SDK factory, and ways to serve it. */
export interface McpTerminalServer extends AsyncDisposable {
  /** The host every `run` goes through. */
  readonly host: TerminalHost;
  /** The sessions of `terminal_execute` once one was used (undefined before, or with `sessions: false`). */
  readonly sessions: ShellSessions | undefined;
  /**
   * A fresh SDK `McpServer` with the tools registered, sharing this server's terminals: the factory the
   * SDK's `serveStdio`, `createMcpHandler` and the ACP SDK's `fromMcpServer` take. Cheap; starts nothing.
   */
  readonly factory: () => McpServer;
  /**
   * A fresh server object of `McpServerClass` with the tools registered: for code that loads the MCP SDK's
   * ES module build (the ACP SDK's `fromMcpServer` does), which must get a server of its own build, not of
   * the CommonJS one this package loads. `server.serverOf(McpServer)` with `McpServer` imported there.
   */
  serverOf<S extends McpServer>(McpServerClass: new (info: { name: string; version: string }, options: object) => S): S;
  /** Serves MCP over this process's stdin/stdout; when the client goes (stdin ends), calls `close()`. */
  serveStdio(): StdioServerHandle;
  /**
   * The SDK's HTTP handler (streamable HTTP, both revisions) behind `listenHttp`'s guards: mount its
   * `fetch` face anywhere. A request whose Host (or Origin, when sent) is not one of `allowedHosts` is 403;
   * one without `Authorization: Bearer <token>` is 401. Code that authenticates by other means builds its
   * own handler from `factory` (the SDK's `createMcpHandler(factory)`).
   */
  httpHandler(options: McpHttpHandlerOptions): McpHttpHandler;
  /**
   * Listens on `hostname` (default 127.0.0.1) and `port` (0: any free one) with the SDK's streamable HTTP
   * transport at path `/mcp`; resolves once listening, with the address and the bearer token every request
   * must carry (`Authorization: Bearer <token>`, else 401): `options.token`, or 32 random bytes
   * (base64url) made here. A request whose Host or Origin is not this loopback server is 403.
   */
  listenHttp(port: number, hostname?: string, options?: McpHttpOptions): Promise<{ server: http.Server; url: string; token: string }>;
  /** Kills and releases every terminal and session; the tools refuse afterwards. */
  close(): Promise<void>;
}

/**
 * Builds a terminal MCP server over `hostOrOptions`: an existing `TerminalHost` (closed by `close()`) or
 * the options of the one to create.
 *
 * ```ts
 * const server = createMcpServer({ cwd: process.cwd(), allowedRoots: [process.cwd()] });
 * server.serveStdio();
 * ```
 */
export function createMcpServer(
  hostOrOptions: TerminalHost | TerminalHostOptions = {},
  options: McpTerminalOptions = {},
): McpTerminalServer {
  if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
  if (options.ask !== undefined && typeof options.ask !== 'boolean') throw invalidArg('options.ask', 'must be a boolean');
  const given = hostOrOptions instanceof TerminalHost;
  if (options.ask && given) throw invalidArg('options.ask', 'applies to a host built from options; give your host an approve callback instead');
  const hostOptions: TerminalHostOptions = given ? {} : (hostOrOptions as TerminalHostOptions);
  const state = new TerminalToolState({
    ask: options.ask === true,
    progressIntervalMs: options.progressIntervalMs ?? 1000,
    cwd: hostOptions.cwd,
    outputLimit: hostOptions.maxOutputByteLimit ?? hostOptions.defaultOutputByteLimit ?? DEFAULT_OUTPUT_BYTE_LIMIT,
    // A given host's policy is not known here: its sessions' typed input is refused as under one.
    typedInput:
      given || hostOptions.commandPolicy != null || hostOptions.approve != null ? 'refuse' : options.ask === true ? 'ask' : 'free',
    commandTimeoutMs: hostOptions.timeoutMs ?? undefined,
    ...(options.onSessionCommand ? { onSessionCommand: options.onSessionCommand } : {}),
    makeHost: (approve) => (given ? (hostOrOptions as TerminalHost) : new TerminalHost(approve ? { ...hostOptions, approve } : hostOptions)),
    makeSessions: sessionsMaker(options.sessions, hostOptions),
  });
  const info = options.serverInfo ?? { name: 'acp-terminal', version: packageVersion() };
  const serverOf = <S extends McpServer>(McpServerClass: new (info: { name: string; version: string }, options: object) => S): S => {
    const server = new McpServerClass(info, {
      capabilities: { tools: {} },
      instructions:
        'Runs shell commands on this machine under its owner\'s policy: `run` for one-off commands, ' +
        '`terminal_execute` for a persistent bash session (cd, exports and background jobs persist).',
    });
    registerTerminalTools(server, state);
    return server;
  };
  const factory = (): McpServer => serverOf(McpServer);
  return {
    host: state.host,
    get sessions() {
      return state.existingSessions;
    },
    factory,
    serverOf,
    serveStdio() {
      const handle = serveStdio(factory, {
        onerror: (error) => process.stderr.write(`acp-terminal mcp: ${error.message}\n`),
      });
      return handle;
    },
    httpHandler(guards) {
      if (typeof guards !== 'object' || guards === null) throw invalidArg('options', 'must be an object with token and allowedHosts');
      const allowed = allowedAuthorities(guards.allowedHosts, 'options.allowedHosts');
      const expected = bearer(guards.token, 'options.token');
      const handler = createMcpHandler(factory);
      const inner = handler.fetch;
      handler.fetch = (request, opts) => {
        const refusal = refuse(new URL(request.url).host, request.headers.get('host') ?? undefined, request.headers.get('origin') ?? undefined,
          request.headers.get('authorization') ?? undefined, allowed, expected);
        if (refusal) return Promise.resolve(new Response(refusal.body, { status: refusal.status, headers: refusal.headers }));
        return inner(request, opts);
      };
      return handler;
    },
    async listenHttp(port, hostname = '127.0.0.1', httpOptions = {}) {
      if (typeof httpOptions !== 'object' || httpOptions === null) throw invalidArg('options', 'must be an object');
      const token = httpOptions.token ?? randomBytes(32).toString('base64url');
      const expected = bearer(token, 'options.token');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { toNodeHandler } = require('@modelcontextprotocol/node') as typeof import('@modelcontextprotocol/node');
      const handle = toNodeHandler(createMcpHandler(factory));
      const server = http.createServer((req, res) => {
        if ((req.url ?? '').split('?')[0] !== '/mcp') {
          res.writeHead(404).end('not found: the MCP endpoint is /mcp\n');
          return;
        }
        const port = (server.address() as AddressInfo).port;
        const loopback = [...LOOPBACK_NAMES].map((name) => `${name}:${port}`);
        const refusal = refuse(req.headers.host, req.headers.host, req.headers.origin, req.headers.authorization, loopback, expected);
        if (refusal) {
          res.writeHead(refusal.status, refusal.headers).end(refusal.body);
          return;
        }
        void handle(req, res);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, hostname, () => resolve());
      });
      const address = server.address() as AddressInfo;
      return { server, url: `http://${hostname}:${address.port}/mcp`, token };
    },
    close: () => state.close(),
    [Symbol.asyncDispose]: () => state.close(),
  };
}

/** How `terminal_execute`'s sessions are made: from the host's options unless given. */
function sessionsMaker(
  sessions: McpTerminalOptions['sessions'],
  host: TerminalHostOptions,
): (() => ShellSessions) | undefined {
  if (sessions === false) return undefined;
  if (sessions instanceof ShellSessions) return () => sessions;
  if (sessions !== undefined && (typeof sessions !== 'object' || sessions === null)) {
    throw invalidArg('options.sessions', 'must be ShellSessions options, a ShellSessions or false');
  }
  const limits = host.limits;
  const derived: ShellSessionsOptions = {
    ...(host.cwd !== undefined ? { cwd: host.cwd } : {}),
    ...(host.sandbox !== undefined ? { sandbox: host.sandbox } : {}),
    ...(host.inheritEnv !== undefined ? { inheritEnv: host.inheritEnv } : {}),
    ...(host.dropInheritedEnv !== undefined ? { dropInheritedEnv: host.dropInheritedEnv } : {}),
    ...(host.env !== undefined ? { env: host.env } : {}),
    // The host's commands run at a far end: so do its sessions.
    ...(host.backend !== undefined ? { backend: host.backend as unknown as SessionBackend } : {}),
    ...(host.maxOutputByteLimit !== undefined ? { maxOutputBytes: host.maxOutputByteLimit } : {}),
    ...(sessions ?? {}),
  };
  const policy = host.commandPolicy as { allow?: unknown } | undefined;
  if (typeof policy === 'object' && policy !== null && policy.allow !== undefined) {
    // As for the host's own commands: under an allow list the editors an allowed program starts are
    // `false` (`git commit <<EOF` would feed `:!cmd` to vi).
    const overlay = normalizeEnv(derived.env, 'options.sessions.env');
    const refuser = derived.backend !== undefined ? 'false' : refusingProgram(hostPath(overlay, derived.inheritEnv !== false), derived.cwd, host.resolveProgram);
    derived.env = lockedEditorEnv(overlay, refuser);
  }
  if (limits != null) {
    // The host's resource limits hold for each session's shell and everything it starts (the shell counts
    // as one process of `processes`).
    const backend =
      derived.createTerminal ??
      derived.backend?.createTerminal ??
      // The native create with the network proxy (`sandbox.network: { allow }`), as the sessions' own default.
      ((params, opts) => nativeCreateTerminal()(params, opts as NativeCreateTerminalOptions));
    derived.createTerminal = (params, opts) => backend(params, { ...opts, limits } as PtyCreateTerminalOptions);
  }
  return () => new ShellSessions(derived);
}

/** This package's version (for `serverInfo`). */
export function packageVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../package.json') as { version: string }).version;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The `Authorization` value a token stands for, after checking the token. */
function bearer(token: unknown, field: string): Buffer {
  if (typeof token !== 'string' || !HTTP_TOKEN_PATTERN.test(token)) {
    throw invalidArg(field, 'must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (then = padding)');
  }
  return Buffer.from(`Bearer ${token}`);
}

/** The `host:port` authorities a handler answers to, checked and lower-cased. */
function allowedAuthorities(hosts: unknown, field: string): string[] {
  if (!Array.isArray(hosts) || hosts.length === 0 || !hosts.every((h) => typeof h === 'string' && /^(\[[0-9a-f:.]+\]|[^\s:/@[\]]+):\d{1,5}$/i.test(h))) {
    throw invalidArg(field, 'must be a non-empty array of host:port authorities (e.g. "127.0.0.1:8080")');
  }
  return (hosts as string[]).map((h) => h.toLowerCase());
}

/**
 * The one check of every HTTP request (listenHttp's server and httpHandler): why it is refused, or null.
 * DNS rebinding: a page on another origin whose name resolves to this server reaches it with its own Host
 * (and Origin), so only requests addressed to an allowed authority are served; and since every local user
 * can reach a loopback port, only a client given the token is.
 */
function refuse(
  urlHost: string | undefined,
  hostHeader: string | undefined,
  origin: string | undefined,
  authorization: string | undefined,
  allowed: readonly string[],
  expected: Buffer,
): { status: number; body: string; headers?: Record<string, string> } | null {
  const named = (authority: string | undefined) => authority !== undefined && allowed.includes(authority.toLowerCase());
  const originOk = origin === undefined || (/^https?:\/\/[^/]+$/i.test(origin) && named(origin.replace(/^https?:\/\//i, '')));
  if (!named(hostHeader ?? urlHost) || !originOk) {
    return { status: 403, body: 'forbidden: Host and Origin must name this server\n' };
  }
  const given = Buffer.from(authorization ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      status: 401,
      body: 'unauthorized: send Authorization: Bearer <token>\n',
      headers: { 'www-authenticate': 'Bearer realm="acp-terminal mcp"' },
    };
  }
  return null;
}
