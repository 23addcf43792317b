// pty terminals through ConPTY (write, keys, resize, text mode) and ShellSessions, which need
// Git for Windows' bash.exe and refuse clearly without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acp, BASH, NO_BASH, CONPTY_UNAVAILABLE } from './helpers.mjs';

async function waitFor(t, re) {
  for (;;) {
    const snap = await t.currentOutput();
    if (re.test(snap.output)) return snap.output;
    if (snap.exitStatus) throw new Error(`ended before ${re}: ${JSON.stringify(snap)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('pty: a command sees a console, its output arrives, exit code kept', { skip: CONPTY_UNAVAILABLE }, async () => {
  const t = await acp.createTerminal({ command: 'echo pty-ok& exit /b 4' }, { pty: { cols: 100, rows: 30 } });
  const exit = await t.waitForExit();
  assert.deepEqual(exit, { exitCode: 4, signal: null });
  assert.match((await t.currentOutput()).output, /pty-ok/);
  await t.release();
});

test('pty: write() feeds the console, sendKeys() sends Enter, resize() changes the size', { skip: CONPTY_UNAVAILABLE }, async () => {
  const script = 'process.stdin.setEncoding("utf8"); process.stdin.on("data", (d) => { if (d.includes("size")) console.log("SIZE " + process.stdout.columns + "x" + process.stdout.rows); else if (d.includes("quit")) process.exit(0); else console.log("GOT " + d.trim()); }); console.log("READY");';
  const t = await acp.createTerminal({ command: process.execPath, args: ['-e', script] }, { pty: { cols: 80, rows: 24 } });
  try {
    await waitFor(t, /READY/);
    await t.write('hello');
    await t.sendKeys(['Enter']);
    await waitFor(t, /GOT hello/);
    await t.resize(120, 40);
    await t.write('size\r');
    await waitFor(t, /SIZE 120x40/);
    await t.write('quit\r');
    assert.equal((await t.waitForExit()).exitCode, 0);
  } finally {
    await t.release();
  }
});

test("pty: output: 'text' shows what a person sees (escapes consumed, \\r overwrites)", { skip: CONPTY_UNAVAILABLE }, async () => {
  const t = await acp.createTerminal(
    { command: process.execPath, args: ['-e', 'process.stdout.write("abc\\rX\\x1b[31mred\\x1b[0m\\n")'] },
    { pty: {}, output: 'text' },
  );
  await t.waitForExit();
  assert.match((await t.currentOutput()).output, /^Xbcred$/m);
  await t.release();
});

test('pty: kill ends it as a pipe terminal does', { skip: CONPTY_UNAVAILABLE }, async () => {
  const t = await acp.createTerminal({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] }, { pty: {} });
  await t.kill();
  const exit = await t.waitForExit();
  assert.equal(exit.exitCode, null);
  assert.ok(['SIGTERM', 'SIGKILL'].includes(exit.signal), JSON.stringify(exit));
  await t.release();
});

test('ShellSessions without bash.exe: refused with an ERR_ code and a message naming bash.exe', { skip: BASH ? 'bash.exe is on PATH here (Git for Windows)' : false }, async () => {
  const sessions = new acp.ShellSessions();
  try {
    await assert.rejects(sessions.execute({ command: 'echo hi' }), (e) => {
      // A code of its own (not a spawn ENOENT), and a message naming the missing program.
      assert.match(e.code, /^ERR_/);
      assert.match(e.message, /bash\.exe/);
      return true;
    });
  } finally {
    await sessions.closeAll();
  }
});

test('ShellSessions run bash.exe (Git for Windows) on ConPTY', { skip: NO_BASH || CONPTY_UNAVAILABLE }, async () => {
  const sessions = new acp.ShellSessions();
  try {
    const r = await sessions.execute({ command: 'x=41; echo $((x + 1))' });
    assert.equal(r.status, 'completed');
    assert.equal(r.exitCode, 0);
    assert.match(r.content, /42/);
    const again = await sessions.execute({ command: 'echo $x' });
    assert.match(again.content, /41/);
  } finally {
    await sessions.closeAll();
  }
});
