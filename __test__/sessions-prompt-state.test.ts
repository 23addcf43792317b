// promptState: where a shell is, seen from outside (the pty's foreground process group and the
// shell's blocking system call), on real processes standing in for the shell.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

import { promptState } from '../ts/session';
import type { PtyTerminalLike, ShellInspection } from '../ts/session-types';
import { promptStateOf } from '../ts/session-watch';
import { eventually } from './core/helpers';
import { testIf } from './fixtures/require-feature';

const children: ChildProcess[] = [];
afterEach(() => {
  // The whole group: `bash -c 'sleep 1000; :'` leaves its sleep behind when only bash is killed.
  for (const c of children.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** A terminal whose "shell" is `child` and whose foreground group is `group` (the child's pid by default). */
function terminalOf(child: ChildProcess, group: () => number | null = () => child.pid!): PtyTerminalLike {
  return { pid: child.pid!, foregroundProcessGroup: group } as unknown as PtyTerminalLike;
}

function start(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  children.push(child);
  return child;
}

/** Waits until `pid` is blocked in a system call (not running, not between calls). */
async function blocked(pid: number): Promise<string> {
  let call = 'running';
  await eventually(() => {
    call = fs.readFileSync(`/proc/${pid}/syscall`, 'latin1').split(' ')[0]!;
    return call !== 'running' && fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]![0] === 'S';
  }, `${pid} blocks`);
  return call;
}

const known = process.arch === 'x64' || process.arch === 'arm64';

testIf('x64-or-arm64', known, `no syscall numbers known for ${process.arch}`)('blocked reading fd 0 with the foreground group its own: at the prompt', async () => {
  const cat = start('cat', []);
  await blocked(cat.pid!);
  expect(promptState(terminalOf(cat))).toBe('prompt');
});

testIf('x64-or-arm64', known, `no syscall numbers known for ${process.arch}`)('waiting for a child (wait4): busy, even with the foreground group its own', async () => {
  const bash = start('bash', ['--noprofile', '--norc', '-c', 'sleep 1000; :']);
  await blocked(bash.pid!);
  expect(promptState(terminalOf(bash))).toBe('busy');
});

testIf('x64-or-arm64', known, `no syscall numbers known for ${process.arch}`)('blocked elsewhere (a sleep): unknown, ask again', async () => {
  const sleep = start('sleep', ['1000']);
  await blocked(sleep.pid!);
  expect(promptState(terminalOf(sleep))).toBe('unknown');
});

test('another process group in the foreground, none (exited), or a released terminal: busy', async () => {
  const cat = start('cat', []);
  expect(promptState(terminalOf(cat, () => cat.pid! + 1))).toBe('busy');
  expect(promptState(terminalOf(cat, () => null))).toBe('busy');
  const released = terminalOf(cat, () => {
    throw Object.assign(new Error('released'), { code: 'ERR_TERMINAL_RELEASED' });
  });
  expect(promptState(released)).toBe('busy');
});

test('promptStateOf: reading its terminal is the prompt only at the site where the shell blocked at its first prompt', () => {
  const look = (shellWait: ShellInspection['shellWait'], shellSite: string | null): ShellInspection => ({
    foregroundProcessGroup: 7,
    shellWait,
    foregroundWait: null,
    cwd: '/',
    startTime: 1,
    execStamp: 'x',
    shellSite,
  });
  expect(promptStateOf(look('reading-stdin', '0 0x0 0xa 0x1 0xs 0xp'), 7, '0 0x0 0xa 0x1 0xs 0xp')).toBe('prompt');
  expect(promptStateOf(look('reading-stdin', '0 0x0 0xb 0x1 0xs 0xq'), 7, '0 0x0 0xa 0x1 0xs 0xp')).toBe('busy');
  expect(promptStateOf(look('reading-stdin', null), 7, '0 0x0 0xa 0x1 0xs 0xp')).toBe('unknown');
  expect(promptStateOf(look('reading-stdin', '0 0x0 0xb 0x1 0xs 0xq'), 7, null)).toBe('prompt'); // site unknown: the weaker check
  expect(promptStateOf(look('waiting-for-child', null), 7, null)).toBe('busy');
  expect(promptStateOf({ ...look('reading-stdin', 'a'), foregroundProcessGroup: 8 }, 7, 'a')).toBe('busy');
  expect(promptStateOf(null, 7, 'a')).toBe('busy');
});
