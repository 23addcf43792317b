/**
 * The reattach point's token: `acp-terminal-server --attach SOCKET` reaches the live server, and only a
 * link that presents the session's 32-byte token in its first request (`resume`) continues the session.
 * A wrong, short or empty token (or no resume at all) is refused with ERR_ATTACH_REFUSED, and the
 * terminals stay the right client's: it reattaches and goes on as if nothing happened.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { FrameReader, jsonFrame, type ServerMessage } from '../ts/backends/protocol';
import { alive, HOST_SERVER, until } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const RELAY = path.join(__dirname, 'fixtures', 'relay.js');

/** Runs `--attach socket`, sends `first` (a frame, or nothing), and returns the first message answered. */
function attachWith(socket: string, first: Buffer | undefined): Promise<ServerMessage | undefined> {
  const child = spawn(HOST_SERVER, ['--attach', socket], { stdio: ['pipe', 'pipe', 'ignore'] });
  const reader = new FrameReader();
  return new Promise((resolve) => {
    let done = false;
    const finish = (m: ServerMessage | undefined): void => {
      if (done) return;
      done = true;
      child.kill('SIGKILL');
      resolve(m);
    };
    child.stdout.on('data', (c: Buffer) => {
      const msgs = reader.push(c);
      if (msgs.length > 0) finish(msgs[0]);
    });
    child.once('close', () => finish(undefined));
    child.stdin.on('error', () => {});
    if (first) child.stdin.write(first);
    else child.stdin.write(jsonFrame({ id: 0, op: 'output', term: 1 }));
  });
}

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)(
  'the reattach token',
  () => {
    test('a wrong, short or empty token is refused with ERR_ATTACH_REFUSED; the right client reattaches with its terminals intact', async () => {
      const b = backends.command([process.execPath, RELAY, HOST_SERVER], { reconnectGraceMs: 20000 });
      const chunks: Buffer[] = [];
      const t = await b.createTerminal({ command: 'cat' }, { stdin: 'pipe', onOutput: (c: Buffer) => chunks.push(Buffer.from(c)) });
      await t.write('before\n');
      expect(await until(() => Buffer.concat(chunks).toString() === 'before\n')).toBe(true);
      const conn = await b.connection();
      const attach = (conn as unknown as { attach: { path: string; token: string } }).attach;
      expect(attach.token).toMatch(/^[0-9a-f]{64}$/);
      const flipped = attach.token.slice(0, -1) + (attach.token.endsWith('0') ? '1' : '0');
      const tries: [string, Buffer | undefined][] = [
        ['wrong', jsonFrame({ id: 0, op: 'resume', token: flipped, offset: 0 })],
        ['short', jsonFrame({ id: 0, op: 'resume', token: attach.token.slice(0, 32), offset: 0 })],
        ['empty', jsonFrame({ id: 0, op: 'resume', token: '', offset: 0 })],
        ['longer', jsonFrame({ id: 0, op: 'resume', token: attach.token + '00', offset: 0 })],
        ['not a string', jsonFrame({ id: 0, op: 'resume', token: 7, offset: 0 })],
        ['no resume first', undefined],
      ];
      for (const [what, first] of tries) {
        const answer = await attachWith(attach.path, first);
        expect({ what, answer }).toMatchObject({ what, answer: { kind: 'json', value: { error: { code: 'ERR_ATTACH_REFUSED' } } } });
      }
      // The refused links took nothing over: the live link still serves.
      await t.write('still\n');
      expect(await until(() => Buffer.concat(chunks).toString() === 'before\nstill\n')).toBe(true);
      // The link is lost; a refused attempt meanwhile changes nothing; the right client then resumes.
      const server = conn.serverPid;
      const answer = attachWith(attach.path, jsonFrame({ id: 0, op: 'resume', token: flipped, offset: 0 }));
      process.kill(conn.pid!, 'SIGKILL');
      expect(await answer).toMatchObject({ kind: 'json', value: { error: { code: 'ERR_ATTACH_REFUSED' } } });
      await t.write('after\n');
      expect(await until(() => Buffer.concat(chunks).toString() === 'before\nstill\nafter\n')).toBe(true);
      expect(conn.reconnects).toBe(1);
      expect(conn.serverPid).toBe(server);
      expect(alive(t.pid)).toBe(true);
      await t.closeStdin();
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      expect((await t.currentOutput()).output).toBe('before\nstill\nafter\n');
      await b.close();
      expect(await until(() => !alive(server))).toBe(true);
    });
  },
);
