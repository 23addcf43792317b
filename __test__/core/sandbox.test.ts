// The OS sandbox (issue 11): every promise is tried from INSIDE a sandboxed terminal and its
// grandchild (fixtures/sandbox-inner.js), driven by a host Node process of its own
// (fixtures/sandbox-outer.js) that holds a secret in its environment and listens on 127.0.0.1,
// a unix socket and an abstract socket. Run as root and, through setpriv, as nobody. Then the
// fail-closed paths, the option's validation, containmentInfo().sandbox and the lifecycle.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { containmentInfo, createTerminal } from '../../index';
import { ShellSessions, TerminalHost } from '../../lib';
import { eventually, fdCount, packageRootForOthers, processes, removePackageCopy, ROOT, run, runNode, zombieChildren } from './helpers';
import { hasFeature, testIf } from '../fixtures/require-feature';

afterAll(removePackageCopy);

const isRoot = process.getuid?.() === 0;
const info = containmentInfo().sandbox;

// The sandbox hides the host's /tmp (its own is a private tmpfs), and a command without `cwd` starts
// in Node's: the checkout may be under /tmp (CI clones into mktemp -d), so this file's terminals run
// from a directory outside it.
const startDir = process.cwd();
const outsideTmp = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-cwd-'));
beforeAll(() => process.chdir(outsideTmp));
afterAll(() => {
  process.chdir(startDir);
  fs.rmSync(outsideTmp, { recursive: true, force: true });
});
/** The namespace's init as `cmdline` shows it (the same on every architecture). */
const INIT = 'sleep 2147483647';
const INIT_COMM = 'sleep';
const INIT_WORD = 'sleep';
const NOBODY = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];

type Outcomes = Record<string, unknown> & { grandchild?: Outcomes };
interface Probe {
  error?: { code: string; message: string };
  status?: { exitCode: number | null; signal: string | null };
  inner?: Outcomes;
  info: { sandbox: typeof info; guardianPid: number };
  seen: Record<string, number>;
  guardianState: string | null;
  outsideFile: string | null;
  shmHost: string;
  msgHost: number | null;
  shmLeft: number;
  ownChanged: unknown;
  outsideMeta: string;
  hostTmpEntries: string[];
  ttyLeak: boolean;
  outsideEntries: string[];
  rootEntries: string[];
}

/** Runs the host fixture in a fresh Node process (optionally through a prefix such as setpriv; with
 * `tty`, inside a pty of script(1), so that Node has a controlling terminal as in every CLI client). */
function probe(opts: object, { prefix = [] as string[], env = {} as Record<string, string>, tty = false } = {}): Probe {
  // Through a prefix the fixture may run as another user: it loads a package root that user can read.
  const pkg = prefix.length ? packageRootForOthers() : ROOT;
  const node = [process.execPath, path.join(pkg, '__test__', 'fixtures', 'sandbox-outer.js'), pkg, JSON.stringify(opts)];
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const argv = [...prefix, ...(tty ? ['script', '-qec', node.map(quote).join(' '), '/dev/null'] : node)];
  const r = spawnSync(argv[0]!, argv.slice(1), {
    cwd: pkg,
    encoding: 'utf8',
    timeout: 60000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ACP_SANDBOX_SECRET: `s3cr3t-${process.pid}-${Date.now()}`, ...env },
  });
  const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`the probe printed no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
  return { ...JSON.parse(line), ttyLeak: r.stdout.includes('acp-tty-leak') };
}

/** What must hold inside any sandbox without network access, for the command and its grandchild. */
function expectContained(p: Probe, { network = false, tty = false }: { network?: boolean; tty?: boolean } = {}) {
  expect(p.error).toBeUndefined();
  expect(p.status).toEqual({ exitCode: 0, signal: null });
  const c = p.inner!;
  expect(c.grandchild).toBeDefined();
  for (const o of [c, c.grandchild!]) {
    expect(o).toMatchObject({
      writeInside: 'ok',
      mkdirInside: 'ok',
      // Outside the roots the whole filesystem is a read-only mount: the kernel answers EROFS
      // before Landlock (the second wall) is asked.
      writeOutside: 'EROFS',
      appendOutside: 'EROFS',
      truncateOutside: 'EROFS',
      unlinkOutside: 'EROFS',
      mkdirOutside: 'EROFS',
      renameOutside: 'EROFS',
      symlinkOutside: 'EROFS',
      chmodOutside: 'EROFS',
      chmodDevNull: 'EROFS',
      utimesOutside: 'EROFS',
      xattrOutside: 'EROFS',
      readOutside: 'ok',
      devNull: 'ok',
      tmpdirWrite: 'ok',
      tmpdirMode: '777',
      cgroupProcs: 'EROFS',
      // No controlling terminal but its own pty: /dev/tty does not even exist for pipes (and
      // cannot be created in the read-only /dev).
      devTty: tty ? 'ok' : 'EROFS',
      ttyWrite: tty ? 'ok' : 'EROFS',
      tiocsti: tty ? 'EPERM' : 'ENOENT',
      // Its own IPC namespace: the host's objects do not exist there; its own are its own.
      shmHost: 'EINVAL',
      msgHost: 'EINVAL',
      shmCreate: 'ok',
      // Host processes do not exist in its PID namespace.
      prlimitHost: 'ESRCH',
      reniceHost: 'ESRCH',
      affinityHost: 'ESRCH',
      secretSeenIn: [],
      noNewPrivs: '1',
      capEff: '0000000000000000',
      seccomp: '2',
      hostVisible: false,
    });
    // Outside the terminal nothing can be signalled (Landlock scoping: EPERM) or even named
    // (a PID namespace: ESRCH); the host's environment and memory are out of reach.
    expect(o.stopGuardian).toBe('ESRCH');
    expect(o.signalHost).toBe('ESRCH');
    expect(o.hostEnviron).toBe('ENOENT');
    expect(o.hostMem).toBe('ENOENT');
    expect(o.tmpdir).toBe('/tmp');
    if (network) {
      expect(o).toMatchObject({ tcpLoopback: 'ok', udpLoopback: 'ok', unixSocket: 'ok' });
      expect(o.abstractSocket).toBe(p.info.sandbox.abstractUnixScoping ? 'EPERM' : 'ok');
    } else {
      expect(o).toMatchObject({ tcpLoopback: 'EPERM', udpLoopback: 'EPERM', unixSocket: 'EPERM', abstractSocket: 'EPERM' });
    }
  }
  // What the host saw: no connection, no datagram, no signal; the guardian still runs; the
  // file outside is untouched; the private TMPDIR is gone after release.
  expect(p.seen).toEqual(
    network ? { tcp: 2, udp: 2, unix: 2, abstract: p.info.sandbox.abstractUnixScoping ? 0 : 2, usr2: 0 } : { tcp: 0, udp: 0, unix: 0, abstract: 0, usr2: 0 },
  );
  expect(p.guardianState).toMatch(/^[RSD]$/);
  expect(p.outsideFile).toBe('keep');
  expect(p.outsideEntries).toEqual(['keep']);
  expect(p.rootEntries).toHaveLength(4); // in-* and dir-* of the command and of its grandchild
  // Nothing changed on the host: IPC objects, this process's limits, priority and affinity, the
  // outside file's mode and times; no segment left behind; nothing in the host's /tmp; nothing
  // written on Node's terminal.
  expect(p.shmHost).toBe('');
  expect(p.msgHost).toBe(0);
  expect(p.shmLeft).toBe(0);
  expect(p.ownChanged).toBeNull();
  expect(p.outsideMeta).toBe('unchanged');
  expect(p.hostTmpEntries).toEqual([]);
  expect(p.ttyLeak).toBe(false);
}

const it = testIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`);
const asRoot = testIf('root', isRoot, 'not root: cannot drop to nobody with setpriv');

