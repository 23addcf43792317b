/**
 * `acp-terminal mcp --sandbox --network-allow HOST`: the allow list holds for `terminal_execute`'s
 * sessions as for `run`, also when `--limit` gives the sessions their own create (which once took the
 * bare native one, without the proxy), and `--audit` records the sessions' connections as it records
 * the terminals'. The allowed server and the refused one both listen on 127.0.0.1.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { containmentInfo } from '../ts/index';
import { connect, structured } from './fixtures/mcp-client';
import { describeIf } from './fixtures/require-feature';

const sandbox = containmentInfo().sandbox;
// Not under /tmp, which the sandbox replaces with its own.
const tmp = fs.mkdtempSync('/var/tmp/mcp-net-');
const servers: http.Server[] = [];

async function serve(body: string): Promise<number> {
  const server = http.createServer((_req, res) => res.end(body));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  fs.rmSync(tmp, { recursive: true, force: true });
});

describeIf('sandbox', sandbox.available, `no OS sandbox: ${sandbox.reasons.join('; ')}`)('mcp --sandbox --network-allow', () => {
  test.each([
    ['without --limit', []],
    ['with --limit (the sessions get their own create)', ['--limit', 'processes=64']],
  ])('%s: run and terminal_execute reach the allowed server only, and --audit records both', async (_name, extra) => {
    const allowed = await serve('allowed-ok');
    const refused = await serve('refused-reached');
    const audit = path.join(tmp, `audit-${extra.length}.jsonl`);
    const flags = ['--cwd', tmp, '--sandbox', '--network-allow', `127.0.0.1:${allowed}`, '--audit', audit, ...extra];
    const server = await connect('modern', flags);
    try {
      const curl = (port: number) => `curl -s -m 5 http://127.0.0.1:${port}/ ; echo " rc=$?"`;
      const run = structured(await server.client.callTool({ name: 'run', arguments: { command: curl(allowed) } }));
      expect(run.output).toBe('allowed-ok rc=0\n');
      const session = structured(await server.client.callTool({ name: 'terminal_execute', arguments: { command: curl(allowed) } }));
      expect(session.content).toContain('allowed-ok rc=0');
      const blocked = structured(await server.client.callTool({ name: 'terminal_execute', arguments: { command: curl(refused) } }));
      expect(blocked.content).not.toContain('refused-reached');
      expect(blocked.content).toMatch(/acp-terminal sandbox: 127\.0\.0\.1:\d+ is not allowed/);
    } finally {
      await server.close();
    }
    const events = fs
      .readFileSync(audit, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; terminalId?: string; host?: string; port?: number; allowed?: boolean; decision?: string });
    const network = events.filter((e) => e.type === 'network');
    // One connection from `run`'s terminal, two from the session (allowed, refused): all in the audit.
    const seen = network.map((e) => `${e.port} ${e.decision}`).sort();
    expect(seen).toEqual([`${allowed} allowed`, `${allowed} allowed`, `${refused} refused`].sort());
    const terminals = new Set(network.map((e) => e.terminalId));
    expect(terminals.size).toBe(2);
  });
});
