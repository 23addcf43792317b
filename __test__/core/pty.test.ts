// PTY terminals: input with write/sendKeys, resize, closeStdin, the controlling tty, errors.
import * as fs from 'node:fs';

import { createTerminal, eventually, fdCount, isGone, run, runNode, zombieChildren } from './helpers';
import { waitForOutput } from './pty-helpers';

describe('pty terminals', () => {
  test('a prompt is answered with write()', async () => {
    await using t = await createTerminal({ command: `python3 -c "print(input('name? '))"` }, { pty: {} });
    expect(t.isPty).toBe(true);
    await waitForOutput(t, /name\? $/);
    await t.write('Ada Lovelace\n');
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    // The echo of the answer, then what the program printed (the tty turns \n into \r\n).
    expect((await t.currentOutput()).output).toBe('name? Ada Lovelace\r\nAda Lovelace\r\n');
  });

  test('sendKeys C-c interrupts sleep 100 through the line discipline', async () => {
    await using t = await createTerminal({ command: 'echo ready; exec sleep 100' }, { pty: {} });
    await waitForOutput(t, /ready/);
    await t.sendKeys(['C-c']);
    expect(await t.waitForExit()).toEqual({ exitCode: null, signal: 'SIGINT' });
  });

  test('the command leads a session with the pty as controlling terminal and TERM set', async () => {
    const r = await run(
      { command: 'test -t 0 && test -t 1 && test -t 2 && echo "tty $TERM $(ps -o sid= -p $$) $$"' },
      { pty: { cols: 100, rows: 30 } },
    );
    const m = /tty xterm-256color\s+(\d+) (\d+)/.exec(r.output);
    expect(m).not.toBeNull();
    expect(m![1]).toBe(m![2]);
    const own = await run({ command: 'echo $TERM', env: [{ name: 'TERM', value: 'dumb' }] }, { pty: {} });
    expect(own.output).toBe('dumb\r\n');
  });

  test('the initial size and resize() are seen by stty size', async () => {
    await using t = await createTerminal(
      { command: 'stty size; read x; stty size; tput cols' },
      { pty: { cols: 100, rows: 30 } },
    );
    await waitForOutput(t, /30 100\r\n/);
    await t.resize(132, 50);
    await t.write('go\n');
    await t.waitForExit();
    expect((await t.currentOutput()).output).toBe('30 100\r\ngo\r\n50 132\r\n132\r\n');
  });

  test('default size is 80x24', async () => {
    const r = await run({ command: 'stty size' }, { pty: {} });
    expect(r.output).toBe('24 80\r\n');
  });

  test('closeStdin() sends VEOF: cat ends', async () => {
    await using t = await createTerminal({ command: 'cat' }, { pty: {} });
    await t.write('line\n');
    await t.closeStdin();
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect((await t.currentOutput()).output).toBe('line\r\nline\r\n');
  });

  test('sendKeys: editing keys reach a line editor in order', async () => {
    // bash's readline: type, move left twice, insert, delete at end, submit.
    await using t = await createTerminal(
      { command: 'bash', args: ['--norc', '--noprofile', '-i'] },
      { pty: {}, output: 'text' },
    );
    await t.write("PS1='$ '\n");
    // Text mode trims trailing blanks: the prompt line reads "$".
    await waitForOutput(t, /\n\$$/);
    await t.write('echo abd');
    await t.sendKeys(['Left', 'c', 'End', 'BSpace', 'Home', 'Right', 'Right', 'Right', 'Right', 'Right', 'X', 'Enter']);
    await waitForOutput(t, /^Xabc$/m);
    await t.sendKeys(['C-d']);
    await t.waitForExit();
  });

  test('errors: no input, not a pty, unknown keys, bad sizes, after exit, bad options', async () => {
    const pipe = await createTerminal({ command: 'sleep 5' });
    try {
      expect(pipe.isPty).toBe(false);
      await expect(pipe.write('x')).rejects.toMatchObject({ code: 'ERR_NO_STDIN' });
      await expect(pipe.sendKeys(['Enter'])).rejects.toMatchObject({ code: 'ERR_NO_STDIN' });
      await expect(pipe.closeStdin()).rejects.toMatchObject({ code: 'ERR_NO_STDIN' });
      await expect(pipe.resize(10, 10)).rejects.toMatchObject({ code: 'ERR_NOT_A_PTY' });
    } finally {
      await pipe.release();
    }
    const t = await createTerminal({ command: 'read x' }, { pty: {} });
    await expect(t.sendKeys(['Enter', 'hello'])).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('keys[1]'),
    });
    await expect(t.sendKeys(['F13'])).rejects.toMatchObject({ message: expect.stringContaining('F13') });
    await expect(t.sendKeys('Enter' as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
    await expect(t.write(42 as never)).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('data'),
    });
    await expect(t.resize(0, 10)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('cols') });
    await expect(t.resize(80, 1.5)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('rows') });
    await t.write(Buffer.from('\n'));
    await t.waitForExit();
    await expect(t.write('late')).rejects.toMatchObject({ code: 'ERR_TERMINAL_EXITED' });
    await t.closeStdin(); // a no-op once exited
    await t.release();
    await expect(t.write('x')).rejects.toMatchObject({ code: 'ERR_TERMINAL_RELEASED' });
    await expect(t.resize(5, 5)).rejects.toMatchObject({ code: 'ERR_TERMINAL_RELEASED' });

    const bad: Array<[object, string]> = [
      [{ pty: { cols: 0 } }, 'options.pty.cols'],
      [{ pty: { rows: 70000 } }, 'options.pty.rows'],
      [{ pty: 'yes' }, 'options.pty'],
      [{ stdin: 'tty' }, 'options.stdin'],
      [{ output: 'html' }, 'options.output'],
      [{ output: 'text' }, 'options.pty'],
      [{ pty: {}, stdin: 'pipe' }, 'options.stdin'],
      [{ pty: {}, output: 'text', scrollback: -1 }, 'options.scrollback'],
      [{ pty: {}, output: 'text', scrollback: 1e9 }, 'options.scrollback'],
    ];
    for (const [options, field] of bad) {
      await expect(createTerminal({ command: 'true' }, options as never)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARG',
        message: expect.stringContaining(field),
      });
    }
  });

  test('a write blocked on a command that never reads rejects once it exits', async () => {
    // raw mode so the tty does not discard; the command never reads and exits on a signal.
    await using t = await createTerminal({ command: 'stty raw -echo; echo ready; exec sleep 100' }, { pty: {} });
    await waitForOutput(t, /ready/);
    const big = t.write(Buffer.alloc(4 << 20, 0x61));
    const settled = big.then(
      () => 'resolved',
      (e) => e.code,
    );
    await t.kill();
    expect(await settled).toBe('ERR_TERMINAL_EXITED');
  });

  test('no leaked fds, no zombies after 100 pty terminals (input pending, text mode, kill)', async () => {
    const before = fdCount();
    for (let i = 0; i < 100; i++) {
      const t = await createTerminal(
        { command: i % 2 ? 'cat' : 'stty raw -echo; exec sleep 10' },
        i % 3 ? { pty: { cols: 40, rows: 10 } } : { pty: {}, output: 'text' },
      );
      await t.resize(50, 12);
      // A write that may still be blocked at release (sleep never reads): it must settle.
      const w = t.write(Buffer.alloc(200_000, 0x41)).catch((e) => e.code);
      await t.release();
      expect([undefined, 'ERR_TERMINAL_EXITED', 'EIO']).toContain(await w);
    }
    expect(fdCount()).toBeLessThanOrEqual(before);
    expect(zombieChildren()).toEqual([]);
  }, 120000);

  test('a background process holding the pty does not delay the exit; release kills it', async () => {
    // It ignores SIGHUP (inherited, set before the fork), so the hangup at the leader's exit
    // does not end it: it keeps the pty's slave open.
    const t = await createTerminal({ command: "trap '' HUP; sleep 30 & echo bg $!" }, { pty: {} });
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    const bg = Number(/bg (\d+)/.exec((await t.currentOutput()).output)![1]);
    expect(isGone(bg)).toBe(false);
    await t.release();
    await eventually(() => isGone(bg), 'background process gone');
  });

  test("kill() reaches the jobs of an interactive shell (their own groups in the pty's session)", async () => {
    // Interactive bash ignores SIGTERM: a short grace before SIGKILL.
    await using t = await createTerminal(
      { command: 'bash', args: ['--norc', '--noprofile', '-i'] },
      { pty: {}, killGraceMs: 300 },
    );
    await t.write('sleep 100 & echo "job $!"\n');
    const job = Number(/job (\d+)/.exec(await waitForOutput(t, /job \d+/))![1]);
    expect(procPgrp(job)).toBe(job); // job control: a group of its own
    await t.kill();
    await eventually(() => isGone(job), 'job gone');
  });
});

test('when Node dies by SIGKILL, the guardian also kills the jobs of a pty shell (no cgroups)', async () => {
  const script = `
    process.env.ACP_TERMINAL_NO_CGROUP = '1';
    const { createTerminal, containmentInfo } = require('.');
    (async () => {
      const t = await createTerminal({ command: 'bash', args: ['--norc', '--noprofile', '-i'] }, { pty: {} });
      // The job ignores SIGHUP, so the pty's hangup at Node's death does not end it.
      await t.write('trap "" HUP; sleep 100 & echo "job $!"\\n');
      let m;
      while (!(m = /job (\\d+)/.exec((await t.currentOutput()).output))) await new Promise((r) => setTimeout(r, 10));
      console.log(JSON.stringify({ job: Number(m[1]), cgroups: containmentInfo().cgroups }));
      process.kill(process.pid, 'SIGKILL');
    })();
  `;
  const r = runNode(script);
  expect(r.signal).toBe('SIGKILL');
  const { job, cgroups } = JSON.parse(r.stdout.trim().split('\n').pop()!);
  expect(cgroups).toBe(false);
  await eventually(() => isGone(job), 'the job killed by the guardian');
});

function procPgrp(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}