describe('every promise, from inside the sandbox', () => {
  it('as the current user', () => {
    expectContained(probe({}));
  });

  it('on a pty: its own tty (and /dev/tty) stays writable; TIOCSTI on it is refused (seccomp)', () => {
    expectContained(probe({ pty: true }), { tty: true });
  });

  // Issue 17, attack 1: a pipe terminal shared Node's session; with Node in a terminal, /dev/tty
  // was writable and TIOCSTI typed into the user's shell.
  it('with Node in a terminal: a pipe terminal has no /dev/tty, nothing reaches the user\'s terminal', () => {
    expectContained(probe({}, { tty: true }));
    expectContained(probe({ pty: true }, { tty: true }), { tty: true });
  });

  // Issue 17, attack 4: isolateProcesses: false let the command prlimit, renice and pin host
  // processes (Node itself included). It is refused; the PID namespace is always on.
  it('isolateProcesses: false is refused, naming the field', () => {
    const p = probe({ sandbox: { isolateProcesses: false } });
    expect(p.error?.code).toBe('ERR_INVALID_ARG');
    expect(p.error?.message).toMatch(/options\.sandbox\.isolateProcesses: false is not supported/);
    expect(p.inner).toBeUndefined();
    expect(p.ownChanged).toBeNull();
  });

  it('network: true opens the network but keeps everything else (abstract sockets stay scoped)', () => {
    expectContained(probe({ sandbox: { network: true } }), { network: true });
  });

  asRoot('as nobody (unprivileged: a user namespace), pipes and ptys, with Node in a terminal', () => {
    const p = probe({}, { prefix: NOBODY });
    expect(p.info.sandbox.processIsolation).toBe('user+pid-namespace');
    expectContained(p);
    expectContained(probe({ pty: true }, { prefix: NOBODY }), { tty: true });
    expectContained(probe({}, { prefix: NOBODY, tty: true }));
    expectContained(probe({ pty: true }, { prefix: NOBODY, tty: true }), { tty: true });
    const q = probe({ sandbox: { isolateProcesses: false } }, { prefix: NOBODY });
    expect(q.error?.code).toBe('ERR_INVALID_ARG');
    expect(q.ownChanged).toBeNull();
  });

  it('with Landlock capped at ABI 3 (no TCP rules, no scoping): seccomp and the namespaces hold it all', () => {
    const p = probe({}, { env: { ACP_TERMINAL_LANDLOCK_ABI: '3' } });
    expect(p.info.sandbox).toMatchObject({ landlockAbi: 3, network: 'seccomp', signalScoping: null, abstractUnixScoping: false });
    expectContained(p);
  });
});

// Issue 17: the same attacks through TerminalHost (pipes, and a pty through its backend: the host has
// no pty option) and a ShellSessions session (a pty), from the probe's own host process.
describe('every promise through TerminalHost and ShellSessions', () => {
  it('as the current user: a TerminalHost pipe and pty terminal, a ShellSessions session', () => {
    expectContained(probe({ via: 'host' }));
    expectContained(probe({ via: 'host', pty: true }), { tty: true });
    expectContained(probe({ via: 'shell' }), { tty: true });
  });

  asRoot('as nobody, with Node in a terminal: a TerminalHost pipe and pty terminal, a ShellSessions session', () => {
    const p = probe({ via: 'host' }, { prefix: NOBODY, tty: true });
    expect(p.info.sandbox.processIsolation).toBe('user+pid-namespace');
    expectContained(p);
    expectContained(probe({ via: 'host', pty: true }, { prefix: NOBODY, tty: true }), { tty: true });
    expectContained(probe({ via: 'shell' }, { prefix: NOBODY, tty: true }), { tty: true });
  });
});

