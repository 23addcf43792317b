// The OS sandbox (issue 11): every promise is tried from INSIDE a sandboxed terminal and its
// grandchild (fixtures/sandbox-inner.js), driven by a host Node process of its own
// (fixtures/sandbox-outer.js) that holds a secret in its environment and listens on 127.0.0.1,
// a unix socket and an abstract socket. Run as root and, through setpriv, as nobody. Then the
// fail-closed paths, the option's validation, containmentInfo().sandbox and the lifecycle.
import { spawnSync } from 'node:child_process';
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
/** The namespace's init as `cmdline` shows it: a static program in a memfd (x86_64), else `sleep`. */
const INIT = process.arch === 'x64' ? 'acp-terminal-init' : 'sleep 2147483647';
const INIT_COMM = process.arch === 'x64' ? 'acp-terminal-in' : 'sleep'; // 15 bytes at most
const INIT_WORD = INIT.split(' ')[0] ?? INIT;
const NOBODY = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];

type Outcomes = Record<string, unknown> & { grandchild?: Outcomes };
interface Probe {
  error?: { code: string; message: string };
  status?: { exitCode: number | null; signal: string | null };
  inner?: Outcomes;
  info: { sandbox: typeof info; guardianPid: number };
  seen: Record<string, number>;
  guardianState: string | null;
  tmpdirLeft: boolean | null;
  outsideFile: string | null;
  outsideEntries: string[];
  rootEntries: string[];
}

/** Runs the host fixture in a fresh Node process (optionally through a prefix such as setpriv). */
function probe(opts: object, { prefix = [] as string[], env = {} as Record<string, string> } = {}): Probe {
  // Through a prefix the fixture may run as another user: it loads a package root that user can read.
  const pkg = prefix.length ? packageRootForOthers() : ROOT;
  const argv = [...prefix, process.execPath, path.join(pkg, '__test__', 'fixtures', 'sandbox-outer.js'), pkg, JSON.stringify(opts)];
  const r = spawnSync(argv[0]!, argv.slice(1), {
    cwd: pkg,
    encoding: 'utf8',
    timeout: 60000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ACP_SANDBOX_SECRET: `s3cr3t-${process.pid}-${Date.now()}`, ...env },
  });
  const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`the probe printed no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line);
}

/** What must hold inside any sandbox without network access, for the command and its grandchild. */
function expectContained(p: Probe, { isolated, network = false, tty = false }: { isolated: boolean; network?: boolean; tty?: boolean }) {
  expect(p.error).toBeUndefined();
  expect(p.status).toEqual({ exitCode: 0, signal: null });
  const c = p.inner!;
  expect(c.grandchild).toBeDefined();
  for (const o of [c, c.grandchild!]) {
    expect(o).toMatchObject({
      writeInside: 'ok',
      mkdirInside: 'ok',
      writeOutside: 'EACCES',
      appendOutside: 'EACCES',
      truncateOutside: 'EACCES',
      unlinkOutside: 'EACCES',
      mkdirOutside: 'EACCES',
      renameOutside: 'EACCES',
      symlinkOutside: 'EACCES',
      readOutside: 'ok',
      devNull: 'ok',
      tmpdirWrite: 'ok',
      tmpdirMode: '700',
      cgroupProcs: 'EACCES',
      devTty: tty ? 'ok' : 'ENXIO',
      secretSeenIn: [],
      noNewPrivs: '1',
      capEff: '0000000000000000',
      seccomp: '2',
      hostVisible: !isolated,
    });
    // Outside the terminal nothing can be signalled (Landlock scoping: EPERM) or even named
    // (a PID namespace: ESRCH); the host's environment and memory are out of reach.
    expect(o.stopGuardian).toBe(isolated ? 'ESRCH' : 'EPERM');
    expect(o.signalHost).toBe(isolated ? 'ESRCH' : 'EPERM');
    expect(o.hostEnviron).toBe(isolated ? 'ENOENT' : 'EACCES');
    expect(o.hostMem).toBe(isolated ? 'ENOENT' : 'EACCES');
    expect(o.tmpdir).toBe(c.tmpdir);
    if (network) {
      expect(o).toMatchObject({ tcpLoopback: 'ok', udpLoopback: 'ok', unixSocket: 'ok' });
      expect(o.abstractSocket).toBe(p.info.sandbox.abstractUnixScoping ? 'EPERM' : 'ok');
    } else {
      expect(o).toMatchObject({ tcpLoopback: 'EPERM', udpLoopback: 'EPERM', unixSocket: 'EPERM', abstractSocket: 'EPERM' });
    }
  }
  expect(path.dirname(c.tmpdir as string)).toBe(os.tmpdir());
  // What the host saw: no connection, no datagram, no signal; the guardian still runs; the
  // file outside is untouched; the private TMPDIR is gone after release.
  expect(p.seen).toEqual(
    network ? { tcp: 2, udp: 2, unix: 2, abstract: p.info.sandbox.abstractUnixScoping ? 0 : 2, usr2: 0 } : { tcp: 0, udp: 0, unix: 0, abstract: 0, usr2: 0 },
  );
  expect(p.guardianState).toMatch(/^[RSD]$/);
  expect(p.outsideFile).toBe('keep');
  expect(p.outsideEntries).toEqual(['keep']);
  expect(p.rootEntries).toHaveLength(4); // in-* and dir-* of the command and of its grandchild
  expect(p.tmpdirLeft).toBe(false);
}

const it = testIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`);

