// Issue 11, native side: option validation that refuses what it does not know, the checked cwd
// is the cwd the command gets, a bounded onOutput queue, and a guardian that can never block.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { containmentInfo } from '../../index';
import { blockingListener, createTerminal, eventually, isGone, ROOT } from './helpers';
import { startSwapper } from '../fixtures/cwd-swapper';

describe('options that refuse what they do not know', () => {
  test('an unknown limits key is ERR_INVALID_ARG naming it; nothing runs', async () => {
    const marker = path.join(os.tmpdir(), `acp-bogus-${process.pid}`);
    await expect(
      createTerminal({ command: `touch ${marker}` }, { limits: { openFiles: 10, bogus: 1 } as never }),
    ).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.limits.bogus') });
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('killGraceMs is an integer from 0 to 600000', async () => {
    for (const bad of [600001, 1e12, -1, 1.5, Infinity, '5']) {
      await expect(createTerminal({ command: 'true' }, { killGraceMs: bad as number })).rejects.toMatchObject({
        code: 'ERR_INVALID_ARG',
        message: expect.stringMatching(/options\.killGraceMs must be an integer from 0 to 600000/),
      });
    }
    for (const ok of [0, 600000]) {
      await using t = await createTerminal({ command: 'true' }, { killGraceMs: ok });
      await t.waitForExit();
    }
  });

  test('release() resolves for a command that ignores SIGTERM (the grace is bounded)', async () => {
    const t = await createTerminal(
      { command: "trap '' TERM; echo ready; while :; do sleep 0.05; done" },
      { killGraceMs: 100 },
    );
    while (!(await t.currentOutput()).output.includes('ready')) await new Promise((r) => setTimeout(r, 10));
    await t.release();
    expect(isGone(t.pid)).toBe(true);
  });
});

describe('the cwd that was checked is the cwd the command gets', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-roots-'));
  const root = path.join(base, 'root');
  const inside = path.join(root, 'inside');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(inside, { recursive: true });
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(root, 'escape'));
  fs.symlinkSync(inside, path.join(base, 'via-link'));
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  test('handle.cwd is the directory the command started in, symlinks resolved', async () => {
    await using t = await createTerminal({ command: 'pwd -P', cwd: path.join(base, 'via-link') }, { allowedRoots: [root] });
    await t.waitForExit();
    const real = fs.realpathSync(inside);
    expect(t.cwd).toBe(real);
    expect((await t.currentOutput()).output.trim()).toBe(real);
  });

  test('a cwd resolving outside allowedRoots is ERR_CWD_OUTSIDE_ROOTS; nothing runs', async () => {
    const marker = path.join(outside, 'ran');
    await expect(
      createTerminal({ command: 'touch ran', cwd: path.join(root, 'escape') }, { allowedRoots: [root] }),
    ).rejects.toMatchObject({ code: 'ERR_CWD_OUTSIDE_ROOTS', message: expect.stringContaining('resolved') });
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('bad roots name the field', async () => {
    await expect(createTerminal({ command: 'true' }, { allowedRoots: ['relative'] })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('options.allowedRoots[0]'),
    });
    await expect(createTerminal({ command: 'true' }, { allowedRoots: [root, 5 as never] })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('options.allowedRoots[1]'),
    });
  });

  test('1,000 swaps of the checked directory with a symlink to outside: 0 escapes', async () => {
    // A helper swaps `root/work` and `root/link` (-> outside) with renameat2(RENAME_EXCHANGE)
    // in a loop while terminals are created in `root/work`.
    const work = path.join(root, 'work');
    fs.mkdirSync(work);
    fs.symlinkSync(outside, path.join(root, 'link'));
    const swapper = await startSwapper(work, path.join(root, 'link'));
    const realRoot = fs.realpathSync(root);
    let started = 0;
    let refused = 0;
    const escapes: string[] = [];
    try {
      while (started + refused < 1000 || (started < 50 && refused < 50000)) {
        let t;
        try {
          t = await createTerminal({ command: 'pwd -P', cwd: work }, { allowedRoots: [root] });
        } catch (e) {
          expect(['ERR_CWD_OUTSIDE_ROOTS', 'ERR_INVALID_CWD']).toContain((e as { code: string }).code);
          refused++;
          continue;
        }
        await t.waitForExit();
        const ranIn = (await t.currentOutput()).output.trim();
        if (!ranIn.startsWith(realRoot + '/') || !t.cwd.startsWith(realRoot + '/')) escapes.push(ranIn);
        started++;
        await t.release();
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    expect(escapes).toEqual([]);
    expect(started).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});

describe('onOutput pending bytes are bounded', () => {
  test('a listener that blocks 300 ms per call under a fast producer: the producer waits for it (no drop), at most 256 KiB a call, retention intact', async () => {
    // A listener behind pauses the reader (the pipe fills and the producer blocks on its write, as in
    // `cmd | slow_consumer`): nothing is dropped and the pending bytes stay bounded (2 MiB).
    const total = 8 * 1024 * 1024;
    const t = await createTerminal({ command: `yes abcdefgh | head -c ${total}`, outputByteLimit: 1000 });
    const { listener, seen } = blockingListener(300);
    t.onOutput(listener);
    await t.waitForExit();
    expect(seen.delivered).toBe(total); // every byte reached the listener before the exit was reported
    expect(seen.dropped).toBe(0);
    expect(t.outputBytes).toBe(total);
    expect(seen.largest).toBeLessThanOrEqual(256 * 1024);
    expect(seen.calls).toBeGreaterThanOrEqual(total / (256 * 1024));
    const pattern = 'abcdefgh\n';
    const full = pattern.repeat(Math.ceil(total / pattern.length)).slice(0, total);
    const out = await t.currentOutput();
    expect(out.output).toBe(full.slice(-1000));
    expect(out.truncated).toBe(true);
    await t.release();
  });

  test('a listener that keeps up never sees a drop', async () => {
    const t = await createTerminal({
      command: 'for i in $(seq 1 200); do head -c 50000 /dev/zero; sleep 0.002; done',
    });
    let delivered = 0;
    let dropped = 0;
    t.onOutput(
      (chunk, info) => {
        delivered += chunk.length;
        dropped += info.dropped;
      },
      { replay: true },
    );
    await t.waitForExit();
    await eventually(() => delivered === 10000000, 'all delivered');
    expect(dropped).toBe(0);
    await t.release();
  });
});

describe('the guardian can never block the runtime', () => {
  test('a stopped guardian: 2,000 creates and waits complete, a fresh guardian takes over and still kills everything when Node dies', async () => {
    const script = `
      const { createTerminal, containmentInfo } = require('.');
      (async () => {
        const old = containmentInfo().guardianPid;
        process.kill(old, 'SIGSTOP');
        let next = 0;
        const worker = async () => {
          while (next < 2000) {
            next++;
            const t = await createTerminal({ command: 'true' });
            await t.waitForExit();
            await t.release();
          }
        };
        await Promise.all(Array.from({ length: 20 }, worker));
        const t = await createTerminal({ command: 'sleep 100 & echo $!; exec sleep 100' });
        let lines = [];
        while (lines.length < 1) {
          lines = (await t.currentOutput()).output.trim().split('\\n').filter(Boolean);
          await new Promise((r) => setTimeout(r, 10));
        }
        // Once the fresh guardian is in place, the full list is in its pipe.
        while (containmentInfo().guardianPid === old) await new Promise((r) => setTimeout(r, 20));
        console.log(JSON.stringify({ old, fresh: containmentInfo().guardianPid, pids: [t.pid, ...lines.map(Number)] }));
        setInterval(() => {}, 1000);
      })();
    `;
    const node = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const report = await new Promise<{ old: number; fresh: number; pids: number[] }>((resolve, reject) => {
      let out = '';
      node.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
      node.on('exit', () => reject(new Error(`node exited early: ${out}`)));
    });
    expect(report.fresh).not.toBe(report.old);
    await eventually(() => isGone(report.old), 'the stopped guardian killed');
    expect(report.pids.every((p) => !isGone(p))).toBe(true);
    node.kill('SIGKILL');
    await new Promise((r) => node.once('exit', r));
    await eventually(() => report.pids.every(isGone), 'the terminal killed by the fresh guardian');
    await eventually(() => isGone(report.fresh), 'the fresh guardian done');
  }, 120000);

  test('this process has a guardian', () => {
    expect(containmentInfo().guardianPid).toBeGreaterThan(1);
  });
});
