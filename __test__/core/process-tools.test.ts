// Native process tools for the TS layer (ShellSessions): the one key table, session trees, the
// pty's foreground group, and killing a process group through the containment escalation.
import { spawn } from 'node:child_process';

import {
  isKeyName,
  killProcessGroup,
  killSessionTree,
  processCwd,
  processStartTime,
  sessionBash,
  sessionTreePids,
} from '../../index';
import { createTerminal, eventually, groupMembers, isGone } from './helpers';
import { waitForOutput } from './pty-helpers';

describe('isKeyName', () => {
  test('canonical tmux key names are keys', () => {
    for (const k of ['C-c', 'M-x', 'S-Tab', 'Up', 'F5', 'Enter', 'C-M-a', 'PgUp', 'BSpace', 'DC', 'M--']) {
      expect([k, isKeyName(k)]).toEqual([k, true]);
    }
  });

  test('text is not a key: lone characters, other cases, ^x, unknown names', () => {
    for (const t of ['q', 'enter', 'dc', '^c', 'c-c', 'C-', 'F13', 'C-1', 'ls', '', 'Up Down']) {
      expect([t, isKeyName(t)]).toEqual([t, false]);
    }
  });
});

describe('session trees', () => {
  test('lists the session and its setsid descendants, then kills all of them', async () => {
    // detached: the shell leads a new session. A job in a group of its own (set -m), and a
    // grandchild that left for a session of its own (setsid without forking: not a group leader).
    const child = spawn('bash', ['-c', 'set -m; sleep 100 & set +m; setsid sleep 100 & wait'], {
      detached: true,
      stdio: 'ignore',
    });
    const leader = child.pid!;
    const exited = new Promise((r) => child.on('exit', r));
    await eventually(() => sessionTreePids(leader).length === 3, 'a session of 3 processes');
    const pids = sessionTreePids(leader);
    expect(pids).toContain(leader);
    expect(pids).not.toContain(process.pid);
    killSessionTree(leader);
    await exited;
    await eventually(() => pids.every(isGone), 'every process of the tree gone');
    expect(sessionTreePids(leader)).toEqual([]);
  });

  test('bad pids are ERR_INVALID_ARG naming shellPid', () => {
    for (const bad of [0, -1, 1.5, 'x', NaN]) {
      expect(() => sessionTreePids(bad as number)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
      expect(() => killSessionTree(bad as number)).toThrow(/shellPid/);
    }
  });
});

describe('sessionBash', () => {
  test("is bash from the session's PATH on Unix (Windows looks for Git for Windows' bash.exe)", () => {
    expect(sessionBash()).toBe('bash');
  });
});

describe('foregroundProcessGroup', () => {
  test('is the shell at its prompt, the job while it runs, null after the exit', async () => {
    const t = await createTerminal({ command: 'bash', args: ['--norc', '--noprofile', '-i'] }, { pty: {} });
    try {
      await eventually(() => t.foregroundProcessGroup() === t.pid, 'the shell in the foreground');
      await t.write('sleep 100; echo done\r');
      await eventually(() => {
        const g = t.foregroundProcessGroup();
        return g !== null && g !== t.pid && groupMembers(g).length > 0;
      }, 'the job in the foreground');
      await t.sendKeys(['C-c']);
      await eventually(() => t.foregroundProcessGroup() === t.pid, 'the shell back in the foreground');
      await t.write('exit\r');
      await t.waitForExit();
      expect(t.foregroundProcessGroup()).toBeNull();
    } finally {
      await t.release();
    }
    expect(t.foregroundProcessGroup()).toBeNull();
  });

  test('a pipe terminal throws ERR_NOT_A_PTY', async () => {
    await using t = await createTerminal({ command: 'true' });
    expect(() => t.foregroundProcessGroup()).toThrow(expect.objectContaining({ code: 'ERR_NOT_A_PTY' }));
  });
});

describe('killProcessGroup', () => {
  test('TERM ends a plain group and says so; nothing is sent to an empty one', async () => {
    const child = spawn('sh', ['-c', 'sleep 100 & sleep 100 & wait'], { detached: true, stdio: 'ignore' });
    const pgid = child.pid!;
    await eventually(() => groupMembers(pgid).length === 3, 'three members');
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, s) => r(s)));
    await expect(killProcessGroup(pgid)).resolves.toEqual({ hadMembers: true, signal: 'SIGTERM' });
    expect(await exited).toBe('SIGTERM');
    expect(groupMembers(pgid)).toEqual([]);
    await expect(killProcessGroup(pgid)).resolves.toEqual({ hadMembers: false, signal: null });
  });

  test('a member that traps TERM is SIGKILLed after the grace, and the result says SIGKILL', async () => {
    const child = spawn('sh', ['-c', "trap '' TERM; echo ready; while :; do sleep 0.05; done"], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await new Promise((r) => child.stdout!.once('data', r));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, s) => r(s)));
    await expect(killProcessGroup(child.pid!, 100)).resolves.toEqual({ hadMembers: true, signal: 'SIGKILL' });
    expect(await exited).toBe('SIGKILL');
  });

  test('a stopped group is continued so that TERM ends it', async () => {
    const child = spawn('sleep', ['100'], { detached: true, stdio: 'ignore' });
    await eventually(() => groupMembers(child.pid!).length === 1, 'the member');
    process.kill(child.pid!, 'SIGSTOP');
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, s) => r(s)));
    await expect(killProcessGroup(child.pid!, 60000)).resolves.toEqual({ hadMembers: true, signal: 'SIGTERM' });
    expect(await exited).toBe('SIGTERM');
  });

  test('refuses bad pgids and graces with ERR_INVALID_ARG naming the argument', async () => {
    for (const pgid of [0, 1, -5, 2.5, 'x']) {
      await expect(killProcessGroup(pgid as number)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: /pgid/ });
    }
    const own = Number(require('node:fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]);
    await expect(killProcessGroup(own)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: /own group/ });
    for (const grace of [-1, 600001, 1.5, '100', Infinity]) {
      await expect(killProcessGroup(99999999, grace as number)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARG',
        message: /graceMs/,
      });
    }
  });

  test('a pty terminal job can be killed by its group while the shell lives on', async () => {
    // An interactive bash ignores SIGTERM: a short grace keeps its release quick.
    await using t = await createTerminal(
      { command: 'bash', args: ['--norc', '--noprofile', '-i'] },
      { pty: {}, killGraceMs: 100 },
    );
    await eventually(() => t.foregroundProcessGroup() === t.pid, 'the prompt');
    await t.write('sleep 100; echo after-$?\r');
    let job = 0;
    await eventually(() => {
      job = t.foregroundProcessGroup() ?? 0;
      return job !== 0 && job !== t.pid && groupMembers(job).length > 0;
    }, 'the job');
    await expect(killProcessGroup(job, 2000)).resolves.toEqual({ hadMembers: true, signal: 'SIGTERM' });
    await waitForOutput(t, /after-143/);
    expect(isGone(t.pid)).toBe(false);
  });
});

describe('processCwd and processStartTime', () => {
  test("read another process's directory, and a start time that tells a later process apart", async () => {
    const child = spawn('sh', ['-c', 'read x'], { cwd: '/usr', stdio: ['pipe', 'ignore', 'ignore'] });
    await eventually(() => processCwd(child.pid!) === '/usr', 'the child in /usr');
    const mine = processStartTime(process.pid);
    const its = processStartTime(child.pid!);
    expect(typeof mine).toBe('number');
    expect(its).toBeGreaterThan(mine!);
    expect(processStartTime(child.pid!)).toBe(its);
    const exited = new Promise((r) => child.on('exit', r));
    child.stdin!.end();
    await exited;
    await eventually(() => processStartTime(child.pid!) === null, 'no start time once reaped');
    expect(processCwd(child.pid!)).toBeNull();
  });

  test('refuse bad pids with ERR_INVALID_ARG naming pid', () => {
    for (const pid of [0, -1, 1.5, 'x', 2 ** 31]) {
      expect(() => processStartTime(pid as number)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/pid/) }));
      expect(() => processCwd(pid as number)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/pid/) }));
    }
  });
});