describe('one namespace per terminal', () => {
  /** Runs `n` terminals one after the other in a fresh Node (optionally through a prefix such as
   * setpriv), the first of them leaving a `setsid` process behind that only the namespace's end
   * kills; returns what each saw. */
  function sequence(prefix: string[], env: Record<string, string> = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sbx-seq-'));
    fs.chmodSync(dir, 0o777);
    const script = `
      const { createTerminal, containmentInfo } = require('.');
      const marker = 'sleep 1000.' + process.pid;
      (async () => {
        const seen = [];
        for (let i = 0; i < 10; i++) {
          const command = (i === 0 ? '(setsid ' + marker + ' >/dev/null 2>&1 &); ' : '') +
            'echo $$ $(id -u) $(pwd -P) $(cd ${'../'.repeat(8)} && ls proc | grep -c "^[0-9]") $(grep -l "[s]' + marker.slice(1) + '" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)';
          const t = await createTerminal({ command, cwd: ${JSON.stringify(dir)} }, { sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
          await t.waitForExit();
          seen.push((await t.currentOutput()).output.trim());
          await t.release();
          await new Promise((r) => setTimeout(r, 10));
        }
        console.log(JSON.stringify({ isolation: containmentInfo().sandbox.processIsolation, seen }));
      })();`;
    const argv = [...prefix, process.execPath, '-e', script];
    const r = spawnSync(argv[0]!, argv.slice(1), {
      cwd: prefix.length ? packageRootForOthers() : ROOT,
      encoding: 'utf8',
      timeout: 60000,
      env: { ...process.env, ...env },
    });
    fs.rmSync(dir, { recursive: true, force: true });
    const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
    if (!line) throw new Error(`no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
    const out = JSON.parse(line) as { isolation: string; seen: string[] };
    return { ...out, real: fs.realpathSync(path.dirname(dir)) + '/' + path.basename(dir), rows: out.seen.map((l) => l.split(' ')) };
  }

  /** Each terminal saw only itself, from its cwd, as pid 2 of a fresh namespace, and nothing of the
   * first one's escaped process. */
  function expectIsolated(r: ReturnType<typeof sequence>, uid: string) {
    expect(r.rows).toHaveLength(10);
    r.rows.forEach(([pid, id, cwd, count, markers], i) => {
      expect(pid).toBe('2');
      expect(id).toBe(uid);
      expect(cwd).toBe(r.real);
      // the init, sh, the subshell, ls and grep at most (and the first terminal's escaped process)
      expect(Number(count)).toBeLessThanOrEqual(i === 0 ? 6 : 5);
      if (i === 0) expect(Number(markers)).toBeGreaterThanOrEqual(1);
      else expect(markers).toBe('0');
    });
  }

  it('as the current user', () => {
    expectIsolated(sequence([]), String(process.getuid?.()));
  });

  asRoot('as nobody: through a user namespace', () => {
    const r = sequence(NOBODY);
    expect(r.isolation).toBe('user+pid-namespace');
    expectIsolated(r, '65534');
  });
});

describe('fails closed', () => {
  it('Landlock below ABI 3: ERR_SANDBOX_UNAVAILABLE naming the filesystem part', () => {
    const p = probe({}, { env: { ACP_TERMINAL_LANDLOCK_ABI: '2' } });
    expect(p.info.sandbox).toMatchObject({ available: false, filesystem: false, landlockAbi: 2 });
    expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(p.error?.message).toMatch(/filesystem part \(Landlock ABI >= 3\)/);
    expect(p.status).toBeUndefined();
  });

  it('no signal scoping (ABI 5): the PID namespace stands in', () => {
    expectContained(probe({}, { env: { ACP_TERMINAL_LANDLOCK_ABI: '5' } }));
  });

  it('namespaces refused: ERR_SANDBOX_UNAVAILABLE naming the namespaces and what the user can do', () => {
    const p = probe({}, { env: { ACP_TERMINAL_NO_NAMESPACES: '1' } });
    expect(p.info.sandbox).toMatchObject({ available: false, processIsolation: null });
    expect(p.info.sandbox.promises).toMatchObject({ readOnlyFilesystem: false, privateTmp: false, ipcIsolation: false, processIsolation: false, newSession: true });
    expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(p.error?.message).toMatch(/namespaces.*user namespaces/);
    expect(p.status).toBeUndefined();
  });

  // A real refusal, not a simulated one: nobody inside a user namespace whose
  // user.max_user_namespaces is 0 cannot create the namespaces it needs.
  const canNest = isRoot && spawnSync('unshare', ['--version']).status === 0;
  testIf('userns', canNest && info.available, !isRoot ? 'not root: cannot set up the nested user namespace' : 'no unshare(1), or the sandbox is unavailable')('as nobody where the kernel refuses user namespaces', () => {
    // The maps are written from outside once the namespace exists; the shell then re-execs
    // itself to hold root's capabilities in it, caps the namespace count and becomes nobody.
    const script = `
      unshare --user sh -c 'until [ -n "$(cat /proc/self/gid_map)" ]; do sleep 0.01; done;
        exec sh -c "echo 0 > /proc/sys/user/max_user_namespaces && exec \\"\\$@\\"" sh "$@"' sh "$@" &
      pid=$!
      until printf '0 0 1\\n65534 65534 1\\n' > /proc/$pid/uid_map 2>/dev/null; do sleep 0.01; done
      printf '0 0 1\\n65534 65534 1\\n' > /proc/$pid/gid_map
      wait $pid`;
    const p = probe({}, { prefix: ['sh', '-c', script, 'sh', ...NOBODY] });
    expect(p.info.sandbox.processIsolation).toBeNull();
    expect(p.info.sandbox.reasons.join('\n')).toMatch(/no namespaces/);
    expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(p.error?.message).toMatch(/namespaces/);
    expect(p.status).toBeUndefined();
  });
});

describe('options.sandbox validation', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sbx-v-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  test.each([
    ['not an object', 'yes', /options\.sandbox must be an object/],
    ['no writableRoots', {}, /options\.sandbox\.writableRoots is required/],
    ['writableRoots not an array', { writableRoots: '/tmp' }, /options\.sandbox\.writableRoots must be an array/],
    ['a root not a string', { writableRoots: [dir, 3] }, /options\.sandbox\.writableRoots\[1\] must be a string/],
    ['a relative root', { writableRoots: ['tmp'] }, /writableRoots\[0\] must be an absolute path/],
    ['a missing root', { writableRoots: ['/no/such/dir'] }, /writableRoots\[0\] `\/no\/such\/dir`/],
    ['a file as root', { writableRoots: ['/bin/sh'] }, /not a directory/],
    ['/ as root', { writableRoots: ['/'] }, /writableRoots\[0\] `\/`.*may not be, contain or lie inside \/proc/],
    ['a root inside /sys', { writableRoots: ['/sys/fs/cgroup'] }, /lie inside \/sys/],
    ['a root inside /proc', { writableRoots: ['/proc/self'] }, /\/proc/],
    ['network not a boolean', { writableRoots: [], network: 'no' }, /options\.sandbox\.network must be a boolean/],
    ['isolateProcesses not a boolean', { writableRoots: [], isolateProcesses: 0 }, /options\.sandbox\.isolateProcesses must be a boolean/],
    ['isolateProcesses: false', { writableRoots: [], isolateProcesses: false }, /options\.sandbox\.isolateProcesses: false is not supported/],
    ['tmpBytes not a number', { writableRoots: [], tmpBytes: '1M' }, /options\.sandbox\.tmpBytes must be/],
    ['tmpBytes zero', { writableRoots: [], tmpBytes: 0 }, /options\.sandbox\.tmpBytes must be/],
    ['tmpBytes fractional', { writableRoots: [], tmpBytes: 1.5 }, /options\.sandbox\.tmpBytes must be/],
    ['an unknown key', { writableRoots: [], isolateProcess: false }, /options\.sandbox\.isolateProcess is not a sandbox option/],
  ])('%s: ERR_INVALID_ARG naming the field', async (_name, sandbox, message) => {
    await expect(createTerminal({ command: 'true' }, { sandbox } as never)).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(message),
    });
  });

  test('a symlink is resolved at create: a link to /sys is refused', async () => {
    fs.symlinkSync('/sys', path.join(dir, 'link'));
    await expect(createTerminal({ command: 'true' }, { sandbox: { writableRoots: [path.join(dir, 'link')] } })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/resolved `\/sys`/),
    });
  });
});

describe('containmentInfo().sandbox', () => {
  test('reports the Landlock ABI and what follows from it, consistently', () => {
    const abi = info.landlockAbi;
    hasFeature('landlock', abi > 0, 'the kernel has no Landlock (ABI 0)');
    expect(info.filesystem).toBe(abi >= 3);
    expect(info.network).toBe(abi >= 4 ? 'landlock+seccomp' : 'seccomp');
    expect(info.signalScoping).toBe(abi >= 6 ? 'landlock' : null);
    expect(info.abstractUnixScoping).toBe(abi >= 6);
    expect(info.available).toBe(Object.values(info.promises).every(Boolean));
    expect(info.promises.processIsolation).toBe(info.processIsolation !== null);
    if (!info.available) expect(info.reasons.length).toBeGreaterThan(0);
  });

  test('process isolation matches what this machine allows (checked with unshare(1))', () => {
    const direct = spawnSync('unshare', ['--pid', '--mount', '--fork', '--mount-proc', 'true']).status === 0;
    const viaUserns = spawnSync('unshare', ['--user', '--map-current-user', '--pid', '--mount', '--fork', '--mount-proc', 'true']).status === 0;
    if (isRoot && direct) expect(info.processIsolation).toBe('pid-namespace');
    else if (!isRoot && viaUserns) expect(info.processIsolation).toBe('user+pid-namespace');
    else expect(info.processIsolation).toBeNull();
  });
});

describe('lifecycle', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sbx-l-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sandbox = { writableRoots: [dir] };

  it('the command is not the namespace init: kill() ends it with SIGTERM, not after the grace', async () => {
    const t = await createTerminal({ command: 'sleep', args: ['100'] }, { sandbox, killGraceMs: 60000 });
    await t.kill();
    expect(await t.waitForExit()).toEqual({ exitCode: null, signal: 'SIGTERM' });
    await t.release();
  });

  // The tenth attack: process.exit() with sandboxed terminals running hung Node for good. Its
  // threads waited for each namespace's init, which waited for the namespace's last process to be
  // reaped: the command, Node's own child, whose reaper needed those very threads.
  it('process.exit() with sandboxed terminals running and launching: Node exits, nothing is left', () => {
    const tag = `acp-exit-${process.pid}-${Date.now() % 100000}`;
    const r = runNode(
      `const { createTerminal, sandboxConfig } = require('.');
      const shapes = [false, true].map((network) => sandboxConfig({ writableRoots: [${JSON.stringify(dir)}], network }));
      let i = 0;
      const live = [];
      // A burst: terminals running, others launching, when process.exit() comes.
      setInterval(() => {
        for (let k = 0; k < 3; k++, i++) {
          createTerminal({ command: 'setsid sh -c "while :; do sleep 0.1; done" </dev/null >/dev/null 2>&1 & while :; do sleep 0.1; done',
            cwd: ${JSON.stringify(dir)}, env: [{ name: 'ACP_EXIT_TAG', value: ${JSON.stringify(tag)} }] },
            { sandbox: shapes[i % 2] }).then((t) => live.push(t), () => {});
        }
      }, 5);
      setTimeout(() => process.exit(0), 500);`,
      [],
      60000,
    );
    // (A hang is the 60 s timeout: SIGTERM.)
    expect([r.status, r.signal]).toEqual([0, null]);
    const tagged = () => fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e) && environ(e).includes(tag));
    return eventually(() => tagged().length === 0, 'every tagged process gone');
  });

  it('release ends every process of the namespace (escaped descendants included) and its init', async () => {
    const marker = `${process.pid}${Date.now() % 100000}`;
    const t = await createTerminal({ command: `setsid sleep ${marker} & sleep ${marker}.5` }, { sandbox });
    await eventually(() => fs.readdirSync('/proc').some((e) => cmdline(e) === `sleep ${marker}`), 'the escaped sleep');
    const escaped = fs.readdirSync('/proc').find((e) => cmdline(e) === `sleep ${marker}`)!;
    // The terminal's namespace: its init is the escaped sleep's pid 1, one of our children.
    const init = inits().find((pid) => nsPids(pid).includes(pidInNamespace(escaped)));
    expect(init).toBeDefined();
    await t.release();
    await eventually(() => !fs.readdirSync('/proc').some((e) => cmdline(e).startsWith(`sleep ${marker}`)), 'every sleep gone');
    await eventually(() => !fs.existsSync(`/proc/${init}`), 'the init ended and reaped');
    await eventually(() => zombieChildren().length === 0, 'no zombie child left');
  });

  // Issue 17, attack 5: TMPDIRs were directories of the host's /tmp (a check-then-open race, left
  // behind by a SIGKILLed Node or a chmod-000 subdirectory, with no total bound).
  it('TMPDIR is a private tmpfs: nothing on the host, bounded by tmpBytes, gone with a SIGKILLed Node', () => {
    const before = new Set(fs.readdirSync(os.tmpdir()));
    const r = runNode(`
      const { createTerminal } = require('.');
      (async () => {
        const fill = await createTerminal(
          { command: 'mkdir $TMPDIR/locked && echo x > $TMPDIR/locked/f && chmod 000 $TMPDIR/locked; head -c 3000000 /dev/zero > $TMPDIR/big; echo status $?; df -k /tmp /dev/shm | tail -2', cwd: '/' },
          { sandbox: { writableRoots: [], tmpBytes: 2 * 1024 * 1024 } });
        await fill.waitForExit();
        console.log(JSON.stringify((await fill.currentOutput()).output));
        const t = await createTerminal({ command: 'echo $TMPDIR > /dev/null; touch $TMPDIR/left; echo ready; exec sleep 100', cwd: '/' }, { sandbox: { writableRoots: [] } });
        for (let i = 0; i < 500 && !(await t.currentOutput()).output.includes('ready'); i++) await new Promise((r) => setTimeout(r, 10));
        console.log('killing');
        process.kill(process.pid, 'SIGKILL');
      })();`);
    expect(r.signal).toBe('SIGKILL');
    const [json, killing] = r.stdout.trim().split('\n');
    expect(killing).toBe('killing');
    const out = JSON.parse(json!) as string;
    expect(out).toMatch(/No space left on device/);
    expect(out).toMatch(/status 1/);
    // /tmp and /dev/shm are one tmpfs of 2 MiB (2048 KiB blocks).
    expect(out.match(/\b2048\b/g)?.length).toBe(2);
    const added = fs.readdirSync(os.tmpdir()).filter((e) => !before.has(e) && /acp-terminal|^left$|^big$/.test(e));
    expect(added).toEqual([]);
  });

  it('tmpBytes defaults to 256 MiB', async () => {
    const r = await run({ command: 'df -k /tmp | tail -1' }, { sandbox });
    expect(r.output.split(/\s+/)[1]).toBe(String(256 * 1024));
  });

  it('200 sandboxed terminals, 50 at a time, leave no descriptor or process behind', async () => {
    const guardian = containmentInfo().guardianPid;
    const children = () => processes().filter((p) => p.ppid === process.pid && p.pid !== guardian);
    // Once-per-process descriptors (/dev/null for stdin, the guardian's pipe) exist first.
    await run({ command: 'true' }, { sandbox: { writableRoots: [dir] } });
    await eventually(() => children().length === 0, 'earlier terminals and inits reaped');
    const fds = fdCount();
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const t = await createTerminal(
            { command: i % 2 ? 'sleep 0.05 & echo x > $TMPDIR/f' : 'echo x > $TMPDIR/f' },
            { sandbox: { writableRoots: [dir] }, ...(i % 5 === 0 ? { pty: {} } : {}) },
          );
          await t.waitForExit();
          await t.release();
        }),
      );
    }
    await eventually(() => children().length === 0, 'every init reaped').catch((e) => {
      throw new Error(`${e.message}: ${JSON.stringify(children().map((p) => `${p.pid} ${p.state} ${cmdline(String(p.pid))}`))}`);
    });
    await eventually(() => fdCount() === fds, 'every descriptor closed');
  });

  it("each terminal has its own /tmp: another sandboxed terminal sees nothing of it", async () => {
    const a = await createTerminal({ command: 'echo x > /tmp/mine; echo ready; exec sleep 100' }, { sandbox });
    for (let i = 0; i < 2000 && !(await a.currentOutput()).output.includes('ready'); i++) await new Promise((r) => setTimeout(r, 5));
    const b = await run({ command: 'ls /tmp/mine' }, { sandbox });
    expect(b.output).toMatch(/No such file or directory/);
    expect(fs.existsSync('/tmp/mine')).toBe(false);
    await a.release();
  });

  it('the command starts in its cwd, reachable from its root (not a path of the host mount namespace)', async () => {
    const real = fs.realpathSync(dir);
    // `..` from there to the root, then that root's /proc: the namespace's, not the host's. Several
    // times: the first launches make their namespace, later ones join one made ahead.
    const ups = '../'.repeat(real.split('/').length + 1);
    for (let i = 0; i < 6; i++) {
      const r = await run({ command: `/bin/pwd; readlink /proc/self/cwd; cd ${ups} && ls proc | grep -c '^[0-9]'`, cwd: dir }, { sandbox });
      const [pwd, cwd, count] = r.output.split('\n');
      expect([pwd, cwd]).toEqual([real, real]);
      expect(Number(count)).toBeLessThanOrEqual(4);
    }
  });

  it('a terminal with pipes and one with a pty both report output and exit codes as without a sandbox', async () => {
    const r = await run({ command: 'echo out; echo err >&2; exit 3' }, { sandbox });
    expect(r.output).toBe('out\nerr\n');
    expect(r.status).toEqual({ exitCode: 3, signal: null });
    const p = await run({ command: 'tty; exit 4' }, { sandbox, pty: {} });
    expect(p.output).toMatch(/^\/dev\/pts\/\d+\r\n$/);
    expect(p.status).toEqual({ exitCode: 4, signal: null });
  });
});

describe('TerminalHost and ShellSessions pass options.sandbox to every create', () => {
  // Not under /tmp, which the sandbox replaces with its own: the outside must be visible to it.
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-ts-'));
  const outside = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-ts-out-'));
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('TerminalHost', async () => {
    const host = new TerminalHost({ sandbox: { writableRoots: [dir] } });
    // A host SysV segment the command must not reach, and the user's terminal it must not have.
    const shm = Number(/id: (\d+)/.exec(spawnSync('ipcmk', ['-M', '64'], { encoding: 'utf8' }).stdout)![1]);
    try {
      const { terminalId } = await host.createTerminal({
        sessionId: 's',
        // (the init may still be finishing its exec when the command starts)
        command:
          `echo in > ${dir}/host; echo out > ${outside}/host; chmod 777 ${outside}; ` +
          `ipcs -m -i ${shm} 2>&1 | grep -q "not found" && echo shm-absent || echo shm-seen; ` +
          `test -e /dev/tty && echo tty-present || echo tty-absent; ` +
          `for i in $(seq 200); do grep -q ${INIT_WORD} /proc/1/cmdline && break; sleep 0.01; done; tr '\\0' ' ' < /proc/1/cmdline`,
      });
      expect(await host.waitForTerminalExit({ sessionId: 's', terminalId })).toEqual({ exitCode: 0, signal: null });
      const out = (await host.terminalOutput({ sessionId: 's', terminalId })).output;
      expect(out).toContain(`${INIT} `); // pid 1 is the namespace's init
      expect(fs.readFileSync(path.join(dir, 'host'), 'utf8')).toBe('in\n');
      expect(out).toMatch(/Read-only file system/);
      expect(out).toContain('shm-absent');
      expect(out).toContain('tty-absent');
      expect(fs.existsSync(path.join(outside, 'host'))).toBe(false);
      expect(fs.statSync(outside).mode & 0o777).toBe(0o700);
    } finally {
      spawnSync('ipcrm', ['-m', String(shm)]);
      await host.close();
    }
    // The host's sandbox is configured (its roots pinned) at construction: bad options throw there.
    expect(() => new TerminalHost({ sandbox: { writableRoots: ['relative'] } })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/options\.sandbox\.writableRoots\[0\]/) }),
    );
  });

  it('ShellSessions', async () => {
    fs.writeFileSync(path.join(outside, 'keep'), 'keep');
    fs.chmodSync(path.join(outside, 'keep'), 0o644);
    const shells = new ShellSessions({ cwd: dir, sandbox: { writableRoots: [dir] } });
    try {
      expect(await shells.execute({ command: 'echo hi > inside && cat inside' })).toMatchObject({ exitCode: 0, content: 'hi' });
      const r = await shells.execute({ command: `echo no > ${outside}/x` });
      expect(r.exitCode).not.toBe(0);
      expect(r.content).toMatch(/Read-only file system/);
      expect(fs.existsSync(path.join(outside, 'x'))).toBe(false);
      // Metadata outside the roots, the host's /tmp and IPC objects are out of reach here too.
    const meta = await shells.execute({ command: `chmod 4755 ${outside}/keep; touch -d @1 ${outside}/keep; echo x > /tmp/s-${process.pid}; ipcs -m | grep -c '^0x'` });
    expect(meta.content).toMatch(/chmod: .*Read-only file system/);
    expect(meta.content).toMatch(/touch: .*Read-only file system/);
    expect(meta.content.split('\n').pop()).toBe('0');
    // Its pty is its own, and TIOCSTI on it is refused (seccomp: EPERM is 1).
    const sti = await shells.execute({ command: `perl -e 'open(T, "+<", "/dev/tty") or die; my $c = "#"; print ioctl(T, 0x5412, $c) ? "sti-ok" : "sti-" . ($! + 0)'` });
    expect(sti.content).toBe('sti-1');
    expect(fs.statSync(path.join(outside, 'keep')).mode & 0o7777).toBe(0o644);
    expect(fs.existsSync(`/tmp/s-${process.pid}`)).toBe(false);
    // Only the session's own processes (and the namespace's init) are visible.
      const seen = (await shells.execute({ command: 'ps -e -o comm=' })).content.split('\n');
      expect(seen).toContain('ps');
      expect(seen.filter((c) => ![INIT_COMM, 'bash', 'ps'].includes(c))).toEqual([]);
    } finally {
      await shells.closeAll();
    }
  });
});

/** Our children that are namespace inits. */
function inits(): number[] {
  return processes()
    .filter((p) => p.ppid === process.pid && p.state !== 'Z' && cmdline(String(p.pid)) === INIT)
    .map((p) => p.pid);
}

/** The pids inside the namespace of `init` (its own /proc), sorted; [] when it is gone. */
function nsPids(init: number): string[] {
  try {
    return fs
      .readdirSync(`/proc/${init}/root/proc`)
      .filter((e) => /^\d+$/.test(e))
      .sort((a, b) => Number(a) - Number(b));
  } catch {
    return [];
  }
}

/** The innermost pid of a process (the last of NSpid in its status). */
function pidInNamespace(pid: string): string {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('NSpid:')) ?? '';
  return line.split(/\s+/).pop() ?? '';
}

function cmdline(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

function environ(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return '';
  }
}

// Issue 26, attack 6: `limits.processes` did not hold inside the sandbox (946 processes alive at
// once under `processes: 64` as root): the command joined its pids cgroup from inside the new mount
// namespace, where /sys is read-only, and the join was best effort. The command is now created in
// the terminal's cgroups, opened before the namespace is made.
describe('limits hold inside the sandbox', () => {
  /** Forks up to 300 children that stay alive, in and out of the sandbox, on pipes and ptys, in a
   * fresh Node (optionally as nobody); returns how many forks succeeded in each case. */
  function forkCounts(prefix: string[]): Record<string, number> {
    const dir = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-lim-'));
    fs.chmodSync(dir, 0o777);
    const script = `
      const { createTerminal } = require('.');
      const bomb = 'my $n = 0; for (1 .. 300) { my $p = fork(); last unless defined $p; if (!$p) { sleep 60; exit 0 } $n++ } $| = 1; print "forked $n\\\\n"; kill 9, -$$';
      (async () => {
        const out = {};
        for (const sandbox of [false, true]) for (const pty of [false, true]) {
          const t = await createTerminal({ command: 'perl', args: ['-e', bomb], cwd: ${JSON.stringify(dir)} },
            { limits: { processes: 64, openFiles: 64 }, ...(sandbox ? { sandbox: { writableRoots: [] } } : {}), ...(pty ? { pty: {} } : {}) });
          await t.waitForExit();
          const m = /forked (\\d+)/.exec((await t.currentOutput()).output);
          out[(sandbox ? 'sandbox' : 'plain') + (pty ? '-pty' : '-pipe')] = m ? Number(m[1]) : -1;
          await t.release();
        }
        console.log(JSON.stringify(out));
      })();`;
    const argv = [...prefix, process.execPath, '-e', script];
    const r = spawnSync(argv[0]!, argv.slice(1), { cwd: prefix.length ? packageRootForOthers() : ROOT, encoding: 'utf8', timeout: 120000 });
    fs.rmSync(dir, { recursive: true, force: true });
    const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
    if (!line) throw new Error(`no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
    return JSON.parse(line) as Record<string, number>;
  }

  /** The command itself is one of the 64 (the sandbox's namespace init is not). Where the
   * count is the terminal's own (its pids cgroup; in the sandbox, also its user namespace's
   * RLIMIT_NPROC), the command gets nearly all of them; outside the sandbox without a pids cgroup,
   * RLIMIT_NPROC counts every process and thread of the user (Node's among them), so fewer. */
  function expectBounded(counts: Record<string, number>, ownCount: (k: string) => boolean) {
    expect(Object.keys(counts).sort()).toEqual(['plain-pipe', 'plain-pty', 'sandbox-pipe', 'sandbox-pty']);
    for (const [k, n] of Object.entries(counts)) {
      expect([k, n <= 63]).toEqual([k, true]);
      if (ownCount(k)) expect([k, n >= 40]).toEqual([k, true]);
    }
  }

  it('as the current user', () => {
    expectBounded(forkCounts([]), (k) => containmentInfo().pidsLimit || k.startsWith('sandbox'));
  });

  // nobody cannot create cgroups here: RLIMIT_NPROC alone, per user outside, per namespace inside.
  asRoot('as nobody (a user namespace)', () => {
    expectBounded(forkCounts(NOBODY), (k) => k.startsWith('sandbox'));
  });

  // The ninth attack: the launcher's intermediate process joined the pids cgroup before it started
  // the command and was counted until it was reaped, so `processes: 1` refused every sandboxed launch
  // and `processes: 2` let the command fork only sometimes (2 of 10). The command joins itself now.
  testIf('pids', info.available && containmentInfo().pidsLimit, 'no pids cgroup for terminals here (not root, or cgroups read-only)')(
    'the count is the command tree\'s alone: processes 1 runs the command, 2 lets it fork once, every time',
    async () => {
      const sandbox = { writableRoots: [] };
      for (const pty of [false, true]) {
        const one = await run({ command: 'echo', args: ['one'] }, { limits: { processes: 1 }, sandbox, ...(pty ? { pty: {} } : {}) });
        expect([pty, one.output.trim(), one.exitStatus]).toEqual([pty, 'one', { exitCode: 0, signal: null }]);
      }
      const outs: string[] = [];
      for (let i = 0; i < 10; i++) {
        outs.push((await run({ command: 'sh', args: ['-c', 'echo "$(echo sub)"'] }, { limits: { processes: 2 }, sandbox })).output);
      }
      expect(outs).toEqual(Array(10).fill('sub\n'));
    },
  );
});

/** Runs a Node script in a fresh process from the package root (optionally through a prefix such as
 * setpriv) and returns the last JSON line it printed. */
function nodeJson<T>(prefix: string[], script: string, timeout = 60000): T {
  const argv = [...prefix, process.execPath, '-e', script];
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: prefix.length ? packageRootForOthers() : ROOT, encoding: 'utf8', timeout });
  const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line) as T;
}

