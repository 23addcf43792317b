// ShellSessions against commands that try to wedge the session: after each one, the next
// command completes, or the session says it is broken (status 'broken' with why) and restart() gives a
// fresh shell in the same directory. close() kills everything the session started, setsid children
// included, with and without cgroups. No timing assertions: timeouts here only bound how long a call
// waits before it reports.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { loadNative } from '../ts/native';
import { SESSION_TAG_VAR } from '../ts/session';
import { ShellSessions, type ExecuteResult } from '../ts/sessions';
import { eventually, isGone, removePackageCopy, ROOT, runAsNobody } from './core/helpers';
import { testIf } from './fixtures/require-feature';

afterAll(removePackageCopy);

let shells: ShellSessions;
let work: string;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-wedges-')));
  fs.mkdirSync(path.join(work, 'sub'));
  shells = new ShellSessions({ cwd: work });
});

afterEach(async () => {
  await shells.closeAll();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Runs `wedge` (after a `cd sub`), then `echo next; false`, collecting while it runs. */
async function afterWedge(wedge: string): Promise<{ wedge: ExecuteResult; next: ExecuteResult }> {
  await shells.execute({ command: 'cd sub' });
  const w = await shells.execute({ command: wedge, timeoutMs: 5000 });
  if (w.status === 'broken') return { wedge: w, next: w };
  expect(w.status).toBe('completed');
  let next = await shells.execute({ command: 'echo next; false', timeoutMs: 5000 });
  const parts = [next.content];
  const deadline = Date.now() + 30_000;
  while (next.status === 'running' && Date.now() < deadline) {
    next = await shells.execute({ command: '', timeoutMs: 1000 });
    parts.push(next.content);
  }
  // On a loaded machine the result may take more than one call: its content is all of theirs.
  return { wedge: w, next: { ...next, content: parts.filter((p) => p !== '').join('\n') } };
}

/** The session is broken: later calls say why (ERR_SESSION_BROKEN) until restart(), in the same cwd. */
async function expectBrokenThenRestart(r: ExecuteResult, why: RegExp): Promise<void> {
  expect(r.status).toBe('broken');
  expect(r.exitCode).toBeNull();
  expect(r.why).toMatch(why);
  await expect(shells.execute({ command: 'echo again' })).rejects.toMatchObject({ code: 'ERR_SESSION_BROKEN' });
  const oldPid = shells.shellPid()!;
  const restarted = await shells.restart();
  expect(restarted).toMatchObject({ terminalId: 'default', workingDir: path.join(work, 'sub') });
  expect(shells.shellPid()).not.toBe(oldPid);
  await eventually(() => isGone(oldPid), 'the old shell is gone');
  expect(await shells.execute({ command: 'echo fresh; pwd; false' })).toMatchObject({
    status: 'completed',
    exitCode: 1,
    content: `fresh\n${path.join(work, 'sub')}`,
  });
}

describe('the session variables cannot wedge it: made read-only, the session reports broken and restarts', () => {
  test.each(['__acp_n', '__acp_o', 'POSIXLY_CORRECT'])('readonly %s', async (name) => {
    const { next } = await afterWedge(`readonly ${name}`);
    await expectBrokenThenRestart(next, /did not run the command/);
    expect(next.content).toMatch(new RegExp(`${name}: readonly variable`));
  });

  test('readonly PS1 with another prompt: the next command completes (exit code unknown), that prompt shows', async () => {
    const { next } = await afterWedge("PS1='$ '; readonly PS1");
    expect(next).toMatchObject({ status: 'completed', exitCode: null });
    expect(next.content.split('\n')).toContain('$ $ $ next');
  });
});

test.each([
  ['a function named builtin, then shopt -u promptvars (the prompt is printed unexpanded)', 'builtin() { :; }; shopt -u promptvars'],
  ['__acp_n made a reference to another variable', 'declare -n __acp_n=PWD'],
])('%s: broken, then restart', async (_what, wedge) => {
  await shells.execute({ command: 'cd sub' });
  await expectBrokenThenRestart(await shells.execute({ command: wedge, timeoutMs: 10_000 }), /did not run the command/);
});

describe('line editing turned on (bash then prints no prompt at all): the command completes, the next runs as usual', () => {
  test.each(['set -o vi', 'set -o emacs', 'set -o emacs; set -o vi', 'set -o vi; echo after', 'eval "set -o vi"'])(
    '%s',
    async (wedge) => {
      const { wedge: w, next } = await afterWedge(wedge);
      // No prompt said its status: completed with the exit code unknown, never a wedge.
      expect(w).toMatchObject({ status: 'completed', exitCode: null, content: wedge.endsWith('after') ? 'after' : '' });
      expect(next).toMatchObject({ status: 'completed', exitCode: 1, content: 'next' });
      expect(await shells.execute({ command: 'echo $- ${SHELLOPTS}; pwd' })).toMatchObject({
        status: 'completed',
        exitCode: 0,
        content: expect.not.stringMatching(/\b(vi|emacs)\b/),
      });
    },
  );

  test('set +o emacs, bind (no line editor to change): completed with their exit codes', async () => {
    const { wedge, next } = await afterWedge('set +o emacs; set +o vi; true');
    expect(wedge).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(next).toMatchObject({ status: 'completed', exitCode: 1, content: 'next' });
    const b = await afterWedge(`bind '"\\C-x": "echo hi"' 2>/dev/null; bind 'set editing-mode vi' 2>/dev/null; false`);
    expect(b.wedge).toMatchObject({ status: 'completed', exitCode: 1 });
    expect(b.next).toMatchObject({ status: 'completed', exitCode: 1, content: 'next' });
  });

  test('keys at the prompt after set -o vi (Enter, C-c) are answered, then commands run', async () => {
    await shells.execute({ command: 'cd sub' });
    expect(await shells.execute({ command: 'set -o vi', timeoutMs: 5000 })).toMatchObject({ status: 'completed' });
    for (const key of ['Enter', 'C-c']) {
      let r = await shells.execute({ command: key, timeoutMs: 5000 });
      while (r.status === 'running') r = await shells.execute({ command: '', timeoutMs: 1000 });
      expect(r.status).toBe('completed');
    }
    expect(await shells.execute({ command: 'echo next; pwd; false' })).toMatchObject({
      status: 'completed',
      exitCode: 1,
      content: `next\n${path.join(work, 'sub')}`,
    });
  });

  test('set -o vi, and the builtin that would turn it off disabled: every command still completes', async () => {
    const { wedge, next } = await afterWedge('set -o vi; enable -n set');
    expect(wedge).toMatchObject({ status: 'completed', exitCode: null });
    expect(next).toMatchObject({ status: 'completed', exitCode: null, content: 'next' });
    expect(await shells.execute({ command: 'echo again', timeoutMs: 5000 })).toMatchObject({
      status: 'completed',
      content: 'again',
    });
  });
});

test('an extdebug DEBUG trap that skips every command: broken, then restart', async () => {
  const { next } = await afterWedge('shopt -s extdebug; trap false DEBUG');
  await expectBrokenThenRestart(next, /did not run the command/);
});

test('exec bash: the shell was replaced, broken, then restart', async () => {
  const { next } = await afterWedge('exec bash --norc');
  await expectBrokenThenRestart(next, /replaced/);
});

test.each(['exec >/dev/null', 'exec >/dev/null 2>&1', 'exec 2>/dev/null'])(
  '%s: the next command is back on the terminal, with its output and exit code',
  async (wedge) => {
    const { next } = await afterWedge(wedge);
    expect(next).toMatchObject({ status: 'completed', content: 'next', exitCode: 1 });
  },
);

describe('terminal modes are the session’s: put back before each command', () => {
  test('stty olcuc: that command completes, and the next one is not upper-cased', async () => {
    const { wedge, next } = await afterWedge('stty olcuc; echo shout');
    expect(wedge).toMatchObject({ status: 'completed', exitCode: 0, content: 'SHOUT' });
    expect(next).toMatchObject({ status: 'completed', content: 'next', exitCode: 1 });
  });

  test.each(['stty erase _', 'stty kill a', 'stty eof n'])('%s', async (wedge) => {
    const { next } = await afterWedge(wedge);
    expect(next).toMatchObject({ status: 'completed', content: 'next', exitCode: 1 });
  });

  test.each(['stty raw', 'stty -icanon min 0 time 0', 'stty echo', 'stty -isig', 'stty raw -echo; echo raw'])(
    '%s: that command and the next complete',
    async (wedge) => {
      const { wedge: w, next } = await afterWedge(wedge);
      expect(w).toMatchObject({ status: 'completed', exitCode: 0 });
      expect(next).toMatchObject({ status: 'completed', content: 'next', exitCode: 1 });
    },
  );

  test('stty intr undef: C-c still interrupts the next command', async () => {
    await afterWedge('stty intr undef');
    expect(await shells.execute({ command: 'sleep 1000', timeoutMs: 300 })).toMatchObject({ status: 'running' });
    let r = await shells.execute({ command: 'C-c', timeoutMs: 10_000 });
    while (r.status === 'running') r = await shells.execute({ command: '', timeoutMs: 1000 });
    expect(r).toMatchObject({ status: 'completed', exitCode: 130 });
  });
});

describe('signals', () => {
  test('kill -STOP $$: the shell is continued, the command and the next complete', async () => {
    const { wedge, next } = await afterWedge('kill -STOP $$; echo continued');
    expect(wedge).toMatchObject({ status: 'completed', content: 'continued', exitCode: 0 });
    expect(next).toMatchObject({ status: 'completed', content: 'next', exitCode: 1 });
  });

  test("trap '' INT: C-c still interrupts the next command", async () => {
    await afterWedge("trap '' INT");
    expect(await shells.execute({ command: 'sleep 1000', timeoutMs: 300 })).toMatchObject({ status: 'running' });
    let r = await shells.execute({ command: 'C-c', timeoutMs: 10_000 });
    while (r.status === 'running') r = await shells.execute({ command: '', timeoutMs: 1000 });
    expect(r).toMatchObject({ status: 'completed', exitCode: 130 });
  });

  test("trap '' INT and a loop of builtins in the shell itself: interrupt() reports broken, restart() recovers", async () => {
    await shells.execute({ command: 'cd sub' });
    expect(await shells.execute({ command: "trap '' INT; while :; do :; done", timeoutMs: 300 })).toMatchObject({
      status: 'running',
    });
    const r = await shells.interrupt('default', { graceMs: 300 });
    await expectBrokenThenRestart(r, /ignores C-c/);
  });
});

/**
 * Starts a child in a session of its own (`setsid`) from a subshell that exits at once (so it is
 * orphaned: no descendant of the shell), and prints its pid once it is the leader of that session.
 */
const ORPHAN = "(setsid sh -c 'echo $$ > orphan.pid; exec sleep 1000' &); while [ ! -s orphan.pid ]; do sleep 0.01; done; cat orphan.pid";

/** The pid of an orphaned `setsid` child (see ORPHAN), checked to be outside the shell's session and tree. */
async function orphanedSetsidChild(): Promise<number> {
  const r = await shells.execute({ command: ORPHAN });
  const pid = Number(r.content);
  expect(pid).toBeGreaterThan(1);
  expect(isGone(pid)).toBe(false);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [ppid, , sid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(1, 4).map(Number);
  expect(sid).toBe(pid); // left the shell's session
  expect(ppid).not.toBe(shells.shellPid()); // and is no descendant of the shell
  return pid;
}

describe('close() kills what the session started, setsid children included', () => {
  test('an orphaned setsid child after the shell left its cgroup', async () => {
    const cg2 = fs
      .readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[2] === 'cgroup2')?.[1];
    const shellPid = (await shells.execute({ command: 'echo $$' })).content;
    const own = fs.readFileSync(`/proc/${shellPid}/cgroup`, 'utf8');
    if (!cg2 || !/^0::\/(.*\/)?acp-terminal-/m.test(own)) {
      // No per-terminal cgroup here: the test below (forced without cgroups) is this case.
      expect(loadContainment().cgroups).toBe(false);
      return;
    }
    await shells.execute({ command: `echo $$ > '${cg2}/cgroup.procs'` });
    expect(fs.readFileSync(`/proc/${shellPid}/cgroup`, 'utf8')).toMatch(/^0::\/$/m);
    const pid = await orphanedSetsidChild();
    await shells.close('default');
    await eventually(() => isGone(pid), 'the setsid child is killed');
  });

  test('an orphaned setsid child, with per-terminal cgroups', async () => {
    const pid = await orphanedSetsidChild();
    await shells.closeAll();
    await eventually(() => isGone(pid), 'the setsid child is killed');
  });

  test('without cgroups (ACP_TERMINAL_NO_CGROUP), in a process of its own', () => {
    const lib = path.join(ROOT, 'lib', 'index.js');
    const script = `
const { ShellSessions, containmentInfo } = require(${JSON.stringify(lib)});
(async () => {
  const shells = new ShellSessions({ cwd: ${JSON.stringify(work)} });
  const r = await shells.execute({ command: ${JSON.stringify(ORPHAN)} });
  const pid = Number(r.content);
  const alive = () => { try { return !/^\\S+ \\(.*\\) [ZX]/.test(require('fs').readFileSync('/proc/' + pid + '/stat', 'utf8')); } catch { return false; } };
  const before = alive();
  await shells.closeAll();
  const deadline = Date.now() + 20000;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  console.log(JSON.stringify({ cgroups: containmentInfo().cgroups, before, after: alive() }));
  if (alive()) process.kill(pid, 'SIGKILL');
})();
`;
    const out = execFileSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      env: { ...process.env, ACP_TERMINAL_NO_CGROUP: '1' },
    });
    expect(JSON.parse(out)).toEqual({ cgroups: false, before: true, after: false });
  });

  // As root, the tests above run with cgroups; an unprivileged user (nobody) has none here.
  testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as an unprivileged user (nobody)', () => {
    const { out, uid } = runAsNobody(
      (lib, dir) =>
      `const { ShellSessions } = require(${JSON.stringify(lib)});
const fs = require('fs');
(async () => {
  const shells = new ShellSessions({ cwd: ${JSON.stringify(dir)} });
  const r = await shells.execute({ command: ${JSON.stringify(`${ORPHAN}; id -u`)} });
  const [pid, uid] = r.content.split('\\n').map(Number);
  const alive = () => { try { return !/^\\S+ \\(.*\\) [ZX]/.test(fs.readFileSync('/proc/' + pid + '/stat', 'utf8')); } catch { return false; } };
  const before = alive();
  await shells.closeAll();
  const deadline = Date.now() + 20000;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  console.log(JSON.stringify({ uid, before, after: alive() }));
  if (alive()) process.kill(pid, 'SIGKILL');
})();
`,
    );
    expect(JSON.parse(out)).toEqual({ uid: Number(uid), before: true, after: false });
  });
});

