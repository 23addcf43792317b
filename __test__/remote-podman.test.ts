/**
 * Terminals in a podman container (rootful, runc, a busybox image built here: no registry) through
 * `podman exec -i`: the server installed through the transport, the acceptance behaviour, and the
 * faults: the transport killed mid-flood, the container stopped with terminals running.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

import * as backends from '../ts/backends';
import { acceptance } from './fixtures/remote-acceptance';
import { containerPids, hasPodman, podmanEnv, removeContainer, startContainer, STATIC_SERVER, until } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const ready = hasPodman && fs.existsSync(STATIC_SERVER);
const why = !hasPodman
  ? 'needs root with podman, runc and busybox-static (bash scripts/remote/setup.sh)'
  : `${STATIC_SERVER} is missing (bash scripts/remote/build-server.sh musl)`;

function inContainer(name: string, script: string, input?: string): { status: number | null; out: string } {
  const r = spawnSync('podman', ['exec', '-i', name, 'sh', '-c', script], { env: podmanEnv(), input: input ?? '' });
  return { status: r.status, out: r.stdout.toString() };
}

describeIf('podman', ready, why)('podman exec', () => {
  const name = `acp-rt-${process.pid}`;
  let backend: backends.Backend;
  beforeAll(() => {
    startContainer(name);
    backend = backends.podman(name, { serverBinary: STATIC_SERVER, env: podmanEnv() });
  });
  afterAll(async () => {
    await backend?.close();
    removeContainer(name);
  });

  test('the first connection installs the server at its versioned path', async () => {
    expect(inContainer(name, `test -e ${backend.serverPath}`).status).not.toBe(0);
    const t = await backend.createTerminal({ command: 'echo in-container; cat /proc/1/cmdline' });
    await t.waitForExit();
    expect((await t.currentOutput()).output).toBe('in-container\n/bin/sleep\0infinity\0');
    await t.release();
    expect(inContainer(name, `test -x ${backend.serverPath}`).status).toBe(0);
  });

  test('a server of another version at the path is replaced', async () => {
    const other = backends.podman(name, { serverBinary: STATIC_SERVER, env: podmanEnv(), serverPath: '/tmp/acp-other/server' });
    const fake = `#!/bin/sh\nprintf '\\036ACP-TERMINAL-SERVER/1 0.0.0-old\\n'; sleep 5\n`;
    expect(inContainer(name, 'mkdir -p /tmp/acp-other && cat > /tmp/acp-other/server && chmod +x /tmp/acp-other/server', fake).status).toBe(0);
    const t = await other.createTerminal({ command: 'echo ok' });
    await t.waitForExit();
    expect((await t.currentOutput()).output).toBe('ok\n');
    await other.close();
    expect(inContainer(name, 'cmp -s /tmp/acp-other/server ' + other.serverPath).status).toBe(0);
    expect(inContainer(name, '/tmp/acp-other/server --version').out).toMatch(new RegExp('^' + String.fromCharCode(0x1e) + 'ACP-TERMINAL-SERVER/2 '));
  });

  describe('acceptance', () => {
    acceptance(() => backend, '/tmp');
  });

  test('the transport killed mid-flood without a grace: calls reject with ERR_BACKEND_LOST, nothing is left in the container', async () => {
    const b = backends.podman(name, { serverBinary: STATIC_SERVER, env: podmanEnv(), reconnectGraceMs: 0 });
    const t = await b.createTerminal({ command: 'yes flood' });
    const sleeper = await b.createTerminal({ command: "trap '' TERM; sleep 1000" });
    let got = 0;
    t.onOutput((c) => (got += c.length));
    await until(() => got > 10_000_000);
    const wait = t.waitForExit();
    const transport = (await b.transportPid())!;
    const server = inContainer(name, 'pidof acp-terminal-server-0.1.0-* 2>/dev/null; for p in /proc/[0-9]*; do grep -l acp-terminal-server $p/cmdline 2>/dev/null; done').out;
    expect(server).not.toBe('');
    process.kill(transport, 'SIGKILL');
    await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    await expect(sleeper.kill()).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    expect(await until(() => !containerPids(name).some((p) => p === t.pid || p === sleeper.pid))).toBe(true);
    await b.close();
  });

  test('the container stopped with terminals running: waits reject, the next create cannot connect', async () => {
    const other = `acp-rt-stop-${process.pid}`;
    startContainer(other);
    try {
      const b = backends.podman(other, { serverBinary: STATIC_SERVER, env: podmanEnv(), handshakeTimeoutMs: 20000, reconnectGraceMs: 2000 });
      const ts = await Promise.all([1, 2, 3].map(() => b.createTerminal({ command: 'sleep 1000' })));
      const waits = ts.map((t) => t.waitForExit());
      spawnSync('podman', ['stop', '-t', '0', other], { env: podmanEnv() });
      for (const w of waits) await expect(w).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
      await expect(b.createTerminal({ command: 'true' })).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
      await b.close();
    } finally {
      removeContainer(other);
    }
  });
});
