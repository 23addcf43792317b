// What Windows has and has not: job limits (processes, memory, CPU time) and ENOTSUP for the
// rest, the sandbox refused (fail closed), containmentInfo(), processCwd and processStartTime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acp, native, run, nodeExe, tempDir, jobLimitUnenforced } from './helpers.mjs';

const node = (script) => ({ command: nodeExe, args: ['-e', script] });

test('limits.processes: the terminal cannot start more processes than allowed', { skip: jobLimitUnenforced('processes') }, async () => {
  const script = 'const r = require("child_process").spawnSync(process.execPath, ["-e", "1"]); process.stdout.write(r.error ? "refused " + r.error.code : "started " + r.status)';
  const free = await run(node(script));
  assert.equal(free.output, 'started 0');
  const limited = await run(node(script), { limits: { processes: 1 } });
  assert.match(limited.output, /^refused /);
});

test('limits.addressSpaceBytes: an allocation above the limit fails', { skip: jobLimitUnenforced('memory') }, async () => {
  const script = 'try { const b = Buffer.alloc(512 * 1024 * 1024, 1); process.stdout.write("allocated " + b.length) } catch (e) { process.stdout.write("failed") }';
  const free = await run(node(script));
  assert.equal(free.output, `allocated ${512 * 1024 * 1024}`, 'without the limit the allocation succeeds');
  const r = await run(node(script), { limits: { addressSpaceBytes: 256 * 1024 * 1024 } });
  assert.notEqual(r.output, `allocated ${512 * 1024 * 1024}`, JSON.stringify(r));
});

test('limits.cpuSeconds: a busy loop is ended after its CPU time (not by the timeout)', { skip: jobLimitUnenforced('cpu') }, async () => {
  const t = await acp.createTerminal(node('for (;;) {}'), { limits: { cpuSeconds: 1 }, timeoutMs: 120000 });
  const exitStatus = await t.waitForExit();
  assert.equal(t.timedOut, false, JSON.stringify(exitStatus));
  assert.notEqual(exitStatus.exitCode, 0);
  await t.release();
});

for (const [name, limits] of [
  ['openFiles', { openFiles: 64 }],
  ['fileSizeBytes', { fileSizeBytes: 1 << 20 }],
]) {
  test(`limits.${name}: refused with ENOTSUP (Windows has no such job limit), nothing started`, async () => {
    const { dir, remove } = tempDir();
    try {
      const marker = `${dir}\\ran`;
      await assert.rejects(acp.createTerminal(node(`require("fs").writeFileSync(${JSON.stringify(marker)}, "")`), { limits }), (e) => {
        assert.equal(e.code, 'ENOTSUP', e.message);
        assert.match(e.message, new RegExp(`limits\\.${name}`));
        return true;
      });
      assert.equal(fs.existsSync(marker), false);
    } finally {
      remove();
    }
  });
}

test('sandbox: ERR_SANDBOX_UNAVAILABLE, the command never runs (fail closed)', async () => {
  const { dir, remove } = tempDir();
  try {
    const marker = `${dir}\\ran`;
    await assert.rejects(
      acp.createTerminal({ command: `type nul > "${marker}"` }, { sandbox: { writableRoots: [dir] } }),
      (e) => {
        assert.equal(e.code, 'ERR_SANDBOX_UNAVAILABLE');
        return true;
      },
    );
    assert.equal(fs.existsSync(marker), false);
  } finally {
    remove();
  }
});

test('containmentInfo() answers for Windows: job objects, no guardian, no cgroups, no sandbox (every promise false, with its reasons)', () => {
  const info = acp.containmentInfo();
  assert.equal(info.jobObjects, true);
  assert.equal(info.guardianPid, null); // KILL_ON_JOB_CLOSE does the guardian's work on Windows
  assert.equal(info.cgroups, false);
  assert.equal(info.parentDeathSignal, false);
  assert.equal(info.sandbox.available, false);
  assert.deepEqual(Object.values(info.sandbox.promises).filter((v) => v !== false), []);
  assert.ok(info.sandbox.reasons.length > 0 && info.sandbox.reasons.every((r) => typeof r === 'string' && r.length > 0), JSON.stringify(info.sandbox.reasons));
  assert.equal(typeof info.pidsLimit, 'boolean');
});

test('process groups and sessions: ENOTSUP saying the job holds the tree (terminal.kill() ends it)', async () => {
  const t = await acp.createTerminal(node('setInterval(() => {}, 1000)'));
  try {
    const notSupported = (name) => (e) => {
      assert.equal(e.code, 'ENOTSUP', e.message);
      assert.match(e.message, new RegExp(`^${name}: .*no process groups.*terminal\\.kill\\(\\)`));
      return true;
    };
    await assert.rejects(acp.killProcessGroup(t.pid, 0), notSupported('killProcessGroup'));
    assert.throws(() => acp.sessionTreePids(t.pid), notSupported('sessionTreePids'));
    assert.throws(() => acp.killSessionTree(t.pid), notSupported('killSessionTree'));
    // Nothing was signalled: the command still runs until the terminal ends it.
    assert.ok(!(await t.currentOutput()).exitStatus);
  } finally {
    await t.release();
  }
});