// Issue 26, attack 7: without a network namespace, a sandboxed command (network: false) listened on
// an abstract unix socket in the host's namespace and received a host client's data (Landlock scopes
// outbound connects only). Every sandboxed command now has its own network namespace.
describe('a network namespace', () => {
  const script = `
    const { createTerminal } = require('.');
    const net = require('node:net');
    const name = '\\0acp-sbx-abs-' + process.pid;
    const listener = "require('net').createServer((s) => s.on('data', (d) => { console.log('got ' + d); process.exit(0); }))" +
      ".listen(" + JSON.stringify(name) + ", () => console.log('listening')); setTimeout(() => process.exit(3), 5000);";
    const inside = "const dev = require('fs').readFileSync('/proc/net/dev', 'utf8'); console.log('ifaces ' + JSON.stringify(dev.split(String.fromCharCode(10)).slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean)));";
    (async () => {
      const t = await createTerminal({ command: process.execPath, args: ['-e', listener], cwd: '/' }, { sandbox: { writableRoots: [] } });
      let text = '';
      for (let i = 0; i < 500 && !(text = (await t.currentOutput()).output).includes('listening'); i++) await new Promise((r) => setTimeout(r, 10));
      const sent = await new Promise((res) => {
        const c = net.connect(name, () => c.end('hello', () => res('connected')));
        c.on('error', (e) => res(e.code));
      });
      if (sent !== 'connected') await t.kill();
      await t.waitForExit();
      text = (await t.currentOutput()).output;
      await t.release();
      const i = await createTerminal({ command: process.execPath, args: ['-e', inside], cwd: '/' }, { sandbox: { writableRoots: [] } });
      await i.waitForExit();
      const ifaces = /ifaces (.*)/.exec((await i.currentOutput()).output);
      await i.release();
      console.log(JSON.stringify({ listening: text.includes('listening'), sent, received: text.includes('got hello'), ifaces: ifaces && JSON.parse(ifaces[1]) }));
    })();`;

  type Seen = { listening: boolean; sent: string; received: boolean; ifaces: string[] | null };
  function expectIsolated(r: Seen) {
    expect(r).toEqual({ listening: true, sent: 'ECONNREFUSED', received: false, ifaces: ['lo'] });
  }

  it('abstract unix sockets of the sandbox are unreachable from the host; only loopback inside', () => {
    expectIsolated(nodeJson<Seen>([], script));
  });

  asRoot('as nobody', () => {
    expectIsolated(nodeJson<Seen>(NOBODY, script));
  });

  // The launch joins a network namespace made ahead (src/sandbox/netpool.rs) where one is ready:
  // each must still be given to one command only, never the host's, and (unprivileged) come with a
  // user namespace of its own. Four terminals alive at once, each created once the previous one
  // ran (so that the later ones take namespaces made ahead), see four namespaces.
  const distinct = `
    const { createTerminal } = require('.');
    const fs = require('node:fs');
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    (async () => {
      const ts = [], seen = [];
      for (let i = 0; i < 4; i++) {
        const t = await createTerminal({ command: 'readlink /proc/self/ns/net /proc/self/ns/user; exec sleep 30', cwd: '/' }, { sandbox: { writableRoots: [] } });
        let out = '';
        for (let k = 0; k < 500 && (out = (await t.currentOutput()).output).trim().split('\\n').length < 2; k++) await sleep(10);
        seen.push(out.trim().split('\\n'));
        ts.push(t);
        await sleep(50);
      }
      for (const t of ts) { await t.kill(); await t.release(); }
      console.log(JSON.stringify({ host: ['net', 'user'].map((n) => fs.readlinkSync('/proc/self/ns/' + n)), seen }));
    })();`;
  function expectDistinct(r: { host: string[]; seen: string[][] }, ownUserNamespace: boolean) {
    expect(r.seen).toHaveLength(4);
    const nets = r.seen.map((s) => s[0]);
    const users = r.seen.map((s) => s[1]);
    nets.forEach((n) => expect(n).toMatch(/^net:\[\d+\]$/));
    expect(new Set(nets).size).toBe(4);
    expect(nets).not.toContain(r.host[0]);
    if (ownUserNamespace) {
      expect(new Set(users).size).toBe(4);
      expect(users).not.toContain(r.host[1]);
    } else {
      expect(users).toEqual([r.host[1], r.host[1], r.host[1], r.host[1]]);
    }
  }

  it('each terminal has a network namespace of its own, never shared and never the host\'s', () => {
    expectDistinct(nodeJson([], distinct), info.processIsolation === 'user+pid-namespace');
  });

  asRoot('as nobody: a user namespace of its own with each', () => {
    expectDistinct(nodeJson(NOBODY, distinct), true);
  });
});

