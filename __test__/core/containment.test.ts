// Containment (native side): no orphans however Node ends, escaped descendants,
// timeouts, resource limits, and a create/release soak with no leaks.
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';

import { containmentInfo, createTerminal, resolveProgram } from '../../index';
import { eventually, fdCount, isGone, ROOT, run, runNode, zombieChildren } from './helpers';
import { hasFeature, testIf } from '../fixtures/require-feature';


const info = containmentInfo();

/** Whether this process may create a cgroup v2 under its own (checked independently of the addon). */
function canCreateCgroup(): boolean {
  const mount = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' - '))
    .find(([, right]) => right?.startsWith('cgroup2 '))?.[0]
    ?.split(' ')[4];
  const own = /^0::(.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (!mount || own === undefined) return false;
  const probe = `${mount}${own.replace(/\/$/, '')}/acp-probe-${process.pid}`;
  try {
    fs.mkdirSync(probe);
    fs.rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** Starts a Node process that creates a terminal with a grandchild and an escaped (setsid)
 * descendant, reports the pids, and then waits to be killed. */
function startNode(extra = ''): Promise<{ node: ReturnType<typeof spawn>; pids: [number, number, number] }> {
  const script = `
    ${extra}
    const { createTerminal } = require('.');
    (async () => {
      const t = await createTerminal({ command: 'sleep 100 & echo $!; setsid sh -c "sleep 100 & echo \\\\$!; exec sleep 100" & exec sleep 100' });
      let lines = [];
      while (lines.length < 2) {
        lines = (await t.currentOutput()).output.trim().split('\\n').filter(Boolean);
        await new Promise((r) => setTimeout(r, 10));
      }
      console.log(JSON.stringify([t.pid, ...lines.map(Number)]));
      setInterval(() => {}, 1000);
    })();
  `;
  const node = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    node.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ node, pids: JSON.parse(out) });
    });
    node.on('exit', () => reject(new Error(`node exited early: ${out}`)));
  });
}

describe('no orphans however Node ends', () => {
  test.each([
    ['SIGKILL', ''],
    ['SIGTERM (default handling)', ''],
    ['SIGINT (default handling)', ''],
  ])('Node killed by %s: the terminal, its grandchild and an escaped descendant die', async (how) => {
    const { node, pids } = await startNode();
    const [leader, grandchild, escaped] = pids;
    expect([leader, grandchild, escaped].every((p) => !isGone(p))).toBe(true);
    node.kill(how.split(' ')[0] as NodeJS.Signals);
    await new Promise((r) => node.once('exit', r));
    const cgroups = hasFeature('cgroups', info.cgroups, 'containmentInfo().cgroups is false: no cgroup v2 this process may create');
    const expected = cgroups ? [leader, grandchild, escaped] : [leader, grandchild];
    await eventually(() => expected.every(isGone), `pids ${expected} gone after ${how}`);
    if (!cgroups) process.kill(escaped, 'SIGKILL');
  });
});

