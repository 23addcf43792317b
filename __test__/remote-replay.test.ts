/**
 * Reconnect and replay: the transport dies while the server lives (a stand-in relay transport,
 * `__test__/fixtures/relay.js`, killed as `podman exec` or `ssh` would be), the backend reattaches
 * within the grace and every terminal resumes from its byte cursor; the server killed instead, or no
 * reattach within the grace: ERR_BACKEND_LOST and nothing left running. (The same over ssh:
 * remote-ssh.test.ts.)
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { alive, HOST_SERVER, until } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const RELAY = path.join(__dirname, 'fixtures', 'relay.js');
/** `seq 1 200000`, paced over about a second so the transport dies mid-flood. */
const FLOOD = 'i=0; while [ $i -lt 40 ]; do seq $((i*5000+1)) $((i*5000+5000)); i=$((i+1)); sleep 0.03; done';

const relayed = (options: backends.BackendOptions = {}): backends.Backend =>
  backends.command([process.execPath, RELAY, HOST_SERVER], options);

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)(
  'reconnect and replay',
  () => {
    test('the transport killed twice mid-flood: the backend reattaches, the output is the local one byte for byte', async () => {
      const b = relayed({ reconnectGraceMs: 20000 });
      const chunks: Buffer[] = [];
      let got = 0;
      let dropped = 0;
      const t = await b.createTerminal(
        { command: FLOOD },
        {
          onOutput: (c: Buffer, info: { dropped: number }) => {
            chunks.push(Buffer.from(c));
            got += c.length;
            dropped += info.dropped;
          },
        },
      );
      const sleeper = await b.createTerminal({ command: 'sleep 1000' });
      const conn = await b.connection();
      const server = conn.serverPid;
      expect(alive(server)).toBe(true);
      for (const at of [100_000, 600_000]) {
        expect(await until(() => got > at)).toBe(true);
        const transport = conn.pid!;
        process.kill(transport, 'SIGKILL');
        // A call made while the link is down waits for the new one.
        const snap = await sleeper.currentOutput();
        expect(snap.exitStatus).toBeUndefined();
        expect(conn.pid).not.toBe(transport);
      }
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      expect(conn.reconnects).toBe(2);
      expect(conn.serverPid).toBe(server);
      expect(alive(server)).toBe(true);
      expect(dropped).toBe(0);
      const local = execFileSync('seq', ['1', '200000'], { maxBuffer: 64 << 20 });
      expect(Buffer.concat(chunks).equals(local)).toBe(true);
      expect((await t.currentOutput()).truncated).toBe(false);
      expect(alive(sleeper.pid)).toBe(true);
      await b.close();
      expect(await until(() => !alive(sleeper.pid) && !alive(server))).toBe(true);
    });

    test('a link that swallowed more than the replay ring cannot resume: ERR_BACKEND_LOST, the server ends everything', async () => {
      // No ring: whatever the dead link swallowed cannot be resent.
      const b = relayed({ reconnectGraceMs: 20000, replayBytes: 0 });
      let got = 0;
      const t = await b.createTerminal({ command: 'yes flood' }, { onOutput: (c: Buffer) => (got += c.length) });
      const wait = t.waitForExit();
      const conn = await b.connection();
      const server = conn.serverPid;
      expect(await until(() => got > 1_000_000)).toBe(true);
      const transport = conn.pid!;
      // Stopped, the relay leaves bytes in its pipes; killed, they are lost.
      process.kill(transport, 'SIGSTOP');
      await new Promise((r) => setTimeout(r, 300));
      process.kill(transport, 'SIGKILL');
      await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST', message: expect.stringMatching(/ERR_REPLAY_LOST/) });
      expect(await until(() => !alive(t.pid) && !alive(server))).toBe(true);
      await b.close();
    });

    test('the server killed: everything rejects with ERR_BACKEND_LOST (the server is gone), nothing is left running', async () => {
      const b = relayed({ reconnectGraceMs: 20000 });
      const sleeper = await b.createTerminal({ command: "trap '' TERM; sleep 1000" });
      const wait = sleeper.waitForExit();
      const conn = await b.connection();
      process.kill(conn.serverPid!, 'SIGKILL');
      await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST', message: expect.stringMatching(/the server is gone/) });
      await expect(sleeper.currentOutput()).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
      expect(await until(() => !alive(sleeper.pid))).toBe(true);
      await b.close();
    });

    test('no reattach within the grace: calls reject with ERR_BACKEND_LOST, and then the server kills everything', async () => {
      const b = relayed({ reconnectGraceMs: 1500, env: { ...process.env, RELAY_REFUSE_ATTACH: '1' } });
      const sleeper = await b.createTerminal({ command: "trap '' TERM; sleep 1000" });
      const wait = sleeper.waitForExit();
      const conn = await b.connection();
      const server = conn.serverPid;
      process.kill(conn.pid!, 'SIGKILL');
      const pending = sleeper.currentOutput();
      await new Promise((r) => setTimeout(r, 300));
      // Within the grace the server keeps its terminals.
      expect(alive(server)).toBe(true);
      expect(alive(sleeper.pid)).toBe(true);
      await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST', message: expect.stringMatching(/no reattach within 1500 ms/) });
      await expect(pending).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
      expect(await until(() => !alive(sleeper.pid) && !alive(server))).toBe(true);
      await b.close();
    });

    test('without a grace a lost transport ends everything at once (the previous behaviour, reconnectGraceMs: 0)', async () => {
      const b = relayed({ reconnectGraceMs: 0 });
      const sleeper = await b.createTerminal({ command: "trap '' TERM; sleep 1000" });
      const wait = sleeper.waitForExit();
      const conn = await b.connection();
      process.kill(conn.pid!, 'SIGKILL');
      await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
      expect(await until(() => !alive(sleeper.pid) && !alive(conn.serverPid))).toBe(true);
      await b.close();
    });
  },
);
