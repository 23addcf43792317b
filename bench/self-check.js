'use strict';
/**
 * Self-check of an implementation of the terminal API (default: bench/node-terminal.js).
 *   node bench/self-check.js            # the child_process implementation
 *   node bench/self-check.js --native   # the addon (require('..'))
 * Prints one line per check and exits 1 on any failure. Not part of the jest suite.
 */
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const os = require('os');

const useNative = process.argv.includes('--native');
const impl = useNative ? require('..') : require('./node-terminal');
const { createTerminal } = impl;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function alive(pid) {
  // A zombie (killed, not yet reaped by its new parent) counts as dead.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

check('shell rule: no args runs /bin/sh -c', async () => {
  const t = await createTerminal({ command: 'echo $((1+2)) | tr 3 x' });
  assert.deepStrictEqual(await t.waitForExit(), { exitCode: 0, signal: null });
  const o = await t.currentOutput();
  assert.strictEqual(o.output, 'x\n');
  assert.strictEqual(o.truncated, false);
  assert.deepStrictEqual(o.exitStatus, { exitCode: 0, signal: null });
  await t.release();
});

check('args: exec directly, argv literal', async () => {
  const t = await createTerminal({ command: 'printf', args: ['%s|', 'a b', '$HOME', '*'] });
  await t.waitForExit();
  assert.strictEqual((await t.currentOutput()).output, 'a b|$HOME|*|');
  await t.release();
});

check('ENOENT for a missing executable with args', async () => {
  await assert.rejects(createTerminal({ command: '/nonexistent/x', args: ['1'] }), (e) => e.code === 'ENOENT');
});

check('ERR_INVALID_CWD / ERR_INVALID_ARG', async () => {
  await assert.rejects(createTerminal({ command: 'true', cwd: 'rel' }), (e) => e.code === 'ERR_INVALID_CWD');
  await assert.rejects(createTerminal({ command: 'true', cwd: '/nonexistent-dir' }), (e) => e.code === 'ERR_INVALID_CWD');
  await assert.rejects(createTerminal({ command: 'true', cwd: '/etc/passwd' }), (e) => e.code === 'ERR_INVALID_CWD');
  await assert.rejects(createTerminal({ command: 'a\0b' }), (e) => e.code === 'ERR_INVALID_ARG');
  await assert.rejects(createTerminal({ command: 'true', outputByteLimit: -1 }), (e) => e.code === 'ERR_INVALID_ARG');
  await assert.rejects(
    createTerminal({ command: 'true', env: [{ name: 'A=B', value: 'x' }] }),
    (e) => e.code === 'ERR_INVALID_ARG',
  );
});

check('cwd and env (request env wins, inherited kept)', async () => {
  process.env.ACP_SELF_CHECK_INHERITED = 'inh';
  const t = await createTerminal({
    command: 'pwd; echo $FOO $ACP_SELF_CHECK_INHERITED',
    cwd: os.tmpdir(),
    env: [{ name: 'FOO', value: 'bar' }],
  });
  await t.waitForExit();
  assert.strictEqual((await t.currentOutput()).output, `${fs.realpathSync(os.tmpdir())}\nbar inh\n`);
  await t.release();
});

check('stdin is /dev/null', async () => {
  const t = await createTerminal({ command: 'cat; echo done' });
  await t.waitForExit();
  assert.strictEqual((await t.currentOutput()).output, 'done\n');
  await t.release();
});

check('stdout+stderr merged in order (1000 alternations)', async () => {
  const t = await createTerminal({
    command: 'i=0; while [ $i -lt 1000 ]; do echo o$i; echo e$i >&2; i=$((i+1)); done',
  });
  await t.waitForExit();
  const lines = (await t.currentOutput()).output.trimEnd().split('\n');
  assert.strictEqual(lines.length, 2000);
  for (let i = 0; i < 1000; i++) {
    assert.strictEqual(lines[2 * i], `o${i}`);
    assert.strictEqual(lines[2 * i + 1], `e${i}`);
  }
  await t.release();
});

check('exit code and signal', async () => {
  const a = await createTerminal({ command: 'exit 7' });
  assert.deepStrictEqual(await a.waitForExit(), { exitCode: 7, signal: null });
  const b = await createTerminal({ command: 'kill -9 $$' });
  assert.deepStrictEqual(await b.waitForExit(), { exitCode: null, signal: 'SIGKILL' });
  await a.release();
  await b.release();
});

check('large output exact (20 MB, no limit)', async () => {
  const n = 20 * 1000 * 1000;
  const t = await createTerminal({ command: `head -c ${n} /dev/zero | tr '\\0' 'a'` });
  await t.waitForExit();
  const o = await t.currentOutput();
  assert.strictEqual(o.output.length, n);
  assert.strictEqual(o.truncated, false);
  assert.ok(/^a+$/.test(o.output));
  await t.release();
});

check('tail limit: newest bytes, UTF-8 boundary, truncated sticky', async () => {
  // 3-byte characters '€' (e2 82 ac) then a marker; limit 10 cuts inside a character.
  const t = await createTerminal({ command: "printf '€€€€€€€€€€€€€€€€€€€€END'", outputByteLimit: 10 });
  await t.waitForExit();
  const o = await t.currentOutput();
  // 10 bytes = 'END' (3) + 7 bytes = 2 full '€' + 1 stray continuation byte -> dropped.
  assert.strictEqual(o.output, '€€END');
  assert.strictEqual(o.truncated, true);
  await t.release();
  const u = await createTerminal({ command: "printf 'abc'", outputByteLimit: 3 });
  await u.waitForExit();
  assert.deepStrictEqual(
    { output: (await u.currentOutput()).output, truncated: (await u.currentOutput()).truncated },
    { output: 'abc', truncated: false },
  );
  await u.release();
  const z = await createTerminal({ command: "printf 'abc'", outputByteLimit: 0 });
  await z.waitForExit();
  const zo = await z.currentOutput();
  assert.strictEqual(zo.output, '');
  assert.strictEqual(zo.truncated, true);
  await z.release();
});

check('tail limit over a multi-byte flood equals the last <= limit bytes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-selfcheck-'));
  const file = path.join(dir, 'text');
  const unit = Buffer.from('héllo wörld — ✓ 日本語 🎉 ', 'utf8');
  const parts = [];
  let size = 0;
  let i = 0;
  while (size < 3 * 1024 * 1024) {
    const line = Buffer.concat([Buffer.from(String(i++)), unit, Buffer.from('\n')]);
    parts.push(line);
    size += line.length;
  }
  const all = Buffer.concat(parts);
  fs.writeFileSync(file, all);
  for (const limit of [1024 * 1024, 65537, 100003]) {
    const t = await createTerminal({ command: 'cat', args: [file], outputByteLimit: limit });
    await t.waitForExit();
    const o = await t.currentOutput();
    let start = all.length - limit;
    while ((all[start] & 0xc0) === 0x80) start++;
    assert.strictEqual(o.output, all.subarray(start).toString('utf8'), `limit ${limit}`);
    assert.strictEqual(o.truncated, true);
    await t.release();
  }
  fs.rmSync(dir, { recursive: true });
});

