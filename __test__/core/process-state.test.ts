// processWaitState and processStartTime: what ShellSessions asks the core about its shell instead of
// reading /proc itself (the sys::procs seam; Linux reads /proc/<pid>/syscall and /proc/<pid>/stat).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { processWaitState } from '../../index';
import { eventually } from './helpers';
import { describeIf } from '../fixtures/require-feature';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function start(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  children.push(child);
  return child;
}

const linux = process.platform === 'linux';

describeIf('linux', linux, `processWaitState reads /proc: ${process.platform} is not Linux`)('processWaitState (Linux)', () => {
  test('reading its stdin, waiting for a child, blocked elsewhere', async () => {
    const cat = start('cat', []);
    const sh = start('sh', ['-c', 'sleep 1000; :']);
    const sleep = start('sleep', ['1000']);
    await eventually(() => processWaitState(cat.pid!) === 'reading-stdin', 'cat reads its stdin');
    await eventually(() => processWaitState(sh.pid!) === 'waiting-for-child', 'sh waits for sleep');
    await eventually(() => processWaitState(sleep.pid!) === 'elsewhere', 'sleep sleeps');
  });

  test('a process that cannot be inspected (gone) is unknown', async () => {
    const child = start('true', []);
    await new Promise((r) => child.on('exit', r));
    await eventually(() => processWaitState(child.pid!) === 'unknown', 'reaped');
  });
});

test('bad pids are ERR_INVALID_ARG naming pid', () => {
  for (const pid of [0, -1, 1.5, 'x', 2 ** 31]) {
    expect(() => processWaitState(pid as number)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/pid/) }));
  }
});

test('ShellSessions reads no /proc and starts no process itself: it asks the core', () => {
  // Process management lives in Rust behind the sys seams (macOS has no /proc): the TS layer of
  // ShellSessions must not read /proc or use child_process.
  const ts = path.join(__dirname, '..', '..', 'ts');
  const files = fs.readdirSync(ts).filter((f) => /^sessions?(-[a-z]+)?\.ts$/.test(f));
  expect(files).toEqual(expect.arrayContaining(['sessions.ts', 'session.ts', 'session-input.ts']));
  for (const f of files) {
    const code = fs.readFileSync(path.join(ts, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    expect([f, /child_process/.test(code), /['"`]\/proc\//.test(code)]).toEqual([f, false, false]);
  }
});
