// TerminalHost.close() and ShellSessions.closeAll() with launches still in flight: when they resolve,
// no process the host or the sessions started is alive, and none starts afterwards. Every process of a
// test carries a unique environment tag, found by scanning /proc (the launch's own sandbox init, which
// does not carry it, ends with the command's tree). Plain and, where the machine has it, sandboxed.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { TerminalHost } from '../ts/host';
import { ShellSessions } from '../ts/sessions';
import { describeIf } from './fixtures/require-feature';

const native = require('../index.js') as { containmentInfo(): { sandbox: { available: boolean; reasons: string[] } } };
const sandboxInfo = native.containmentInfo().sandbox;
const isLinux = process.platform === 'linux';

jest.setTimeout(30_000);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true, maxRetries: 5 });
});

function workDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'host-close-in-flight-'));
  dirs.push(d);
  return d;
}

let tags = 0;
function uniqueTag(): string {
  return `B5_CLOSE_TAG=${process.pid}-${Date.now()}-${++tags}`;
}

/** Live (not zombie) processes whose environment holds `tag` (`NAME=value`), with their parents. Synchronous. */
function taggedProcesses(tag: string): Map<number, number> {
  const found = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      if (fs.readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(tag)) found.set(Number(name), Number(fields[1]));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

function tagged(tag: string): number[] {
  return [...taggedProcesses(tag).keys()];
}

/** The commands themselves: tagged processes whose parent is not tagged (not the loops' `date` and `sleep`). */
function commandRoots(tag: string): number[] {
  const found = taggedProcesses(tag);
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Calls `close` the moment more commands run than `live()` terminals are known, found by a synchronous
 * scan that holds the event loop: the launch of the extra command has not been answered yet, so its
 * create is still in flight when `close` is called. (After 3 s without that moment: closes anyway.)
 */
async function closeWhileStarting(tag: string, live: () => number, close: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline) {
    await nextTurn();
    const until = Date.now() + 30;
    while (Date.now() < until) {
      if (commandRoots(tag).length > live()) {
        return close();
      }
    }
  }
  return close();
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Tagged processes seen alive during `ms` after now (scanned every few ms). */
async function aliveDuring(tag: string, ms: number): Promise<number[]> {
  const seen = new Set<number>(tagged(tag));
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await sleep(10);
    for (const pid of tagged(tag)) seen.add(pid);
  }
  return [...seen];
}

/** Marker files of `dir` written after `since` (ms since the epoch). */
function writtenAfter(dir: string, since: number): string[] {
  return fs.readdirSync(dir).filter((f) => {
    try {
      return fs.statSync(path.join(dir, f)).mtimeMs > since;
    } catch {
      return false;
    }
  });
}

const loop = (dir: string): string => `while :; do date +%s%N > ${dir}/m-$$; sleep 0.02; done`;

for (const sandboxed of [false, true]) {
  const kind = sandboxed ? 'sandboxed' : 'plain';
  describeIf(sandboxed ? 'sandbox' : 'linux', sandboxed ? isLinux && sandboxInfo.available : isLinux, sandboxed ? sandboxInfo.reasons.join('; ') : 'not Linux')(
    `close with launches in flight (${kind})`,
    () => {
      test(`TerminalHost.close() waits for the creates in flight: nothing they started runs once it resolved (${kind})`, async () => {
        for (let round = 0; round < 3; round++) {
          const dir = workDir();
          const tag = uniqueTag();
          const [name, value] = tag.split('=') as [string, string];
          const host = new TerminalHost({ cwd: dir, ...(sandboxed ? { sandbox: { writableRoots: [dir] } } : {}) });
          const creates = Array.from({ length: 6 }, (_, i) =>
            host.createTerminal({ sessionId: `s${i % 2}`, command: loop(dir), cwd: dir, env: [{ name, value }] }).then(
              () => 'created',
              (error: { code?: string }) => error.code ?? String(error),
            ),
          );
          await closeWhileStarting(tag, () => host.liveTerminals, () => host.close());
          const closedAt = Date.now();
          const left = await aliveDuring(tag, 400);
          expect({ round, left, late: writtenAfter(dir, closedAt) }).toEqual({ round, left: [], late: [] });
          // A create answered before close() was released by it; one still in flight was refused.
          for (const outcome of await Promise.all(creates)) expect(['created', 'ERR_HOST_CLOSED']).toContain(outcome);
          await expect(host.createTerminal({ sessionId: 's', command: 'true', cwd: dir })).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
        }
      });

      test(`ShellSessions.closeAll() waits for the shells it starts: a call queued on a session opens no shell after it (${kind})`, async () => {
        for (let round = 0; round < 2; round++) {
          const dir = workDir();
          const tag = uniqueTag();
          const [name, value] = tag.split('=') as [string, string];
          const shells = new ShellSessions({ cwd: dir, env: { [name]: value }, ...(sandboxed ? { sandbox: { writableRoots: [dir] } } : {}) });
          // The first call holds the session's lock while its command runs; the others wait behind it.
          const first = shells.execute({ terminalId: 'a', command: loop(dir), timeoutMs: 20_000 }).then(
            () => 'done',
            (error: { code?: string }) => error.code ?? String(error),
          );
          const queued = Array.from({ length: 3 }, () =>
            shells.execute({ terminalId: 'a', command: 'echo queued', timeoutMs: 20_000 }).then(
              () => 'done',
              (error: { code?: string }) => error.code ?? String(error),
            ),
          );
          const deadline = Date.now() + 10_000;
          while (fs.readdirSync(dir).length === 0 && Date.now() < deadline) await sleep(10);
          expect(fs.readdirSync(dir).length).toBeGreaterThan(0);
          await shells.closeAll();
          const closedAt = Date.now();
          const left = await aliveDuring(tag, 1000);
          expect({ round, left, late: writtenAfter(dir, closedAt) }).toEqual({ round, left: [], late: [] });
          await first;
          for (const outcome of await Promise.all(queued)) expect(outcome).toBe('ERR_HOST_CLOSED');
          await expect(shells.execute({ terminalId: 'b', command: 'true' })).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
        }
      });
    },
  );
}

describeIf('linux', isLinux, 'not Linux')('ShellSessions.closeAll() with a here-document check in flight', () => {
  // A command with `<<` is first checked by a `bash -n` of its own (a here-document left open is refused).
  // The shell here is bash, except that its check is a `sleep` with a unique argument: the check is in
  // flight for as long as the test needs, and its process is easy to find.
  test('the check is stopped: its process is gone when closeAll() resolves, and the command is not run', async () => {
    const dir = workDir();
    const n = 400_000 + Math.floor(Math.random() * 500_000);
    const shell = path.join(dir, 'bash-with-slow-check');
    fs.writeFileSync(shell, `#!/bin/sh\ncase " $* " in *" -n "*) exec sleep ${n} ;; esac\nexec bash "$@"\n`, { mode: 0o755 });
    const checks = (): number[] =>
      fs.readdirSync('/proc').filter((p) => {
        try {
          return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, 'latin1') === `sleep\0${n}\0` && fs.readFileSync(`/proc/${p}/stat`, 'latin1').split(') ')[1]?.[0] !== 'Z';
        } catch {
          return false;
        }
      }).map(Number);
    const shells = new ShellSessions({ cwd: dir, shell });
    expect(await shells.execute({ terminalId: 'a', command: 'echo ready' })).toMatchObject({ content: 'ready', exitCode: 0 });
    const marker = path.join(dir, 'ran');
    const pending = shells.execute({ terminalId: 'a', command: `cat > ${marker} <<'END'\nbody\nEND` }).then(
      () => 'done',
      (error: { code?: string }) => error.code ?? String(error),
    );
    const deadline = Date.now() + 10_000;
    while (checks().length === 0 && Date.now() < deadline) await sleep(10);
    expect(checks()).toHaveLength(1);
    await shells.closeAll();
    expect(checks()).toEqual([]);
    expect(await pending).toBe('ERR_HOST_CLOSED');
    expect(fs.existsSync(marker)).toBe(false);
  });
});
