// The seventh independent attack's shell-option class (issue 26, r7-01 ... r7-05): a line changed a shell
// option the analysis did not model, and what ran was no longer what was checked. `shopt -s cdable_vars`
// sent `cd TZ` to `$TZ` (`/dev`) while the analysis joined `TZ` to the cwd, so `make -f stdin` / `perl stdin`
// read the line's here-document; `shopt -so keyword` made a `NAME=value` operand the program's environment
// (`GIT_EXTERNAL_DIFF`, `TAR_OPTIONS`). Options are now an allow list (`set -e/-u/-x/-v/-f`, `-o pipefail`
// and their long names): every other change is refused in every spelling, and under an allow list the host
// empties `CDPATH`, `BASHOPTS` and `SHELLOPTS` (an inherited one moved `cd` the same way). Each attack is
// first shown running its payload without a policy, then refused (or held), as root and as nobody.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TerminalHost } from '../ts/host';
import type { TerminalHostOptions } from '../ts/host-types';
import { refuseStartupShell, compileCommandPolicy } from '../ts/policy';
import { attackBench, runCasesAsNobody, terminalExecute, which, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

const HIT = 'hit/HIT';

/** The workspace: `evil` (the payload: appends its arguments to HIT), and two files to diff and archive. */
function workspace(dir: string): void {
  fs.writeFileSync(path.join(dir, 'evil'), `#!/bin/sh\necho "$*" >> "${dir}/hit/HIT"\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(dir, 'hit'), { mode: 0o777 });
  fs.chmodSync(path.join(dir, 'hit'), 0o777);
  fs.writeFileSync(path.join(dir, 'f1'), 'a\n');
  fs.writeFileSync(path.join(dir, 'f2'), 'b\n');
}

const bench = attackBench('seventh-options', HIT, workspace, 0o755);
const which_ = (p: string): string => which(p) ?? p;
const allow = (...programs: string[]): Partial<TerminalHostOptions> => ({ shell: 'bash', commandPolicy: { allow: programs.map(which_) } });
/** A makefile / perl program on the line's stdin that runs `evil` in the directory `cd` left (OLDPWD). */
const MAKEFILE = `<<'EOF'\nall:\n\t@"$$OLDPWD/evil" make\nEOF`;
const PERL = `<<'EOF'\nsystem("$ENV{OLDPWD}/evil", "perl");\nEOF`;
const TZ_DEV = [{ name: 'TZ', value: '/dev' }];
const tarOptions = "TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=./evil'";

/** [label, programs allowed, request, the refusal's word] */
const ATTACKS: [string, string[], Request, string][] = [
  ['r7-01 shopt -s cdable_vars; cd TZ && make -f stdin (TZ=/dev in the request env)', ['make'], { command: `shopt -s cdable_vars; cd TZ && make -f stdin ${MAKEFILE}`, env: TZ_DEV }, 'shopt'],
  ['r7-03 shopt -s cdable_vars; TERM=/dev; cd TERM && perl stdin', ['perl'], { command: `shopt -s cdable_vars; TERM=/dev; cd TERM && perl stdin ${PERL}` }, 'shopt'],
  ['pushd TZ after shopt -s cdable_vars', ['make'], { command: `shopt -s cdable_vars; pushd TZ >/dev/null && make -f stdin ${MAKEFILE}`, env: TZ_DEV }, 'shopt'],
  ['builtin shopt -s cdable_vars (a prefix)', ['make'], { command: `builtin shopt -s cdable_vars; cd TZ && make -f stdin ${MAKEFILE}`, env: TZ_DEV }, 'shopt'],
  ['r7-04 shopt -so keyword: GIT_EXTERNAL_DIFF as an operand', ['git'], { command: "shopt -so keyword\ngit diff --no-index f1 f2 GIT_EXTERNAL_DIFF='./evil git;:'" }, 'shopt'],
  ['r7-04 shopt -s -o keyword: TAR_OPTIONS as an operand', ['tar'], { command: `shopt -s -o keyword\ntar cf t.tar f1 ${tarOptions}` }, 'shopt'],
  ['command set -o keyword (a prefix)', ['tar'], { command: `command set -o keyword\ntar cf t.tar f1 ${tarOptions}` }, 'set'],
  ['set + -k (an empty cluster first)', ['tar'], { command: `set + -k\ntar cf t.tar f1 ${tarOptions}` }, 'set'],
  ['a nested bash -O cdable_vars -c', ['bash', 'make'], { command: `bash -O cdable_vars -c 'cd TZ && make -f stdin' ${MAKEFILE}`, env: TZ_DEV }, 'bash'],
  ['argv ["bash", "-O", "cdable_vars", "-c", ...]', ['bash', 'make'], { command: 'bash', args: ['-O', 'cdable_vars', '-c', `cd TZ && make -f stdin ${MAKEFILE}`], env: TZ_DEV }, 'bash'],
  ['argv ["bash", "-o", "keyword", "-c", ...]', ['bash', 'tar'], { command: 'bash', args: ['-o', 'keyword', '-c', `tar cf t.tar f1 ${tarOptions}`] }, 'bash'],
];

/** [label, host env the operator's process gave the shell, the line]: the allow list's host empties the variable. */
const HOST_ENV: [string, Record<string, string>, string][] = [
  ['CDPATH=/ in the host env: cd dev && make -f stdin', { CDPATH: '/' }, `cd dev && make -f stdin ${MAKEFILE}`],
  ['BASHOPTS=cdable_vars in the host env: cd TZ && make -f stdin', { BASHOPTS: 'cdable_vars', TZ: '/dev' }, `cd TZ && make -f stdin ${MAKEFILE}`],
  ['SHELLOPTS=keyword in the host env: TAR_OPTIONS as an operand', { SHELLOPTS: 'keyword' }, `tar cf t.tar f1 ${tarOptions}`],
];
const hostEnvPrograms = (line: string): string[] => (line.startsWith('tar') ? ['tar'] : ['make']);

describe('under an allow list a shell option off the list is refused in every spelling', () => {
  test.each(ATTACKS)('%s', async (label, programs, request, word) => {
    // As `bench.ranThenRefused`, with bash as the open host's shell too (`shopt` is bash's).
    await bench.run(bench.host({ shell: 'bash' }), request);
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    const strict = bench.host(allow(...programs));
    await expect(strict.createTerminal({ sessionId: 's', cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'shell-construct', word, construct: expect.stringMatching(/shell option/) },
    });
    expect(bench.hit()).toBe(false);
    expect(strict.liveTerminals).toBe(0);
  });

  test('what lines use still runs: set -euo pipefail, set -x, shopt queries', async () => {
    const h = bench.host(allow('bash', 'cat', 'ls'));
    expect(await bench.run(h, { command: 'set -euo pipefail; set +x; shopt -q cdable_vars || ls f1; shopt -so pipefail; cat f2' })).toBe('f1\nb\n');
    expect(await bench.run(h, { command: 'bash', args: ['-euo', 'pipefail', '-c', 'ls f1'] })).toBe('f1\n');
    expect(bench.hit()).toBe(false);
  });

  test('a request cannot set CDPATH, BASHOPTS or SHELLOPTS, nor a line assign them', async () => {
    const h = bench.host(allow('ls'));
    for (const name of ['CDPATH', 'BASHOPTS', 'SHELLOPTS']) {
      await expect(h.createTerminal({ sessionId: 's', cwd: bench.dir, command: 'ls', env: [{ name, value: '/' }] })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { name } });
      await expect(h.createTerminal({ sessionId: 's', cwd: bench.dir, command: `${name}=/; ls` })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
      await expect(h.createTerminal({ sessionId: 's', cwd: bench.dir, command: `env ${name}=/ bash -c ls` })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    }
  });
});

describe("under an allow list the host's own CDPATH / BASHOPTS / SHELLOPTS are emptied", () => {
  test.each(HOST_ENV)('%s', async (label, env, command) => {
    await bench.run(bench.host({ shell: 'bash', env }), { command });
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    await bench.run(bench.host({ ...allow(...hostEnvPrograms(command)), env }), { command });
    expect([label, bench.hit()]).toEqual([label, false]);
  });
});

describe("the host's own shell may not change an option off the list under an allow list", () => {
  test('options.shell with -O cdable_vars / -o keyword is ERR_INVALID_ARG, even where a sandbox keeps HOME read-only', () => {
    const policy = compileCommandPolicy({ allow: ['ls'] }, 'options.commandPolicy');
    for (const shell of [['bash', '-O', 'cdable_vars', '-c'], ['bash', '-o', 'keyword', '-c'], ['bash', '-kc']]) {
      expect(() => new TerminalHost({ cwd: bench.dir, shell, commandPolicy: { allow: [which_('ls')] } })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^options\.shell: .*shell option/) }),
      );
      expect(() => refuseStartupShell(policy, shell, '/', { writableRoots: [bench.dir] }, undefined)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
    }
    expect(() => new TerminalHost({ cwd: bench.dir, shell: ['bash', '-euo', 'pipefail', '-c'], commandPolicy: { allow: [which_('ls')] } }).close()).not.toThrow();
  });
});

describe('MCP terminal_execute: a session keeps options between calls, so a refused change never reaches its shell', () => {
  test.each([
    ['r7-02 shopt -s cdable_vars, then cd TZ && make -f stdin', ['make'], [{ command: 'shopt -s cdable_vars' }, { command: `TZ=/dev; cd TZ && make -f stdin ${MAKEFILE}` }]],
    ['r7-05 shopt -so keyword, then tar ... TAR_OPTIONS=...', ['tar'], [{ command: 'shopt -so keyword' }, { command: `tar cf t.tar f1 ${tarOptions}` }]],
  ] as [string, string[], Record<string, unknown>[]][])('%s', async (label, programs, calls) => {
    await terminalExecute({ cwd: bench.dir }, calls);
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    const texts = await terminalExecute({ cwd: bench.dir, commandPolicy: { allow: programs.map(which_) } }, calls);
    expect(texts[0]).toMatch(/shell option/);
    expect([label, bench.hit()]).toEqual([label, false]);
  });
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: the same attacks run without a policy and are held by the allow list', () => {
  const cases = [
    ...ATTACKS.map(([label, programs, request]) => ({ label, request, hosts: { open: { shell: 'bash' }, allow: allow(...programs) } })),
    ...HOST_ENV.map(([label, env, command]) => ({ label, request: { command }, hosts: { open: { shell: 'bash', env }, allow: { ...allow(...hostEnvPrograms(command)), env } } })),
  ];
  const results = runCasesAsNobody(workspace.toString(), HIT, cases, true);
  for (const [label] of ATTACKS) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: 'shell-construct held' }]);
  for (const [label] of HOST_ENV) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: 'held' }]);
});