describe('every promise, from inside the sandbox', () => {
  it('as the current user, with a PID namespace (the default)', () => {
    expectContained(probe({}), { isolated: true });
  });

  it('on a pty: its own tty (and /dev/tty) stays writable', () => {
    expectContained(probe({ pty: true }), { isolated: true, tty: true });
  });

  it('isolateProcesses: false: Landlock alone still refuses signals, environ and ptrace outside', () => {
    const p = probe({ sandbox: { isolateProcesses: false } });
    if (p.info.sandbox.signalScoping !== 'landlock') return expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expectContained(p, { isolated: false });
  });

  it('network: true opens the network but keeps everything else (abstract sockets stay scoped)', () => {
    expectContained(probe({ sandbox: { network: true } }), { isolated: true, network: true });
  });

  testIf('root', isRoot, 'not root: cannot drop to nobody with setpriv')('as nobody (unprivileged: a user namespace), with and without isolateProcesses', () => {
    const p = probe({}, { prefix: NOBODY });
    expect(p.info.sandbox.processIsolation).toBe('user+pid-namespace');
    expectContained(p, { isolated: true });
    expectContained(probe({ sandbox: { isolateProcesses: false } }, { prefix: NOBODY }), { isolated: false });
    expectContained(probe({ pty: true }, { prefix: NOBODY }), { isolated: true, tty: true });
  });

  it('with Landlock capped at ABI 3 (no TCP rules, no scoping): seccomp and the PID namespace hold it all', () => {
    const p = probe({}, { env: { ACP_TERMINAL_LANDLOCK_ABI: '3' } });
    expect(p.info.sandbox).toMatchObject({ landlockAbi: 3, network: 'seccomp', signalScoping: null, abstractUnixScoping: false });
    expectContained(p, { isolated: true });
  });
});

