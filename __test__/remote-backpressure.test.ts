/**
 * Backpressure bounded on both sides: a 1 GiB flood through a backend whose near side reads slowly (a
 * listener that holds the event loop) or not at all (no listener). The far-end server's peak RSS
 * (VmHWM) and this process's RSS growth stay under the bounds docs/remote.md states, and every byte is
 * delivered or counted as dropped. Through the server run directly (the generic argv backend), podman
 * exec and ssh (when this machine has them: bash scripts/remote/setup.sh).
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

import * as backends from '../ts/backends';
import { hasPodman, hasSshd, HOST_SERVER, podmanEnv, removeContainer, startContainer, startSshd, STATIC_SERVER, type Sshd } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const MiB = 1 << 20;
const FLOOD = 1 << 30;
/** The far-end server's peak RSS under the flood (docs/remote.md, "Backpressure"). */
const SERVER_BOUND = 64 * MiB;
/** This process's RSS growth under the flood (docs/remote.md, "Backpressure"). */
const NODE_BOUND = 96 * MiB;

const kib = (status: string, key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) * 1024;

/** Floods through `b`; `status(pid)` reads the server's /proc status at the far end. */
async function flood(b: backends.Backend, status: (pid: number) => string, read: 'slowly' | 'not at all'): Promise<void> {
  const warm = await b.createTerminal({ command: 'true' });
  await warm.waitForExit();
  await warm.release();
  const server = (await b.connection()).serverPid!;
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  let got = 0;
  let dropped = 0;
  const t = await b.createTerminal(
    { command: `head -c ${FLOOD} /dev/zero`, outputByteLimit: MiB },
    read === 'slowly'
      ? {
          onOutput: (c: Buffer, info: { dropped: number }) => {
            got += c.length;
            dropped += info.dropped;
            peak = Math.max(peak, process.memoryUsage().rss);
            // A slow reader: each chunk holds the event loop for 20 ms (nothing is read meanwhile).
            const until = Date.now() + 20;
            while (Date.now() < until);
          },
        }
      : undefined,
  );
  expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
  // Everything is delivered or counted as dropped by the time the exit is reported.
  const atExit = got + dropped;
  clearInterval(sample);
  const out = await t.currentOutput();
  const hwm = kib(status(server), 'VmHWM');
  await t.release();
  expect(out.output.length).toBe(MiB);
  expect(out.truncated).toBe(true);
  if (read === 'slowly') {
    expect(atExit).toBe(FLOOD);
    expect(dropped).toBeGreaterThan(0);
  }
  expect(hwm).toBeGreaterThan(0);
  expect(hwm).toBeLessThan(SERVER_BOUND);
  expect(peak - rss0).toBeLessThan(NODE_BOUND);
  // What the run measured, for docs/remote.md.
  process.stdout.write(`backpressure ${b.transport.name} (${read}): server VmHWM ${(hwm / MiB).toFixed(1)} MiB, Node RSS +${((peak - rss0) / MiB).toFixed(1)} MiB\n`);
}

const local = (pid: number): string => fs.readFileSync(`/proc/${pid}/status`, 'utf8');

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)(
  'a 1 GiB flood through the server run directly',
  () => {
    for (const read of ['slowly', 'not at all'] as const) {
      test(`read ${read}: both sides stay bounded`, async () => {
        const b = backends.command([HOST_SERVER]);
        try {
          await flood(b, local, read);
        } finally {
          await b.close();
        }
      }, 180000);
    }
  },
);

describeIf('podman', hasPodman && fs.existsSync(STATIC_SERVER), 'needs root with podman, runc, busybox-static and the musl server (bash scripts/remote/setup.sh)')(
  'a 1 GiB flood through podman exec',
  () => {
    const name = `acp-bp-${process.pid}`;
    beforeAll(() => startContainer(name), 60000);
    afterAll(() => removeContainer(name));
    for (const read of ['slowly', 'not at all'] as const) {
      test(`read ${read}: both sides stay bounded`, async () => {
        const b = backends.podman(name, { serverBinary: STATIC_SERVER, env: podmanEnv() });
        const status = (pid: number): string =>
          spawnSync('podman', ['exec', name, 'cat', `/proc/${pid}/status`], { env: podmanEnv() }).stdout.toString();
        try {
          await flood(b, status, read);
        } finally {
          await b.close();
        }
      }, 180000);
    }
  },
);

describeIf('sshd', hasSshd && fs.existsSync(HOST_SERVER), 'needs root and openssh-server (bash scripts/remote/setup.sh)')('a 1 GiB flood through ssh', () => {
  let sshd: Sshd;
  beforeAll(async () => {
    sshd = await startSshd();
  }, 60000);
  afterAll(async () => sshd?.stop());
  for (const read of ['slowly', 'not at all'] as const) {
    test(`read ${read}: both sides stay bounded`, async () => {
      const dir = fs.mkdtempSync('/tmp/acp-bp-ssh-');
      const b = backends.ssh('root@127.0.0.1', {
        port: sshd.port,
        identity: sshd.key,
        extraArgs: ['-F', '/dev/null'],
        sshOptions: { UserKnownHostsFile: sshd.knownHosts, BatchMode: 'yes' },
        serverBinary: HOST_SERVER,
        serverPath: `${dir}/server`,
      });
      try {
        // The far end is this machine: its /proc shows the server.
        await flood(b, local, read);
      } finally {
        await b.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }, 180000);
  }
});
