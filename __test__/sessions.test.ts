// ShellSessions on the native pty backend: real bash sessions. No timing assertions: every wait is
// for an event (a marker, a gate file created by the test, a /proc state), so a loaded machine only
// makes the suite slower.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

import { ShellSessions, type ExecuteRequest, type ExecuteResult } from '../ts/sessions';
import { AcpTerminalError } from '../ts/errors';
import { eventually, isGone } from './core/helpers';
import { collectUntil as collectFromSession, drain as drainSession, findProcess, gateCommand } from './fixtures/shell-sessions';

let shells: ShellSessions;
let work: string;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-test-')));
  shells = new ShellSessions({ cwd: work });
});

afterEach(async () => {
  await shells.closeAll();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Calls `execute` with an empty command until the command completes; returns all content in order. */
function drain(first: ExecuteResult, terminalId?: string): Promise<{ content: string; last: ExecuteResult }> {
  return drainSession(shells, first, terminalId);
}

/** Collects output of a running command with short empty calls until `pred` holds on all of it. */
async function collectUntil(pred: (all: string) => boolean, req: Partial<ExecuteRequest> = {}): Promise<string> {
  return (await collectFromSession(shells, pred, req)).all;
}

describe('state persists between calls', () => {
  test('cd and export persist; workingDir is the shell cwd', async () => {
    const first = await shells.execute({ command: 'cd /tmp && export X=1' });
    expect(first).toMatchObject({ status: 'completed', exitCode: 0, content: '', workingDir: '/tmp', terminalId: 'default' });
    const second = await shells.execute({ command: 'echo "X=$X"; pwd' });
    expect(second).toMatchObject({ status: 'completed', exitCode: 0, content: 'X=1\n/tmp', workingDir: '/tmp' });
    expect(second.command).toBe('echo "X=$X"; pwd');
  });

  test('workingDir follows the shell, not subshells', async () => {
    fs.mkdirSync(path.join(work, 'sub dir'));
    expect((await shells.execute({ command: 'cd "sub dir"' })).workingDir).toBe(path.join(work, 'sub dir'));
    expect((await shells.execute({ command: '(cd /)' })).workingDir).toBe(path.join(work, 'sub dir'));
  });

  test('functions, shell options and background jobs persist', async () => {
    await shells.execute({ command: 'greet() { echo "hi $1"; }; shopt -s extglob; sleep 1000 & echo started' });
    expect((await shells.execute({ command: 'greet you; shopt -q extglob && echo on; jobs | grep -c sleep' })).content).toBe(
      'hi you\non\n1',
    );
  });

  test('sessions are independent', async () => {
    await shells.execute({ terminalId: 'a', command: 'cd /tmp; V=a' });
    await shells.execute({ terminalId: 'b', command: 'V=b' });
    expect(await shells.execute({ terminalId: 'a', command: 'echo $V' })).toMatchObject({ content: 'a', workingDir: '/tmp' });
    expect(await shells.execute({ terminalId: 'b', command: 'echo $V' })).toMatchObject({ content: 'b', workingDir: work });
    expect(shells.ids.sort()).toEqual(['a', 'b']);
  });
});

describe('more of what a terminal user expects', () => {
  test('calls on one session wait for each other; sessions run side by side', async () => {
    const gate = path.join(work, 'gate');
    const [a, b, other] = await Promise.all([
      shells.execute({ command: `${gateCommand(gate)}; echo first` }),
      shells.execute({ command: 'echo second' }),
      shells.execute({ terminalId: 'other', command: `touch '${gate}'; echo other` }),
    ]);
    expect([a.content, b.content, other.content]).toEqual(['first', 'second', 'other']);
    expect([a.status, b.status, other.status]).toEqual(['completed', 'completed', 'completed']);
  });

  test('a command longer than a terminal line (4095 bytes) runs whole', async () => {
    const long = 'x'.repeat(10_000);
    const r = await shells.execute({ command: `echo ${long} | wc -c` });
    expect(r).toMatchObject({ exitCode: 0, content: '10001' });
  });

  test('output of a background job after its command completed comes with the next call', async () => {
    const gate = path.join(work, 'gate');
    const r = await shells.execute({ command: `(${gateCommand(gate)}; echo late) &` });
    expect(r).toMatchObject({ status: 'completed', exitCode: 0, content: '' });
    fs.writeFileSync(gate, '');
    expect(await collectUntil((all) => all.includes('late'))).toMatch(/late/);
  });

  test('options: env for every session, pty size and resize', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, env: { GREETING: 'hello there' }, cols: 91, rows: 17 });
    expect((await shells.execute({ command: 'echo "$GREETING"; tput cols; tput lines' })).content).toBe('hello there\n91\n17');
    expect(await shells.resize('default', 120, 33)).toBe(true);
    expect((await shells.execute({ command: 'tput cols; tput lines' })).content).toBe('120\n33');
    expect(await shells.resize('nope', 10, 10)).toBe(false);
  });
});