function loadContainment(): { cgroups: boolean } {
  return require(path.join(ROOT, 'index.js')).containmentInfo();
}

describe('restart()', () => {
  test('on a healthy session: a fresh shell in the same directory, the old one and its jobs killed, previous null', async () => {
    await shells.execute({ command: 'cd sub; X=old; sleep 1000 & echo $!' });
    const job = Number((await shells.execute({ command: 'echo $!' })).content);
    const oldPid = shells.shellPid()!;
    expect(await shells.restart()).toEqual({ terminalId: 'default', workingDir: path.join(work, 'sub'), previous: null });
    await eventually(() => isGone(oldPid) && isGone(job), 'the old shell and its job are gone');
    expect(await shells.execute({ command: 'echo "${X-unset}"; pwd' })).toMatchObject({
      status: 'completed',
      exitCode: 0,
      content: `unset\n${path.join(work, 'sub')}`,
    });
  });

  test('the old directory is gone: the fresh shell starts in the sessions’ cwd; an unknown id opens a session', async () => {
    await shells.execute({ command: 'mkdir -p gone && cd gone' });
    fs.rmSync(path.join(work, 'gone'), { recursive: true });
    expect(await shells.restart()).toMatchObject({ workingDir: work, previous: null });
    expect(await shells.restart('other')).toEqual({ terminalId: 'other', workingDir: work, previous: null });
    expect(shells.ids.sort()).toEqual(['default', 'other']);
  });

  test('bad arguments are named; after closeAll it is ERR_HOST_CLOSED', async () => {
    await expect(shells.restart('')).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: /^terminalId:/ });
    await expect(shells.restart(7 as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: /^terminalId:/ });
    await shells.closeAll();
    await expect(shells.restart()).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
  });
});

