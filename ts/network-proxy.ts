/**
 * The host side of `sandbox.network: { allow, deny }`: an allow-list proxy served from the host's network
 * namespace on the listening socket the core made inside the sandbox's (127.0.0.1:3128 there; see
 * `src/sandbox/proxy.rs`). The command reaches nothing else: its namespace has only its loopback.
 *
 * One port speaks both protocols, told apart by the first byte: SOCKS5 (`0x05`; CONNECT only, IPv4, IPv6 or a
 * domain name, which the proxy resolves) and HTTP (`CONNECT host:port`, and absolute-form requests such as
 * `GET http://host/path`, forwarded once with `Connection: close`).
 *
 * Rules (`parseNetworkRules`): a pattern is `host`, `*.domain` (every name below `domain`, not `domain`
 * itself), or an IP literal (`127.0.0.1`, `[::1]`), each optionally `:port` (else every port). A request is
 * refused unless an allow pattern matches, and refused whenever a deny pattern matches. An IP literal is
 * matched only by IP patterns (no wildcard or name covers an address). A name is resolved here, and an
 * address that is not public (loopback, private, link-local, CGNAT, unique-local, multicast, unspecified,
 * or such an address mapped into IPv6) is used only when an IP pattern allows that very address: a public
 * name that resolves to 127.0.0.1 (DNS rebinding) reaches nothing. Refusals: HTTP `403`, SOCKS5 reply `0x02`
 * (connection not allowed by ruleset).
 *
 * Every connection, allowed or refused, is reported once, when it is over (`NetworkConnectionEvent`).
 */

import * as dns from 'node:dns';
import * as net from 'node:net';
import { AcpTerminalError, invalidArg } from './errors';

/** A parsed host pattern. */
interface HostPattern {
  /** As given. */
  readonly text: string;
  /** `exact` name, `wildcard` (`*.` suffix match), or `ip` literal. */
  readonly kind: 'exact' | 'wildcard' | 'ip';
  /** Lower-case name without a trailing dot; the suffix (with its leading dot) for a wildcard; the canonical address for an IP. */
  readonly host: string;
  /** The port, or undefined for every port. */
  readonly port: number | undefined;
}

/** `sandbox.network`'s allow and deny lists, parsed. */
export interface NetworkRules {
  readonly allow: readonly HostPattern[];
  readonly deny: readonly HostPattern[];
}

/** One connection through a sandbox's proxy, reported when it is over. */
export interface NetworkConnectionEvent {
  /** `connect`: HTTP CONNECT; `http`: an absolute-form HTTP request; `socks5`: SOCKS5 CONNECT. */
  protocol: 'connect' | 'http' | 'socks5';
  /** The host asked for (a name, or an IP literal), lower case. */
  host: string;
  /** The port asked for. */
  port: number;
  /** Whether the proxy let it through. */
  decision: 'allowed' | 'refused';
  /** Why it was refused, or why an allowed connection failed (connect error). */
  reason?: string;
  /** The address the proxy connected to (allowed connections that got one). */
  address?: string;
  /** Bytes from the command to the host (after the proxy's handshake). */
  bytesSent: number;
  /** Bytes from the host to the command. */
  bytesReceived: number;
}

/** A listener for `NetworkConnectionEvent`s (its throws are ignored). */
export type NetworkListener = (event: NetworkConnectionEvent) => void;