check('kill: SIGTERM to the whole group; output and wait still work', async () => {
  const t = await createTerminal({ command: 'sleep 100 & echo $!; sleep 100' });
  let out = '';
  for (let i = 0; i < 200 && !out.includes('\n'); i++) {
    await sleep(10);
    out = (await t.currentOutput()).output;
  }
  const grandchild = Number(out.trim());
  assert.ok(alive(grandchild));
  await t.kill();
  assert.deepStrictEqual(await t.waitForExit(), { exitCode: null, signal: 'SIGTERM' });
  await sleep(50);
  assert.ok(!alive(grandchild), 'grandchild survived kill');
  assert.ok((await t.currentOutput()).exitStatus);
  await t.kill(); // kill after exit is fine
  await t.release();
});

check('kill: SIGKILL after the grace period for a TERM-trapping child', async () => {
  const t = await createTerminal(
    { command: "trap '' TERM; echo ready; while :; do sleep 0.05; done" },
    { killGraceMs: 300 },
  );
  while (!(await t.currentOutput()).output.includes('ready')) await sleep(10);
  const t0 = Date.now();
  await t.kill();
  const st = await t.waitForExit();
  const dt = Date.now() - t0;
  assert.deepStrictEqual(st, { exitCode: null, signal: 'SIGKILL' });
  assert.ok(dt >= 250 && dt < 3000, `took ${dt} ms`);
  await t.release();
});

check('exit not held hostage by a grandchild keeping the pipe (bounded drain)', async () => {
  const t = await createTerminal({ command: 'sleep 5 & echo parent-done' });
  const t0 = Date.now();
  const st = await t.waitForExit();
  const dt = Date.now() - t0;
  assert.deepStrictEqual(st, { exitCode: 0, signal: null });
  assert.ok(dt < 3000, `took ${dt} ms`);
  assert.strictEqual((await t.currentOutput()).output, 'parent-done\n');
  await t.release(); // leader already exited: release must not hang
});

check('a blocked event loop does not cut the output short (drain is checked after a poll)', async () => {
  const ts = await Promise.all(Array.from({ length: 20 }, () => createTerminal({ command: 'echo hi; echo there >&2' })));
  const t0 = Date.now();
  while (Date.now() - t0 < 400); // block the loop well past every drain timer
  for (const t of ts) {
    await t.waitForExit();
    assert.strictEqual((await t.currentOutput()).output, 'hi\nthere\n');
    await t.release();
  }
});

check('release: later calls (but release) reject with ERR_TERMINAL_RELEASED, running child killed', async () => {
  const t = await createTerminal({ command: 'sleep 100' });
  const pid = t.pid;
  await t.release();
  await t.release(); // a second release resolves
  for (const m of ['currentOutput', 'waitForExit', 'kill']) {
    await assert.rejects(t[m](), (e) => e.code === 'ERR_TERMINAL_RELEASED', m);
  }
  await sleep(100);
  assert.ok(!alive(pid), 'child survived release');
});

check('onOutput: raw Buffer chunks adding up to the output', async () => {
  const t = await createTerminal({ command: 'head -c 3000000 /dev/zero' });
  let n = 0;
  let allBuffers = true;
  const off = t.onOutput((c) => {
    if (!Buffer.isBuffer(c)) allBuffers = false;
    n += c.length;
  });
  await t.waitForExit();
  off();
  assert.ok(allBuffers);
  // A listener attached after spawn may miss the first bytes; it must not see more than was written.
  assert.ok(n > 0 && n <= 3000000, `listener saw ${n}`);
  await t.release();
});

check('tail: 200 runs of "write 2 MB then exit" lose nothing', async () => {
  for (let i = 0; i < 200; i++) {
    const t = await createTerminal({ command: 'head -c 2000000 /dev/zero' });
    await t.waitForExit();
    const o = await t.currentOutput();
    assert.strictEqual(o.output.length, 2000000, `run ${i}`);
    await t.release();
  }
});

(async () => {
  let failed = 0;
  for (const { name, fn } of checks) {
    const t0 = Date.now();
    try {
      await fn();
      console.log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (err) {
      failed++;
      console.log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`);
    }
  }
  console.log(failed ? `${failed} of ${checks.length} checks failed` : `all ${checks.length} checks passed`);
  process.exit(failed ? 1 : 0);
})();
