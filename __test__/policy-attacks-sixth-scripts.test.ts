// The sixth independent attack's script-operand classes (r6-05, r6-12, r6-12b, l17, l19): a script or
// makefile operand was judged by the path as written, not where the program opens it. After a change of
// directory (`cd /dev`, `env -C /dev`, `make -C /dev`) the relative `stdin` (or `0` in /proc/self/fd) is
// the line's own here-document; and a script of the interpreter's own library (`python3 .../timeit.py`,
// `node .../npx-cli.js`) is the module or program an allow list refuses (`python3 -m timeit`, `npx`). Each
// request is first shown running its payload through a host without a policy, then refused by the allow
// list (`code-execution`) with nothing run, as root and as nobody; what the programs are for still runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TerminalHostOptions } from '../ts/host-types';
import { attackBench, runCasesAsNobody, terminalExecute, which, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

const S = 'sixth-scripts';
const HIT = 'hit/HIT';

/** The system python (not a version manager's shim) and its library directory. */
const PYTHON = fs.existsSync('/usr/bin/python3') ? fs.realpathSync('/usr/bin/python3') : undefined;
const PYLIB = PYTHON && `/usr/lib/${path.basename(PYTHON)}`;
/** npm's CLI scripts as installed with node. */
const NPM_BIN = ['/usr/lib/node_modules/npm/bin', '/usr/local/lib/node_modules/npm/bin'].find((d) => fs.existsSync(`${d}/npx-cli.js`));
/** npm never reaches a registry here: a dead loopback one, offline. */
const npmEnv = (dir: string): Record<string, string> => ({
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_offline: 'true',
  npm_config_cache: `${dir}/.npm-cache`,
  npm_config_update_notifier: 'false',
});

/** [label, programs the allow list names, the request, host options both hosts get (strings: JSON)] */
type Attack = [string, string[], Request, { shellLines?: 'deny'; npm?: boolean }];

const make = (payloadDir: string): string => `all:\n\t@echo > "$(${payloadDir})/${HIT}"`;
const ATTACKS: Attack[] = [
  // B: the script is opened where the directory went
  ['make -C /dev -f stdin', ['make'], { command: `make -C /dev -f stdin <<'EOF'\n${make('PWD')}\nEOF` }, {}],
  ['make --directory=/dev --file=stdin', ['make'], { command: `make --directory=/dev --file=stdin <<'EOF'\n${make('PWD')}\nEOF` }, {}],
  ['cd /dev && make -f stdin', ['make'], { command: `cd /dev && make -f stdin <<'EOF'\n${make('OLDPWD')}\nEOF` }, {}],
  ['env -C /dev make -f stdin', ['env', 'make'], { command: `env -C /dev make -f stdin <<'EOF'\n${make('PWD')}\nEOF` }, {}],
  ['cd /dev && python3 stdin', [PYTHON ?? 'python3'], { command: `cd /dev && ${PYTHON} stdin <<'EOF'\nimport os; open(os.environ['OLDPWD'] + '/${HIT}', 'w')\nEOF` }, {}],
  ['cd /dev && tclsh stdin', ['tclsh'], { command: `cd /dev && tclsh stdin <<'EOF'\nclose [open $env(OLDPWD)/${HIT} w]\nEOF` }, {}],
  [
    'cd /dev && node --preserve-symlinks-main stdin',
    ['node'],
    { command: `cd /dev && node --preserve-symlinks-main stdin <<'EOF'\nrequire('fs').writeFileSync(process.env.OLDPWD + '/${HIT}', '')\nEOF` },
    {},
  ],
  ['cd /proc/self/fd && perl 0', ['perl'], { command: `cd /proc/self/fd && perl 0 <<'EOF'\nopen(F, '>', "$ENV{OLDPWD}/${HIT}")\nEOF` }, {}],
  // C: a script of the interpreter's own library is the module or program it is
  [
    'python3 .../timeit.py CODE (argv)',
    [PYTHON ?? 'python3'],
    { command: PYTHON ?? 'python3', args: [`${PYLIB}/timeit.py`, '-n', '1', '-r', '1', `open('${HIT}', 'w')`] },
    { shellLines: 'deny' },
  ],
  ['python3 .../code.py <<EOF', [PYTHON ?? 'python3'], { command: `${PYTHON} ${PYLIB}/code.py <<'EOF'\nopen('${HIT}', 'w')\nEOF` }, {}],
  ['python3 .../pdb.py FILE <<EOF', [PYTHON ?? 'python3'], { command: `${PYTHON} ${PYLIB}/pdb.py ${PYLIB}/this.py <<'EOF'\n!open('${HIT}', 'w')\nq\nEOF` }, {}],
  ['node .../npx-cli.js -c CMD (argv)', ['node'], { command: 'node', args: [`${NPM_BIN}/npx-cli.js`, '-c', `echo > ${HIT}`] }, { shellLines: 'deny', npm: true }],
  ['node .../npm-cli.js exec -c CMD (argv)', ['node'], { command: 'node', args: [`${NPM_BIN}/npm-cli.js`, 'exec', '-c', `echo > ${HIT}`] }, { shellLines: 'deny', npm: true }],
];

/** Writes the workspace: the directory the payloads write HIT into, and what ordinary use runs. */
function workspace(dir: string): void {
  fs.mkdirSync(`${dir}/hit`, { recursive: true });
  fs.chmodSync(`${dir}/hit`, 0o777);
  fs.mkdirSync(`${dir}/sub`, { recursive: true });
  fs.writeFileSync(`${dir}/Makefile`, 'all:\n\t@echo made\n');
  fs.writeFileSync(`${dir}/sub/Makefile`, 'all:\n\t@echo made in sub\n');
  fs.writeFileSync(`${dir}/script.py`, 'print("py ok")\n');
  fs.writeFileSync(`${dir}/sub/x.py`, 'print("sub py ok")\n');
  fs.writeFileSync(`${dir}/x.js`, 'console.log("node ok")\n');
  fs.writeFileSync(`${dir}/sub/x.pl`, 'print "perl ok\\n";\n');
}

const bench = attackBench(S, HIT, workspace, 0o755);
const installed = ([, programs, , o]: Attack): boolean =>
  programs.every((p) => (p.startsWith('/') ? fs.existsSync(p) : which(p) !== undefined)) && (!o.npm || NPM_BIN !== undefined);
const options = ([, programs, , o]: Attack, dir: string, policy: boolean): Partial<TerminalHostOptions> => ({
  ...(o.npm ? { env: npmEnv(dir) } : {}),
  ...(policy ? { commandPolicy: { allow: programs.map((p) => which(p) ?? p), ...(o.shellLines ? { shellLines: o.shellLines } : {}) } } : {}),
});

describe('a script operand is judged where the program opens it', () => {
  test.each(ATTACKS.map((a) => [a[0], a] as const))('%s', async (label, attack) => {
    for (const p of attack[1]) expect(p.startsWith('/') ? fs.existsSync(p) && p : which(p) ?? `${p} not installed`).toMatch(/^\//);
    if (attack[3].npm) expect(NPM_BIN).toBeDefined();
    // Without a policy the payload runs (through the same host options but the allow list) ...
    await bench.run(bench.host(options(attack, bench.dir, false)), attack[2]);
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    // ... and the allow list refuses it with nothing run.
    const strict = bench.host(options(attack, bench.dir, true));
    await expect(strict.createTerminal({ sessionId: S, cwd: bench.dir, ...attack[2] })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution' },
    });
    expect(bench.hit()).toBe(false);
  });

  test('what these programs are for still runs under the same allow lists', async () => {
    const allow = (...programs: string[]) => bench.host({ commandPolicy: { allow: programs.map((p) => which(p) ?? p) } });
    expect(await bench.run(allow('make'), { command: 'make -f Makefile' })).toBe('made\n');
    expect(await bench.run(allow('make'), { command: 'make -C sub -f Makefile --no-print-directory' })).toBe('made in sub\n');
    expect(await bench.run(allow('make'), { command: 'cd sub && make -f Makefile' })).toBe('made in sub\n');
    expect(await bench.run(allow('node'), { command: 'node x.js' })).toBe('node ok\n');
    expect(await bench.run(allow('perl'), { command: 'cd sub && perl x.pl' })).toBe('perl ok\n');
    if (PYTHON) {
      expect(await bench.run(allow(PYTHON), { command: `${PYTHON} script.py` })).toBe('py ok\n');
      expect(await bench.run(allow(PYTHON), { command: `cd sub && ${PYTHON} x.py` })).toBe('sub py ok\n');
      expect(await bench.run(allow(PYTHON, 'env'), { command: `env -C sub ${PYTHON} x.py` })).toBe('sub py ok\n');
    }
  });
});

describe('under an allow list a command never starts inside /dev, /proc or /sys', () => {
  /** Relative `stdin` in /dev is the line's here-document: the payload writes HIT in the workspace. */
  const py = (): string => `${PYTHON ?? 'python3'} stdin <<'EOF'\nopen('${bench.dir}/${HIT}', 'w')\nEOF`;
  test.each(['/dev', '/dev/fd', '/proc/self/fd', '/sys'])('a request whose cwd is %s', async (cwd) => {
    const command = py();
    const strict = bench.host({ commandPolicy: { allow: [PYTHON ?? 'python3'] } });
    await expect(strict.createTerminal({ sessionId: S, cwd, command })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'kernel-cwd', field: 'cwd' },
    });
    expect(bench.hit()).toBe(false);
  });

  test('a ShellSessions line after an earlier `cd /dev` (MCP terminal_execute): the shell is there, so it is refused', async () => {
    const allow = [PYTHON ?? 'python3', 'echo'];
    const command = py();
    const run = async (policy: boolean): Promise<string> => {
      const options = { cwd: bench.dir, ...(policy ? { commandPolicy: { allow } } : {}) };
      return (await terminalExecute(options, [{ command: 'cd /dev' }, { command, timeout: 20 }]))[1]!;
    };
    await run(false);
    expect(bench.hit()).toBe(true); // the line's here-document ran as /dev/stdin
    bench.clearHit();
    expect(await run(true)).toMatch(/^ERR_POLICY_DENIED: cwd: "\/dev" is inside \/dev/);
    expect(bench.hit()).toBe(false);
  });
});

testIf('setpriv', which('setpriv') !== undefined, 'runs the attacks as nobody through setpriv')(
  'as nobody: each attack runs without a policy and is held by the allow list',
  () => {
    const dirless = (a: Attack): Partial<TerminalHostOptions> => ({
      // nobody's npm cache: in the workspace is not known here, so a fresh one under /tmp
      ...(a[3].npm ? { env: npmEnv(`/tmp/acp-${S}-nobody-npm`) } : {}),
    });
    const cases = ATTACKS.filter(installed).map((a) => ({
      label: a[0],
      request: a[2],
      hosts: { open: dirless(a), allow: { ...dirless(a), ...options(a, '', true), ...dirless(a) } },
    }));
    const results = runCasesAsNobody(workspace.toString(), HIT, cases);
    for (const { label } of cases) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: 'code-execution held' }]);
  },
);