/** How a name is resolved: every address, in the resolver's order (the default is `dns.lookup`). */
export type HostResolver = (host: string) => Promise<string[]>;

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** The canonical text of an IP literal (IPv6 compressed, lower case), or undefined. */
function canonicalIp(host: string): string | undefined {
  const kind = net.isIP(host);
  if (kind === 4) return host.split('.').map((n) => String(Number(n))).join('.');
  if (kind === 6) {
    try {
      return new URL(`http://[${host}]/`).hostname.slice(1, -1);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** A valid DNS name (lower case, no trailing dot), or undefined. */
function hostName(host: string): string | undefined {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h.length === 0 || h.length > 253) return undefined;
  return h.split('.').every((l) => LABEL.test(l)) ? h : undefined;
}

/** Parses one pattern; throws `ERR_INVALID_ARG` naming `field`. */
function parsePattern(text: unknown, field: string): HostPattern {
  if (typeof text !== 'string' || text.length === 0) throw invalidArg(field, 'must be a non-empty host pattern');
  let host = text;
  let port: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) {
    host = bracket[1] ?? '';
    if (bracket[2] !== undefined) port = Number(bracket[2]);
    if (net.isIPv6(host) === false) throw invalidArg(field, `${JSON.stringify(text)}: only an IPv6 address may be in brackets`);
  } else if (!net.isIPv6(text)) {
    const colon = text.lastIndexOf(':');
    if (colon >= 0) {
      const p = text.slice(colon + 1);
      if (!/^\d{1,5}$/.test(p)) throw invalidArg(field, `${JSON.stringify(text)}: the port must be a number (host:port)`);
      port = Number(p);
      host = text.slice(0, colon);
    }
  }
  if (port !== undefined && (port < 1 || port > 65535)) throw invalidArg(field, `${JSON.stringify(text)}: the port must be 1-65535`);
  const ip = canonicalIp(host);
  if (ip !== undefined) return { text, kind: 'ip', host: ip, port };
  if (host.startsWith('*.')) {
    const suffix = hostName(host.slice(2));
    if (suffix === undefined) throw invalidArg(field, `${JSON.stringify(text)} is not a host pattern (host, *.domain or an IP, optionally :port)`);
    return { text, kind: 'wildcard', host: `.${suffix}`, port };
  }
  const name = hostName(host);
  if (name === undefined) throw invalidArg(field, `${JSON.stringify(text)} is not a host pattern (host, *.domain or an IP, optionally :port)`);
  return { text, kind: 'exact', host: name, port };
}

/**
 * Parses `network: { allow, deny }` (`field` names it in errors, e.g. `options.sandbox.network`); throws
 * `ERR_INVALID_ARG` naming the bad entry.
 */
export function parseNetworkRules(network: { allow: readonly string[]; deny?: readonly string[] | null }, field: string): NetworkRules {
  if (!Array.isArray(network.allow)) throw invalidArg(`${field}.allow`, 'must be an array of host patterns');
  if (network.deny != null && !Array.isArray(network.deny)) throw invalidArg(`${field}.deny`, 'must be an array of host patterns');
  return {
    allow: network.allow.map((p, i) => parsePattern(p, `${field}.allow[${i}]`)),
    deny: (network.deny ?? []).map((p, i) => parsePattern(p, `${field}.deny[${i}]`)),
  };
}

/**
 * The network rules of a create's `sandbox` option (plain options or a `SandboxConfig`), or undefined when it
 * has no allow list. Throws `ERR_INVALID_ARG` naming the field.
 */
export function networkRulesOf(sandbox: unknown, field: string): NetworkRules | undefined {
  if (typeof sandbox !== 'object' || sandbox === null) return undefined;
  const network = (sandbox as { network?: unknown }).network;
  if (typeof network !== 'object' || network === null) return undefined;
  return parseNetworkRules(network as { allow: string[]; deny?: string[] }, `${field}.network`);
}

/** Whether `p` matches `host` (normalized: a canonical IP or a lower-case name) on `port`. */
function matches(p: HostPattern, host: string, isIp: boolean, port: number): boolean {
  if (p.port !== undefined && p.port !== port) return false;
  if (isIp) return p.kind === 'ip' && p.host === host;
  if (p.kind === 'exact') return p.host === host;
  return p.kind === 'wildcard' && host.endsWith(p.host);
}

/** Why (host, port) is refused by the lists, or undefined when it is allowed. */
function refusal(rules: NetworkRules, host: string, isIp: boolean, port: number): string | undefined {
  const denied = rules.deny.find((p) => matches(p, host, isIp, port));
  if (denied) return `denied by ${JSON.stringify(denied.text)}`;
  if (!rules.allow.some((p) => matches(p, host, isIp, port))) return 'not in the allow list';
  return undefined;
}

/** Whether `address` (canonical) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return isPublicAddress(mapped[1] ?? '');
  if (net.isIPv4(address)) {
    const [a = 0, b = 0] = address.split('.').map(Number);
    return !(
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  const first = parseInt(address.split(':')[0] || '0', 16);
  if (address === '::' || address === '::1') return false;
  if (address.startsWith('::ffff:') || address.startsWith('64:ff9b:')) return false;
  return !((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00 || first === 0);
}

/** The default resolver: every address `dns.lookup` gives (the system's resolver, /etc/hosts included). */
const lookupAll: HostResolver = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** What a request resolves to: the addresses to try, or why it is refused. */
async function decide(
  rules: NetworkRules,
  rawHost: string,
  port: number,
  resolve: HostResolver,
): Promise<{ host: string; addresses: string[] } | { host: string; refused: string }> {
  const stripped = rawHost.replace(/^\[(.*)\]$/, '$1');
  const ip = canonicalIp(stripped);
  if (ip !== undefined) {
    const why = refusal(rules, ip, true, port);
    return why ? { host: ip, refused: why } : { host: ip, addresses: [ip] };
  }
  const name = hostName(stripped);
  if (name === undefined) return { host: stripped.toLowerCase(), refused: 'not a valid host name' };
  const why = refusal(rules, name, false, port);
  if (why) return { host: name, refused: why };
  let resolved: string[];
  try {
    resolved = await resolve(name);
  } catch (error) {
    return { host: name, refused: `could not resolve: ${(error as { code?: string }).code ?? String(error)}` };
  }
  const usable = resolved
    .map((a) => canonicalIp(a))
    .filter((a): a is string => a !== undefined)
    .filter((a) => !rules.deny.some((p) => matches(p, a, true, port)))
    .filter((a) => isPublicAddress(a) || rules.allow.some((p) => matches(p, a, true, port)));
  if (usable.length === 0) {
    return {
      host: name,
      refused: `resolves to ${resolved.join(', ') || 'nothing'}: a non-public address must itself be allowed (an IP pattern)`,
    };
  }
  return { host: name, addresses: usable };
}

/** Connects to the first address that answers. */
function connectAny(addresses: string[], port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let i = 0;
    let lastError: Error = new Error('no address');
    const next = (): void => {
      const address = addresses[i++];
      if (address === undefined) {
        reject(lastError);
        return;
      }
      const s = net.connect({ host: address, port });
      const timer = setTimeout(() => s.destroy(Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (e) => {
        clearTimeout(timer);
        lastError = e;
        next();
      });
    };
    next();
  });
}

