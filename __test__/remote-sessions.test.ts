/**
 * `ShellSessions({ backend })`: persistent bash sessions whose shells run at the far end of a remote
 * backend, watched there (the server's `inspect`, `continueShell`, `killForeground`, `sweep`): the
 * sessions acceptance set through the local server over a pipe, through ssh on 127.0.0.1 and through
 * `podman exec -i` into a busybox container with a static bash (whose pids mean nothing on this
 * machine), and `acp-terminal mcp --backend podman:NAME` running `terminal_execute` there.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { ShellSessions } from '../ts/sessions';
import { connect, structured, type Connected } from './fixtures/mcp-client';
import { hasPodman, hasSshd, HOST_SERVER, podmanEnv, removeContainer, startContainer, startSshd, STATIC_SERVER, type Sshd, until } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';
import { drain } from './fixtures/shell-sessions';

/** The far end as a test sees it: its processes' argv, by pid. */
interface Far {
  /** `pid -> argv joined by spaces` of every process at the far end. */
  processes(): Map<number, string>;
  /** A directory of the far end the tests may use. */
  dir: string;
}

function localProcesses(): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      if (/^\S+ \(.*\) Z/.test(stat)) continue;
      out.set(Number(e), fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' '));
    } catch {
      // raced with its exit
    }
  }
  return out;
}

