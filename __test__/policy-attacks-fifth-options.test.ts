// The fifth independent attack on the allow list (x13, x15, x17, x18, x27 and round 4's leftovers): programs
// an allow list names exactly ran a payload through options nobody read (`split --filter`, `install
// --strip-program`, `sdiff`/`diff3 --diff-program`, `capsh --`, `logsave PROG`), acted on a host process by
// pid (`strace -p`, `taskset -p`, `kill`), or started an interactive shell that runs start-up files
// (`chroot /`). Each request is first shown doing what it does through a host without a policy, then refused
// by the allow list with nothing run; the file-writing ones are refused as nobody too.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TerminalHost } from '../ts/host';
import { attackBench, runCasesAsNobody, which, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

const S = 'fifth';

/** The payload the allow lists never name: it writes HIT. Files relative to the request's cwd. */
const EVIL = './evil';
const HIT = 'hit/HIT';
const PRINTF = '/usr/bin/printf';

/** [label, programs the allow list names (besides printf), the request, what the refusal says] */
type Attack = [string, string[], Request, Record<string, unknown>];
const ATTACKS: Attack[] = [
  ['split --filter=CMD', ['split'], { command: 'split', args: [`--filter=${EVIL} split`, 'slash.txt'] }, { reason: 'code-execution', word: 'split' }],
  ['split --fil=CMD (an abbreviation)', ['split'], { command: `split --fil='${EVIL} split-abbrev' slash.txt` }, { reason: 'code-execution', word: 'split' }],
  ['install --strip-program=CMD', ['install'], { command: 'install', args: ['-s', `--strip-program=${EVIL}`, 'slash.txt', 'out.bin'] }, { reason: 'code-execution', word: 'install' }],
  ['sdiff --diff-program=CMD', ['sdiff'], { command: 'sdiff', args: [`--diff-program=${EVIL}`, 'slash.txt', 'x.js'] }, { reason: 'code-execution', word: 'sdiff' }],
  ['diff3 --diff-program=CMD', ['diff3'], { command: 'diff3', args: [`--diff-program=${EVIL}`, 'slash.txt', 'x.js', 'page.1'] }, { reason: 'code-execution', word: 'diff3' }],
  ['capsh -- -c LINE', ['capsh'], { command: 'capsh', args: ['--', '-c', `${EVIL} capsh`] }, { reason: 'code-execution', word: 'capsh' }],
  ['logsave LOG PROG', ['logsave'], { command: 'logsave', args: ['log.txt', EVIL, 'logsave'] }, { reason: 'not-allowed', word: EVIL }],
];

/** Writes the workspace files the attacks use (the agent could write each with one printf redirection). */
function workspace(dir: string): void {
  fs.writeFileSync(path.join(dir, 'evil'), `#!/bin/sh\necho "$*" >> "${path.join(dir, HIT)}"\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(dir, 'hit'), { recursive: true });
  fs.chmodSync(path.join(dir, 'hit'), 0o777);
  fs.writeFileSync(path.join(dir, 'slash.txt'), 'a/b\n');
  fs.writeFileSync(path.join(dir, 'x.js'), 'setTimeout(() => {}, 100);\n');
  fs.writeFileSync(path.join(dir, 'page.1'), '.TH X 1\n');
  for (const f of ['slash.txt', 'x.js', 'page.1']) fs.chmodSync(path.join(dir, f), 0o644);
}

const bench = attackBench(S, HIT, workspace, 0o755);
const { run } = bench;
const host = (allow?: string[]): TerminalHost => bench.host(allow ? { commandPolicy: { allow: [PRINTF, ...allow.map((p) => which(p) ?? p)] } } : {});
const installed = ([, programs]: Attack): boolean => programs.every((p) => (p.startsWith('/') ? fs.existsSync(p) : which(p) !== undefined));

describe('an allow list naming one program refuses what that program would run from its arguments', () => {
  test.each(ATTACKS)('%s', async (label, programs, request, refusal) => {
    for (const p of programs) expect(p.startsWith('/') ? fs.existsSync(p) && p : which(p) ?? `${p} not installed`).toMatch(/^\//);
    await bench.ranThenRefused(label, request, host(programs), refusal);
  });

  test('what these programs are for still runs under the same allow lists', async () => {
    expect(await run(host(['split', 'cat']), { command: 'split -l 1 slash.txt part. && cat part.aa' })).toBe('a/b\n');
    expect(await run(host(['sdiff']), { command: 'sdiff slash.txt slash.txt' })).toMatch(/a\/b/);
    expect(await run(host(['capsh']), { command: 'capsh --has-p=cap_chown; echo $?' })).toMatch(/^\d\n$/);
  });
});

describe('an allow list refuses an option that acts on another process, and a shell that runs start-up files', () => {
  const sleeper = (): { pid: number; alive: () => boolean; stop: () => void } => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    let exited = false;
    child.on('exit', () => (exited = true));
    return { pid: child.pid as number, alive: () => !exited, stop: () => child.kill('SIGKILL') };
  };
  const exited = async (alive: () => boolean): Promise<boolean> => {
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
    return !alive();
  };

  test.each([
    ['strace -p PID -e inject=all:signal=KILL (x17)', ['strace', 'timeout'], (pid: number): Request => ({ command: `timeout 5 strace -qq -p ${pid} -e inject=all:signal=KILL` })],
    ['kill PID', ['kill'], (pid: number): Request => ({ command: 'kill', args: ['-KILL', String(pid)] })],
    ['kill PID (the builtin, on a shell line)', ['kill'], (pid: number): Request => ({ command: `kill -KILL ${pid}` })],
  ])('%s: a host process is killed without a policy, left alone under the allow list', async (_label, programs, request) => {
    const victim = sleeper();
    try {
      await run(host(), request(victim.pid));
      expect(await exited(victim.alive)).toBe(true); // the attack works without the policy
    } finally {
      victim.stop();
    }
    const spared = sleeper();
    try {
      const h = host(programs);
      await expect(h.createTerminal({ sessionId: S, cwd: bench.dir, ...request(spared.pid) })).rejects.toMatchObject({
        code: 'ERR_POLICY_DENIED',
        details: { reason: 'code-execution', why: expect.stringMatching(/^pid-option: /) },
      });
      expect(spared.alive()).toBe(true);
      // The host opts in explicitly by naming the program in codeRunners.
      const allow = [PRINTF, ...programs.map((p) => which(p) ?? p)];
      const optedIn = bench.host({ commandPolicy: { allow, codeRunners: allow } });
      await run(optedIn, request(spared.pid));
      expect(await exited(spared.alive)).toBe(true);
    } finally {
      spared.stop();
    }
  });

  testIf('cpus', os.cpus().length >= 2, 'one CPU: no other affinity to set')('taskset -p (x18) changes a host process affinity without a policy, refused under the allow list', async () => {
        const victim = sleeper();
    const affinity = (): string => spawnSync('taskset', ['-p', String(victim.pid)], { encoding: 'utf8' }).stdout.trim().split(': ')[1] ?? '';
    try {
      const before = affinity();
      await run(host(), { command: 'taskset', args: ['-p', '1', String(victim.pid)] });
      expect(affinity()).toBe('1');
      spawnSync('taskset', ['-p', before, String(victim.pid)]);
      await expect(host(['taskset']).createTerminal({ sessionId: S, cwd: bench.dir, command: 'taskset', args: ['-p', '1', String(victim.pid)] })).rejects.toMatchObject({
        code: 'ERR_POLICY_DENIED',
        details: { reason: 'code-execution', word: 'taskset' },
      });
      expect(affinity()).toBe(before);
    } finally {
      victim.stop();
    }
  });

  testIf('root', process.getuid?.() === 0, 'not root: chroot needs CAP_SYS_CHROOT')('chroot / without a program runs $SHELL -i, which sources ~/.bashrc (x13): refused', async () => {
    const home = path.join(bench.dir, 'home');
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, '.bashrc'), `${path.join(bench.dir, 'evil')} chroot\n`);
    // The host's own HOME (the request env may not set it under an allow list): the agent wrote its .bashrc.
    // A child node with that HOME runs the host, with and without the allow list.
    const lib = path.join(__dirname, '..', 'lib', 'index.js');
    const script = `const { TerminalHost } = require(${JSON.stringify(lib)});
(async () => {
  const out = {};
  for (const policy of [undefined, { allow: ['chroot'] }]) {
    const h = new TerminalHost({ cwd: ${JSON.stringify(bench.dir)}, ...(policy ? { commandPolicy: policy } : {}) });
    try {
      const { terminalId } = await h.createTerminal({ sessionId: 's', cwd: ${JSON.stringify(bench.dir)}, command: 'chroot', args: ['/'] });
      await h.waitForTerminalExit({ sessionId: 's', terminalId });
      out[policy ? 'allow' : 'open'] = require('fs').existsSync(${JSON.stringify(path.join(bench.dir, HIT))}) ? 'ran' : 'held';
    } catch (e) {
      out[policy ? 'allow' : 'open'] = e.details.reason + ' ' + e.details.word;
    }
    await h.close();
  }
  console.log(JSON.stringify(out));
})();`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, HOME: home, SHELL: '/bin/bash' } });
    expect(JSON.parse(out)).toEqual({ open: 'ran', allow: 'shell-construct chroot' });
  });
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: the same attacks work without a policy and are refused by the allow list', () => {
  const cases = ATTACKS.filter(installed).map(([label, programs, request]) => ({
    label,
    request,
    hosts: { open: {}, allow: { commandPolicy: { allow: [PRINTF, ...programs.map((p) => which(p) ?? p)] } } },
  }));
  const results = runCasesAsNobody(workspace.toString().replace(/\bHIT\b/g, JSON.stringify(HIT)), HIT, cases);
  for (const [label, , , refusal] of ATTACKS.filter(installed)) {
    expect([label, results[label]]).toEqual([label, { open: 'ran', allow: `${refusal.reason as string} held` }]);
  }
});