/** Options of `startNetworkProxy`. */
export interface NetworkProxyOptions {
  /** Receives every connection when it is over. */
  onConnection?: NetworkListener;
  /** Resolves names (default: `dns.lookup`, every address). */
  resolve?: HostResolver;
  /** Milliseconds to wait for a connection to a host (default 10000). */
  connectTimeoutMs?: number;
  /** Milliseconds a client may take for its handshake (default 30000). */
  handshakeTimeoutMs?: number;
  /** Connections served at once (default `MAX_PROXY_CONNECTIONS`). */
  maxConnections?: number;
}

/** A running proxy: `close()` stops it and ends every connection through it. */
export interface NetworkProxy {
  /** The server (listening on the sandbox's socket, or wherever the caller had it listen). */
  readonly server: net.Server;
  /** Stops accepting, closes the listening socket and every connection. Idempotent. */
  close(): void;
}

const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/** Largest HTTP request head the proxy reads (a longer one is answered 400). */
const MAX_HEAD = 16 * 1024;

/**
 * Most bytes the proxy holds for one connection before its tunnel is up (a request head and what came with it
 * in the same reads; reading is paused while the proxy connects); a client that sends more is closed.
 */
const MAX_HANDSHAKE_BUFFER = 128 * 1024;

/** Milliseconds a refused connection may stay open for its reply to be read. */
const LINGER_MS = 2000;

/**
 * Connections one proxy serves at once (each holds two of Node's descriptors); more are closed at once, so a
 * command cannot exhaust the host's descriptors through its proxy.
 */
export const MAX_PROXY_CONNECTIONS = 256;

/** Milliseconds a connection may take to finish its handshake (request head, SOCKS5 request). */
const HANDSHAKE_MS = 30_000;

/**
 * Starts the proxy on `listen` (`{ fd }`: the listening socket a sandboxed terminal's handle gave; or any
 * `net.Server.listen` argument, for tests). The server does not keep Node alive by itself.
 */
