// pty terminals through ConPTY (write, keys, resize, text mode) and ShellSessions, which need
// Git for Windows' bash.exe and refuse clearly without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acp, NO_BASH, CONPTY_UNAVAILABLE, tempDir } from './helpers.mjs';

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

/** Runs `fn` with these environment variables (undefined: unset), restored after. */
async function withEnv(vars, fn) {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (values) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(old);
  }
}

/** A ShellSessions whose terminals are recorded and refused (no pty needed): what it would run. */
function recordingSessions() {
  const requests = [];
  const sessions = new acp.ShellSessions({
    createTerminal: async (params) => {
      requests.push(params);
      throw Object.assign(new Error('recorded, not started'), { code: 'ERR_RECORDED' });
    },
  });
  return { sessions, requests };
}

test('ShellSessions without bash.exe: ERR_BASH_NOT_FOUND saying what to install, nothing started', async () => {
  // PATH and Git's install directories point at an empty directory: no bash anywhere.
  const { dir, remove } = tempDir();
  const { sessions, requests } = recordingSessions();
  try {
    await withEnv({ PATH: dir, ProgramFiles: dir, 'ProgramFiles(x86)': dir, LOCALAPPDATA: dir }, async () => {
      await assert.rejects(sessions.execute({ command: 'echo hi' }), (e) => {
        assert.equal(e.code, 'ERR_BASH_NOT_FOUND', e.message);
        assert.match(e.message, /options\.shell/);
        assert.match(e.message, /Git for Windows/);
        return true;
      });
    });
    assert.deepEqual(requests, []);
  } finally {
    await sessions.closeAll();
    remove();
  }
});

test("ShellSessions run the bash.exe found through PATH, never WSL's System32 launcher", async () => {
  const { dir, remove } = tempDir();
  const system32 = path.join(process.env.SystemRoot ?? 'C:\\windows', 'System32');
  const bash = path.join(dir, 'bash.exe');
  fs.copyFileSync(process.execPath, bash);
  const { sessions, requests } = recordingSessions();
  try {
    await withEnv({ PATH: `${system32};${dir}`, ProgramFiles: dir, 'ProgramFiles(x86)': dir, LOCALAPPDATA: dir }, async () => {
      await assert.rejects(sessions.execute({ command: 'echo hi' }), (e) => e.code === 'ERR_RECORDED');
    });
    assert.equal(requests.length, 1);
    assert.equal(requests[0].command.toLowerCase(), bash.toLowerCase());
    assert.deepEqual(requests[0].args, ['--noprofile', '--norc', '--noediting', '-i']);
  } finally {
    await sessions.closeAll();
    remove();
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