/** The sessions acceptance set, through `backend()`, checked against `far`. */
function sessionAcceptance(backend: () => backends.Backend, far: () => Far): void {
  let shells: ShellSessions;
  beforeEach(() => {
    shells = new ShellSessions({ backend: backend(), cwd: far().dir, timeoutMs: 20_000 });
  });
  afterEach(async () => {
    await shells.closeAll();
  });

  test('cd and exports persist; workingDir is the far shell cwd', async () => {
    const sub = path.posix.join(far().dir, 'sub dir');
    const r1 = await shells.execute({ command: `mkdir -p '${sub}' && cd '${sub}' && export ACP_X=far-value` });
    expect(r1).toMatchObject({ status: 'completed', exitCode: 0, workingDir: sub });
    const r2 = await shells.execute({ command: 'echo "$ACP_X"; pwd' });
    expect(r2).toMatchObject({ status: 'completed', exitCode: 0, content: `far-value\n${sub}`, workingDir: sub });
    expect(await shells.workingDir()).toBe(sub);
  });

  test('exit codes are the far shell $?', async () => {
    expect(await shells.execute({ command: 'false' })).toMatchObject({ status: 'completed', exitCode: 1 });
    expect(await shells.execute({ command: '(exit 7)' })).toMatchObject({ status: 'completed', exitCode: 7 });
    expect(await shells.execute({ command: 'echo ok' })).toMatchObject({ status: 'completed', exitCode: 0, content: 'ok' });
  });

  test('a timeout returns running, and the rest is collected', async () => {
    const first = await shells.execute({ command: 'echo start; sleep 1.5; echo done', timeoutMs: 300 });
    expect(first.status).toBe('running');
    const { content, last } = await drain(shells, first);
    expect(content).toBe('start\ndone');
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
  });

  test('a program waiting for input returns early (seen at the far end); is_input answers it', async () => {
    const asked = await shells.execute({ command: 'read -r line; echo "got:$line"', timeoutMs: 15_000 });
    expect(asked).toMatchObject({ status: 'running', early: 'input' });
    const answered = await shells.execute({ command: 'hello far', isInput: true, timeoutMs: 10_000 });
    expect(answered.content).toContain('got:hello far');
    const done = answered.status === 'completed' ? answered : (await drain(shells, answered)).last;
    expect(done).toMatchObject({ status: 'completed', exitCode: 0 });
  });

  test('C-c interrupts the far command; interrupt() ends a group that ignores it', async () => {
    const running = await shells.execute({ command: 'sleep 100', timeoutMs: 300 });
    expect(running.status).toBe('running');
    const stopped = await shells.execute({ command: 'C-c', timeoutMs: 10_000 });
    expect(stopped).toMatchObject({ status: 'completed', exitCode: 130 });

    const stubborn = await shells.execute({ command: "sh -c 'trap \"\" INT; echo armed; while :; do sleep 1; done'", timeoutMs: 1000 });
    expect(stubborn).toMatchObject({ status: 'running', content: 'armed' });
    const r = await shells.interrupt('default', { graceMs: 500 });
    expect(r.status).toBe('completed');
    expect(r.interrupt?.signal).toBe('SIGTERM');
    // The far end's process group (its own pid namespace in a container), not one of this machine.
    expect(r.interrupt?.processGroup).toEqual(expect.any(Number));
    expect(await shells.execute({ command: 'echo alive' })).toMatchObject({ content: 'alive', exitCode: 0 });
  });

  test('a stopped shell is continued at the far end', async () => {
    const r = await shells.execute({ command: 'kill -STOP $$; echo back', timeoutMs: 15_000 });
    expect(r).toMatchObject({ status: 'completed', exitCode: 0, content: 'back' });
  });

  test('the shell dies: its exit is reported, the next command gets a fresh shell in the start directory', async () => {
    const r1 = await shells.execute({ command: 'cd / && export ACP_GONE=1 && exit 3' });
    expect(r1).toMatchObject({ sessionEnded: true, exitCode: 3 });
    const r2 = await shells.execute({ command: 'echo "[$ACP_GONE]"; pwd' });
    expect(r2).toMatchObject({ status: 'completed', exitCode: 0, content: `[]\n${far().dir}` });
  });

  test('pids are the far end\'s: the shell pid names the far shell; closeAll leaves nothing there', async () => {
    const n = 100_000 + Math.floor(Math.random() * 800_000);
    // A job of the shell, and one that left its session (setsid) and its group: both must go. The
    // second is started from a subshell, so it is no job of the shell: as a job it would be a group
    // leader, setsid would fork and its parent end at once, and bash's "[2]+ Done" notice could land
    // in this command's output or the next one's, whichever prompt comes first.
    const r = await shells.execute({ command: `sleep ${n} & ( setsid sleep ${n + 1} & ) ; echo started` });
    expect(r).toMatchObject({ status: 'completed', content: 'started' });
    const pid = shells.shellPid()!;
    const farProcs = far().processes();
    expect(farProcs.get(pid)).toMatch(/bash/);
    const sleepers = (): number[] =>
      [...far().processes()].filter(([, argv]) => argv === `sleep ${n}` || argv === `sleep ${n + 1}`).map(([p]) => p);
    expect(await until(() => sleepers().length === 2)).toBe(true);
    await shells.closeAll();
    expect(await until(() => sleepers().length === 0 && !far().processes().has(pid))).toBe(true);
  });

  test('restart keeps the far cwd', async () => {
    await shells.execute({ command: 'cd /' });
    const r = await shells.restart();
    expect(r).toMatchObject({ workingDir: '/', previous: null });
    expect(await shells.execute({ command: 'pwd' })).toMatchObject({ content: '/' });
  });
}

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), 'the host server is not built (bash scripts/remote/build-server.sh)')(
  'ShellSessions through the server over a pipe',
  () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-rs-pipe-'));
    let backend: backends.Backend;
    beforeAll(() => {
      backend = backends.local({ serverBinary: HOST_SERVER });
    });
    afterAll(async () => {
      await backend?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    sessionAcceptance(() => backend, () => ({ dir, processes: localProcesses }));

    test('the server answers inspect for a pty shell, and refuses a bad sweep entry naming it', async () => {
      const t = await backend.createTerminal({ command: 'cat', cwd: dir }, { pty: { cols: 80, rows: 24 }, shell: false });
      let look = await t.inspectShell();
      for (let i = 0; i < 200 && look.shellWait !== 'reading-stdin'; i++) look = await t.inspectShell();
      expect(look).toMatchObject({ foregroundProcessGroup: t.pid, shellWait: 'reading-stdin', foregroundWait: null, cwd: dir });
      expect(look.startTime).toEqual(expect.any(Number));
      await expect(t.sweep('no-equals-sign', null)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('entry') });
      await t.release();
    });

    test('a forged prompt at the far end completes nothing: the shell reads at another site than its prompt\'s', async () => {
      const shells = new ShellSessions({ backend, cwd: dir, timeoutMs: 10_000 });
      try {
        // The shell itself prints its prompt (marker and all), then reads the terminal in a `read` builtin.
        let r = await shells.execute({ command: '(exit 0); printf "%s" "${PS1@P}"; read -r x; echo "got:$x"; (exit 3)', timeoutMs: 1500 });
        expect(r).toMatchObject({ status: 'running', exitCode: null });
        await expect(shells.execute({ command: 'echo NEXT' })).rejects.toMatchObject({ code: 'ERR_COMMAND_RUNNING' });
        r = await shells.execute({ command: 'hello', isInput: true, timeoutMs: 5000 });
        while (r.status === 'running') r = await shells.execute({ command: '', timeoutMs: 1000 });
        expect(r).toMatchObject({ status: 'completed', exitCode: null, content: 'got:hello' });
        expect(await shells.execute({ command: 'false' })).toMatchObject({ status: 'completed', exitCode: 1 });
      } finally {
        await shells.closeAll();
      }
    });

    test('the environment the shells inherit is the far end server\'s; dropInheritedEnv filters that one', async () => {
      const far = backends.command(['env', 'ACP_FAR_ONLY=far', 'ACP_FAR_SECRET_TOKEN=s3cret', HOST_SERVER]);
      const shells = new ShellSessions({ backend: far, dropInheritedEnv: ['*_TOKEN'] });
      try {
        const r = await shells.execute({ command: 'echo "[$ACP_FAR_ONLY][$ACP_FAR_SECRET_TOKEN][${ACP_NEAR_ONLY-}]"' });
        expect(r).toMatchObject({ exitCode: 0, content: '[far][][]' });
      } finally {
        await shells.closeAll();
        await far.close();
      }
    });

    test('an open here-document is found by the far bash before anything runs', async () => {
      const shells = new ShellSessions({ backend });
      try {
        await expect(shells.execute({ command: 'cat <<EOF\nno end' })).rejects.toMatchObject({
          code: 'ERR_INVALID_ARG',
          details: { incomplete: 'here-document', delimiter: 'EOF' },
        });
      } finally {
        await shells.closeAll();
      }
    });
  },
);

