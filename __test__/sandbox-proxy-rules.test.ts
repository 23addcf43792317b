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
});