describe('namespaces made ahead and recycled', () => {
  /** Runs `n` isolated terminals one after the other in a fresh Node (optionally through a prefix such
   * as setpriv), the first of them leaving a `setsid` process behind that only the namespace's end
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

  /** Each terminal saw only itself, from its cwd, and nothing of the first one's escaped process. */
  function expectIsolated(r: ReturnType<typeof sequence>, uid: string) {
    expect(r.rows).toHaveLength(10);
    r.rows.forEach(([pid, id, cwd, count, markers], i) => {
      expect(id).toBe(uid);
      expect(cwd).toBe(r.real);
      // the init, sh, the subshell, ls and grep at most (and the first terminal's escaped process)
      expect(Number(count)).toBeLessThanOrEqual(i === 0 ? 6 : 5);
      expect(Number(pid)).toBeGreaterThanOrEqual(2);
      // The first terminal's escaped process (and, for a moment, `setsid` itself) is seen from its
      // own terminal only.
      if (i === 0) expect(Number(markers)).toBeGreaterThanOrEqual(1);
      else expect(markers).toBe('0');
    });
  }

  /** As `expectIsolated`, and later launches joined namespaces made ahead, some of them recycled. */
  function expectIsolatedAlong(r: ReturnType<typeof sequence>, uid: string) {
    expectIsolated(r, uid);
    // A recycled namespace has handed out pids before: the command is not pid 2 there. (A
    // namespace made in the launch, or made ahead and unused, starts at 2.)
    expect(r.rows.some(([pid]) => Number(pid) > 2)).toBe(true);
  }

  it('as the current user', () => {
    const r = sequence([]);
    expectIsolatedAlong(r, String(process.getuid?.()));
  });

  testIf('root', isRoot, 'not root: cannot drop to nobody with setpriv')('as nobody: joined through a user namespace', () => {
    const r = sequence(NOBODY);
    expect(r.isolation).toBe('user+pid-namespace');
    expectIsolatedAlong(r, '65534');
  });

  it('ACP_TERMINAL_NO_NAMESPACE_POOL=1: every launch makes its own namespace (the command is always pid 2)', () => {
    const r = sequence([], { ACP_TERMINAL_NO_NAMESPACE_POOL: '1' });
    expectIsolated(r, String(process.getuid?.()));
    expect(r.rows.map(([pid]) => pid)).toEqual(Array(10).fill('2'));
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

  it('no signal scoping (ABI 5) and no PID namespace: refused, while the namespace stands in by default', () => {
    const env = { ACP_TERMINAL_LANDLOCK_ABI: '5' };
    const p = probe({ sandbox: { isolateProcesses: false } }, { env });
    expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(p.error?.message).toMatch(/signal scoping/);
    expectContained(probe({}, { env }), { isolated: true });
  });

  it('namespaces refused: isolateProcesses (the default) is refused, isolateProcesses: false runs', () => {
    const env = { ACP_TERMINAL_NO_NAMESPACES: '1' };
    const p = probe({}, { env });
    expect(p.info.sandbox).toMatchObject({ available: false, processIsolation: null });
    expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(p.error?.message).toMatch(/process isolation.*isolateProcesses: false/);
    expectContained(probe({ sandbox: { isolateProcesses: false } }, { env }), { isolated: false });
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
    expect(p.info.sandbox.reasons.join('\n')).toMatch(/no process isolation/);
    expect(p.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(p.error?.message).toMatch(/process isolation/);
    const q = probe({ sandbox: { isolateProcesses: false } }, { prefix: ['sh', '-c', script, 'sh', ...NOBODY] });
    expectContained(q, { isolated: false });
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
    expect(info.available).toBe(info.filesystem && info.network !== null && info.processIsolation !== null);
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

  it('release ends every process of the namespace (escaped descendants included); the namespace is ended or recycled empty; TMPDIR removed', async () => {
    const marker = `${process.pid}${Date.now() % 100000}`;
    const t = await createTerminal({ command: `setsid sleep ${marker} & echo $TMPDIR; sleep ${marker}.5` }, { sandbox });
    await eventually(() => fs.readdirSync('/proc').some((e) => cmdline(e) === `sleep ${marker}`), 'the escaped sleep');
    const escaped = fs.readdirSync('/proc').find((e) => cmdline(e) === `sleep ${marker}`)!;
    // The terminal's namespace: its init is the escaped sleep's pid 1, one of our children.
    const init = poolInits().find((pid) => nsPids(pid).includes(pidInNamespace(escaped)));
    expect(init).toBeDefined();
    const tmp = (await t.currentOutput()).output.trim();
    expect(fs.existsSync(tmp)).toBe(true);
    await t.release();
    await eventually(() => !fs.existsSync(tmp), 'the TMPDIR removed right after release');
    await eventually(() => !fs.readdirSync('/proc').some((e) => cmdline(e).startsWith(`sleep ${marker}`)), 'every sleep gone');
    // Either the init was killed and reaped, or the namespace was found empty and kept for a later
    // terminal: then nothing but its init is in it.
    await eventually(() => !fs.existsSync(`/proc/${init}`) || nsPids(init!).join() === '1', 'the namespace ended or empty');
    await eventually(() => zombieChildren().length === 0, 'no zombie child left');
  });

  it('a process that exits right after release (process.exit) leaves no TMPDIR behind', () => {
    // Three terminals, released at once: the later ones join namespaces made ahead, whose TMPDIRs
    // go with the namespace's check on the pool's thread, which the exit does not wait for.
    const r = runNode(`
      const { createTerminal } = require('.');
      (async () => {
        const ts = [];
        for (let i = 0; i < 3; i++) {
          const t = await createTerminal({ command: 'echo $TMPDIR' }, { sandbox: { writableRoots: [] } });
          await t.waitForExit();
          console.log((await t.currentOutput()).output.trim());
          ts.push(t);
          await new Promise((r) => setTimeout(r, 20));
        }
        for (const t of ts) await t.release();
        process.exit(0);
      })();`);
    expect(r.status).toBe(0);
    const tmps = r.stdout.trim().split('\n');
    expect(tmps).toHaveLength(3);
    for (const tmp of tmps) {
      expect(tmp).toMatch(/acp-terminal-sandbox-/);
      expect(fs.existsSync(tmp)).toBe(false);
    }
  });

  it('200 sandboxed terminals, 50 at a time, leave no descriptor, process or TMPDIR behind', async () => {
    const guardian = containmentInfo().guardianPid;
    // Namespaces kept ready for later terminals: empty but for their init, which holds a pidfd here.
    const ready = () => poolInits().filter((pid) => nsPids(pid).join() === '1');
    // Our children other than the guardian and those: terminals, and inits not reaped yet.
    const children = () => processes().filter((p) => p.ppid === process.pid && p.pid !== guardian && !ready().includes(p.pid));
    // Once-per-process descriptors (/dev/null for stdin, the guardian's pipe, the pool's watch of
    // the mount table) exist first.
    await run({ command: 'true' }, { sandbox: { writableRoots: [dir] } });
    await run({ command: 'true' }, { sandbox: { writableRoots: [dir] } });
    await eventually(() => children().length === 0, 'earlier terminals and inits reaped');
    const fds = fdCount() - ready().length;
    const tmps: string[] = [];
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const t = await createTerminal(
            { command: i % 2 ? 'sleep 0.05 & echo $TMPDIR' : 'echo $TMPDIR' },
            { sandbox: { writableRoots: [dir], isolateProcesses: i % 3 !== 0 }, ...(i % 5 === 0 ? { pty: {} } : {}) },
          );
          await t.waitForExit();
          tmps.push((await t.currentOutput()).output.trim());
          await t.release();
        }),
      );
    }
    expect(new Set(tmps).size).toBe(200);
    await eventually(() => tmps.every((d) => !fs.existsSync(d)), 'every TMPDIR removed');
    await eventually(() => children().length === 0, 'every init reaped or ready again').catch((e) => {
      throw new Error(`${e.message}: ${JSON.stringify(children().map((p) => `${p.pid} ${p.state} ${cmdline(String(p.pid))}`))}`);
    });
    // At most a few namespaces are kept ready (the pool's KEEP), each one init and one pidfd.
    expect(ready().length).toBeLessThanOrEqual(4);
    await eventually(() => fdCount() - ready().length === fds, 'every descriptor closed');
  });

  it("another sandboxed terminal cannot write into a terminal's TMPDIR (mode 0700 keeps other users out)", async () => {
    const a = await createTerminal({ command: 'echo $TMPDIR; echo x > $TMPDIR/mine; exec sleep 100' }, { sandbox });
    let tmp = '';
    const poll = async () => (tmp = (await a.currentOutput()).output);
    for (let i = 0; i < 2000 && !tmp.endsWith('\n'); i++) await poll().then(() => new Promise((r) => setTimeout(r, 5)));
    tmp = tmp.trim();
    expect(tmp).toMatch(/acp-terminal-sandbox-/);
    expect((fs.statSync(tmp).mode & 0o777).toString(8)).toBe('700');
    const b = await run({ command: `echo y > ${tmp}/theirs; rm -f ${tmp}/mine` }, { sandbox });
    expect(b.output).toMatch(/theirs: Permission denied/);
    expect(b.output).toMatch(/mine.*Permission denied/);
    expect(fs.existsSync(path.join(tmp, 'theirs'))).toBe(false);
    expect(fs.existsSync(path.join(tmp, 'mine'))).toBe(true);
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
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sbx-ts-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sbx-ts-out-'));
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('TerminalHost', async () => {
    const host = new TerminalHost({ sandbox: { writableRoots: [dir] } });
    try {
      const { terminalId } = await host.createTerminal({
        sessionId: 's',
        // (the init may still be finishing its exec when the command starts)
        command:
          `echo in > ${dir}/host; echo out > ${outside}/host; ` +
          `for i in $(seq 200); do grep -q ${INIT_WORD} /proc/1/cmdline && break; sleep 0.01; done; tr '\\0' ' ' < /proc/1/cmdline`,
      });
      expect(await host.waitForTerminalExit({ sessionId: 's', terminalId })).toEqual({ exitCode: 0, signal: null });
      const out = (await host.terminalOutput({ sessionId: 's', terminalId })).output;
      expect(out).toMatch(/Permission denied/);
      expect(out).toContain(`${INIT} `); // pid 1 is the namespace's init
      expect(fs.readFileSync(path.join(dir, 'host'), 'utf8')).toBe('in\n');
      expect(fs.existsSync(path.join(outside, 'host'))).toBe(false);
    } finally {
      await host.close();
    }
    const bad = new TerminalHost({ sandbox: { writableRoots: ['relative'] } });
    await expect(bad.createTerminal({ sessionId: 's', command: 'true' })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/options\.sandbox\.writableRoots\[0\]/),
    });
    await bad.close();
  });

  it('ShellSessions', async () => {
    const shells = new ShellSessions({ cwd: dir, sandbox: { writableRoots: [dir] } });
    try {
      expect(await shells.execute({ command: 'echo hi > inside && cat inside' })).toMatchObject({ exitCode: 0, content: 'hi' });
      const r = await shells.execute({ command: `echo no > ${outside}/x` });
      expect(r.exitCode).not.toBe(0);
      expect(r.content).toMatch(/Permission denied/);
      expect(fs.existsSync(path.join(outside, 'x'))).toBe(false);
      // Only the session's own processes (and the namespace's init) are visible.
      const seen = (await shells.execute({ command: 'ps -e -o comm=' })).content.split('\n');
      expect(seen).toContain('ps');
      expect(seen.filter((c) => ![INIT_COMM, 'bash', 'ps'].includes(c))).toEqual([]);
    } finally {
      await shells.closeAll();
    }
  });
});

/** Our children that are namespace inits (of terminals, or kept ready by the pool). */
function poolInits(): number[] {
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
