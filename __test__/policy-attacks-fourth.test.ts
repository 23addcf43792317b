// The fourth independent attack on the allow list: an allow list naming only one program (no codeRunners)
// ran a payload it never allowed through that program's own grammar (a sed label ending at `;`, a `/` inside
// a bracket expression, `python3 -m timeit CODE`, a node test-reporter module, stdin spelled `//dev/stdin`,
// `man -C CONFIG`, the `node inspect` subcommand, `rbash` run by its real path `bash`). Each request is first
// shown doing what it does through a host without a policy, then refused by the allow list with nothing run;
// the same requests are refused as nobody.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TerminalHost } from '../ts/host';
import { attackBench, runCasesAsNobody, which, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

const S = 'fourth';

/** The payload the allow lists never name: it writes HIT. Files relative to the request's cwd. */
const EVIL = './evil';
const HIT = 'hit/HIT';
const PRINTF = '/usr/bin/printf';

/** [label, programs the allow list names (besides printf), the request, what the refusal says] */
type Attack = [string, string[], Request, Record<string, unknown>];
const ATTACKS: Attack[] = [
  ['sed label ended by `;`', ['sed'], { command: 'sed', args: ['-n', `:a;e ${EVIL} sed-label`, 'slash.txt'] }, { reason: 'code-execution', word: 'sed' }],
  ['sed `/` inside a bracket expression', ['sed'], { command: `sed -n '/[/]/e ./t/../evil sed-bracket' slash.txt` }, { reason: 'code-execution', word: 'sed' }],
  ['python3 -m timeit CODE', ['/usr/bin/python3'], { command: '/usr/bin/python3', args: ['-m', 'timeit', '-n', '1', `__import__('os').system('${EVIL} timeit')`] }, { reason: 'code-execution', word: '/usr/bin/python3' }],
  ['python3 //dev/stdin', ['/usr/bin/python3'], { command: `printf '%s' "__import__('os').system('${EVIL} py-stdin')" | /usr/bin/python3 //dev/stdin` }, { reason: 'code-execution', word: '/usr/bin/python3' }],
  ['python3 -m code (stdin)', ['/usr/bin/python3'], { command: `printf '%s\\n' "__import__('os').system('${EVIL} py-code')" | /usr/bin/python3 -m code` }, { reason: 'code-execution', word: '/usr/bin/python3' }],
  ['perl /tmp/../dev/stdin', ['perl'], { command: `printf '%s' 'system("${EVIL} perl")' | perl /tmp/../dev/stdin` }, { reason: 'code-execution', word: 'perl' }],
  ['make --file=//proc/self/fd/0', ['make'], { command: `printf 'all:\\n\\t%s make\\n' ${EVIL} | make -s --file=//proc/self/fd/0` }, { reason: 'code-execution', word: 'make' }],
  ['node --test-reporter=data:...', ['node'], { command: 'node', args: [`--test-reporter=data:text/javascript,import{execSync}from'child_process';execSync('${EVIL} reporter')`, '--test'] }, { reason: 'code-execution', word: 'node' }],
  ['man -C CONFIG', ['man'], { command: `man -C man.conf -l page.1` }, { reason: 'code-execution', word: 'man' }],
  ['man --config-file=CONFIG', ['man'], { command: `man --config-file=man.conf -l page.1` }, { reason: 'code-execution', word: 'man' }],
];

/** Writes the workspace files the attacks use (the agent could write each with one printf redirection). */
function workspace(dir: string): void {
  fs.writeFileSync(path.join(dir, 'evil'), `#!/bin/sh\necho "$*" >> "${path.join(dir, HIT)}"\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(dir, 'hit'), { recursive: true });
  // `./t/../evil`: read as ending the address at the bracket's `/`, the script's next command is `t` (a label)
  fs.mkdirSync(path.join(dir, 't'), { recursive: true });
  fs.chmodSync(path.join(dir, 'hit'), 0o777); // man runs its programs as the `man` user
  fs.writeFileSync(path.join(dir, 'slash.txt'), 'a/b\n');
  fs.writeFileSync(path.join(dir, 'x.js'), 'setTimeout(() => {}, 100);\n');
  fs.writeFileSync(path.join(dir, 'page.1'), '.TH X 1\n.SH NAME\nx \\- y\n');
  const evil = path.join(dir, 'evil');
  fs.writeFileSync(path.join(dir, 'man.conf'), `DEFINE\tnroff\t${evil} nroff\nDEFINE\ttroff\t${evil} troff\nDEFINE\tcol\t${evil} col\n`);
  for (const f of ['slash.txt', 'x.js', 'page.1', 'man.conf']) fs.chmodSync(path.join(dir, f), 0o644);
}

// man runs its programs as the `man` user: the workspace is 0755.
const bench = attackBench(S, HIT, workspace, 0o755);
const { run, hit, clearHit } = bench;
const host = (allow?: string[]): TerminalHost => bench.host(allow ? { commandPolicy: { allow: [PRINTF, ...allow.map((p) => which(p) ?? p)] } } : {});
const installed = ([, programs]: Attack): boolean => programs.every((p) => (p.startsWith('/') ? fs.existsSync(p) : which(p) !== undefined));

describe('an allow list naming one program refuses what that program would run from its arguments', () => {
  test.each(ATTACKS)('%s', async (label, programs, request, refusal) => {
    for (const p of programs) expect(p.startsWith('/') ? fs.existsSync(p) && p : which(p) ?? `${p} not installed`).toMatch(/^\//);
    await bench.ranThenRefused(label, request, host(programs), refusal);
  });

  test('node inspect opens an inspector (any local process may connect and run code): refused', async () => {
    // `--port=0`: a free port, so that the demonstration does not depend on 9229 being free.
    const request: Request = { command: 'node', args: ['inspect', '--port=0', 'x.js'] };
    const h = host();
    const { terminalId } = await h.createTerminal({ sessionId: S, cwd: bench.dir, ...request });
    let output = '';
    for (let i = 0; i < 200 && !/Debugger listening on ws:\/\/127\.0\.0\.1:\d+/.test(output); i++) {
      await new Promise((r) => setTimeout(r, 50));
      output = (await h.terminalOutput({ sessionId: S, terminalId })).output;
    }
    await h.killTerminal({ sessionId: S, terminalId });
    expect(output).toMatch(/Debugger listening on ws:\/\/127\.0\.0\.1:\d+/);
    await expect(host(['node']).createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution', word: 'node' },
    });
  });

  testIf('bash', which('rbash') !== undefined, 'no rbash on PATH')('rbash whose real path is bash runs unrestricted: refused', async () => {
    const request: Request = { command: 'rbash', args: ['-c', `echo unrestricted > ${HIT}`] };
    // rbash refuses the redirection; its real path (what the rebuild runs) does not.
    await run(host(), request);
    expect(hit()).toBe(false);
    await run(host(), { ...request, command: which('rbash')! });
    expect(hit()).toBe(true);
    clearHit();
    await expect(host(['rbash']).createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'unknown-program', word: 'rbash', runsAs: 'bash' },
    });
    expect(hit()).toBe(false);
  });

  test('what these programs are for still runs under the same allow lists', async () => {
    expect(await run(host(['sed']), { command: `sed -n '/[/]/p;:a;p' slash.txt` })).toBe('a/b\na/b\n');
    expect(await run(host(['node']), { command: 'node x.js; echo done' })).toBe('done\n');
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
    // man drops to its own user as root only: as nobody it runs the payload as nobody, which is what we show.
    expect([label, results[label]]).toEqual([label, { open: 'ran', allow: `${refusal.reason as string} held` }]);
  }
});