// Issue 26, attack 5: writable roots were resolved again at every create, and bound with their
// submounts. Under [W, W/a/b] the agent renamed W/a and planted W/a/b -> OUTSIDE: the next terminal
// wrote outside. A procfs mounted inside a root let the sandbox change a host process's
// oom_score_adj (and, as root, kernel.domainname). Roots are now pinned once (TerminalHost: at
// construction; `sandboxConfig()`), nested ones merged, bound without their submounts, and a root
// containing a kernel filesystem is refused.
describe('roots pinned once', () => {
  /** In a fresh Node (optionally as nobody): a TerminalHost with roots [W, W/a/b]; its first command
   * relinks W/a/b to OUT, its second writes through the link. */
  function relink(prefix: string[]) {
    const base = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-pin-'));
    fs.chmodSync(base, 0o777);
    const script = `
      const fs = require('fs'), path = require('path');
      const { TerminalHost, sandboxConfig } = require('./lib');
      const W = fs.mkdtempSync(${JSON.stringify(base)} + '/w-'), OUT = fs.mkdtempSync(${JSON.stringify(base)} + '/out-');
      fs.mkdirSync(W + '/a/b', { recursive: true });
      (async () => {
        const host = new TerminalHost({ sandbox: { writableRoots: [W, W + '/a/b'] } });
        const run = async (command) => {
          const { terminalId } = await host.createTerminal({ sessionId: 's', command, cwd: W });
          await host.waitForTerminalExit({ sessionId: 's', terminalId });
          const o = (await host.terminalOutput({ sessionId: 's', terminalId })).output;
          await host.releaseTerminal({ sessionId: 's', terminalId });
          return o;
        };
        const relinked = await run('mv a a2 && mkdir a && ln -s ' + OUT + ' a/b && echo relinked');
        const write = await run('echo pwned > a/b/x; echo pwned > ' + OUT + '/y; echo done');
        await host.close();
        const pinned = sandboxConfig({ writableRoots: [W + '/a2/b', W] }).writableRoots;
        console.log(JSON.stringify({ relinked, write, outside: fs.readdirSync(OUT), pinned: pinned.map((p) => path.relative(W, p)) }));
      })();`;
    try {
      return nodeJson<{ relinked: string; write: string; outside: string[]; pinned: string[] }>(prefix, script);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  }

  function expectPinned(r: ReturnType<typeof relink>) {
    expect(r.relinked).toBe('relinked\n');
    expect(r.write).toMatch(/Read-only file system[\s\S]*done/);
    expect(r.outside).toEqual([]);
    // The nested root is merged into its parent.
    expect(r.pinned).toEqual(['']);
  }

  it('a nested root relinked by a command: the next terminal still cannot write outside (TerminalHost)', () => {
    expectPinned(relink([]));
  });

  asRoot('as nobody', () => {
    expectPinned(relink(NOBODY));
  });

  /** With a procfs mounted at R/proc (by root, here): a plain sandbox with root R, and one configured
   * before the mount, each try to raise Node's oom_score_adj and set kernel.domainname through it. */
  function procInRoot(prefix: string[]) {
    const R = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-proc-'));
    fs.chmodSync(R, 0o777);
    fs.mkdirSync(path.join(R, 'proc'));
    const domain = fs.readFileSync('/proc/sys/kernel/domainname', 'utf8');
    const script = `
      const fs = require('fs');
      const { createTerminal, sandboxConfig } = require('./lib');
      const R = ${JSON.stringify(R)};
      const early = sandboxConfig({ writableRoots: [R] });
      fs.writeFileSync(R + '/ready', '');
      while (!fs.existsSync(R + '/proc/self')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      const command = 'echo 900 > ' + R + '/proc/' + process.pid + '/oom_score_adj; echo acp-pwned > ' + R + '/proc/sys/kernel/domainname; echo done';
      (async () => {
        const out = {};
        for (const [name, sandbox] of [['options', { writableRoots: [R] }], ['pinned', early]]) {
          try {
            const t = await createTerminal({ command, cwd: '/' }, { sandbox });
            await t.waitForExit();
            out[name] = (await t.currentOutput()).output;
            await t.release();
          } catch (e) {
            out[name] = e.code + ' ' + e.message;
          }
        }
        out.oom = fs.readFileSync('/proc/' + process.pid + '/oom_score_adj', 'utf8').trim();
        console.log(JSON.stringify(out));
      })();`;
    const argv = [...prefix, process.execPath, '-e', script];
    const child = spawn(argv[0]!, argv.slice(1), { cwd: prefix.length ? packageRootForOthers() : ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    return {
      R,
      domain,
      result: (async () => {
        await eventually(() => fs.existsSync(path.join(R, 'ready')), 'the early configuration');
        expect(spawnSync('mount', ['-t', 'proc', 'proc', path.join(R, 'proc')]).status).toBe(0);
        try {
          await new Promise((res) => child.on('close', res));
        } finally {
          spawnSync('umount', [path.join(R, 'proc')]);
          fs.writeFileSync('/proc/sys/kernel/domainname', domain);
          fs.rmSync(R, { recursive: true, force: true });
        }
        const line = stdout.split('\n').filter((l) => l.startsWith('{')).pop();
        if (!line) throw new Error(`no result: ${stdout}\n${stderr}`);
        return JSON.parse(line) as { options: string; pinned: string; oom: string };
      })(),
    };
  }

  async function expectNoProc(prefix: string[]) {
    const { R, domain, result } = procInRoot(prefix);
    const r = await result;
    expect(r.options).toBe(`ERR_INVALID_ARG options.sandbox.writableRoots[0] \`${R}\` contains a proc mount at \`${R}/proc\`: a kernel interface may not be writable in the sandbox (unmount it, or make a directory beside it the root)`);
    // Configured before the mount: the root is bound without it (the sandbox sees the empty
    // directory); in a user namespace the kernel keeps it locked to the root: it is read-only.
    const why = prefix.length ? 'Read-only file system' : 'Directory nonexistent';
    expect(r.pinned).toMatch(new RegExp(`oom_score_adj: ${why}[\\s\\S]*domainname: ${why}[\\s\\S]*done`));
    expect(r.oom).toBe('0');
    expect(fs.readFileSync('/proc/sys/kernel/domainname', 'utf8')).toBe(domain);
  }

  asRoot('a procfs inside a root: refused when configured, not carried in when mounted later (as root)', async () => {
    await expectNoProc([]);
  });

  asRoot('a procfs inside a root, as nobody', async () => {
    await expectNoProc(NOBODY);
  });

  asRoot('a separate mount inside a root listed as a root too is refused; one not listed is not carried in', async () => {
    const W = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-sub-'));
    fs.mkdirSync(path.join(W, 'm'));
    expect(spawnSync('mount', ['-t', 'tmpfs', 'tmpfs', path.join(W, 'm')]).status).toBe(0);
    try {
      fs.writeFileSync(path.join(W, 'm', 'on-mount'), '');
      await expect(createTerminal({ command: 'true' }, { sandbox: { writableRoots: [W, path.join(W, 'm')] } })).rejects.toMatchObject({
        code: 'ERR_INVALID_ARG',
        message: expect.stringMatching(/options\.sandbox\.writableRoots\[1\] `.*\/m` is a separate mount inside options\.sandbox\.writableRoots\[0\]/),
      });
      const r = await run({ command: 'ls -A m; echo x > m/written; echo $?', cwd: W }, { sandbox: { writableRoots: [W] } });
      expect(r.output).toBe('0\n');
      expect(fs.readdirSync(path.join(W, 'm'))).toEqual(['on-mount']);
    } finally {
      spawnSync('umount', [path.join(W, 'm')]);
      fs.rmSync(W, { recursive: true, force: true });
    }
  });
});
