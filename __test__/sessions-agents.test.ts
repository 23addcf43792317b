// ShellSessions as the peer agent suites drive it (OpenHands, the OpenHands agent SDK, SWE-ReX):
// what they send for input and keys, how they interrupt, and the edge cases they found. Real bash
// sessions; every wait is for an event, never a time.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ShellSessions } from '../ts/sessions';
import { eventually, isGone } from './core/helpers';
import { collectUntil, drain, findProcess } from './fixtures/shell-sessions';

let shells: ShellSessions;
let work: string;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-agents-')));
  shells = new ShellSessions({ cwd: work });
});

afterEach(async () => {
  await shells.closeAll();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Starts `command`, which prints `ready` once it is set up, and resolves when it did. */
async function startUntilReady(command: string): Promise<void> {
  const first = await shells.execute({ command, timeoutMs: 100 });
  expect(first.status).toBe('running');
  if (!first.content.includes('ready')) await collectUntil(shells, (all) => all.includes('ready'));
}

describe('input and keys', () => {
  test("isInput text ending in a newline sends one Enter (SWE-ReX: quit()\\n to python, then no `$'\\r': command not found`)", async () => {
    const py = await shells.execute({ command: 'python3 -q -i', timeoutMs: 100 });
    expect(py.status).toBe('running');
    if (!py.content.includes('>>>')) await collectUntil(shells, (all) => all.includes('>>>'));
    const { last } = await drain(shells, await shells.execute({ command: 'quit()\n', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    const next = await shells.execute({ command: 'echo after' });
    expect(next).toMatchObject({ status: 'completed', exitCode: 0, content: 'after' });
  });

  test('isInput with a trailing newline: the program reads exactly one line, not an extra empty one', async () => {
    await startUntilReady(`echo ready; read -r a; read -r b; echo "[$a|$b]"`);
    const first = await shells.execute({ command: 'one\n', isInput: true });
    expect(first.status).toBe('running');
    const { content, last } = await drain(shells, await shells.execute({ command: 'two', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(first.content + content).toBe('[one|two]');
  });

  test('C-a, C-z or C-l at an idle prompt leave the session idle: later commands run (no ERR_COMMAND_RUNNING)', async () => {
    for (const key of ['C-a', 'C-z', 'C-l', 'C-a C-l']) {
      expect(await shells.execute({ command: key })).toMatchObject({ status: 'completed', exitCode: null, content: '' });
      expect(await shells.execute({ command: `echo after ${key}` })).toMatchObject({
        status: 'completed',
        exitCode: 0,
        content: `after ${key}`,
      });
    }
  });

  test("{ command: 'C-c', isInput: true } is the key, not the text: the running loop is interrupted", async () => {
    // One-second sleeps: bash can lose a SIGINT that lands while it forks the next child (the child
    // has not reset its signal dispositions yet), a window a 50 ms loop hits under load.
    await startUntilReady('echo ready; while true; do sleep 1; done');
    const { content, last } = await drain(shells, await shells.execute({ command: 'C-c', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 130 });
    expect(content).not.toContain('C-c');
    expect(await shells.execute({ command: 'echo alive' })).toMatchObject({ content: 'alive', exitCode: 0 });
  });

  test('any lone key name with isInput is the key (C-d ends cat; Enter answers read)', async () => {
    await startUntilReady('echo ready; cat');
    expect((await drain(shells, await shells.execute({ command: 'C-d', isInput: true }))).last).toMatchObject({
      status: 'completed',
      exitCode: 0,
    });
    await startUntilReady('echo ready; read -r a; echo "[$a]"');
    const { content, last } = await drain(shells, await shells.execute({ command: 'Enter', isInput: true }));
    expect(last.exitCode).toBe(0);
    expect(content).toBe('[]');
  });
});

describe('interrupt(): C-c, then the foreground process group (TERM, then KILL)', () => {
  test('nothing running: nothing is sent, the result says so', async () => {
    await shells.execute({ command: 'true' });
    expect(await shells.interrupt()).toMatchObject({
      status: 'completed',
      exitCode: null,
      interrupt: { signal: null, processGroup: null },
    });
  });

  test('C-c is enough for sleep: signal SIGINT, exit code 130', async () => {
    await startUntilReady('echo ready; sleep 100');
    const r = await shells.interrupt('default', { graceMs: 20_000 });
    expect(r).toMatchObject({ status: 'completed', exitCode: 130, interrupt: { signal: 'SIGINT', processGroup: null } });
  });

  test('less -+F ignores C-c: its process group gets SIGTERM, the prompt comes back, the session stays', async () => {
    fs.writeFileSync(path.join(work, 'long.txt'), Array.from({ length: 500 }, (_, i) => `row ${i}`).join('\n'));
    const first = await shells.execute({ command: 'less -+F long.txt', timeoutMs: 100 });
    expect(first.status).toBe('running');
    const shellPid = shells.shellPid()!;
    await eventually(() => findProcess(['less', '-+F', 'long.txt'], shellPid).length === 1, 'less runs');
    const [lessPid] = findProcess(['less', '-+F', 'long.txt'], shellPid);
    // less shows its screen: C-c alone does not end it.
    await collectUntil(shells, (all) => all.includes('row 0'));
    const r = await shells.interrupt('default', { graceMs: 3000 });
    expect(r).toMatchObject({ status: 'completed', interrupt: { signal: 'SIGTERM', processGroup: lessPid } });
    // less handles SIGTERM and exits with 15 itself; had it died of the signal, bash would say 143.
    expect([15, 143]).toContain(r.exitCode);
    await eventually(() => isGone(lessPid!), 'less is gone');
    expect(shells.shellPid()).toBe(shellPid);
    expect(await shells.execute({ command: 'echo back' })).toMatchObject({ content: 'back', exitCode: 0 });
  });

  test('a python that ignores SIGINT and SIGTERM is killed: signal SIGKILL, exit code 137', async () => {
    await startUntilReady(
      `python3 -c "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); ` +
        `signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(1000)"`,
    );
    const r = await shells.interrupt(undefined, { graceMs: 200 });
    expect(r).toMatchObject({ status: 'completed', exitCode: 137, interrupt: { signal: 'SIGKILL' } });
    expect(typeof r.interrupt?.processGroup).toBe('number');
    expect(await shells.execute({ command: 'echo back' })).toMatchObject({ content: 'back', exitCode: 0 });
  });

  test('the signal reported is the one the core says ended the group, however late its answer is seen', async () => {
    // The group ends on SIGTERM; its answer reaches JS only after more than graceMs (a busy event loop).
    // Inferring the signal from the elapsed time would say SIGKILL.
    const core = require('../index.js') as typeof import('../index.js');
    const real = core.killProcessGroup;
    const seen: unknown[] = [];
    const spy = jest.spyOn(core, 'killProcessGroup').mockImplementation(async (pgid, graceMs) => {
      const result = await real(pgid, graceMs);
      seen.push(result);
      await new Promise((r) => setTimeout(r, (graceMs ?? 0) + 200));
      return result;
    });
    try {
      await startUntilReady(
        `python3 -c "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('ready', flush=True); time.sleep(1000)"`,
      );
      const r = await shells.interrupt(undefined, { graceMs: 300 });
      expect(seen).toEqual([{ hadMembers: true, signal: 'SIGTERM' }]);
      expect(r).toMatchObject({ status: 'completed', exitCode: 143, interrupt: { signal: 'SIGTERM' } });
      expect(typeof r.interrupt?.processGroup).toBe('number');
    } finally {
      spy.mockRestore();
    }
  });

  test('the shell itself ignoring C-c (a trap and a builtin): nothing can be terminated without ending the session, it says running', async () => {
    await startUntilReady("trap '' INT; echo ready; read -r x; echo \"got $x\"");
    const r = await shells.interrupt(undefined, { graceMs: 200 });
    expect(r).toMatchObject({ status: 'running', exitCode: null, interrupt: { signal: 'SIGINT', processGroup: null } });
    const { content, last } = await drain(shells, await shells.execute({ command: 'hello', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(content).toBe('got hello');
  });

  test('bad arguments are named', async () => {
    await expect(shells.interrupt('', {})).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: /^terminalId:/ });
    await expect(shells.interrupt('default', { graceMs: -1 })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: /^graceMs:/ });
    expect(await shells.interrupt('never-opened')).toMatchObject({ status: 'completed', interrupt: { signal: null } });
  });
});

describe('incomplete commands never look like success', () => {
  test('an unterminated heredoc is refused before anything runs: ERR_INVALID_ARG naming command; the session stays usable', async () => {
    const ran = path.join(work, 'ran');
    const err = await shells.execute({ command: `touch '${ran}'\ncat <<EOF\nhello` }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/^command: unterminated here-document .*`EOF`.*nothing was run/),
      details: { field: 'command', incomplete: 'here-document', delimiter: 'EOF' },
    });
    expect(fs.existsSync(ran)).toBe(false);
    expect(await shells.execute({ command: 'echo usable' })).toMatchObject({ content: 'usable', exitCode: 0 });
    // `<<` that is not a here-document, and a terminated one, run as before.
    expect(await shells.execute({ command: 'echo $((1<<4))' })).toMatchObject({ content: '16', exitCode: 0 });
    expect(await shells.execute({ command: 'cat <<-END\n\tok\n\tEND' })).toMatchObject({ content: 'ok', exitCode: 0 });
  });

  test('an unterminated quote is a syntax error (exit 2) with bash\'s message, never exit 0', async () => {
    for (const command of ["echo 'abc", 'echo "abc', 'echo $(echo x', 'if true; then echo x']) {
      const r = await shells.execute({ command });
      expect(r.status).toBe('completed');
      expect(r.exitCode).toBe(2);
      expect(r.content).toMatch(/^bash: line \d+: (unexpected EOF|syntax error)/);
    }
    expect(await shells.execute({ command: 'echo usable' })).toMatchObject({ content: 'usable', exitCode: 0 });
  });
});

describe('small maxOutputBytes', () => {
  test('with maxOutputBytes under 4 KiB a long last line keeps its tail (not content "")', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, maxOutputBytes: 1000 });
    const r = await shells.execute({ command: "printf 'first line\\n'; printf 'x%.0s' $(seq 1 5000); echo END" });
    expect(r).toMatchObject({ status: 'completed', exitCode: 0, truncated: true });
    expect(r.content).toMatch(/^x{500,}END$/);
    expect(r.content.length).toBeLessThanOrEqual(1000);
  });

  test('the tail still starts on a line when a line boundary is near', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, maxOutputBytes: 1000 });
    const r = await shells.execute({ command: 'seq 1 10000' });
    expect(r.content).toMatch(/^\d+\n[\s\S]*\n10000$/);
  });
});
