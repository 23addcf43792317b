/**
 * `acp-terminal-server` through the generic backend: the local server binary over a pipe. The core
 * acceptance behaviour, the server's death (stdin EOF and SIGKILL: nothing it started survives),
 * bounded memory under a flood nobody reads.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { TerminalHost } from '../ts/host';
import { acceptance } from './fixtures/remote-acceptance';
import { alive, blockUntilGone, HOST_SERVER as binary, until } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-remote-')));

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

const built = fs.existsSync(binary);
describeIf('acp-terminal-server', built, `${binary} is not built (bash scripts/remote/build-server.sh)`)('the local server over a pipe', () => {
  let backend: backends.Backend;
  beforeAll(() => {
    backend = backends.command([binary]);
  });
  afterAll(async () => {
    await backend.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('acceptance', () => {
    acceptance(() => backend, tmp);
  });

  /** Starts `sleep`s that ignore SIGTERM and returns their pids (all far-end pids are local here). */
  async function sleepers(b: backends.Backend, n: number): Promise<number[]> {
    const pids: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = await b.createTerminal({ command: "trap '' TERM; sleep 1000 & echo $!; wait" }, { killGraceMs: 200 });
      let out = '';
      for (let k = 0; k < 250 && !out.endsWith('\n'); k++) {
        out = (await t.currentOutput()).output;
        await new Promise((r) => setTimeout(r, 20));
      }
      pids.push(t.pid, Number(out.trim()));
    }
    return pids;
  }

  test('closing the connection kills everything the server started, and the server exits', async () => {
    const b = backends.command([binary]);
    const pids = await sleepers(b, 3);
    const server = (await b.transportPid())!;
    expect(pids.every(alive)).toBe(true);
    await b.close();
    expect(await until(() => !pids.some(alive))).toBe(true);
    expect(alive(server)).toBe(false);
  });

  test('the server SIGKILLed: its guardian kills what it started; pending calls reject with ERR_BACKEND_LOST', async () => {
    const b = backends.command([binary]);
    const pids = await sleepers(b, 3);
    const waiting = await b.createTerminal({ command: 'sleep 1000' });
    const wait = waiting.waitForExit();
    const server = (await b.transportPid())!;
    process.kill(server, 'SIGKILL');
    await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    await expect(waiting.currentOutput()).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    await expect(waiting.release()).resolves.toEqual({});
    expect(await until(() => !pids.some(alive) && !alive(waiting.pid))).toBe(true);
    // The backend reconnects on the next create.
    const t = await b.createTerminal({ command: 'echo again' });
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    await b.close();
  });

  test('a flood nobody reads stays bounded in the server; the listener is told what it lost', async () => {
    const b = backends.command([binary]);
    let got = 0;
    let dropped = 0;
    const t = await b.createTerminal({ command: 'head -c 200000000 /dev/zero', outputByteLimit: 1024 });
    t.onOutput((c, info) => {
      got += c.length;
      dropped += info.dropped;
    });
    const server = (await b.transportPid())!;
    // JS does not read for 3 s: the server's queue for this listener is bounded (8 MiB).
    const end = Date.now() + 3000;
    let peak = 0;
    while (Date.now() < end) {
      peak = Math.max(peak, rssKiB(server));
      const spin = Date.now() + 50;
      while (Date.now() < spin);
    }
    await t.waitForExit();
    peak = Math.max(peak, rssKiB(server));
    expect(peak).toBeLessThan(80 * 1024);
    const out = await t.currentOutput();
    expect(out.output.length).toBe(1024);
    await until(() => got + dropped === 200000000, 20000);
    expect(got + dropped).toBe(200000000);
    expect(dropped).toBeGreaterThan(0);
    await b.close();
  });

  test('kubectl and docker argv, with the install, through stand-in CLIs that run the far-end argv here', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-'));
    const log = path.join(dir, 'argv.log');
    // kubectl: the far-end argv follows `--`; docker: it follows `exec -i CONTAINER`.
    fs.writeFileSync(path.join(dir, 'kubectl'), `#!/bin/sh\nprintf "%s\\n" "kubectl $*" >> ${log}\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`, {
      mode: 0o755,
    });
    fs.writeFileSync(path.join(dir, 'docker'), `#!/bin/sh\nprintf "%s\\n" "docker $*" >> ${log}\nshift 3\nexec "$@"\n`, { mode: 0o755 });
    const k = backends.kubectl('pod-1', {
      namespace: 'ns',
      container: 'main',
      kubectl: path.join(dir, 'kubectl'),
      serverBinary: binary,
      serverPath: path.join(dir, 'k', 'server'),
    });
    const d = backends.docker('ctr-1', { docker: path.join(dir, 'docker'), serverBinary: binary, serverPath: path.join(dir, 'd', 'server') });
    for (const b of [k, d]) {
      const t = await b.createTerminal({ command: 'echo via-cli' });
      await t.waitForExit();
      expect((await t.currentOutput()).output).toBe('via-cli\n');
      await b.close();
    }
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    // Launch (missing), install, launch again; for each CLI.
    expect(lines[0]).toMatch(/^kubectl exec -i -n ns -c main pod-1 -- sh -c .* acp-terminal-launch .*\/k\/server$/);
    expect(lines[1]).toMatch(/^kubectl exec -i -n ns -c main pod-1 -- sh -c .* acp-terminal-install .*\/k\/server$/);
    expect(lines[3]).toMatch(/^docker exec -i ctr-1 sh -c .* acp-terminal-launch .*\/d\/server$/);
    expect(fs.readFileSync(path.join(dir, 'd', 'server')).equals(fs.readFileSync(binary))).toBe(true);
  });

  test("a server another user planted at the far-end path is never run: the install replaces it", async () => {
    // The default far-end path is in /tmp: another user of the far end can create it first.
    const dir = fs.mkdtempSync(path.join(tmp, 'plant-'));
    fs.chmodSync(dir, 0o1777);
    const serverPath = path.join(dir, 'server');
    const marker = path.join(dir, 'MARKER');
    fs.writeFileSync(serverPath, `#!/bin/sh\necho planted > ${marker}\nexec ${binary}\n`, { mode: 0o755 });
    fs.chownSync(serverPath, 65534, 65534); // nobody's file
    const b = backends.execPrefix('planted', [], { serverBinary: binary, serverPath });
    try {
      const t = await b.createTerminal({ command: 'echo ours' });
      await t.waitForExit();
      expect((await t.currentOutput()).output).toBe('ours\n');
      expect(fs.existsSync(marker)).toBe(false);
      expect(fs.statSync(serverPath).uid).toBe(process.getuid?.());
      expect(fs.readFileSync(serverPath).equals(fs.readFileSync(binary))).toBe(true);
    } finally {
      await b.close();
    }
  });

  // The ninth attack's B4/B2: the server queued the exit before it read a `subscribe` sent in the tick
  // that received the handle (or later, before the exit was heard), so the exit event overtook the
  // subscription's output and waitForExit() resolved with the listener at 0 bytes. Here the event loop
  // is held until the command is gone, so the subscribe always comes after the exit was queued.
  const TEXT = Array.from({ length: 1000 }, (_, i) => String.fromCharCode(33 + (i % 89))).join('');

  test.each([false, true])(
    'a listener attached in the tick that received the handle (replay: %s) has every byte when waitForExit resolves, though the server queued the exit first',
    async (replay) => {
      const first: Buffer[] = [];
      const later: Buffer[] = [];
      const t = await backend.createTerminal({ command: 'printf', args: ['%s', TEXT] }, { onOutput: (c) => first.push(Buffer.from(c)) });
      blockUntilGone(t.pid);
      t.onOutput((c) => later.push(Buffer.from(c)), { replay });
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      expect(Buffer.concat(first).toString()).toBe(TEXT);
      expect(Buffer.concat(later).toString()).toBe(TEXT);
      await t.release();
    },
  );

  test('a replay listener attached before the exit was heard has every byte when waitForExit resolves, though the server queued the exit first', async () => {
    const N = 200000;
    const t = await backend.createTerminal({ command: `head -c ${N} /dev/zero | tr '\\0' x; cat > /dev/null`, outputByteLimit: 1 << 20 }, { stdin: 'pipe' });
    for (let i = 0; i < 500 && (await t.currentOutput()).output.length < N; i++) await new Promise((r) => setTimeout(r, 20));
    // The command ends once its stdin does; nothing is read until the listener below subscribed.
    const closed = t.closeStdin();
    blockUntilGone(t.pid);
    let got = 0;
    t.onOutput((c) => (got += c.length), { replay: true });
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect(got).toBe(N);
    await closed;
    await t.release();
  });

  // The ninth attack's B3: a throw left Connection.receive()'s loop, so the rest of that read (other
  // listeners' output, exit events, answers) was never dispatched. jest turns an uncaught exception into
  // a failure, so the scenario runs in a child Node with an uncaughtException handler (the ts/ sources
  // through tsx), for the local core and the remote backend alike.
  test('a listener that throws is reported as an uncaught exception, as by the local core; every other listener, exit and answer goes on', () => {
    const fixture = path.join(__dirname, 'fixtures', 'throwing-listener.ts');
    const out = execFileSync(process.execPath, ['--import', 'tsx', fixture, binary], { cwd: path.join(__dirname, '..'), timeout: 90000 });
    const { local, remote } = JSON.parse(out.toString()) as Record<'local' | 'remote', Record<string, unknown>>;
    for (const r of [local, remote]) {
      expect(r).toEqual({
        expected: expect.any(Number),
        status: { exitCode: 0, signal: null },
        atExit: { first: r.expected, third: r.expected },
        throwsReported: true,
        others: [],
        otherStatus: { exitCode: 0, signal: null },
        otherOutput: 'other\n',
        againOutput: 'again\n',
      });
    }
  }, 120000);

  test('a TerminalHost runs its terminals through a backend', async () => {
    const host = new TerminalHost({ createTerminal: backend.createTerminal, cwd: tmp });
    const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'echo "from $(pwd)"; exit 4' });
    expect(await host.waitForTerminalExit({ sessionId: 's', terminalId })).toEqual({ exitCode: 4, signal: null });
    expect((await host.terminalOutput({ sessionId: 's', terminalId })).output).toBe(`from ${tmp}\n`);
    await host.close();
  });
});