describeIf('sshd', hasSshd && fs.existsSync(HOST_SERVER), 'needs root with openssh-server and the host server build')('ShellSessions over ssh', () => {
  let sshd: Sshd;
  let backend: backends.Backend;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-rs-ssh-'));
  beforeAll(async () => {
    sshd = await startSshd();
    backend = backends.ssh('root@127.0.0.1', {
      port: sshd.port,
      identity: sshd.key,
      extraArgs: ['-F', '/dev/null'],
      sshOptions: { UserKnownHostsFile: sshd.knownHosts, BatchMode: 'yes', StrictHostKeyChecking: 'yes' },
      serverBinary: HOST_SERVER,
      serverPath: path.join(dir, 'server', 'acp-terminal-server'),
    });
  });
  afterAll(async () => {
    await backend?.close();
    await sshd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // ssh on 127.0.0.1: the far end is this machine, reached through sshd.
  sessionAcceptance(() => backend, () => ({ dir, processes: localProcesses }));
});

const BASH_STATIC = '/bin/bash-static';
const podmanReady = hasPodman && fs.existsSync(STATIC_SERVER) && fs.existsSync(BASH_STATIC);
const podmanWhy = !hasPodman
  ? 'needs root with podman, runc and busybox-static (bash scripts/remote/setup.sh)'
  : !fs.existsSync(STATIC_SERVER)
    ? `${STATIC_SERVER} is missing (bash scripts/remote/build-server.sh musl)`
    : `${BASH_STATIC} is missing (apt-get install bash-static: the busybox image has no bash)`;

/** A busybox container with the static bash as /bin/bash. */
function bashContainer(name: string): void {
  startContainer(name);
  const r = spawnSync('podman', ['cp', BASH_STATIC, `${name}:/bin/bash`], { env: podmanEnv() });
  if (r.status !== 0) throw new Error(`podman cp bash: ${r.stderr.toString()}`);
  spawnSync('podman', ['exec', name, 'mkdir', '-p', '/work/far'], { env: podmanEnv() });
}

/** The container's processes (its own pid namespace), pid -> argv. */
function containerProcesses(name: string): Map<number, string> {
  const script = 'for p in /proc/[0-9]*; do s=$(cat $p/stat 2>/dev/null) || continue; case "$s" in *") Z "*) continue;; esac; printf "%s %s\\n" "${p#/proc/}" "$(tr "\\0" " " < $p/cmdline)"; done';
  const out = spawnSync('podman', ['exec', name, 'sh', '-c', script], { env: podmanEnv() }).stdout.toString();
  const m = new Map<number, string>();
  for (const line of out.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) m.set(Number(line.slice(0, sp)), line.slice(sp + 1).trim());
  }
  return m;
}

describeIf('podman', podmanReady, podmanWhy)('ShellSessions in a podman container', () => {
  const name = `acp-rs-${process.pid}`;
  let backend: backends.Backend;
  beforeAll(() => {
    bashContainer(name);
    backend = backends.podman(name, { serverBinary: STATIC_SERVER, env: podmanEnv() });
  });
  afterAll(async () => {
    await backend?.close();
    removeContainer(name);
  });
  sessionAcceptance(() => backend, () => ({ dir: '/work/far', processes: () => containerProcesses(name) }));

  test('acp-terminal mcp --backend podman:NAME runs terminal_execute in the container', async () => {
    let server: Connected | undefined;
    try {
      server = await connect('modern', ['--backend', `podman:${name}`, '--cwd', '/work/far'], {
        env: { ...podmanEnv(), ACP_TERMINAL_SERVER_BINARY: STATIC_SERVER } as Record<string, string>,
      });
      const { tools } = await server.client.listTools();
      expect(tools.map((t) => t.name)).toContain('terminal_execute');
      const r1 = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'cd /tmp && export ACP_M=1; cat /proc/1/cmdline | tr "\\0" " "' } });
      expect(structured(r1)).toMatchObject({ status: 'completed', exit_code: 0, content: '/bin/sleep infinity' });
      const r2 = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'echo "$ACP_M"; pwd' } });
      expect(structured(r2)).toMatchObject({ status: 'completed', exit_code: 0, content: '1\n/tmp' });
    } finally {
      await server?.close();
    }
  });
});
