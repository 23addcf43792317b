// The sixth independent attack, class D (r6-04, r6-04b, r6-04c, r6-14, r6-16, r6-18): programs an allow list
// names exactly read their options differently from the analysis. npm accepts unique prefixes and aliases of
// its commands (`exe` is `exec`), reads an option's value in the next word (`--loglevel silent exec`), runs a
// command in `explore`, and runs the editor a config write named; ssh reads options again after the
// destination (`ProxyCommand`); perl's `-W`/`-X`/`-C`/`-F` take no separate value, so `-e` follows; kill
// reads negative pids (process groups; -1 is every process). Each file-writing request is first shown running
// its payload through a host without a policy, then refused by the allow list with nothing run, as root and
// as nobody. The kill forms are only ever analysed (`authorize`), never run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveProgram } from '../ts/index';
import { attackBench, runCasesAsNobody, type NobodyCase, type Request } from './fixtures/policy-attack';
import { runAsNobody } from './core/helpers';

const S = 'sixth-grammar';
const HIT = 'hit/HIT';
/** npm without a registry: a dead loopback port and offline mode (nothing is ever fetched). */
const NPM = ['--offline', '--registry=http://127.0.0.1:9'];

/** Writes the workspace: the payload `evil` (writes HIT), a dependency for `npm explore`/`edit`, a perl script. */
function workspace(dir: string): void {
  fs.mkdirSync(path.join(dir, 'hit'), { recursive: true });
  fs.chmodSync(path.join(dir, 'hit'), 0o777);
  fs.writeFileSync(path.join(dir, 'evil'), `#!/bin/sh\necho "$*" >> "${path.join(dir, HIT)}"\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(dir, 'node_modules', 'dep'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'node_modules', 'dep', 'package.json'), '{"name":"dep","version":"1.0.0"}\n');
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"w","version":"1.0.0","dependencies":{"dep":"1.0.0"}}\n');
  fs.writeFileSync(path.join(dir, 's.pl'), 'print "ok\\n";\n');
}

const bench = attackBench(S, HIT, workspace, 0o755);
const evil = (): string => path.join(bench.dir, 'evil');
const strict = (program: string, shellLines?: 'deny'): ReturnType<typeof bench.host> =>
  bench.host({ commandPolicy: { allow: [resolveProgram(program)], ...(shellLines ? { shellLines } : {}) } });

/** [label, program, the request given the payload's path, refusal reason] */
type Attack = [string, string, (evil: string) => Request, string];
const ATTACKS: Attack[] = [
  ['npm explore DEP -- CMD (r6-04a)', 'npm', (e) => ({ command: 'npm', args: [...NPM, 'explore', 'dep', '--', `cd ../.. && ${e} explore`] }), 'code-execution'],
  ['perl -W -e CODE (r6-18)', 'perl', (e) => ({ command: 'perl', args: ['-W', '-e', `system("${e}", "W")`] }), 'code-execution'],
  ['perl -X -e CODE', 'perl', (e) => ({ command: 'perl', args: ['-X', '-e', `system("${e}", "X")`] }), 'code-execution'],
  ['perl -C -e CODE', 'perl', (e) => ({ command: 'perl', args: ['-C', '-e', `system("${e}", "C")`] }), 'code-execution'],
  ['perl -F -e CODE (a line)', 'perl', (e) => ({ command: `perl -F -e 'BEGIN { system("${e}", "F") }'` }), 'code-execution'],
  ['ssh HOST -o ProxyCommand=CMD (r6-14)', 'ssh', (e) => ({ command: 'ssh', args: ['-o', 'BatchMode=yes', '127.0.0.1', '-o', `ProxyCommand=${e} ssh`] }), 'code-execution'],
  ['ssh HOST -o ProxyCommand=CMD (a line)', 'ssh', (e) => ({ command: `ssh -o BatchMode=yes 127.0.0.1 -o 'ProxyCommand=${e} ssh-line'` }), 'code-execution'],
];

/** Refused before anything runs (the forms npm would fetch a package for are not run here). */
const REFUSED_ONLY: [string, string, Request, string][] = [
  ['npm exe -- CMD (an abbreviation of exec, r6-04d)', 'npm', { command: 'npm', args: [...NPM, 'exe', '--', './evil'] }, 'code-execution'],
  ['npm x -- CMD (an alias)', 'npm', { command: 'npm', args: [...NPM, 'x', '--', './evil'] }, 'code-execution'],
  ['npm --loglevel silent exec -- CMD (r6-04b)', 'npm', { command: 'npm', args: [...NPM, '--loglevel', 'silent', 'exec', '--', './evil'] }, 'code-execution'],
  ['npm --unknown-option exec (what it takes is not known)', 'npm', { command: 'npm', args: ['--frobnicate', 'exec', '--', './evil'] }, 'unknown-option'],
  ['npm init DEP (runs create-dep)', 'npm', { command: 'npm', args: [...NPM, 'init', 'dep'] }, 'code-execution'],
  ['perl -d -w SCRIPT (the debugger runs commands from stdin, r6-06)', 'perl', { command: 'perl', args: ['-d', '-w', 's.pl'] }, 'code-execution'],
  ['perl -dt SCRIPT', 'perl', { command: 'perl', args: ['-dt', 's.pl'] }, 'code-execution'],
];

describe('class D: allow lists read npm, perl and ssh options the way the programs do', () => {
  test.each(ATTACKS)('%s: runs without a policy, refused under an allow list naming only the program', async (label, program, request) => {
    await bench.ranThenRefused(label, request(evil()), strict(program, request(evil()).args ? 'deny' : undefined), {
      reason: 'code-execution',
    });
  });

  test('npm config set editor (project .npmrc) then npm edit: the pair runs without a policy, each half is refused (r6-04c)', async () => {
    const set: Request = { command: 'npm', args: [...NPM, 'config', 'set', 'editor', `${evil()} edit`, '--location=project'] };
    const edit: Request = { command: 'npm', args: [...NPM, 'edit', 'dep'] };
    await bench.run(bench.host(), set);
    expect(fs.readFileSync(path.join(bench.dir, '.npmrc'), 'utf8')).toContain('editor=');
    await bench.run(bench.host(), edit);
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    const h = strict('npm', 'deny');
    for (const r of [set, edit, { command: 'npm', args: ['set', 'editor', evil()] }, { command: 'npm', args: ['c', 'edit'] }]) {
      await expect(h.createTerminal({ sessionId: S, cwd: bench.dir, ...r })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'code-execution' } });
    }
    fs.rmSync(path.join(bench.dir, '.npmrc'), { force: true });
    expect(bench.hit()).toBe(false);
  });

  test.each(REFUSED_ONLY)('%s: refused', async (_label, program, request, reason) => {
    await expect(strict(program, 'deny').createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason },
    });
    expect(bench.hit()).toBe(false);
  });

  test('what these programs are for still passes the same allow lists', async () => {
    const ok = async (program: string, request: Request): Promise<void> => {
      await expect(strict(program).authorize({ sessionId: S, cwd: bench.dir, ...request })).resolves.toBeDefined();
    };
    await ok('npm', { command: 'npm', args: ['--loglevel', 'silent', 'test'] });
    await ok('npm', { command: 'npm', args: ['config', 'get', 'editor'] });
    await ok('npm', { command: 'npm install --save-dev dep && npm run build --if-present' });
    await ok('perl', { command: 'perl', args: ['-W', 's.pl'] });
    await ok('perl', { command: 'perl -Mstrict -MList::Util=sum -ln s.pl' });
    await ok('ssh', { command: 'ssh', args: ['-o', 'BatchMode=yes', '127.0.0.1', 'ls', '-o', 'ProxyCommand=x'] });
    await ok('kill', { command: 'kill', args: ['-l'] });
  });
});

/** kill forms that name process groups or every process: analysed only, never run (kill(-1) kills the host). */
const KILLS: string[][] = [
  ['-9', '-123'],
  ['-s', 'KILL', '-1'],
  ['-KILL', '--', '-1'],
  ['--', '-1'],
  ['-9', '-1'],
  ['-0', '-18830'],
  ['-18830'],
  ['-9', '123'],
];
const killers = (): { label: string; program: string; request: Request }[] => [
  ...KILLS.map((args) => ({ label: `/usr/bin/kill ${args.join(' ')}`, program: 'kill', request: { command: 'kill', args } })),
  ...KILLS.map((args) => ({ label: `kill ${args.join(' ')} (the builtin, a line)`, program: 'kill', request: { command: `kill ${args.join(' ')}` } })),
  ...KILLS.map((args) => ({ label: `busybox kill ${args.join(' ')}`, program: 'busybox', request: { command: 'busybox', args: ['kill', ...args] } })),
];

describe('class D: kill reads negative pids as pids (r6-16)', () => {
  test.each(killers())('$label is refused as acting on another process', async ({ program, request }) => {
    await expect(strict(program).authorize({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution' },
    });
  });

  test('as nobody: every form is refused by the analysis (nothing is run)', () => {
    const { out } = runAsNobody(
      (lib) => `const { TerminalHost, resolveProgram } = require(${JSON.stringify(lib)});
(async () => {
  const r = {};
  for (const c of ${JSON.stringify(killers())}) {
    const h = new TerminalHost({ cwd: '/tmp', commandPolicy: { allow: [resolveProgram(c.program)] } });
    try { await h.authorize({ sessionId: 's', ...c.request }); r[c.label] = 'passed'; }
    catch (e) { r[c.label] = e.details && e.details.reason; }
    await h.close();
  }
  console.log(JSON.stringify(r));
})();
`,
    );
    const results = JSON.parse(out) as Record<string, string>;
    expect(results).toEqual(Object.fromEntries(killers().map((k) => [k.label, 'code-execution'])));
  });
});

test('as nobody: each payload runs without a policy and is held by the allow list', () => {
  const cases: NobodyCase[] = ATTACKS.map(([label, program, request]) => ({
    label,
    request: request('./evil'),
    hosts: { open: {}, allow: { commandPolicy: { allow: [resolveProgram(program)] } } },
  }));
  const results = runCasesAsNobody(workspace.toString().replace(/\bHIT\b/g, JSON.stringify(HIT)), HIT, cases);
  for (const [label] of ATTACKS) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: 'code-execution held' }]);
});
