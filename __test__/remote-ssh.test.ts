/**
 * Terminals over ssh (an sshd this suite starts on 127.0.0.1): the server installed through ssh,
 * the acceptance behaviour, the ssh client killed mid-flood (nothing left at the far end), and a
 * banner found past a login shell's noise.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { TerminalHost } from '../ts/host';
import { FrameReader, jsonFrame } from '../ts/backends/protocol';
import { acceptance } from './fixtures/remote-acceptance';
import { alive, hasSshd, HOST_SERVER, startSshd, type Sshd, until } from './fixtures/remote-env';
import { describeIf, testIf } from './fixtures/require-feature';

test('the banner is found past noise printed before it, even split across reads', () => {
  const r = new FrameReader();
  const stream = Buffer.concat([
    Buffer.from('Welcome!\nlast login: never\n\x1eACP-TERM'),
    Buffer.from('INAL-SERVER/2 9.9.9\n'),
    jsonFrame({ event: 'exit', term: 1, status: {} }),
  ]);
  const msgs = [];
  for (let i = 0; i < stream.length; i += 7) msgs.push(...r.push(stream.subarray(i, i + 7)));
  expect(r.banner).toEqual({ protocol: 2, version: '9.9.9' });
  expect(r.noise).toBe('Welcome!\nlast login: never\n');
  expect(msgs).toEqual([{ kind: 'json', value: { event: 'exit', term: 1, status: {} }, size: jsonFrame({ event: 'exit', term: 1, status: {} }).length }]);
});

testIf('acp-terminal-server', fs.existsSync(HOST_SERVER), 'the host server is not built (bash scripts/remote/build-server.sh)')('a transport that prints before starting the server still connects', async () => {
  const b = backends.command(['sh', '-c', 'echo "motd: hello"; printf "no newline"; exec "$0"', HOST_SERVER]);
  const t = await b.createTerminal({ command: 'echo past the noise' });
  await t.waitForExit();
  expect((await t.currentOutput()).output).toBe('past the noise\n');
  await b.close();
});

describeIf('sshd', hasSshd && fs.existsSync(HOST_SERVER), 'needs root with openssh-server and the host server build')('ssh', () => {
  let sshd: Sshd;
  let backend: backends.Backend;
  const serverDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-ssh-server-'));
  const make = (extra: backends.BackendOptions = {}): backends.Backend =>
    backends.ssh('root@127.0.0.1', {
      ...extra,
      port: sshd.port,
      identity: sshd.key,
      extraArgs: ['-F', '/dev/null'],
      sshOptions: { UserKnownHostsFile: sshd.knownHosts, BatchMode: 'yes', StrictHostKeyChecking: 'yes' },
      serverBinary: HOST_SERVER,
      serverPath: path.join(serverDir, 'acp-terminal-server'),
    });
  beforeAll(async () => {
    sshd = await startSshd();
    backend = make();
  });
  afterAll(async () => {
    await backend?.close();
    await sshd?.stop();
    fs.rmSync(serverDir, { recursive: true, force: true });
  });

  test('the first connection installs the server through ssh', async () => {
    expect(fs.existsSync(backend.serverPath)).toBe(false);
    const t = await backend.createTerminal({ command: 'echo over ssh' });
    await t.waitForExit();
    expect((await t.currentOutput()).output).toBe('over ssh\n');
    await t.release();
    expect(fs.readFileSync(backend.serverPath).equals(fs.readFileSync(HOST_SERVER))).toBe(true);
  });

  describe('acceptance', () => {
    acceptance(() => backend, fs.realpathSync(os.tmpdir()));
  });

  test('TerminalHost({ backend }) over ssh: the login directory is the default cwd, judged against the roots there; a denied program never starts', async () => {
    const home = os.userInfo().homedir; // root's, where sshd starts the server
    const host = new TerminalHost({ backend, allowedRoots: [home], commandPolicy: { deny: ['touch'] } });
    try {
      const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'pwd' });
      await host.waitForTerminalExit({ sessionId: 's', terminalId });
      expect((await host.terminalOutput({ sessionId: 's', terminalId })).output).toBe(`${fs.realpathSync(home)}\n`);
      const marker = path.join(serverDir, 'touched');
      await expect(host.createTerminal({ sessionId: 's', command: `touch '${marker}'`, cwd: home })).rejects.toMatchObject({
        code: 'ERR_POLICY_DENIED',
      });
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      await host.close();
    }
  });

  test('the ssh client killed mid-flood: the backend reconnects through ssh, the output is the local one byte for byte', async () => {
    const b = make({ reconnectGraceMs: 20000 });
    const chunks: Buffer[] = [];
    let got = 0;
    const flood = 'i=0; while [ $i -lt 40 ]; do seq $((i*5000+1)) $((i*5000+5000)); i=$((i+1)); sleep 0.03; done';
    const t = await b.createTerminal({ command: flood }, { onOutput: (c: Buffer) => (chunks.push(Buffer.from(c)), (got += c.length)) });
    const conn = await b.connection();
    expect(await until(() => got > 100_000)).toBe(true);
    process.kill(conn.pid!, 'SIGKILL');
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect(conn.reconnects).toBe(1);
    expect(Buffer.concat(chunks).equals(execFileSync('seq', ['1', '200000'], { maxBuffer: 64 << 20 }))).toBe(true);
    await b.close();
    expect(await until(() => !alive(conn.serverPid!))).toBe(true);
  });

  test('the ssh client killed mid-flood without a grace: calls reject with ERR_BACKEND_LOST, nothing is left at the far end', async () => {
    const b = make({ reconnectGraceMs: 0 });
    const t = await b.createTerminal({ command: 'yes flood' });
    const sleeper = await b.createTerminal({ command: "trap '' TERM; sleep 1000" });
    let got = 0;
    t.onOutput((c) => (got += c.length));
    await until(() => got > 10_000_000);
    const wait = t.waitForExit();
    process.kill((await b.transportPid())!, 'SIGKILL');
    await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    await expect(sleeper.currentOutput()).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    expect(await until(() => !alive(t.pid) && !alive(sleeper.pid))).toBe(true);
    await b.close();
  });
});