describe('descendants that leave the process group', () => {
  const escapeLine =
    'setsid sh -c "sleep 100 & echo \\$!; exec sleep 100" & sh -c "sleep 100 & echo \\$!" & wait';

  testIf('cgroups', info.cgroups, 'containmentInfo().cgroups is false: no cgroup v2 this process may create')('are killed by kill() (cgroup)', async () => {
    const t = await createTerminal({ command: escapeLine });
    let pids: number[] = [];
    while (pids.length < 2) {
      pids = (await t.currentOutput()).output.trim().split('\n').filter(Boolean).map(Number);
      await new Promise((r) => setTimeout(r, 10));
    }
    await t.kill();
    await eventually(() => pids.every(isGone), 'escaped descendants gone');
    await t.release();
  });

  testIf('cgroups', info.cgroups, 'containmentInfo().cgroups is false: no cgroup v2 this process may create')('are killed by release() of an exited terminal (double fork)', async () => {
    const t = await createTerminal({ command: '(setsid sleep 100 & echo $!) ; (sh -c "sleep 100 & echo \\$!" &)' });
    await t.waitForExit();
    const pids = (await t.currentOutput()).output.trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    expect(pids.every((p) => !isGone(p))).toBe(true);
    await t.release();
    await eventually(() => pids.every(isGone), 'double-forked descendants gone');
  });

  // The tenth attack: the guardian started when the first terminal was listed, after its launch; a
  // Node SIGKILLed before that had no guardian, and the first command's setsid child lived on.
  testIf('cgroups', info.cgroups, 'containmentInfo().cgroups is false: no cgroup v2 this process may create')(
    "Node SIGKILLed by its first command at once: that command's setsid child dies too",
    async () => {
      for (let run = 0; run < 4; run++) {
        const tag = `acp-first-${process.pid}-${run}-${Date.now() % 100000}`;
        // The command kills its parent, Node, as soon as it runs.
        const script = `require('.').createTerminal({ command: 'setsid sleep 300 & kill -9 $PPID', env: [{ name: 'ACP_FIRST_TAG', value: ${JSON.stringify(tag)} }] });`;
        await new Promise<void>((resolve) => spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: 'ignore' }).on('exit', () => resolve()));
        const tagged = () =>
          fs.readdirSync('/proc').filter((e) => {
            try {
              return /^\d+$/.test(e) && fs.readFileSync(`/proc/${e}/environ`, 'utf8').includes(tag) && fs.readFileSync(`/proc/${e}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
            } catch {
              return false;
            }
          });
        await eventually(() => tagged().length === 0, `run ${run}: the setsid sleep gone`, 10000);
      }
    },
  );

  // The twelfth attack: a worker that alone used the addon, terminated during a burst of creates, took
  // the addon's runtime with it: the output pump of a terminal whose start finished then was dropped
  // at once, so its command (killed as it was recorded) stayed a zombie of Node for good, and a
  // sandboxed one kept its namespace's init stuck in the kernel's teardown. Three workers in a row.
  test('worker.terminate() of the only environment using the addon, mid-burst: every command is reaped, no zombie of Node is left', () => {
    const sandboxed = hasFeature('sandbox', info.sandbox.available, `containmentInfo().sandbox is unavailable: ${info.sandbox.reasons.join('; ')}`);
    const worker = `
      const { parentPort } = require('node:worker_threads');
      const { containmentInfo, createTerminal } = require(process.cwd());
      const shapes = [{}, { pty: { cols: 80, rows: 24 } }, ...(${sandboxed} ? [{ sandbox: { writableRoots: [] } }, { sandbox: { writableRoots: [], network: true } }] : [])];
      let i = 0;
      let told = false;
      setInterval(() => {
        for (let k = 0; k < 2 && i < 80; k++, i++) {
          createTerminal({ command: 'sleep 100' }, shapes[i % shapes.length]).then((t) => {
            if (!told) parentPort.postMessage({ guardian: containmentInfo().guardianPid });
            told = true;
          }, () => {});
        }
      }, 5);
    `;
    const r = runNode(`
      const fs = require('node:fs');
      const { Worker } = require('node:worker_threads');
      // Node's children other than the guardian (the only one that may stay), with their states.
      let guardian = 0;
      const children = () => fs.readdirSync('/proc/self/task').flatMap((t) => fs.readFileSync('/proc/self/task/' + t + '/children', 'utf8').split(' ').filter(Boolean))
        .map((p) => { try { return { pid: +p, state: fs.readFileSync('/proc/' + p + '/stat', 'utf8').split(') ')[1][0], argv: fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').replace(/\\0/g, ' ').trim().slice(0, 60) }; } catch { return null; } })
        .filter((c) => c && c.pid !== guardian);
      (async () => {
        const runs = [];
        for (let run = 0; run < 3; run++) {
          const w = new Worker(${JSON.stringify(worker)}, { eval: true });
          w.on('error', () => {});
          guardian = (await new Promise((r) => w.once('message', r))).guardian;
          await new Promise((r) => setTimeout(r, 100));
          await w.terminate();
          const deadline = Date.now() + 10000;
          while (children().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          runs.push(children());
        }
        console.log(JSON.stringify(runs));
        process.exit(0);
      })();
    `, [], 90_000);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([[], [], []]);
  }, 120_000);

  // The thirteenth attack: a worker whose JS thread was busy while its pty terminals started never got
  // their handles; terminated, it left two /dev/ptmx descriptors per terminal open in Node for good
  // (the pty control and the input task's), the processes themselves killed and reaped.
  test('worker.terminate() before its terminals were handed over: no descriptor of theirs stays open', () => {
    const worker = `
      const { createTerminal } = require(process.cwd());
      for (let i = 0; i < 10; i++) createTerminal({ command: 'sleep 30', cwd: '/' }, { pty: { cols: 80, rows: 24 } }).catch(() => {});
      for (let i = 0; i < 5; i++) createTerminal({ command: 'sleep 30', cwd: '/' }, { stdin: 'pipe' }).catch(() => {});
      setTimeout(() => { for (;;) {} }, 0);
    `;
    const r = runNode(`
      const fs = require('node:fs');
      const { Worker } = require('node:worker_threads');
      const { containmentInfo } = require('.');
      containmentInfo();
      const fds = () => fs.readdirSync('/proc/self/fd').map((f) => { try { return fs.readlinkSync('/proc/self/fd/' + f); } catch { return ''; } });
      const ours = () => fds().filter((l) => l === '/dev/ptmx' || l.startsWith('pipe:')).length;
      (async () => {
        const before = ours();
        const w = new Worker(${JSON.stringify(worker)}, { eval: true });
        w.on('error', () => {});
        await new Promise((r) => setTimeout(r, 1500));
        await w.terminate();
        const deadline = Date.now() + 10000;
        while (ours() > before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        console.log(JSON.stringify({ before, after: ours(), ptmx: fds().filter((l) => l === '/dev/ptmx').length }));
        process.exit(0);
      })();
    `);
    expect(r.stderr).toBe('');
    const { before, after, ptmx } = JSON.parse(r.stdout);
    expect({ after, ptmx }).toEqual({ after: before, ptmx: 0 });
  });

  test('cgroups are used where the system allows them (this machine does)', () => {
    expect(typeof info.cgroups).toBe('boolean');
    expect(info.guardianPid).toBeGreaterThan(1);
    expect(typeof info.pidsLimit).toBe('boolean');
    if (hasFeature('cgroups', canCreateCgroup(), 'this process may not create a cgroup v2 under its own')) expect(info.cgroups).toBe(true);
  });
});

describe('what each platform guarantees', () => {
  const linux = process.platform === 'linux';

  test('containmentInfo() says it: parent-death signal and address-space limit on Linux only', () => {
    expect(info.parentDeathSignal).toBe(linux);
    expect(info.addressSpaceLimit).toBe(linux);
    // A terminal is a Job Object on Windows only (its suites check it there).
    expect(info.jobObjects).toBe(false);
    if (!linux) {
      expect(info.cgroups).toBe(false);
      expect(info.pidsLimit).toBe(false);
    }
    expect(typeof info.guardianPid).toBe('number');
  });

  // macOS accepts RLIMIT_AS but does not enforce it: refused rather than ignored.
  testIf('darwin', process.platform === 'darwin', `a macOS-only refusal, on ${process.platform}`)('macOS refuses limits.addressSpaceBytes with ENOTSUP', async () => {
    await expect(createTerminal({ command: 'true' }, { limits: { addressSpaceBytes: 2 ** 30 } })).rejects.toMatchObject({
      code: 'ENOTSUP',
      message: expect.stringMatching(/limits\.addressSpaceBytes/),
    });
  });
});

describe('timeoutMs and resource limits', () => {
  test('timeoutMs kills a command that runs too long (SIGTERM, then SIGKILL)', async () => {
    const r = await run({ command: 'echo started; sleep 100' }, { timeoutMs: 200 });
    expect(r.status).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(r.output).toBe('started\n');
    const trap = await run({ command: "trap '' TERM; while :; do sleep 0.05; done" }, { timeoutMs: 100, killGraceMs: 200 });
    expect(trap.status).toEqual({ exitCode: null, signal: 'SIGKILL' });
    const quick = await run({ command: 'exit 4' }, { timeoutMs: 60000 });
    expect(quick.status).toEqual({ exitCode: 4, signal: null });
  });

  test('limits are applied before the command starts', async () => {
    const r = await run(
      { command: 'ulimit -n; ulimit -t; ulimit -f; ulimit -v; grep "Max processes" /proc/self/limits | tr -s " "' },
      { limits: { openFiles: 32, cpuSeconds: 7, fileSizeBytes: 512 * 10, addressSpaceBytes: 1024 * 1024 * 1024, processes: 4000 } },
    );
    expect(r.output).toBe('32\n7\n10\n1048576\nMax processes 4000 4000 processes \n');
  });

  test('a file-size limit stops a writer with SIGXFSZ', async () => {
    const r = await run(
      { command: 'head -c 100000 /dev/zero > /dev/null; exec dd if=/dev/zero of=/tmp/acp-fsize-$$ bs=1024 count=64 2>/dev/null' },
      { limits: { fileSizeBytes: 4096 } },
    );
    expect(r.status).toEqual({ exitCode: null, signal: 'SIGXFSZ' });
  });

  test('limits.processes caps the processes alive at once, even for root (pids cgroup)', async () => {
    // Without a cap this would hold 64 sleeping processes; with it, forks fail beyond 10.
    const r = await run(
      { command: 'n=0; for i in $(seq 64); do sleep 5 & n=$((n+1)); done 2>/dev/null; ps -o pid= -g $$ | wc -l' },
      { limits: { processes: 10 } },
    );
    expect(Number(r.output.trim().split('\n').pop())).toBeLessThanOrEqual(10);
  });

  test('timedOut tells a timeout kill from other ends', async () => {
    const t = await createTerminal({ command: 'sleep 100' }, { timeoutMs: 100 });
    expect(t.timedOut).toBe(false);
    await t.waitForExit();
    expect(t.timedOut).toBe(true);
    await t.release();
    const u = await createTerminal({ command: 'true' }, { timeoutMs: 60000 });
    await u.waitForExit();
    expect(u.timedOut).toBe(false);
    await u.release();
  });

  test('resolveProgram resolves like spawn, accepts nulls, normalizes ./', () => {
    expect(resolveProgram('sh', { cwd: null, path: '/usr/bin:/bin' })).toMatch(/^\/(usr\/)?bin\/sh$/);
    expect(resolveProgram('./hostname', { cwd: '/bin', path: null })).toBe('/bin/hostname');
    expect(() => resolveProgram('no-such-prog-xyz', { path: '/bin' })).toThrow(/no-such-prog-xyz/);
    try {
      resolveProgram('no-such-prog-xyz');
    } catch (e) {
      expect((e as { code: string }).code).toBe('ENOENT');
    }
  });

  test('bad limits name the field', async () => {
    await expect(createTerminal({ command: 'true' }, { limits: { openFiles: -1 } })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('options.limits.openFiles'),
    });
    await expect(createTerminal({ command: 'true' }, { timeoutMs: NaN })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('options.timeoutMs'),
    });
  });
});

describe('soak', () => {
  const threads = () => fs.readdirSync('/proc/self/task').length;

  test('2,000 terminals created and released: no fd, zombie, thread or RSS growth', async () => {
    // Warm up the runtime, launcher thread and guardian, then measure.
    for (let i = 0; i < 50; i++) await (await createTerminal({ command: 'true' })).release();
    const fds = fdCount();
    const tasks = threads();
    const rss = process.memoryUsage().rss;
    for (let i = 0; i < 2000; i++) {
      const t = await createTerminal({ command: i % 4 === 0 ? 'sleep 5' : 'echo x' });
      if (i % 4) await t.waitForExit();
      await t.release();
    }
    expect(fdCount()).toBeLessThanOrEqual(fds);
    expect(zombieChildren()).toEqual([]);
    expect(threads()).toBeLessThanOrEqual(tasks + 2);
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
  }, 300000);
});