describe('completion markers and exit codes', () => {
  test('a heredoc, multi-line commands and quotes spanning lines run as one command', async () => {
    const r = await shells.execute({ command: "X=42\ncat <<EOF\nvalue $X\n  > indented\nEOF\necho 'two\nlines'\nfalse" });
    expect(r).toMatchObject({ status: 'completed', exitCode: 1, content: 'value 42\n  > indented\ntwo\nlines' });
    const quoted = await shells.execute({ command: "cat <<'END'\n$HOME is literal\nEND" });
    expect(quoted).toMatchObject({ exitCode: 0, content: '$HOME is literal' });
  });

  test('exit codes are exact: (exit 42), pipefail, a syntax error', async () => {
    expect((await shells.execute({ command: '(exit 42)' })).exitCode).toBe(42);
    expect((await shells.execute({ command: 'false | true' })).exitCode).toBe(0);
    expect((await shells.execute({ command: 'set -o pipefail' })).exitCode).toBe(0);
    expect((await shells.execute({ command: 'false | true' })).exitCode).toBe(1);
    expect((await shells.execute({ command: 'true | false | true; echo "${PIPESTATUS[*]}"' })).content).toBe('0 1 0');
    const syntax = await shells.execute({ command: 'if then fi )' });
    expect(syntax.exitCode).toBe(2);
    expect(syntax.content).toMatch(/^bash: line 1: syntax error near unexpected token/);
    expect(await shells.execute({ command: 'echo still here' })).toMatchObject({ exitCode: 0, content: 'still here' });
  });

  test('set -e then a failing command: the shell ends, its exit code is reported, the next call gets a fresh shell', async () => {
    await shells.execute({ command: 'cd /tmp; export X=1; set -e' });
    const failed = await shells.execute({ command: 'echo before; false; echo never' });
    expect(failed).toMatchObject({ status: 'completed', exitCode: 1, content: 'before', sessionEnded: true });
    const next = await shells.execute({ command: 'echo "X=${X-unset}"' });
    expect(next).toMatchObject({ status: 'completed', exitCode: 0, content: 'X=unset', workingDir: work, sessionEnded: false });
  });

  test('set -euo pipefail does not break the markers', async () => {
    await shells.execute({ command: 'set -uo pipefail' });
    expect(await shells.execute({ command: 'echo $?; false | cat' })).toMatchObject({ exitCode: 1, content: '0' });
    const unbound = await shells.execute({ command: 'echo $NOT_SET_ANYWHERE' });
    expect(unbound.exitCode).not.toBe(0);
    expect(unbound.content).toMatch(/unbound variable/);
  });

  test('exit n ends the session with exit code n', async () => {
    expect(await shells.execute({ command: 'exit 3' })).toMatchObject({ exitCode: 3, sessionEnded: true, status: 'completed' });
  });

  test('output without a final newline and output interleaved with a background writer', async () => {
    expect((await shells.execute({ command: "printf 'no newline'" })).content).toBe('no newline');
    const r = await shells.execute({
      command: '(for i in $(seq 1 300); do echo bg$i; done) & for i in $(seq 1 300); do echo fg$i; done; wait',
    });
    expect(r.exitCode).toBe(0);
    const lines = r.content.split('\n');
    expect(lines.filter((l) => /^fg\d+$/.test(l))).toHaveLength(300);
    expect(lines.filter((l) => /^bg\d+$/.test(l))).toHaveLength(300);
    expect(r.content).not.toMatch(/6973/);
  });

  test('a program printing fake markers cannot complete the command', async () => {
    const gate = path.join(work, 'gate');
    const fake = randomBytes(16).toString('hex');
    const command = [
      `printf '\\033]6973;${fake};E;1;0\\007'`,
      `printf '\\033]6973;${fake};E;;0\\007\\n'`,
      // the rc's text and the marker format as the shell holds it: printing them completes nothing
      'declare -p PROMPT_COMMAND >/dev/null; eval "echo \\"$PS1$PS2\\""',
      'echo fakes-printed',
      gateCommand(gate),
      'echo real-end',
    ].join('\n');
    const first = await shells.execute({ command, timeoutMs: 300 });
    expect(first.status).toBe('running');
    const seen = first.content + (await collectUntil((all) => (first.content + all).includes('fakes-printed')));
    expect(seen).not.toMatch(/real-end/);
    const stillRunning = await shells.execute({ command: '', timeoutMs: 100 });
    expect(stillRunning.status).toBe('running');
    fs.writeFileSync(gate, '');
    const { content, last } = await drain(await shells.execute({ command: '' }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(content).toMatch(/real-end$/);
  });

  test('printing the shell variables (set, declare -p) does not complete the command early', async () => {
    const r = await shells.execute({ command: 'set; declare -p; echo "$PROMPT_COMMAND"; echo THE-END' });
    expect(r).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(r.content).toMatch(/THE-END$/);
  });
});

describe('timeouts, input and keys', () => {
  test('a timeout returns running with the output so far; an empty call collects the rest', async () => {
    const gate = path.join(work, 'gate');
    const command = `echo first; ${gateCommand(gate)}; echo second; seven() { return 7; }; seven`;
    const first = await shells.execute({ command, timeoutMs: 200 });
    expect(first).toMatchObject({ status: 'running', exitCode: null });
    const before = first.content + (await collectUntil((all) => (first.content + all).includes('first')));
    expect(before).toBe('first');
    fs.writeFileSync(gate, '');
    const { content, last } = await drain(await shells.execute({ command: '' }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 7 });
    expect(content).toBe('second');
    // Nothing left: an empty call on an idle session completes with no output.
    expect(await shells.execute({ command: '' })).toMatchObject({ status: 'completed', content: '', exitCode: null });
  });

  test('C-c interrupts sleep 100 (exit code 130) and the session stays usable', async () => {
    const running = await shells.execute({ command: 'sleep 100', timeoutMs: 100 });
    expect(running.status).toBe('running');
    const shellPid = shells.shellPid()!;
    await eventually(() => findProcess(['sleep', '100'], shellPid).length === 1, 'sleep 100 runs');
    const [sleepPid] = findProcess(['sleep', '100'], shellPid);
    const { last } = await drain(await shells.execute({ command: 'C-c' }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 130 });
    await eventually(() => isGone(sleepPid!), 'sleep is gone');
    expect(await shells.execute({ command: 'echo alive' })).toMatchObject({ content: 'alive', exitCode: 0 });
  });

  test('isInput answers a prompt', async () => {
    const first = await shells.execute({ command: `python3 -c "print('got', input('name? '))"`, timeoutMs: 200 });
    expect(first.status).toBe('running');
    const prompt = first.content + (await collectUntil((all) => (first.content + all).includes('name?')));
    expect(prompt).toBe('name?');
    const { content, last } = await drain(await shells.execute({ command: 'alice', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(content).toBe('got alice');
  });

  test('noEnter: text without Enter, then more input with Enter', async () => {
    const first = await shells.execute({ command: 'read -r a b; echo "[$a|$b]"', timeoutMs: 100 });
    expect(first.status).toBe('running');
    const partial = await shells.execute({ command: 'left ', isInput: true, noEnter: true });
    expect(partial.status).toBe('running');
    const { content, last } = await drain(await shells.execute({ command: 'right', isInput: true }));
    expect(last.exitCode).toBe(0);
    expect(content).toBe('[left|right]');
  });

  test('noEnter with nothing running is refused and types nothing: the session stays idle and the next command runs as sent', async () => {
    await expect(shells.execute({ command: 'typed', noEnter: true })).rejects.toMatchObject({
      code: 'ERR_NO_RUNNING_COMMAND',
      message: expect.stringMatching(/^noEnter: /),
      details: { field: 'noEnter' },
    });
    expect(await shells.execute({ command: 'echo next' })).toMatchObject({ status: 'completed', content: 'next', exitCode: 0 });
    await expect(shells.execute({ command: 'hello', isInput: true })).rejects.toMatchObject({ code: 'ERR_NO_RUNNING_COMMAND' });
    expect(await shells.execute({ command: 'echo again' })).toMatchObject({ status: 'completed', content: 'again', exitCode: 0 });
  });

  test('special keys reach a running program (C-d ends cat)', async () => {
    expect((await shells.execute({ command: 'cat', timeoutMs: 100 })).status).toBe('running');
    const echoed = await shells.execute({ command: 'hello', isInput: true });
    expect(echoed.status).toBe('running');
    expect(echoed.content + (await collectUntil((all) => (echoed.content + all).includes('hello')))).toBe('hello');
    const { last } = await drain(await shells.execute({ command: 'C-d' }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
  });
});

describe('content', () => {
  test('colours are removed and a progress bar collapses to its final state', async () => {
    const r = await shells.execute({
      command:
        `for i in 10 50 100; do printf '\\r\\033[32mprogress %3d%%\\033[0m' $i; sleep 0.01; done; ` +
        `printf '\\n'; printf 'a\\tb\\n'`,
    });
    expect(r).toMatchObject({ exitCode: 0, content: 'progress 100%\na       b' });
  });

  test('set -x traces the command but not the session machinery', async () => {
    const r = await shells.execute({ command: 'set -x; echo traced' });
    // (one `+` more than at a prompt: the command runs from a sourced file)
    expect(r.content).toMatch(/^\++ echo traced\ntraced$/);
    const next = await shells.execute({ command: 'echo again' });
    expect(next.content).toMatch(/^\++ echo again\nagain$/);
    await shells.execute({ command: 'set +x' });
  });

  test('a full-screen program shows its screen while it runs and nothing of it after it quits', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, cols: 80, rows: 10 });
    fs.writeFileSync(path.join(work, 'f.txt'), Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    let r = await shells.execute({ command: 'echo before; less f.txt', timeoutMs: 200 });
    const seen: string[] = [r.content];
    const deadline = Date.now() + 50_000;
    while (!r.content.includes('line 9')) {
      expect(r.status).toBe('running');
      if (Date.now() > deadline) throw new Error(`less never showed: ${JSON.stringify(seen)}`);
      r = await shells.execute({ command: '', timeoutMs: 200 });
      seen.push(r.content);
    }
    // The screen as a person sees it: the first 9 lines and less's prompt line, not the whole file.
    expect(r.content).toMatch(/line 1\nline 2\n[\s\S]*line 9\n/);
    expect(r.content).not.toMatch(/line 10\b/);
    expect(seen.join('\n')).toMatch(/^before/);
    const { content, last } = await drain(await shells.execute({ command: 'q', isInput: true, noEnter: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(content).not.toMatch(/line/);
  });

  test("the emulator answers terminal queries; a late answer nobody read does not break the next command", async () => {
    // A program that waits for an answer switches to non-canonical mode first (the emulator answers then).
    const r = await shells.execute({
      command:
        `old=$(stty -g); stty -icanon -echo; printf '\\033[6n'; IFS= read -rs -d R -t 20 answer; ` +
        `stty "$old"; echo "got \${#answer}"`,
    });
    expect(r).toMatchObject({ exitCode: 0 });
    expect(r.content).toMatch(/^got [1-9]\d*$/);
    // Queries whose answers may arrive unread (after the program stopped waiting): at worst they sit
    // in the shell's input; the next commands must run as sent either way.
    await shells.execute({ command: `printf '\\033[6n\\033]11;?\\007\\033[c'` });
    await shells.execute({
      command: `old=$(stty -g); stty -icanon -echo; printf '\\033[6n\\033[c\\033]11;?\\033\\\\'; sleep 0.2; stty "$old"`,
    });
    // (if they arrived, the shell reads them as a line of their own: "command not found" lines first)
    const next = await shells.execute({ command: 'echo next' });
    expect(next).toMatchObject({ exitCode: 0, status: 'completed' });
    expect(next.content).toMatch(/(^|\n)next$/);
    expect(await shells.execute({ command: 'echo again' })).toMatchObject({ exitCode: 0, content: 'again' });
  });

  test('output is bounded by maxOutputBytes, keeping the newest lines', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, maxOutputBytes: 10_000 });
    const r = await shells.execute({ command: 'seq 1 100000' });
    expect(r).toMatchObject({ exitCode: 0, truncated: true });
    expect(r.content.length).toBeLessThanOrEqual(10_000);
    expect(r.content).toMatch(/^\d+\n[\s\S]*\n100000$/);
    expect((await shells.execute({ command: 'echo small' })).truncated).toBe(false);
  });
});

describe('errors', () => {
  test('a shell that cannot start rejects and leaves no session', async () => {
    const bad = new ShellSessions({ cwd: work, shell: path.join(work, 'no-such-bash') });
    await expect(bad.execute({ command: 'true' })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(bad.ids).toEqual([]);
    await bad.closeAll();
  });

  test('cursor keys with nothing running are refused (the shell has no line editor)', async () => {
    await expect(shells.execute({ command: 'Up' })).rejects.toMatchObject({
      code: 'ERR_NO_RUNNING_COMMAND',
      message: expect.stringMatching(/^command:.*"Up"/),
    });
    // C-c at an idle prompt is harmless and reported as the shell reports it.
    expect(await drain(await shells.execute({ command: 'C-c' })).then((d) => d.last.status)).toBe('completed');
  });

  test('invalid fields are named', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ command: 5 }, /^command:/],
      [{ command: 'a\0b' }, /^command:/],
      [{ command: 'ls', terminalId: '' }, /^terminalId:/],
      [{ command: 'ls', timeoutMs: -1 }, /^timeoutMs:/],
      [{ command: 'ls', isInput: 'yes' }, /^isInput:/],
      [{ command: 'ls', noEnter: 1 }, /^noEnter:/],
    ];
    for (const [req, message] of cases) {
      await expect(shells.execute(req as ExecuteRequest)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARG',
        message: expect.stringMatching(message),
      });
    }
    expect(() => new ShellSessions({ maxSessions: 0 })).toThrow(/^options\.maxSessions:/);
    expect(() => new ShellSessions({ cwd: 'relative' })).toThrow(/^options\.cwd:/);
  });

  test('a new command while one runs, input with nothing running, use after closeAll', async () => {
    await expect(shells.execute({ command: 'hi', isInput: true })).rejects.toMatchObject({
      code: 'ERR_NO_RUNNING_COMMAND',
      message: expect.stringMatching(/^isInput:/),
    });
    await shells.execute({ command: 'sleep 100', timeoutMs: 50 });
    const err = await shells.execute({ command: 'ls' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcpTerminalError);
    expect(err).toMatchObject({ code: 'ERR_COMMAND_RUNNING', message: expect.stringMatching(/^command:/) });
    await shells.closeAll();
    await expect(shells.execute({ command: 'ls' })).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
  });
});

describe('session lifetime', () => {
  test('the least recently used session is closed when the cap is reached', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, maxSessions: 2 });
    await shells.execute({ terminalId: 'a', command: 'V=a' });
    await shells.execute({ terminalId: 'b', command: 'V=b' });
    const pidB = shells.shellPid('b')!;
    await shells.execute({ terminalId: 'a', command: 'true' }); // a is now the most recently used
    await shells.execute({ terminalId: 'c', command: 'V=c' });
    expect(shells.ids).toEqual(['a', 'c']);
    await eventually(() => isGone(pidB), 'the evicted shell is gone');
    expect((await shells.execute({ terminalId: 'a', command: 'echo $V' })).content).toBe('a');
    expect((await shells.execute({ terminalId: 'b', command: 'echo "${V-fresh}"' })).content).toBe('fresh');
    expect(shells.ids).toEqual(['a', 'b']);
  });

  test('close kills the whole session tree: shell, foreground, background and nohup jobs', async () => {
    await shells.execute({ command: 'sleep 1001 & nohup sleep 1002 >/dev/null 2>&1 & (sleep 1003 &)' });
    expect((await shells.execute({ command: 'sleep 1004', timeoutMs: 100 })).status).toBe('running');
    const shellPid = shells.shellPid()!;
    const pids: number[] = [shellPid];
    for (const n of ['1001', '1002', '1003', '1004']) {
      await eventually(() => findProcess(['sleep', n], shellPid).length === 1, `sleep ${n} runs`);
      pids.push(...findProcess(['sleep', n], shellPid));
    }
    expect(await shells.close('default')).toBe(true);
    for (const pid of pids) await eventually(() => isGone(pid), `pid ${pid} is gone`);
    expect(shells.ids).toEqual([]);
    expect(await shells.close('default')).toBe(false);
  });

  test('closeAll and asyncDispose close every session', async () => {
    let pids: number[] = [];
    {
      await using local = new ShellSessions({ cwd: work });
      await local.execute({ terminalId: 'x', command: 'true' });
      await local.execute({ terminalId: 'y', command: 'true' });
      pids = [local.shellPid('x')!, local.shellPid('y')!];
    }
    for (const pid of pids) await eventually(() => isGone(pid), `shell ${pid} is gone`);
  });
});