test('the native helpers the sessions use refuse bad input by name', () => {
  const native = loadNative();
  for (const bad of ['', 'NAME', '=x', 'NAME=', 7, 'A=b\0c']) {
    expect(() => native.processesWithEnvironment(bad as never)).toThrow(/^entry must be/);
  }
  expect(() => native.processExecStamp(-1)).toThrow(/^pid must be/);
  expect(native.processesWithEnvironment(`${SESSION_TAG_VAR}=no-such-session`)).toEqual([]);
});

// As root, the wedge tests above see /proc as root does; these are the same checks for an
// unprivileged user (nobody), whose view of its own processes the detection must rely on.
testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as an unprivileged user (nobody): exec bash, kill -STOP $$, a read-only session variable', () => {
  const { out, uid } = runAsNobody(
    (lib, dir) =>
    `const { ShellSessions } = require(${JSON.stringify(lib)});
(async () => {
  const shells = new ShellSessions({ cwd: ${JSON.stringify(dir)} });
  const out = {};
  const settle = async (r) => { while (r.status === 'running') r = await shells.execute({ command: '', timeoutMs: 1000 }); return r; };
  out.uid = (await shells.execute({ command: 'id -u' })).content;
  out.stop = (await settle(await shells.execute({ command: 'kill -STOP $$; echo continued', timeoutMs: 5000 }))).content;
  out.exec = (await settle(await shells.execute({ command: 'exec bash --norc', timeoutMs: 5000 }))).status;
  out.restart = (await shells.restart()).previous !== null;
  await shells.execute({ command: 'readonly __acp_n' });
  out.readonly = (await settle(await shells.execute({ command: 'echo next', timeoutMs: 5000 }))).status;
  await shells.restart();
  out.after = (await shells.execute({ command: 'echo fresh' })).content;
  console.log(JSON.stringify(out));
  await shells.closeAll();
})();
`,
  );
  expect(JSON.parse(out)).toEqual({ uid, stop: 'continued', exec: 'broken', restart: true, readonly: 'broken', after: 'fresh' });
});

describe('output that renders far larger than its bytes: content stays within maxOutputBytes', () => {
  test.each([
    ['REP with the largest count (the attack: 28 KiB gave 131 million characters)', "printf 'a\\033[999999999b%.0s' $(seq 2000); echo", /^a+$/],
    ['cursor-forward runs (12 bytes, 160 characters each)', "printf 'a\\033[999Cb\\n%.0s' $(seq 2000)", /b$/],
  ])('%s', async (_what, command, shape) => {
    const bounded = new ShellSessions({ cwd: work, maxOutputBytes: 65536 });
    try {
      const r = await bounded.execute({ command, timeoutMs: 60_000 });
      expect(r).toMatchObject({ status: 'completed', exitCode: 0, truncated: true });
      expect(r.content.length).toBeLessThanOrEqual(65536);
      expect(r.content.length).toBeGreaterThan(60_000);
      expect(r.content).toMatch(shape);
    } finally {
      await bounded.closeAll();
    }
  });
});
