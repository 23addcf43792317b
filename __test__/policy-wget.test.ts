// wget under an allow list naming it (found by the fourth independent attack): `-e use_askpass=CMD`,
// `--use-askpass=CMD` and a wgetrc file given by `--config` make wget run a program before it connects.
// wget's options are read with its own grammar (getopt_long: abbreviations, clusters, `--opt=value`); a
// code-running option is `code-execution`, an option or wgetrc command the grammar does not list
// `unknown-option`. Each request is first shown running the payload through a host without a policy (no
// connection is made: the URL is 127.0.0.1:1), then refused; the same as nobody.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TerminalHost } from '../ts/host';
import { attackBench, runCasesAsNobody, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

const S = 'wget';
const WGET = ((): string | undefined => {
  const r = spawnSync('sh', ['-c', 'command -v wget'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.startsWith('/') ? fs.realpathSync(r.stdout.trim()) : undefined;
})();
const withWget = testIf('wget', WGET !== undefined, 'no wget on PATH');
const isRoot = process.getuid?.() === 0;
const URL = 'http://127.0.0.1:1/';
const HIT = 'HIT';

/** [label, the request (wget resolved through PATH), what the refusal says] */
type Attack = [string, Request, Record<string, unknown>];
const ATTACKS: Attack[] = [
  ['-e use_askpass=CMD', { command: 'wget', args: ['-q', '--no-config', '-e', 'use_askpass=./evil', URL] }, { reason: 'code-execution' }],
  ['-qe USE-ASKPASS=CMD (a cluster, wgetrc spelling)', { command: 'wget', args: ['--no-config', '-qeUSE-ASKPASS=./evil', URL] }, { reason: 'code-execution' }],
  ['--execute use_askpass=CMD (a line)', { command: `wget -q --no-config --execute 'useaskpass = ./evil' ${URL}` }, { reason: 'code-execution' }],
  ['--use-askpass=CMD', { command: 'wget', args: ['-q', '--no-config', '--use-askpass=./evil', URL] }, { reason: 'code-execution' }],
  ['--use-ask CMD (abbreviated, after the URL)', { command: `wget -q --no-config ${URL} --use-ask ./evil` }, { reason: 'code-execution' }],
  ['--config=FILE (use_askpass in it)', { command: 'wget', args: ['-q', '--config=wgetrc', URL] }, { reason: 'code-execution' }],
  ['--conf FILE (abbreviated)', { command: `wget -q --conf wgetrc ${URL}` }, { reason: 'code-execution' }],
];

function workspace(dir: string): void {
  fs.writeFileSync(path.join(dir, 'evil'), `#!/bin/sh\necho "$*" >> "${path.join(dir, 'HIT')}"\necho x\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'wgetrc'), 'use_askpass = ./evil\n', { mode: 0o644 });
}

const bench = attackBench(S, HIT, workspace);
const { run, hit, clearHit } = bench;
const host = (allow?: readonly unknown[]): TerminalHost => bench.host(allow ? { commandPolicy: { allow: allow as string[] } } : {});

describe('an allow list naming wget refuses the options that make it run a program', () => {
  withWget.each(ATTACKS)('%s', async (label, request, refusal) => {
    await run(host(), request);
    expect([label, hit()]).toEqual([label, true]); // the payload runs without the policy
    clearHit();
    // Named exactly (the user taking responsibility for wget) and by a function rule: refused all the same.
    for (const allow of [[WGET!], [(c: { realPath?: string }) => c.realPath === WGET]]) {
      const h = host(allow);
      await expect(h.createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
        code: 'ERR_POLICY_DENIED',
        details: { reason: refusal.reason, word: 'wget' },
      });
      expect(hit()).toBe(false);
      expect(h.liveTerminals).toBe(0);
    }
  });

  withWget.each([
    ['--nope', { command: 'wget', args: ['--nope', URL] }, '--nope'],
    ['-e logfile=FILE (a wgetrc command not read)', { command: 'wget', args: ['-e', 'logfile=x', URL] }, 'logfile=x'],
  ] as Array<[string, Request, string]>)('an option the grammar does not list is unknown-option: %s', async (_label, request, option) => {
    await expect(host([WGET!]).createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'unknown-option', word: 'wget', option: expect.stringContaining(option) },
    });
  });

  withWget('what wget is for still runs: data options, -nv clusters, -e robots=off', async () => {
    const h = host([WGET!]);
    await run(h, { command: 'wget', args: ['-q', '-nv', '--no-config', '-e', 'robots=off', '-t', '1', '-O', 'out.html', URL] });
    expect(hit()).toBe(false);
  });
});

testIf('root', isRoot, 'not root: cannot drop to nobody with setpriv')('as nobody: the same requests run the payload without a policy and are refused under the allow list', () => {
  if (WGET === undefined) throw new Error('wget is required here (ACP_TERMINAL_REQUIRE lists root; install wget)');
  const cases = ATTACKS.map(([label, request]) => ({ label, request, hosts: { open: {}, allow: { commandPolicy: { allow: [WGET] } } } }));
  const results = runCasesAsNobody(workspace.toString(), HIT, cases);
  for (const [label, , refusal] of ATTACKS) {
    expect([label, results[label]]).toEqual([label, { open: 'ran', allow: `${refusal.reason as string} held` }]);
  }
});
