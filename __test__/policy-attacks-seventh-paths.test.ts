// The seventh independent attack on the allow list, path operands and jump hosts: a relative script operand
// was judged as written, not where the command starts (`perl dev/stdin` and `make -f dev/stdin` started in
// `/` read the line's own here-document: a request's cwd `/`, a host whose default cwd is `/`, a session
// shell after `cd /`); node's preload (`-r /dev/stdin`, `-r /proc/self/fd/0`) was not judged at all; and
// ssh's jump host (`-J`, `-o ProxyJump`) runs a ProxyCommand through `$SHELL -c`. Under an allow list every
// path operand is judged as the absolute path it names in the directory the command starts in, a preload as
// the script operand is, and a jump host is code. Each is first shown running without a policy, then held,
// as root and as nobody.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkCommand, compileCommandPolicy } from '../ts/policy';
import { attackBench, runCasesAsNobody, terminalExecute, which, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

/**
 * Where the payloads write: a directory outside every workspace (a command started in `/` cannot name its
 * workspace relatively), world-writable so that nobody's runs write there too; each workspace links `hit` to
 * it, so the fixtures' `hit/HIT` is the marker.
 */
const MARK = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-seventh-paths-mark-'));
fs.chmodSync(MARK, 0o777);
const HIT = 'hit/HIT';

/** The workspace: `hit` (a link to the marker's directory), a harmless `app.js`, `evil` (writes the marker). */
function workspace(dir: string, mark: string): void {
  fs.symlinkSync(mark, `${dir}/hit`);
  fs.symlinkSync('/dev/shm', `${dir}/shm`); // as Debian's /run/shm: `shm/..` is /dev
  fs.writeFileSync(`${dir}/app.js`, '// the project\n');
  fs.writeFileSync(`${dir}/evil`, `#!/bin/sh\necho "$*" > "${mark}/HIT"\n`, { mode: 0o755 });
}
const workspaceSource = `(dir) => (${workspace.toString()})(dir, ${JSON.stringify(MARK)})`;

const bench = attackBench('seventh-paths', HIT, (dir) => workspace(dir, MARK), 0o755);
afterAll(() => fs.rmSync(MARK, { recursive: true, force: true }));
const which_ = (p: string): string => which(p) ?? p;
const allowed = (...programs: string[]): { commandPolicy: { allow: string[] } } => ({ commandPolicy: { allow: programs.map(which_) } });
const heredoc = (line: string, input: string): string => `${line} <<'EOF'\n${input}\nEOF\n`;

const PERL = heredoc('perl dev/stdin', `open F, q{>${MARK}/HIT}; print F qq{perl ran\\n};`);
const MAKE = heredoc('make -f dev/stdin', `all:\n\t@touch ${MARK}/HIT`);
const NODE_SCRIPT = heredoc('node --preserve-symlinks-main dev/stdin', `require('fs').writeFileSync(${JSON.stringify(`${MARK}/HIT`)}, 'node ran')`);
const NODE_JS = `require('fs').writeFileSync(${JSON.stringify(`${MARK}/HIT`)}, 'node ran')`;

/** r7-07: a relative operand started in `/` (the request's cwd; `hostCwd`: the host's default, no cwd in the request). */
const RELATIVE_ATTACKS: [string, string, Request, 'request' | 'host'][] = [
  ['perl dev/stdin, request cwd /', 'perl', { command: PERL, cwd: '/' }, 'request'],
  ['make -f dev/stdin, request cwd /', 'make', { command: MAKE, cwd: '/' }, 'request'],
  ['node dev/stdin, request cwd /', 'node', { command: NODE_SCRIPT, cwd: '/' }, 'request'],
  ['perl dev/stdin, host cwd /', 'perl', { command: PERL, cwd: null }, 'host'],
  ['make -f dev/stdin, host cwd /', 'make', { command: MAKE, cwd: null }, 'host'],
];

/** r7-08: node's preload read from the line's here-document. */
const PRELOAD_ATTACKS: [string, Request][] = [
  ['node -r /dev/stdin', { command: heredoc('node --preserve-symlinks -r /dev/stdin app.js', NODE_JS) }],
  ['node -r /proc/self/fd/0', { command: heredoc('node --preserve-symlinks -r /proc/self/fd/0 app.js', NODE_JS) }],
  ['node --require=/dev/stdin', { command: heredoc('node --preserve-symlinks --require=/dev/stdin app.js', NODE_JS) }],
];

/** r7b-01: `..` after a name that is a symlink (the host's `/run/shm -> /dev/shm`; here the workspace's `shm`). */
const CLIMB_ATTACKS: [string, string, Request][] = [
  ['perl shm/../stdin', 'perl', { command: heredoc('perl shm/../stdin', `open F, q{>${MARK}/HIT}; print F qq{perl ran\\n};`) }],
  ['make -f shm/../stdin', 'make', { command: heredoc('make -f shm/../stdin', `all:\n\t@touch ${MARK}/HIT`) }],
  ['cd shm && perl ../stdin', 'perl', { command: heredoc('cd shm && perl ../stdin', `open F, q{>${MARK}/HIT}; print F qq{perl ran\\n};`) }],
];

/**
 * ssh's jump host: OpenSSH runs `$SHELL -c 'exec ssh ... -W ...'` to reach it, so with the host's SHELL set to
 * `evil` the payload runs (nothing is contacted: `evil` exits at once; the only address named is 127.0.0.1).
 */
const JUMP_ATTACKS: [string, string, Request][] = [
  ['ssh -J', 'ssh', { command: 'ssh -o BatchMode=yes -J 127.0.0.1:1 127.0.0.1 true' }],
  ['ssh -o ProxyJump=', 'ssh', { command: 'ssh -o BatchMode=yes -oProxyJump=127.0.0.1:1 127.0.0.1 true' }],
  ['scp -J', 'scp', { command: 'scp -o BatchMode=yes -J 127.0.0.1:1 app.js 127.0.0.1:b' }],
];
const jumpEnv = (): { env: Record<string, string> } => ({ env: { SHELL: path.join(bench.dir, 'evil') } });

describe('r7-07: a relative path operand is judged where the command starts', () => {
  test.each(RELATIVE_ATTACKS)('%s: ran, then refused', async (label, program, request, where) => {
    const hostCwd = where === 'host' ? { cwd: '/' } : {};
    await bench.run(bench.host(hostCwd), request);
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    await expect(bench.host({ ...hostCwd, ...allowed(program) }).createTerminal({ sessionId: 's', ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution', word: program, why: expect.stringMatching(/stdin or a device/) },
    });
    expect(bench.hit()).toBe(false);
  });

  test('the same lines in a directory of files still run', async () => {
    fs.mkdirSync(path.join(bench.dir, 'dev'), { recursive: true });
    fs.writeFileSync(path.join(bench.dir, 'dev', 'stdin'), 'print "a file\\n";\n');
    const h = bench.host(allowed('perl', 'make'));
    expect(await bench.run(h, { command: 'perl dev/stdin' })).toBe('a file\n');
    fs.writeFileSync(path.join(bench.dir, 'Makefile'), 'all:\n\t@echo made\n');
    expect(await bench.run(h, { command: 'make -f Makefile' })).toBe('made\n');
  });

  test("MCP terminal_execute: a session's shell after `cd /` (the session's cwd is judged, not the host's)", async () => {
    const execute = async (allow: boolean): Promise<string> =>
      (await terminalExecute({ cwd: bench.dir, ...(allow ? allowed('perl') : {}) }, [{ command: 'cd /' }, { command: PERL, timeout: 20 }]))[1]!;
    await execute(false);
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    expect(await execute(true)).toMatch(/stdin or a device/);
    expect(bench.hit()).toBe(false);
  });

  test('an argv request started in / is judged there too', () => {
    const policy = compileCommandPolicy({ allow: [which_('perl')] }, 'commandPolicy')!;
    const resolve = (p: string): string => which_(p);
    const check = (cwd: string) => () => checkCommand(policy, { command: 'perl', args: ['dev/stdin'], shellLine: false, cwd, path: undefined, resolve });
    expect(check('/')).toThrow(expect.objectContaining({ code: 'ERR_POLICY_DENIED', details: expect.objectContaining({ reason: 'code-execution' }) }));
    expect(check(bench.dir)).not.toThrow();
  });
});

describe('r7b-01: `..` after a name that may be a symlink is not followed', () => {
  test.each(CLIMB_ATTACKS)('%s: ran, then refused', async (label, program, request) => {
    await bench.ranThenRefused(label, request, bench.host(allowed(program)), { reason: 'code-execution', word: program });
  });

  test('`..` out of the start directory still runs', async () => {
    fs.mkdirSync(path.join(bench.dir, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(bench.dir, 'x.pl'), 'print "up\\n";\n');
    expect(await bench.run(bench.host(allowed('perl')), { command: 'perl ../x.pl', cwd: path.join(bench.dir, 'sub') })).toBe('up\n');
  });
});

describe("r7-08: node's preload is judged as its script is", () => {
  test.each(PRELOAD_ATTACKS)('%s: ran, then refused', async (label, request) => {
    await bench.ranThenRefused(label, request, bench.host(allowed('node')), { reason: 'code-execution', word: 'node' });
  });

  test('a preload of the project still runs', async () => {
    fs.writeFileSync(path.join(bench.dir, 'setup.js'), "process.stdout.write('setup ')\n");
    expect(await bench.run(bench.host(allowed('node')), { command: 'node -r ./setup.js app.js' })).toBe('setup ');
  });
});

testIf('ssh', which('ssh') !== undefined && which('scp') !== undefined, 'ssh/scp are not installed')('ssh/scp -J and ProxyJump ran $SHELL; refused as code-execution', async () => {
  for (const [label, program, request] of JUMP_ATTACKS) {
    await bench.run(bench.host(jumpEnv()), request);
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    await expect(bench.host({ ...jumpEnv(), ...allowed(program) }).createTerminal({ sessionId: 's', cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution', word: program },
    });
    expect([label, bench.hit()]).toEqual([label, false]);
  }
  // Never run: only refused (a name to look up, an option pasted into the ProxyCommand).
  for (const command of ["ssh -J 'x -oProxyCommand=touch' 127.0.0.1", 'scp -J x a 127.0.0.1:b', 'ssh -o "proxyjump x" 127.0.0.1', 'ssh 127.0.0.1 -J x']) {
    const program = command.split(' ')[0]!;
    await expect(bench.host(allowed(program)).createTerminal({ sessionId: 's', cwd: bench.dir, command })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution', word: program },
    });
  }
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: the same attacks run without a policy and are held by the allow list', () => {
  const cases = [
    ...RELATIVE_ATTACKS.map(([label, program, request, where]) => {
      const hostCwd = where === 'host' ? { cwd: '/' } : {};
      return { label, request, hosts: { open: hostCwd, allow: { ...hostCwd, ...allowed(program) } } };
    }),
    ...PRELOAD_ATTACKS.map(([label, request]) => ({ label, request, hosts: { open: {}, allow: allowed('node') } })),
    ...CLIMB_ATTACKS.map(([label, program, request]) => ({ label, request, hosts: { open: {}, allow: allowed(program) } })),
  ];
  const results = runCasesAsNobody(workspaceSource, HIT, cases, true);
  for (const { label } of cases) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: 'code-execution held' }]);
});
