// The sandbox's network allow list (issue 26): `sandbox.network: { allow, deny }` runs the command in a
// network namespace whose only way out is the host's proxy (HTTP CONNECT, absolute-form HTTP, SOCKS5 with
// names resolved by the proxy). Driven from a host Node process of its own (fixtures/sandbox-proxy-outer.js)
// as root and, through setpriv, as nobody: an allowed "registry" and a refused server, both on 127.0.0.1,
// reached (or not) from curl and Node inside. No other address is ever contacted. Then the listener's
// lifetime and the option's validation. The proxy alone: sandbox-proxy-rules.test.ts.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { containmentInfo, createTerminal, sandboxConfig, TerminalHost, type NetworkConnectionEvent } from '../lib';
import { hostOptionsFrom, parseArgs } from '../lib/mcp-cli';
import { packageRootForOthers, removePackageCopy, ROOT } from './core/helpers';
import { testIf } from './fixtures/require-feature';

afterAll(removePackageCopy);

const info = containmentInfo().sandbox;
const isRoot = process.getuid?.() === 0;
const NOBODY = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];
const it = testIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`);
const asRoot = testIf('root', isRoot, 'not root: cannot drop to nobody with setpriv');

interface Outer {
  error?: { code: string; message: string };
  uid: number;
  out: Record<string, string>;
  registryHits: string[];
  refusedHits: string[];
  events: (NetworkConnectionEvent & { case: string })[];
  audit: (NetworkConnectionEvent & { type: string; terminalId: string; sessionId: string })[];
  fds: { before: number; after: number };
}

function runOuter(prefix: string[] = [], env: Record<string, string> = {}): Outer {
  const pkg = prefix.length ? packageRootForOthers() : ROOT;
  const argv = [...prefix, process.execPath, path.join(pkg, '__test__', 'fixtures', 'sandbox-proxy-outer.js'), pkg];
  const r = spawnSync(argv[0]!, argv.slice(1), {
    cwd: '/',
    encoding: 'utf8',
    timeout: 120000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  });
  const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`the fixture printed no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line) as Outer;
}

/** Everything the allow list promises, as seen from inside and from the host. */
function expectProxied(o: Outer): void {
  expect(o.error).toBeUndefined();
  const { out } = o;
  // The proxy variables replace the request's, and NO_PROXY is gone.
  expect(out.env!.split('\n')).toEqual([
    'ALL_PROXY=socks5h://127.0.0.1:3128',
    'HTTPS_PROXY=http://127.0.0.1:3128',
    'HTTP_PROXY=http://127.0.0.1:3128',
    'all_proxy=socks5h://127.0.0.1:3128',
    'http_proxy=http://127.0.0.1:3128',
    'https_proxy=http://127.0.0.1:3128',
  ]);
  // Allowed: absolute-form HTTP, CONNECT, SOCKS5 with a name (resolved by the proxy) and with an address.
  expect(out.http).toBe('registry-ok /via-http');
  expect(out.connect).toBe('registry-ok /via-connect');
  expect(JSON.parse(out.socks5Name!)).toEqual({ reply: 0, body: 'registry-ok /via-socks-name\n' });
  expect(JSON.parse(out.socks5Ip!)).toEqual({ reply: 0, body: 'registry-ok /via-socks-ip\n' });
  // Refused: 403 for HTTP and CONNECT, SOCKS5 reply 2 (not allowed by ruleset); deny wins over allow.
  expect(out.refusedHttp).toBe('403 rc=0');
  expect(out.refusedConnect).toMatch(/CONNECT.*403.* rc=56$/s);
  expect(JSON.parse(out.refusedSocks5!)).toEqual({ reply: 2 });
  expect(JSON.parse(out.deniedName!)).toEqual({ reply: 2 });
  // A public name is not needed to refuse a private address: an allowed name alone does not reach loopback.
  expect(JSON.parse(out.rebind!)).toEqual({ reply: 2 });
  // Without the proxy nothing leaves the namespace: the host's 127.0.0.1 is not the namespace's.
  expect(out.directCurl).toMatch(/rc=7$/);
  expect(JSON.parse(out.directNode!).error).toMatch(/^(ECONNREFUSED|EACCES|EPERM)$/);
  // A host service behind a pathname unix socket: reachable with network: true (the attack), not behind the
  // proxy (no unix socket can be made there, so connect's opening to IP is not one to the host's sockets).
  expect(JSON.parse(out.unixSocketNetworkTrue!)).toEqual({ connected: true });
  expect(JSON.parse(out.unixSocket!)).toEqual({ error: 'EPERM' });
  expect(out.unixHits).toBe('1');
  // The servers saw exactly the allowed requests.
  expect(o.registryHits.sort()).toEqual(['/warm-up', '/via-connect', '/via-host', '/via-http', '/via-shell', '/via-socks-ip', '/via-socks-name'].sort());
  expect(o.refusedHits).toEqual([]);
  // Every connection reported, allowed or refused, with its bytes.
  const ev = (c: string) => o.events.filter((e) => e.case === c);
  expect(ev('http')).toEqual([
    expect.objectContaining({ protocol: 'http', host: '127.0.0.1', decision: 'allowed', address: '127.0.0.1' }),
  ]);
  expect(ev('http')[0]!.bytesSent).toBeGreaterThan(0);
  expect(ev('http')[0]!.bytesReceived).toBeGreaterThan(20);
  expect(ev('connect')).toEqual([expect.objectContaining({ protocol: 'connect', host: '127.0.0.1', decision: 'allowed' })]);
  expect(ev('socks5Name')).toEqual([expect.objectContaining({ protocol: 'socks5', host: 'localhost', decision: 'allowed', address: '127.0.0.1' })]);
  expect(ev('refusedHttp')).toEqual([
    expect.objectContaining({ protocol: 'http', host: '127.0.0.1', decision: 'refused', reason: 'not in the allow list', bytesSent: 0, bytesReceived: 0 }),
  ]);
  expect(ev('refusedConnect')).toEqual([expect.objectContaining({ protocol: 'connect', decision: 'refused' })]);
  expect(ev('refusedSocks5')).toEqual([expect.objectContaining({ protocol: 'socks5', decision: 'refused' })]);
  expect(ev('deniedName')).toEqual([expect.objectContaining({ host: 'denied.example', decision: 'refused', reason: 'denied by "denied.example"' })]);
  expect(ev('rebind')).toEqual([expect.objectContaining({ host: 'localhost', decision: 'refused', reason: expect.stringMatching(/non-public/) })]);
  expect(ev('directCurl')).toEqual([]);
  // TerminalHost: both in its audit stream, with the terminal's id.
  expect(o.audit).toEqual([
    expect.objectContaining({ type: 'network', sessionId: 's', terminalId: expect.any(String), protocol: 'http', decision: 'allowed' }),
    expect.objectContaining({ type: 'network', sessionId: 's', terminalId: expect.any(String), protocol: 'http', decision: 'refused' }),
  ]);
  expect(o.out.hostAllowed).toBe('registry-ok /via-host');
  expect(o.out.hostRefused).toBe('403');
  expect(o.out.shell).toContain('registry-ok /via-shell');
  // No descriptor left behind by a dozen proxied terminals.
  expect(o.fds.after).toBeLessThanOrEqual(o.fds.before);
}

