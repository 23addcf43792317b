// kill, release, await using, and the no-leak guarantees (GC, Node exit, fds, zombies).
import { createTerminal, eventually, fdCount, isGone, run, runNode, zombieChildren, type TerminalHandle } from './helpers';

/** Starts `sh` that backgrounds grandchildren and prints their pids, one per line. */
async function withGrandchildren(extra = '', options = {}) {
  const t = await createTerminal(
    { command: `${extra} sleep 100 & echo $!; sleep 100 & echo $!; wait` },
    options,
  );
  let pids: number[] = [];
  const deadline = Date.now() + 20000;
  while (pids.length < 2 && Date.now() < deadline) {
    pids = (await t.currentOutput()).output.split('\n').filter(Boolean).map(Number);
    if (pids.length < 2) await new Promise((r) => setTimeout(r, 20));
  }
  expect(pids).toHaveLength(2);
  return { t, pids };
}

async function outputMatches(t: TerminalHandle, re: RegExp) {
  const deadline = Date.now() + 20000;
  while (!re.test((await t.currentOutput()).output)) {
    if (Date.now() > deadline) throw new Error(`output never matched ${re}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('kill', () => {
  test('terminates the whole process group, grandchildren too', async () => {
    const { t, pids } = await withGrandchildren();
    try {
      expect(pids.every((p) => !isGone(p))).toBe(true);
      expect(await t.kill()).toEqual({});
      expect(await t.waitForExit()).toEqual({ exitCode: null, signal: 'SIGTERM' });
      await eventually(() => pids.every(isGone), 'grandchildren gone');
      expect(isGone(t.pid)).toBe(true);
      // The handle stays valid.
      expect((await t.currentOutput()).exitStatus).toEqual({ exitCode: null, signal: 'SIGTERM' });
    } finally {
      await t.release();
    }
  });

  test('escalates to SIGKILL after the grace when SIGTERM is ignored', async () => {
    const t = await createTerminal(
      { command: "trap '' TERM; echo ready; while :; do sleep 0.05; done" },
      { killGraceMs: 300 },
    );
    try {
      await outputMatches(t, /ready/);
      await t.kill();
      expect(await t.waitForExit()).toEqual({ exitCode: null, signal: 'SIGKILL' });
    } finally {
      await t.release();
    }
  }, 30000);

  test('a grandchild that traps SIGTERM is killed after the grace too', async () => {
    const t = await createTerminal(
      { command: "sh -c \"trap '' TERM; echo \\$\\$; while :; do sleep 0.05; done\" & wait" },
      { killGraceMs: 300 },
    );
    try {
      let pid = 0;
      const deadline = Date.now() + 20000;
      while (!pid && Date.now() < deadline) {
        pid = Number((await t.currentOutput()).output.trim()) || 0;
        await new Promise((r) => setTimeout(r, 20));
      }
      await t.kill();
      await eventually(() => isGone(pid), 'trapping grandchild gone');
    } finally {
      await t.release();
    }
  }, 30000);

  test('a stopped process is killed', async () => {
    const t = await createTerminal({ command: 'kill -STOP $$; echo never' });
    try {
      await eventually(() => {
        const fs = require('node:fs') as typeof import('node:fs');
        const stat = fs.readFileSync(`/proc/${t.pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'T';
      }, 'stopped');
      await t.kill();
      const st = await t.waitForExit();
      expect(st.exitCode).toBeNull();
      expect(['SIGTERM', 'SIGKILL']).toContain(st.signal);
      expect((await t.currentOutput()).output).toBe('');
    } finally {
      await t.release();
    }
  });

  test('killing an exited terminal is a successful no-op', async () => {
    const t = await createTerminal({ command: 'printf', args: ['testy terminal\n'], cwd: '/tmp', outputByteLimit: 1024 });
    try {
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      expect(await t.kill()).toEqual({});
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      expect((await t.currentOutput()).output).toBe('testy terminal\n');
    } finally {
      await t.release();
    }
  });

  test('kill resolves with waitForExit pending and concurrent kills', async () => {
    const t = await createTerminal({ command: 'sleep 100' });
    const waiting = t.waitForExit();
    await Promise.all([t.kill(), t.kill(), t.kill()]);
    expect(await waiting).toEqual({ exitCode: null, signal: 'SIGTERM' });
    await t.release();
  });
});

describe('release', () => {
  test('kills a running command and frees the handle', async () => {
    const { t, pids } = await withGrandchildren();
    const pending = t.waitForExit();
    expect(await t.release()).toEqual({});
    // A waitForExit pending at release resolves with the final status.
    expect(await pending).toEqual({ exitCode: null, signal: 'SIGTERM' });
    await eventually(() => pids.every(isGone) && isGone(t.pid), 'all gone');
    for (const call of [() => t.currentOutput(), () => t.waitForExit(), () => t.kill()]) {
      await expect(call()).rejects.toMatchObject({
        code: 'ERR_TERMINAL_RELEASED',
        message: expect.stringContaining(t.id),
      });
    }
    expect(() => t.onOutput(() => undefined)).toThrow(/released/);
    // A second release resolves.
    expect(await t.release()).toEqual({});
    await t[Symbol.asyncDispose]();
  });

  test('a waitForExit called before release always resolves; calls after it always reject', async () => {
    for (let i = 0; i < 100; i++) {
      const t = await createTerminal({ command: 'sleep 10' });
      const before = t.waitForExit();
      const released = t.release();
      // Not awaited: the release is already in effect for calls made from now on.
      const after = [t.currentOutput(), t.waitForExit(), t.kill()];
      expect(await before).toEqual({ exitCode: null, signal: 'SIGTERM' });
      for (const p of after) await expect(p).rejects.toMatchObject({ code: 'ERR_TERMINAL_RELEASED' });
      await Promise.all([released, t.release()]);
    }
  });

  test('release of an exited terminal also stops its background descendants', async () => {
    const t = await createTerminal({ command: 'sleep 100 & echo $!' });
    await t.waitForExit();
    const bg = Number((await t.currentOutput()).output.trim());
    expect(isGone(bg)).toBe(false);
    await t.release();
    await eventually(() => isGone(bg), 'background grandchild gone');
  });

  test('await using releases at the end of the scope', async () => {
    let pid = 0;
    let handle;
    {
      await using t = await createTerminal({ command: 'sleep 100' });
      pid = t.pid;
      handle = t;
      expect(isGone(pid)).toBe(false);
    }
    expect(isGone(pid)).toBe(true);
    await expect(handle.currentOutput()).rejects.toMatchObject({ code: 'ERR_TERMINAL_RELEASED' });
  });
});