test('processCwd is null on Windows (another process cwd cannot be read); processStartTime is stable, distinct per process, null when there is none', async () => {
  const a = await acp.createTerminal(node('setInterval(() => {}, 1000)'));
  const b = await acp.createTerminal(node('setInterval(() => {}, 1000)'));
  try {
    assert.equal(acp.processCwd(a.pid), null);
    assert.equal(acp.processCwd(process.pid), null);
    const start = native.processStartTime(a.pid);
    assert.ok(Number.isFinite(start) && start > 0, String(start));
    assert.equal(native.processStartTime(a.pid), start);
    const startB = native.processStartTime(b.pid);
    assert.ok(Number.isFinite(startB) && startB > 0, String(startB));
    assert.notEqual(startB, start);
    assert.ok(native.processStartTime(process.pid) < start, 'the Node process started before its terminal');
    // Windows pids are multiples of 4 below 2^32; no process has this one.
    assert.equal(native.processStartTime(0x3ffffffc), null);
    assert.throws(() => native.processStartTime(-1), (e) => e.code === 'ERR_INVALID_ARG' && /pid/.test(e.message));
  } finally {
    await a.release();
    await b.release();
  }
});

test('allowedRoots: a cwd inside a root runs there (root and cwd in any case, with ..), one outside is ERR_CWD_OUTSIDE_ROOTS; the host the same', async () => {
  const { dir, remove } = tempDir();
  const outside = tempDir();
  try {
    const sub = path.join(dir, 'Sub');
    fs.mkdirSync(sub);
    const real = fs.realpathSync.native(sub);
    for (const [cwd, roots] of [
      [sub, [dir]],
      [sub.toLowerCase(), [dir.toUpperCase()]],
      [`${sub}\\..\\Sub`, [dir]],
    ]) {
      const t = await acp.createTerminal({ command: 'cd', cwd }, { allowedRoots: roots });
      try {
        assert.deepEqual(await t.waitForExit(), { exitCode: 0, signal: null });
        // cmd's `cd` prints where it runs; the handle says the same directory, without \\?\.
        assert.equal((await t.currentOutput()).output.toLowerCase(), `${real}\r\n`.toLowerCase(), JSON.stringify(cwd));
        assert.equal(t.cwd.toLowerCase(), real.toLowerCase());
      } finally {
        await t.release();
      }
    }
    await assert.rejects(acp.createTerminal({ command: 'cd', cwd: outside.dir }, { allowedRoots: [dir] }), (e) => {
      assert.equal(e.code, 'ERR_CWD_OUTSIDE_ROOTS', e.message);
      assert.ok(e.message.includes(outside.dir), e.message);
      return true;
    });
    const host = new acp.TerminalHost({ allowedRoots: [dir.toUpperCase()] });
    try {
      const { terminalId } = await host.createTerminal({ sessionId: 's1', command: 'cd', cwd: sub });
      assert.deepEqual(await host.waitForTerminalExit({ sessionId: 's1', terminalId }), { exitCode: 0, signal: null });
      await host.releaseTerminal({ sessionId: 's1', terminalId });
      await assert.rejects(host.createTerminal({ sessionId: 's1', command: 'cd', cwd: outside.dir }), (e) => e.code === 'ERR_CWD_OUTSIDE_ROOTS');
    } finally {
      await host.close();
    }
  } finally {
    remove();
    outside.remove();
  }
});

test('cwd in the forms Windows accepts (/ separators, a trailing \\, another case) runs in the canonical directory; relative and drive-less ones are ERR_INVALID_CWD', async () => {
  const { dir, remove } = tempDir();
  try {
    const real = fs.realpathSync.native(dir);
    for (const cwd of [dir.replace(/\\/g, '/'), `${dir}\\`, dir.toLowerCase()]) {
      const r = await acp.createTerminal({ command: 'cd', cwd });
      try {
        await r.waitForExit();
        assert.equal(r.cwd, real, JSON.stringify(cwd));
        assert.equal((await r.currentOutput()).output, `${real}\r\n`, JSON.stringify(cwd));
      } finally {
        await r.release();
      }
    }
    for (const cwd of ['C:relative', '\\no-drive']) {
      await assert.rejects(acp.createTerminal({ command: 'cd', cwd }), (e) => {
        assert.equal(e.code, 'ERR_INVALID_CWD', e.message);
        assert.ok(e.message.includes(cwd), e.message);
        return true;
      });
    }
  } finally {
    remove();
  }
});

test('bad input still gets a clear error: unknown cwd is ERR_INVALID_CWD naming it', async () => {
  await assert.rejects(acp.createTerminal({ command: 'echo x', cwd: 'C:\\acp-no-such-dir' }), (e) => {
    assert.equal(e.code, 'ERR_INVALID_CWD');
    assert.match(e.message, /acp-no-such-dir/);
    return true;
  });
});