describe('sandbox.network allow list through the host proxy', () => {
  it('as root (or the current user)', () => {
    const o = runOuter();
    expectProxied(o);
    if (info.landlockAbi >= 4) expect(JSON.parse(o.out.directNode!).error).toBe('EACCES');
  });

  // Landlock (ABI >= 4) refuses a TCP connect to any port but the proxy's (EACCES above); capped at ABI 3, the
  // network namespace alone keeps the command in: the host's 127.0.0.1 is not there (ECONNREFUSED).
  it('with Landlock capped at ABI 3 (no TCP rules): the namespace alone keeps a direct connect in', () => {
    const o = runOuter([], { ACP_TERMINAL_LANDLOCK_ABI: '3' });
    expectProxied(o);
    expect(JSON.parse(o.out.directNode!).error).toBe('ECONNREFUSED');
  });

  asRoot('as nobody (the namespaces inside a user namespace)', () => {
    const o = runOuter(NOBODY);
    expect(o.uid).toBe(65534);
    expectProxied(o);
  });

  it('release closes the listener: no descriptor stays, and the proxy stops', async () => {
    const fds = () => fs.readdirSync('/proc/self/fd').length;
    const sandbox = { writableRoots: [], network: { allow: ['127.0.0.1:1'] } };
    // Warm up (the first create loads and compiles what later ones share).
    await (await createTerminal({ command: 'true', cwd: '/' }, { sandbox })).release();
    const before = fds();
    for (let i = 0; i < 10; i++) {
      const t = await createTerminal({ command: 'true', cwd: '/' }, { sandbox });
      await t.waitForExit();
      await t.release();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(fds()).toBeLessThanOrEqual(before);
  });

  it('bad patterns are ERR_INVALID_ARG naming the entry, at create and at TerminalHost construction', async () => {
    const bad: [unknown, string][] = [
      [{ allow: ['*'] }, 'options.sandbox.network.allow[0]'],
      [{ allow: ['ok.example', 'a b'] }, 'options.sandbox.network.allow[1]'],
      [{ allow: [], deny: ['host:99999'] }, 'options.sandbox.network.deny[0]'],
      [{ allow: ['[notv6]'] }, 'options.sandbox.network.allow[0]'],
      [{ allow: 'x' }, 'options.sandbox.network.allow'],
      [{ allow: [], extra: 1 }, 'options.sandbox.network.extra'],
    ];
    for (const [network, field] of bad) {
      const sandbox = { writableRoots: [], network } as never;
      await expect(createTerminal({ command: 'true', cwd: '/' }, { sandbox })).rejects.toMatchObject({
        code: 'ERR_INVALID_ARG',
        message: expect.stringContaining(field),
      });
      expect(() => new TerminalHost({ sandbox })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
      expect(() => sandboxConfig(sandbox, 'options.sandbox')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining(field) }));
    }
    // A SandboxConfig keeps the lists, and a create with it serves them.
    const config = sandboxConfig({ writableRoots: [], network: { allow: ['a.example', '*.b.example:443'], deny: ['x.b.example'] } });
    expect(config.network).toEqual({ allow: ['a.example', '*.b.example:443'], deny: ['x.b.example'] });
    expect(sandboxConfig({ writableRoots: [], network: true }).network).toBe(true);
    expect(sandboxConfig({ writableRoots: [] }).network).toBe(false);
  });

  it('acp-terminal mcp --sandbox --network-allow HOST: the host gets the allow list (refused without --sandbox or with --network)', () => {
    const { host } = hostOptionsFrom(parseArgs(['--sandbox', '--network-allow', 'registry.npmjs.org', '--network-allow', '*.example.com:443']).config);
    expect(host.sandbox).toEqual({ writableRoots: [], network: { allow: ['registry.npmjs.org', '*.example.com:443'] } });
    expect(() => hostOptionsFrom(parseArgs(['--network-allow', 'x.example']).config)).toThrow(/--network-allow: only means something with --sandbox/);
    expect(() => hostOptionsFrom(parseArgs(['--sandbox', '--network', '--network-allow', 'x.example']).config)).toThrow(/not with --network/);
  });
});
