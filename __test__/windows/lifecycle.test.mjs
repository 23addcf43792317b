// Output, exit status and the end of a terminal on Windows: one pipe for stdout and stderr in
// order, stdin at EOF, the 32-bit exit code, kill/timeout/release as Node reports them
// (exitCode null, signal SIGTERM or SIGKILL), and the whole tree ended through the terminal's Job
// Object, detached grandchildren included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { acp, root, run, nodeExe, alive, survivors, cleanup, TREE_SCRIPT, treePids } from './helpers.mjs';

const node = (script) => ({ command: nodeExe, args: ['-e', script] });

test('stdout and stderr share one pipe: interleaved writes keep their order', async () => {
  const chunks = [];
  const r = await run(node('const fs = require("fs"); for (let i = 0; i < 200; i++) fs.writeSync(i % 2 ? 2 : 1, i + "\\n");'), { onOutput: (c) => void chunks.push(c) });
  assert.equal(r.exitStatus.exitCode, 0);
  assert.deepEqual(r.output.split('\n').filter(Boolean), Array.from({ length: 200 }, (_, i) => String(i)));
  // options.onOutput got every byte, once, in order.
  assert.equal(Buffer.concat(chunks).toString(), r.output);
});

test('stdin is at EOF', async () => {
  const r = await run(node('process.stdout.write("read " + require("fs").readFileSync(0).length)'));
  assert.equal(r.output, 'read 0');
});

test("stdin: 'pipe': write() reaches the command in order, closeStdin() gives it EOF, later writes are refused", async () => {
  const t = await acp.createTerminal(node('let s = ""; process.stdin.setEncoding("utf8"); process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => process.stdout.write("GOT " + JSON.stringify(s)));'), { stdin: 'pipe' });
  try {
    await t.write('one ');
    await t.write(Buffer.from('twö\r\n'));
    await t.closeStdin();
    await assert.rejects(t.write('late'), (e) => e.code === 'ERR_STDIN_CLOSED');
    assert.deepEqual(await t.waitForExit(), { exitCode: 0, signal: null });
    assert.equal((await t.currentOutput()).output, 'GOT "one twö\\r\\n"');
  } finally {
    await t.release();
  }
});

test('output bytes are decoded as on Linux: invalid UTF-8 becomes U+FFFD, non-ASCII kept', async () => {
  const r = await run(node('process.stdout.write(Buffer.from([0x61, 0xff, 0x62, 0xc3, 0xa9, 0xe6, 0x97, 0xa5]))'));
  assert.equal(r.output, 'a\uFFFDbé日');
});

test('outputByteLimit keeps the tail and says truncated; outputBytes counts everything', async () => {
  const t = await acp.createTerminal({ ...node('process.stdout.write("x".repeat(100000) + "END")'), outputByteLimit: 1000 });
  await t.waitForExit();
  const snap = await t.currentOutput();
  assert.equal(snap.truncated, true);
  assert.ok(snap.output.length <= 1000 && snap.output.endsWith('xEND'), snap.output.slice(-20));
  assert.equal(t.outputBytes, 100003);
  await t.release();
});

test('exit codes are the 32-bit code: 0, 1, 255, 256 and an NTSTATUS (0xC0000005 = 3221225477)', async () => {
  for (const code of [0, 1, 255, 256, 0xc0000005]) {
    const r = await run(node(`process.exit(${code})`));
    assert.deepEqual(r.exitStatus, { exitCode: code, signal: null }, `exit ${code}`);
  }
  // The same through cmd, which takes it as a signed 32-bit number.
  const r = await run({ command: 'exit /b -1073741819' });
  assert.deepEqual(r.exitStatus, { exitCode: 3221225477, signal: null });
});

test('the exit code agrees with Node child_process for the same program', async () => {
  const viaNode = await new Promise((resolve) => spawn(nodeExe, ['-e', 'process.exit(0xC0000409)']).on('exit', (c) => resolve(c)));
  const ours = await run(node('process.exit(0xC0000409)'));
  assert.equal(ours.exitStatus.exitCode, viaNode);
});

function endedBy(exitStatus) {
  assert.equal(exitStatus.exitCode, null, JSON.stringify(exitStatus));
  assert.ok(exitStatus.signal === 'SIGTERM' || exitStatus.signal === 'SIGKILL', JSON.stringify(exitStatus));
}