describe('no leaks', () => {
  test('no leaked fds, no zombies after 300 create/release cycles', async () => {
    const before = fdCount();
    for (let i = 0; i < 300; i++) {
      const t = await createTerminal({ command: i % 2 ? 'echo hi' : 'sleep 10' });
      if (i % 2) await t.waitForExit();
      await t.release();
    }
    expect(fdCount()).toBeLessThanOrEqual(before);
    expect(zombieChildren()).toEqual([]);
  }, 120000);

  test('exited children are reaped even before release', async () => {
    const t = await createTerminal({ command: 'true' });
    await t.waitForExit();
    expect(isGone(t.pid)).toBe(true);
    expect(zombieChildren()).not.toContain(t.pid);
    await t.release();
  });

  const spawnAndReport = `
    const { createTerminal } = require('.');
    async function start() {
      const t = await createTerminal({ command: 'sleep 100 & echo $!; exec sleep 100' });
      while (!(await t.currentOutput()).output) await new Promise((r) => setTimeout(r, 10));
      console.log(JSON.stringify([t.pid, Number((await t.currentOutput()).output)]));
      return t;
    }
  `;

  test.each([
    ['natural exit', 'start().then(() => {});'],
    ['process.exit()', 'start().then(() => process.exit(0));'],
    ['an uncaught exception', "start().then(() => { setTimeout(() => { throw new Error('boom'); }); });"],
    ['worker.terminate() (only its terminals)', `
      const { Worker } = require('node:worker_threads');
      const code = ${JSON.stringify(`
        const { parentPort } = require('node:worker_threads');
        const { createTerminal } = require(process.cwd());
        createTerminal({ command: 'sleep 100 & echo $!; exec sleep 100' }).then(async (t) => {
          while (!(await t.currentOutput()).output) await new Promise((r) => setTimeout(r, 10));
          parentPort.postMessage([t.pid, Number((await t.currentOutput()).output)]);
          setInterval(() => {}, 1000);
        });
      `)};
      start().then(async (mine) => {
        const w = new Worker(code, { eval: true });
        const pids = await new Promise((r) => w.once('message', r));
        await w.terminate();
        const gone = (p) => { try { return require('fs').readFileSync('/proc/' + p + '/stat', 'utf8').split(') ')[1][0] === 'Z'; } catch { return true; } };
        const deadline = Date.now() + 10000;
        while (!pids.every(gone) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        console.log(JSON.stringify(pids));
        console.error(pids.every(gone) ? '' : 'worker terminals survived');
        console.error(gone(mine.pid) ? 'main terminal was killed by the worker' : '');
        await mine.release();
      });
    `],
  ])('terminals die when Node ends by %s', async (_how, body) => {
    const r = runNode(spawnAndReport + body);
    const pids: number[] = r.stdout.trim().split('\n').flatMap((l: string) => JSON.parse(l));
    expect(pids.length).toBeGreaterThanOrEqual(2);
    expect(r.stderr).not.toMatch(/survived|killed by the worker/);
    await eventually(() => pids.every(isGone), `pids ${pids} gone`);
  });

  test('a garbage-collected handle kills its process group', () => {
    const r = runNode(
      `
      const { createTerminal } = require('.');
      (async () => {
        let t = await createTerminal({ command: 'sleep 100 & echo $!; exec sleep 100' });
        while (!(await t.currentOutput()).output) await new Promise((r) => setTimeout(r, 10));
        const pids = [t.pid, Number((await t.currentOutput()).output)];
        t = null;
        const gone = (p) => { try { return require('fs').readFileSync('/proc/' + p + '/stat', 'utf8').split(') ')[1][0] === 'Z'; } catch { return true; } };
        const deadline = Date.now() + 10000;
        while (!pids.every(gone) && Date.now() < deadline) {
          global.gc();
          await new Promise((r) => setTimeout(r, 20));
        }
        console.log(JSON.stringify({ pids, gone: pids.every(gone) }));
        setTimeout(() => {}, 100);
      })();
    `,
      ['--expose-gc'],
    );
    const res = JSON.parse(r.stdout);
    expect(res.gone).toBe(true);
  });
});

test('the SDK test agent sequence: output, wait, kill after exit, release', async () => {
  const r = await run({ command: 'printf', args: ['testy terminal\n'], cwd: '/tmp', outputByteLimit: 1024 });
  expect(r).toMatchObject({ output: 'testy terminal\n', truncated: false, status: { exitCode: 0, signal: null } });
});
