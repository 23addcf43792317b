// ShellSessions' sandbox is configured once, at construction: its writable roots are pinned then (a
// root's path redirected afterwards is not followed by a later session), and with
// `sandbox.network: { allow }` every connection through a session's proxy reaches `onNetwork`, as
// TerminalHost's `network` audit events. Servers bind 127.0.0.1 only; nothing else is contacted.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { ShellSessions, type ShellSessionsNetworkEvent } from '../ts/sessions';
import { eventually } from './core/helpers';
import { testIf } from './fixtures/require-feature';

const native = require('../index.js') as { containmentInfo(): { sandbox: { available: boolean; reasons: string[] } } };
const info = native.containmentInfo().sandbox;
const it = testIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`);

let base: string;
let shells: ShellSessions | undefined;

beforeEach(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-sandbox-config-')));
});

afterEach(async () => {
  await shells?.closeAll();
  shells = undefined;
  fs.rmSync(base, { recursive: true, force: true });
});

it('a writable root redirected after construction is not followed by a later session', async () => {
  // A root nested in another ([W, W/cache]): the agent may relink W/cache from inside W.
  const w = path.join(base, 'w');
  const cache = path.join(w, 'cache');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(cache, { recursive: true });
  fs.mkdirSync(outside);
  shells = new ShellSessions({ cwd: '/', sandbox: { writableRoots: [w, cache] } });
  fs.renameSync(cache, `${cache}-old`);
  fs.symlinkSync(outside, cache);
  const r = await shells.execute({ command: `touch '${cache}/x' 2>/dev/null; echo $?` });
  expect(r).toMatchObject({ status: 'completed', exitCode: 0 });
  // Pinned: W (with the cache merged into it) is bound; the symlink leads nowhere inside.
  expect(r.content).not.toBe('0');
  expect(fs.readdirSync(outside)).toEqual([]);
});

it('a bad sandbox is refused at construction, naming the field', () => {
  expect(() => new ShellSessions({ sandbox: { writableRoots: ['relative'] } })).toThrow(/options\.sandbox/);
  expect(() => new ShellSessions({ onNetwork: 'x' as never })).toThrow(/^options\.onNetwork:/);
});

it('network: { allow }: allowed and refused connections reach onNetwork (and onNetwork()), with the session id', async () => {
  const serve = (name: string): Promise<http.Server> =>
    new Promise((resolve) => {
      const server = http.createServer((req, res) => res.end(`${name} ${req.url}\n`));
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
  const registry = await serve('registry-ok');
  const refused = await serve('refused-server');
  const hits: string[] = [];
  refused.on('request', (req: http.IncomingMessage) => hits.push(req.url ?? ''));
  try {
    const allowedPort = (registry.address() as AddressInfo).port;
    const refusedPort = (refused.address() as AddressInfo).port;
    const fromOption: ShellSessionsNetworkEvent[] = [];
    const fromMethod: ShellSessionsNetworkEvent[] = [];
    shells = new ShellSessions({
      cwd: base,
      sandbox: { writableRoots: [base], network: { allow: [`127.0.0.1:${allowedPort}`] } },
      onNetwork: (e) => fromOption.push(e),
    });
    const off = shells.onNetwork((e) => fromMethod.push(e));
    const curl = (port: number, p: string): string => `curl -s -o - -w ' %{http_code}' http://127.0.0.1:${port}${p}`;
    const r = await shells.execute({ command: `${curl(allowedPort, '/ok')}; echo; ${curl(refusedPort, '/no')}`, terminalId: 'npm' });
    expect(r).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(r.content.split('\n')[0]).toBe('registry-ok /ok');
    expect(r.content).toMatch(/ 403$/);
    expect(hits).toEqual([]);
    await eventually(() => fromOption.length === 2, 'both connections reported');
    const shape = (e: ShellSessionsNetworkEvent) => ({ type: e.type, terminalId: e.terminalId, protocol: e.protocol, host: e.host, port: e.port, decision: e.decision });
    const want = [
      { type: 'network', terminalId: 'npm', protocol: 'http', host: '127.0.0.1', port: allowedPort, decision: 'allowed' },
      { type: 'network', terminalId: 'npm', protocol: 'http', host: '127.0.0.1', port: refusedPort, decision: 'refused' },
    ];
    const byPort = (a: { port: number }, b: { port: number }) => (a.port === allowedPort ? -1 : b.port === allowedPort ? 1 : 0);
    expect(fromOption.map(shape).sort(byPort)).toEqual(want);
    expect(fromMethod.map(shape).sort(byPort)).toEqual(want);
    expect(fromOption.every((e) => typeof e.time === 'number')).toBe(true);
    expect(fromOption.find((e) => e.decision === 'refused')!.reason).toBeTruthy();
    off();
    await shells.execute({ command: `${curl(refusedPort, '/again')}`, terminalId: 'npm' });
    await eventually(() => fromOption.length === 3, 'the third connection reported');
    expect(fromMethod).toHaveLength(2);
  } finally {
    registry.close();
    refused.close();
  }
});