test('kill(): exitCode null and SIGTERM or SIGKILL, as Node reports a killed child on Windows, even when Ctrl+Break and Ctrl+C are ignored', async () => {
  const t = await acp.createTerminal(node('process.on("SIGBREAK", () => {}); process.on("SIGINT", () => {}); console.log("READY"); setInterval(() => {}, 1000)'), { killGraceMs: 300 });
  while (!(await t.currentOutput()).output.includes('READY')) await new Promise((r) => setTimeout(r, 100));
  await t.kill();
  endedBy(await t.waitForExit());
  assert.equal(alive(t.pid), false);
  await t.release();
});

test('timeoutMs ends the command: timedOut, exitCode null, a signal name', async () => {
  const t = await acp.createTerminal(node('setInterval(() => {}, 1000)'), { timeoutMs: 500, killGraceMs: 200 });
  endedBy(await t.waitForExit());
  assert.equal(t.timedOut, true);
  await t.release();
});

test('kill() ends the whole tree: children, and grandchildren started detached', async () => {
  const t = await acp.createTerminal(node(TREE_SCRIPT));
  const pids = await treePids(t);
  try {
    assert.ok(pids.every(alive));
    await t.kill();
    endedBy(await t.waitForExit());
    assert.deepEqual(await survivors([t.pid, ...pids]), []);
  } finally {
    cleanup(pids);
    await t.release();
  }
});

test('release() of a running terminal ends the whole tree; a wait begun before it sees exitCode null and a signal', async () => {
  const t = await acp.createTerminal(node(TREE_SCRIPT));
  const pids = await treePids(t);
  try {
    const exited = t.waitForExit();
    await t.release();
    endedBy(await exited);
    assert.deepEqual(await survivors([t.pid, ...pids]), []);
  } finally {
    cleanup(pids);
  }
});

test('timeoutMs ends the whole tree', async () => {
  const t = await acp.createTerminal(node(TREE_SCRIPT), { timeoutMs: 3000, killGraceMs: 200 });
  const pids = await treePids(t);
  try {
    endedBy(await t.waitForExit());
    assert.deepEqual(await survivors(pids), []);
  } finally {
    cleanup(pids);
    await t.release();
  }
});

test('control: without our Job Object a detached grandchild survives the kill of its parent', async () => {
  // What the tree tests above would see without containment: Node's own kill leaves it running.
  const child = spawn(nodeExe, ['-e', TREE_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const pids = await new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /PIDS (\[[0-9,]+\])/.exec(out);
      if (m) resolve(JSON.parse(m[1]));
    });
  });
  try {
    child.kill();
    await new Promise((r) => child.on('exit', r));
    const [detached, attached] = pids;
    assert.deepEqual(await survivors([attached]), []);
    assert.equal(alive(detached), true);
  } finally {
    cleanup(pids);
  }
});

test('the tree dies with the Node process that created it (KILL_ON_JOB_CLOSE) when taskkill /F ends that Node', async () => {
  const owner = `
    const acp = require(${JSON.stringify(root)});
    acp.createTerminal({ command: process.execPath, args: ['-e', ${JSON.stringify(TREE_SCRIPT)}] }).then(async (t) => {
      for (;;) {
        const s = await t.currentOutput();
        const m = /PIDS (\\[[0-9,]+\\])/.exec(s.output);
        if (m) { console.log('TREE ' + JSON.stringify([t.pid, ...JSON.parse(m[1])])); break; }
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    setInterval(() => {}, 1000);
  `;
  const child = spawn(nodeExe, ['-e', owner], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const pids = await new Promise((resolve, reject) => {
    child.on('exit', (c) => reject(new Error(`owner exited ${c}: ${out}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /TREE (\[[0-9,]+\])/.exec(out);
      if (m) resolve(JSON.parse(m[1]));
    });
  });
  try {
    assert.ok(pids.every(alive));
    // taskkill /F is TerminateProcess from outside: the owner runs no code of its own (no exit
    // handler, no release), so only the job's KILL_ON_JOB_CLOSE can end the tree.
    const killed = spawnSync('taskkill', ['/F', '/PID', String(child.pid)], { encoding: 'utf8' });
    assert.equal(killed.status, 0, `taskkill: ${killed.stdout}${killed.stderr}`);
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
    assert.deepEqual(await survivors(pids), []);
  } finally {
    cleanup(pids);
  }
});
