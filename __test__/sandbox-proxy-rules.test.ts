// The sandbox's allow-list proxy alone (ts/network-proxy.ts), on a listener on 127.0.0.1 in this process
// (no sandbox needed): the pattern grammar and decisions, and a resolver that rebinds a public name to
// loopback (DNS rebinding), which needs the address allowed literally. Only 127.0.0.1 is ever contacted:
// names are answered by the test's resolver.
import * as http from 'node:http';
import * as net from 'node:net';

import { parseNetworkRules, startNetworkProxy, type NetworkConnectionEvent } from '../lib/network-proxy';

describe('the network proxy alone', () => {
  let registry: http.Server;
  let port = 0;
  beforeAll(async () => {
    registry = http.createServer((req, res) => res.end(`ok ${req.url}`));
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', () => r()));
    port = (registry.address() as net.AddressInfo).port;
  });
  afterAll(() => registry.close());

  /** A SOCKS5 CONNECT by name through the proxy: the reply code. */
  async function socksReply(proxyPort: number, host: string, p: number): Promise<number> {
    const s = net.connect(proxyPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.write(Buffer.from([5, 1, 0]));
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16BE(p);
    s.write(Buffer.concat([Buffer.from([5, 1, 0, 3, host.length]), Buffer.from(host), portBytes]));
    for (let i = 0; i < 100 && Buffer.concat(chunks).length < 12; i++) await new Promise((r) => setTimeout(r, 10));
    s.destroy();
    return Buffer.concat(chunks)[3] ?? -1;
  }

  async function withProxy<T>(allow: string[], resolve: (h: string) => Promise<string[]>, fn: (p: number, events: NetworkConnectionEvent[]) => Promise<T>): Promise<T> {
    const events: NetworkConnectionEvent[] = [];
    const proxy = startNetworkProxy({ host: '127.0.0.1', port: 0 }, parseNetworkRules({ allow }, 'network'), { resolve, onConnection: (e) => events.push(e) });
    await new Promise((r) => proxy.server.once('listening', r));
    try {
      return await fn((proxy.server.address() as net.AddressInfo).port, events);
    } finally {
      proxy.close();
    }
  }

  test('a public name that resolves to loopback (DNS rebinding) is refused unless the address is allowed literally', async () => {
    const rebinding = async () => ['127.0.0.1'];
    await withProxy([`*.example.com:${port}`], rebinding, async (p, events) => {
      expect(await socksReply(p, 'registry.example.com', port)).toBe(2);
      expect(events[0]).toMatchObject({ host: 'registry.example.com', decision: 'refused', reason: expect.stringMatching(/127\.0\.0\.1.*non-public/) });
    });
    await withProxy([`*.example.com:${port}`, `127.0.0.1:${port}`], rebinding, async (p, events) => {
      expect(await socksReply(p, 'registry.example.com', port)).toBe(0);
      await new Promise((r) => setTimeout(r, 50));
      expect(events[0]).toMatchObject({ host: 'registry.example.com', decision: 'allowed', address: '127.0.0.1' });
    });
  });

  test('patterns: exact, *.domain (not the domain itself), IP literals only by IP patterns, ports, deny wins', async () => {
    const loopback = async () => ['127.0.0.1'];
    const cases: [string[], string, number, number][] = [
      [['example.com', '127.0.0.1'], 'example.com', port, 0],
      [['example.com', '127.0.0.1'], 'EXAMPLE.com.', port, 0],
      [['example.com', '127.0.0.1'], 'www.example.com', port, 2],
      [['*.example.com', '127.0.0.1'], 'a.b.example.com', port, 0],
      [['*.example.com', '127.0.0.1'], 'example.com', port, 2],
      [['*.example.com', '127.0.0.1'], 'badexample.com', port, 2],
      [[`example.com:${port}`, '127.0.0.1'], 'example.com', port + 1, 2],
    ];
    for (const [allow, host, p, reply] of cases) {
      await withProxy(allow, loopback, async (proxyPort) => {
        expect([allow, host, await socksReply(proxyPort, host, p)]).toEqual([allow, host, reply]);
      });
    }
    // No name pattern covers an address.
    const rules = parseNetworkRules({ allow: ['*.0.0.1', 'localhost'] }, 'n');
    expect(rules.allow.map((r) => r.kind)).toEqual(['wildcard', 'exact']);
  });

  /** Opens a raw connection to the proxy, sends `bytes`, and resolves with what came back once it closed. */
  function exchange(proxyPort: number, bytes: Buffer | string, waitMs = 2000): Promise<{ data: Buffer; closed: boolean }> {
    return new Promise((resolve) => {
      const s = net.connect(proxyPort, '127.0.0.1');
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        s.destroy();
        resolve({ data: Buffer.concat(chunks), closed: false });
      }, waitMs);
      s.on('data', (d: Buffer) => chunks.push(d));
      s.on('error', () => undefined);
      s.on('close', () => {
        clearTimeout(timer);
        resolve({ data: Buffer.concat(chunks), closed: true });
      });
      if (bytes.length > 0) s.write(bytes);
    });
  }

  test('what the proxy does not speak is refused: SOCKS5 BIND, UDP ASSOCIATE, another first byte, an https:// request line', async () => {
    const none = async () => ['127.0.0.1'];
    await withProxy([`127.0.0.1:${port}`], none, async (p) => {
      const portBytes = Buffer.alloc(2);
      portBytes.writeUInt16BE(port);
      for (const cmd of [2, 3]) {
        const r = await exchange(p, Buffer.concat([Buffer.from([5, 1, 0, 5, cmd, 0, 1, 127, 0, 0, 1]), portBytes]));
        expect([cmd, r.data[3], r.closed]).toEqual([cmd, 7, true]);
      }
      expect((await exchange(p, Buffer.from([4, 1, 0, 80, 127, 0, 0, 1, 0]))).data.toString()).toMatch(/^HTTP\/1\.1 400 /);
      expect((await exchange(p, `GET https://127.0.0.1:${port}/ HTTP/1.1\r\n\r\n`)).data.toString()).toMatch(/^HTTP\/1\.1 400 /);
      // CONNECT and absolute-form through the proxy alone, allowed and refused.
      expect((await exchange(p, `GET http://127.0.0.1:${port}/abs HTTP/1.1\r\nHost: x\r\n\r\n`)).data.toString()).toMatch(/ok \/abs$/);
      expect((await exchange(p, `CONNECT 127.0.0.1:${port + 1} HTTP/1.1\r\n\r\n`)).data.toString()).toMatch(/^HTTP\/1\.1 403 /);
    });
  });

  /** Samples the event loop's lateness and the process's RSS until `stop()`: the worst of each. */
  function monitor(): { stop: () => { maxLagMs: number; rssGrowth: number } } {
    const rss0 = process.memoryUsage().rss;
    let rssMax = rss0;
    let maxLagMs = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      const now = Date.now();
      maxLagMs = Math.max(maxLagMs, now - last - 20);
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
      last = now;
    }, 20);
    return {
      stop: () => {
        clearInterval(timer);
        return { maxLagMs, rssGrowth: rssMax - rss0 };
      },
    };
  }

  /** Writes 1 MiB chunks to `s` as fast as it drains, for `ms` or `max` bytes; resolves with the bytes written. */
  function flood(s: net.Socket, ms: number, max: number): Promise<number> {
    const chunk = Buffer.alloc(1 << 20, 0x41);
    const t0 = Date.now();
    let sent = 0;
    return new Promise((resolve) => {
      // A socket the proxy closed (or that stays blocked past `ms`) ends the flood too.
      const stop = setTimeout(() => resolve(sent), ms + 500);
      s.once('close', () => {
        clearTimeout(stop);
        resolve(sent);
      });
      const pump = (): void => {
        while (Date.now() - t0 < ms && sent < max && !s.destroyed) {
          sent += chunk.length;
          if (!s.write(chunk)) return void s.once('drain', pump);
        }
        clearTimeout(stop);
        resolve(sent);
      };
      pump();
    });
  }

  test.each([
    ['HTTP CONNECT', (p: number) => Buffer.from(`CONNECT slow.example:${p} HTTP/1.1\r\nHost: x\r\n\r\n`)],
    ['SOCKS5', (p: number) => Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, 12]), Buffer.from('slow.example'), Buffer.from([p >> 8, p & 0xff])])],
  ])('%s: while the upstream hangs, a client streaming megabytes is held back (bounded reads, memory and event-loop lag), then every byte arrives', async (_name, request) => {
    let sunk = 0;
    const sink = net.createServer((s) => s.on('data', (d: Buffer) => (sunk += d.length)));
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
    const sinkPort = (sink.address() as net.AddressInfo).port;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The name resolves only when the test says so: until then the proxy is connecting.
    const hanging = async (): Promise<string[]> => {
      await gate;
      return ['127.0.0.1'];
    };
    const events: NetworkConnectionEvent[] = [];
    const rules = parseNetworkRules({ allow: [`slow.example:${sinkPort}`, `127.0.0.1:${sinkPort}`] }, 'network');
    const proxy = startNetworkProxy({ host: '127.0.0.1', port: 0 }, rules, { resolve: hanging, onConnection: (e) => events.push(e) });
    const accepted: net.Socket[] = [];
    proxy.server.on('connection', (s: net.Socket) => accepted.push(s));
    await new Promise((r) => proxy.server.once('listening', r));
    const client = net.connect((proxy.server.address() as net.AddressInfo).port, '127.0.0.1');
    client.on('error', () => undefined);
    const replies: Buffer[] = [];
    client.on('data', (d: Buffer) => replies.push(d));
    try {
      await new Promise((r) => client.once('connect', r));
      const head = request(sinkPort);
      client.write(head);
      const load = monitor();
      const sent = await flood(client, 2000, 512 << 20);
      const { maxLagMs, rssGrowth } = load.stop();
      // The proxy read the request and at most a bounded handshake buffer (plus the socket's own read-ahead),
      // not the client's megabytes: they wait in the kernel, and the client's writes block.
      const readByProxy = accepted[0]?.bytesRead ?? -1;
      expect({ readByProxy: readByProxy <= 1 << 20, rssGrowth: rssGrowth < 128 << 20, maxLagMs: maxLagMs < 1000 }).toEqual({
        readByProxy: true,
        rssGrowth: true,
        maxLagMs: true,
      });
      expect(readByProxy).toBeGreaterThanOrEqual(head.length);
      // Once the name resolves, the tunnel comes up and every byte the client wrote reaches the host, once.
      release();
      client.end();
      for (let i = 0; i < 1000 && (sunk < sent || events.length === 0); i++) await new Promise((r) => setTimeout(r, 20));
      expect(sunk).toBe(sent);
      expect(events).toEqual([expect.objectContaining({ host: 'slow.example', decision: 'allowed', address: '127.0.0.1', bytesSent: sent })]);
    } finally {
      release();
      client.destroy();
      proxy.close();
      sink.close();
    }
  });

  test('a request head without an end, streamed by the megabyte, is refused at the cap and the connection closed', async () => {
    const proxy = startNetworkProxy({ host: '127.0.0.1', port: 0 }, parseNetworkRules({ allow: [`127.0.0.1:${port}`] }, 'network'));
    const accepted: net.Socket[] = [];
    proxy.server.on('connection', (s: net.Socket) => accepted.push(s));
    await new Promise((r) => proxy.server.once('listening', r));
    const client = net.connect((proxy.server.address() as net.AddressInfo).port, '127.0.0.1');
    client.on('error', () => undefined);
    const replies: Buffer[] = [];
    client.on('data', (d: Buffer) => replies.push(d));
    let closed = false;
    client.on('close', () => (closed = true));
    try {
      await new Promise((r) => client.once('connect', r));
      client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nX-Filler: `);
      const load = monitor();
      await flood(client, 3000, 512 << 20);
      const { maxLagMs, rssGrowth } = load.stop();
      for (let i = 0; i < 250 && !closed; i++) await new Promise((r) => setTimeout(r, 20));
      const readByProxy = accepted[0]?.bytesRead ?? -1;
      expect({ closed, readByProxy: readByProxy <= 1 << 20, rssGrowth: rssGrowth < 128 << 20, maxLagMs: maxLagMs < 1000 }).toEqual({
        closed: true,
        readByProxy: true,
        rssGrowth: true,
        maxLagMs: true,
      });
      expect(readByProxy).toBeGreaterThan(16 * 1024);
    } finally {
      client.destroy();
      proxy.close();
    }
  });

  test('a client that never finishes its handshake is closed, and connections beyond the cap are closed at once', async () => {
    const events: NetworkConnectionEvent[] = [];
    const rules = parseNetworkRules({ allow: [`127.0.0.1:${port}`] }, 'network');
    const proxy = startNetworkProxy({ host: '127.0.0.1', port: 0 }, rules, { onConnection: (e) => events.push(e), handshakeTimeoutMs: 200, maxConnections: 3 });
    await new Promise((r) => proxy.server.once('listening', r));
    const p = (proxy.server.address() as net.AddressInfo).port;
    try {
      // Half a request head, then silence: closed by the proxy after the handshake timeout.
      expect((await exchange(p, 'CONNECT 127.0.0.1', 3000)).closed).toBe(true);
      // Three idle clients fill the cap; a fourth is closed at once.
      const idle = [0, 1, 2].map(() => net.connect(p, '127.0.0.1'));
      await Promise.all(idle.map((s) => new Promise((r) => s.once('connect', r))));
      await new Promise((r) => setTimeout(r, 50));
      const fourth = await exchange(p, Buffer.from([5, 1, 0]), 150);
      expect(fourth).toEqual({ data: Buffer.alloc(0), closed: true });
      idle.forEach((s) => s.destroy());
    } finally {
      proxy.close();
    }
  });
});