export function startNetworkProxy(listen: net.ListenOptions | { fd: number }, rules: NetworkRules, options: NetworkProxyOptions = {}): NetworkProxy {
  const sockets = new Set<net.Socket>();
  const resolve = options.resolve ?? lookupAll;
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const report = (event: NetworkConnectionEvent): void => {
    try {
      options.onConnection?.(event);
    } catch {
      // A failing audit sink must not break the command's connection.
    }
  };
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    client.setNoDelay(true);
    // Until the handshake is done (`splice` clears it).
    client.setTimeout(options.handshakeTimeoutMs ?? HANDSHAKE_MS, () => client.destroy());
    void serve(client).catch(() => client.destroy());
  });
  server.maxConnections = options.maxConnections ?? MAX_PROXY_CONNECTIONS;
  server.on('error', () => undefined);

  /** Splices `client` and `upstream` once the handshake is done; reports at the end. */
  const splice = (client: net.Socket, upstream: net.Socket, event: NetworkConnectionEvent, head: Buffer): void => {
    track(upstream);
    upstream.setNoDelay(true);
    client.setTimeout(0);
    let reported = false;
    const done = (): void => {
      if (reported) return;
      reported = true;
      client.destroy();
      upstream.destroy();
      report(event);
    };
    if (head.length > 0) {
      event.bytesSent += head.length;
      upstream.write(head);
    }
    client.on('data', (d: Buffer) => {
      event.bytesSent += d.length;
    });
    upstream.on('data', (d: Buffer) => {
      event.bytesReceived += d.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', done);
    upstream.once('close', done);
    client.resume();
  };

  /**
   * Decides `event`'s host and port by the rules and connects: the upstream socket, or undefined once
   * `refused` (the rule's reason) or `failed` (the connect error's code) has answered the command and
   * the event is reported. `event.host` becomes the name the decision was made on.
   */
  async function open(
    event: NetworkConnectionEvent,
    answer: { refused: (why: string) => void; failed: (code: string | undefined) => void },
  ): Promise<net.Socket | undefined> {
    const decided = await decide(rules, event.host, event.port, resolve);
    event.host = decided.host;
    if ('refused' in decided) {
      event.reason = decided.refused;
      answer.refused(decided.refused);
      return void report(event);
    }
    event.decision = 'allowed';
    try {
      const upstream = await connectAny(decided.addresses, event.port, timeoutMs);
      event.address = upstream.remoteAddress;
      return upstream;
    } catch (error) {
      const code = (error as { code?: string }).code;
      event.reason = `connect failed: ${code ?? String(error)}`;
      answer.failed(code);
      return void report(event);
    }
  }

  async function serve(client: net.Socket): Promise<void> {
    const reader = new Reader(client);
    const first = await reader.read(1, false);
    if (first === undefined) return void client.destroy();
    if (first[0] === 0x05) return socks5(client, reader);
    // An HTTP method starts with a capital letter; anything else (SOCKS4, TLS) is not spoken here.
    if ((first[0] ?? 0) < 0x41 || (first[0] ?? 0) > 0x5a) return void reader.refuse(BAD_REQUEST);
    return http(client, reader);
  }

  async function http(client: net.Socket, reader: Reader): Promise<void> {
    const head = await reader.until(Buffer.from('\r\n\r\n'), MAX_HEAD);
    if (head === undefined) return void reader.refuse(BAD_REQUEST);
    const text = head.toString('latin1');
    const lineEnd = text.indexOf('\r\n');
    const [method = '', target = '', version = ''] = text.slice(0, lineEnd).split(' ');
    let protocol: 'connect' | 'http';
    let host: string;
    let port: number;
    let path = '';
    if (method === 'CONNECT') {
      protocol = 'connect';
      const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target);
      if (!m) return void reader.refuse(BAD_REQUEST);
      host = m[1] ?? '';
      port = Number(m[2]);
    } else {
      protocol = 'http';
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return void reader.refuse(BAD_REQUEST);
      }
      if (url.protocol !== 'http:' || !/^HTTP\/1\.[01]$/.test(version)) {
        return void reader.refuse(BAD_REQUEST);
      }
      host = url.hostname;
      port = url.port === '' ? 80 : Number(url.port);
      path = `${url.pathname}${url.search}`;
    }
    const event: NetworkConnectionEvent = { protocol, host, port, decision: 'refused', bytesSent: 0, bytesReceived: 0 };
    const upstream = await open(event, {
      refused: (why) => {
        const body = `acp-terminal sandbox: ${event.host}:${port} is not allowed (${why})\n`;
        reader.refuse(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      },
      failed: () => reader.refuse('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
    });
    if (upstream === undefined) return;
    const rest = reader.rest();
    if (protocol === 'connect') {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      return splice(client, upstream, event, rest);
    }
    // One request per connection: a later request on it could name another host.
    const headers = text
      .slice(lineEnd + 2, -4)
      .split('\r\n')
      .filter((h) => h.length > 0 && !/^(proxy-connection|proxy-authorization|connection|keep-alive)\s*:/i.test(h));
    const rewritten = Buffer.from(`${method} ${path} ${version}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`, 'latin1');
    // The head is the command's bytes too.
    event.bytesSent += rewritten.length;
    upstream.write(rewritten);
    splice(client, upstream, event, rest);
  }

  async function socks5(client: net.Socket, reader: Reader): Promise<void> {
    const greeting = await reader.read(2);
    if (greeting === undefined) return void client.destroy();
    const methods = await reader.read(greeting[1] ?? 0);
    if (methods === undefined) return void client.destroy();
    if (!methods.includes(0x00)) return void reader.refuse(Buffer.from([0x05, 0xff]));
    client.write(Buffer.from([0x05, 0x00]));
    const req = await reader.read(4);
    if (req === undefined) return void client.destroy();
    const reply = (code: number): Buffer => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
    let host: string;
    if (req[3] === 0x01) {
      const a = await reader.read(4);
      if (a === undefined) return void client.destroy();
      host = [...a].join('.');
    } else if (req[3] === 0x04) {
      const a = await reader.read(16);
      if (a === undefined) return void client.destroy();
      host = (a.toString('hex').match(/.{4}/g) ?? []).join(':');
    } else if (req[3] === 0x03) {
      const len = await reader.read(1);
      const name = len && (await reader.read(len[0] ?? 0));
      if (!name) return void client.destroy();
      host = name.toString('latin1');
    } else {
      return void reader.refuse(reply(0x08)); // address type not supported
    }
    const portBytes = await reader.read(2);
    if (portBytes === undefined) return void client.destroy();
    const port = portBytes.readUInt16BE(0);
    if (req[0] !== 0x05 || req[1] !== 0x01) return void reader.refuse(reply(0x07)); // command not supported
    const event: NetworkConnectionEvent = { protocol: 'socks5', host, port, decision: 'refused', bytesSent: 0, bytesReceived: 0 };
    const upstream = await open(event, {
      refused: () => reader.refuse(reply(0x02)), // connection not allowed by ruleset
      failed: (code) => reader.refuse(reply(code === 'ECONNREFUSED' ? 0x05 : 0x04)),
    });
    if (upstream === undefined) return;
    client.write(reply(0x00));
    splice(client, upstream, event, reader.rest());
  }

  server.listen(listen as net.ListenOptions);
  server.unref();
  let closed = false;
  return {
    server,
    close(): void {
      if (closed) return;
      closed = true;
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * Reads a socket's handshake by byte count or up to a marker, then hands the unread rest over. It reads only
 * what a caller waits for: between reads the socket is paused (backpressure: while the proxy resolves and
 * connects, the client's bytes stay in the kernel's buffers and the client blocks), and it never holds more
 * than `MAX_HANDSHAKE_BUFFER` bytes (a client that sends more is closed). Each byte is copied once into a
 * buffer that grows by doubling.
 */
class Reader {
  private buf: Buffer = Buffer.alloc(0);
  /** The unread bytes are `buf[start, end)`. */
  private start = 0;
  private end = 0;
  private ended = false;
  private wake: (() => void) | undefined;
  private readonly detach: () => void;

  constructor(private readonly socket: net.Socket) {
    const onData = (d: Buffer): void => {
      const unread = this.end - this.start;
      if (unread + d.length > MAX_HANDSHAKE_BUFFER) {
        // More than any handshake needs: refused (the 'close' that follows ends the waiting read).
        socket.destroy();
        return;
      }
      if (this.end + d.length > this.buf.length) {
        // Earlier views (handed out by read/until) keep the old buffer: it is never written again.
        const grown = Buffer.allocUnsafe(Math.min(MAX_HANDSHAKE_BUFFER, Math.max(4096, 2 * (unread + d.length))));
        this.buf.copy(grown, 0, this.start, this.end);
        this.buf = grown;
        this.start = 0;
        this.end = unread;
      }
      d.copy(this.buf, this.end);
      this.end += d.length;
      const wake = this.wake;
      this.wake = undefined;
      if (wake) wake();
      else socket.pause();
    };
    const onEnd = (): void => {
      this.ended = true;
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    this.detach = (): void => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.pause();
    };
  }

  /** Waits for the next chunk (reading resumes until it comes); false at EOF. */
  private async more(): Promise<boolean> {
    if (this.ended) return false;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      this.socket.resume();
    });
    return true;
  }

  /** The next `n` bytes (`consume` false: peek), or undefined at EOF. */
  async read(n: number, consume = true): Promise<Buffer | undefined> {
    while (this.end - this.start < n) if (!(await this.more())) return undefined;
    const out = this.buf.subarray(this.start, this.start + n);
    if (consume) this.start += n;
    return out;
  }

  /** Everything up to and including `marker`, at most `max` bytes; undefined when longer or at EOF. */
  async until(marker: Buffer, max: number): Promise<Buffer | undefined> {
    let from = this.start;
    for (;;) {
      const at = this.buf.subarray(0, this.end).indexOf(marker, from);
      if (at >= 0) {
        const out = this.buf.subarray(this.start, at + marker.length);
        this.start = at + marker.length;
        return out;
      }
      if (this.end - this.start > max) return undefined;
      // Only the new bytes (and a marker's length before them) are searched again.
      const offset = this.end - this.start - (marker.length - 1);
      if (!(await this.more())) return undefined;
      from = this.start + Math.max(0, offset);
    }
  }

  /** Stops reading and returns what was read but not consumed; the socket is paused. */
  rest(): Buffer {
    this.detach();
    return this.buf.subarray(this.start, this.end);
  }

  /**
   * Refuses the connection: stops reading, sends `reply` and closes. What the client still sends is read
   * and dropped, up to `MAX_HANDSHAKE_BUFFER` bytes or `LINGER_MS`, then the socket is destroyed.
   */
  refuse(reply: string | Buffer): void {
    this.detach();
    const socket = this.socket;
    let dropped = 0;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.on('data', (d: Buffer) => {
      dropped += d.length;
      if (dropped > MAX_HANDSHAKE_BUFFER) socket.destroy();
    });
    socket.end(reply);
    socket.resume();
  }
}

/** What a create function needs of a handle to serve its proxy. */
interface ProxiedHandle {
  takeNetworkListener?(): number | null;
  release(): Promise<unknown>;
}

/** Closes the proxy of a handle that was dropped without `release()`. */
const dropped = new FinalizationRegistry<NetworkProxy>((proxy) => proxy.close());

/**
 * Wraps a native-shaped `createTerminal` so that `sandbox.network: { allow, deny }` works: the patterns are
 * checked before the create (`ERR_INVALID_ARG` naming the entry), and once the command runs, the proxy is served
 * on its namespace's listener until the terminal is released. `options.onNetwork` (not passed to `create`)
 * receives every connection. Other creates pass through unchanged.
 */
export function withNetworkProxy<P, O extends { sandbox?: unknown; onNetwork?: NetworkListener | null }, H extends ProxiedHandle>(
  create: (params: P, options?: Omit<O, 'onNetwork'> | null) => Promise<H>,
): (params: P, options?: O | null) => Promise<H> {
  return async (params, options) => {
    const rules = networkRulesOf(options?.sandbox, 'options.sandbox');
    if (options == null || (rules === undefined && !('onNetwork' in options))) return create(params, options);
    const { onNetwork, ...rest } = options;
    if (onNetwork != null && typeof onNetwork !== 'function') throw invalidArg('options.onNetwork', 'must be a function');
    const handle = await create(params, rest);
    if (rules === undefined) return handle;
    const fd = typeof handle.takeNetworkListener === 'function' ? handle.takeNetworkListener() : null;
    if (fd == null) {
      await handle.release().catch(() => undefined);
      throw new AcpTerminalError(
        'ERR_SANDBOX_UNAVAILABLE',
        "options.sandbox.network: the terminal's backend gave no network listener for the proxy (a backend or native core without it)",
        { field: 'options.sandbox.network' },
      );
    }
    const proxy = startNetworkProxy({ fd }, rules, onNetwork ? { onConnection: onNetwork } : {});
    dropped.register(handle, proxy, proxy);
    const release = handle.release.bind(handle);
    const releaseAndClose = async (): Promise<unknown> => {
      try {
        return await release();
      } finally {
        proxy.close();
        dropped.unregister(proxy);
      }
    };
    Object.defineProperty(handle, 'release', { value: releaseAndClose, configurable: true, writable: true });
    Object.defineProperty(handle, Symbol.asyncDispose, { value: releaseAndClose, configurable: true, writable: true });
    return handle;
  };
}
