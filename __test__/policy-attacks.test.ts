// Code run through the request env and shell lines that change what the checked words run, run for real (native core): each attack is first shown to execute code
// (a marker file appears) through a host that lets it through (the variable allowed by `envPolicy`, or a
// deny-only policy), then refused by the host's default policy, with nothing spawned.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TerminalAuditEvent } from '../ts/events';
import { TerminalHost, type HostCreateTerminalRequest, type TerminalHostOptions } from '../ts/host';
import { loadNativeCreateTerminal } from '../ts/native';
import { testIf } from './fixtures/require-feature';

const S = 'attack';
let tmp: string;
let evilBin: string;
let evilSo: string | undefined; // a library whose constructor writes $ACPT_MARKER (built when a C compiler exists)
let hosts: TerminalHost[] = [];

const which = (name: string): string | undefined => {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
};
const LS = which('ls')!;
const GIT = which('git');
const BASH = which('bash');
const CC = which('cc');

/**
 * Under an allow list only data-only variables (and what the host allows) may be set: the attacks carry
 * their marker path in `ACPT_MARKER`, which these hosts declare safe, as a host would its own names.
 */
function withMarkerEnv(options: TerminalHostOptions): TerminalHostOptions {
  if (options.commandPolicy?.allow === undefined) return options;
  const allow = [...(options.envPolicy?.allow ?? []), 'ACPT_MARKER'];
  return { ...options, envPolicy: { ...options.envPolicy, allow } };
}

function host(options: TerminalHostOptions): { host: TerminalHost; events: TerminalAuditEvent[] } {
  const events: TerminalAuditEvent[] = [];
  const h = new TerminalHost({ cwd: tmp, onEvent: (e) => void events.push(e), ...withMarkerEnv(options) });
  hosts.push(h);
  return { host: h, events };
}

/** Runs a request to completion; returns its output. */
async function run(h: TerminalHost, request: Omit<HostCreateTerminalRequest, 'sessionId'>): Promise<string> {
  const { terminalId } = await h.createTerminal({ sessionId: S, ...request });
  await h.waitForTerminalExit({ sessionId: S, terminalId });
  const { output } = await h.terminalOutput({ sessionId: S, terminalId });
  await h.releaseTerminal({ sessionId: S, terminalId });
  return output;
}

let n = 0;
function marker(): string {
  return path.join(tmp, `marker-${++n}`);
}

/** The attack runs through `open` (marker written), and `strict` refuses it (no marker, a denied event). */
async function attack(
  request: (marker: string) => Omit<HostCreateTerminalRequest, 'sessionId'>,
  open: TerminalHostOptions,
  strict: TerminalHostOptions,
  refusal: Record<string, unknown>,
): Promise<void> {
  const shown = marker();
  await run(host(open).host, request(shown));
  expect(fs.existsSync(shown)).toBe(true);

  const blocked = marker();
  const { host: h, events } = host(strict);
  const err = await h.createTerminal({ sessionId: S, ...request(blocked) }).then(
    () => undefined,
    (e: unknown) => e as { code: string; details: Record<string, unknown>; message: string },
  );
  expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: refusal });
  expect(fs.existsSync(blocked)).toBe(false);
  expect(h.liveTerminals).toBe(0);
  expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED' })]);
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-attack-')));
  evilBin = path.join(tmp, 'evil-bin');
  fs.mkdirSync(evilBin);
  // Programs an agent could have written, named like the ones the policy allows.
  for (const name of ['ls', 'rm', 'bash']) {
    fs.writeFileSync(path.join(evilBin, name), `#!/bin/sh\n: > "$ACPT_MARKER"\n`, { mode: 0o755 });
  }
  if (CC) {
    const c = path.join(tmp, 'evil.c');
    fs.writeFileSync(
      c,
      '#include <stdlib.h>\n#include <fcntl.h>\n#include <unistd.h>\n' +
        '__attribute__((constructor)) static void evil(void) { const char *m = getenv("ACPT_MARKER"); if (m) close(open(m, O_WRONLY | O_CREAT, 0644)); }\n',
    );
    evilSo = path.join(tmp, 'evil.so');
    if (spawnSync(CC, ['-shared', '-fPIC', '-o', evilSo, c]).status !== 0) throw new Error('cc failed to build the test library');
  }
});

afterEach(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  hosts = [];
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

// The strictest documented setup: an allow list of absolute paths, argv requests only, and approve.
const strictArgv = (program: string, extra: TerminalHostOptions = {}): TerminalHostOptions => ({
  commandPolicy: { allow: [program], shellLines: 'deny' },
  approve: () => true,
  ...extra,
});

describe('code run through the request env', () => {
  testIf('cc', CC !== undefined, 'no cc on PATH to build the preload library')('LD_PRELOAD with an allowed /usr/bin/ls', async () => {
    await attack(
      (m) => ({ command: LS, args: ['-d', tmp], env: [{ name: 'LD_PRELOAD', value: evilSo! }, { name: 'ACPT_MARKER', value: m }] }),
      strictArgv(LS, { envPolicy: { allow: ['LD_PRELOAD'] } }),
      strictArgv(LS),
      { reason: 'env', name: 'LD_PRELOAD', field: 'env' },
    );
  });

  testIf('git', GIT !== undefined, 'no git on PATH')('GIT_SSH_COMMAND with an allowed git', async () => {
    await attack(
      (m) => ({ command: GIT!, args: ['ls-remote', 'ssh://example.invalid/x'], env: [{ name: 'GIT_SSH_COMMAND', value: `touch ${m}; false` }] }),
      strictArgv(GIT!, { envPolicy: { allow: ['GIT_SSH_COMMAND'] } }),
      strictArgv(GIT!),
      { reason: 'env', name: 'GIT_SSH_COMMAND' },
    );
  });

  testIf('git', GIT !== undefined, 'no git on PATH')('GIT_CONFIG_COUNT/KEY/VALUE defining an alias, with an allowed git', async () => {
    const env = (m: string) => [
      { name: 'GIT_CONFIG_COUNT', value: '1' },
      { name: 'GIT_CONFIG_KEY_0', value: 'alias.st' },
      { name: 'GIT_CONFIG_VALUE_0', value: `!touch ${m}` },
    ];
    await attack(
      (m) => ({ command: GIT!, args: ['st'], env: env(m) }),
      // git opted in as a code runner (an unknown git subcommand may be an alias).
      { ...strictArgv(GIT!, { envPolicy: { allow: ['GIT_CONFIG_*'] } }), commandPolicy: { allow: [GIT!], codeRunners: ['git'], shellLines: 'deny' } },
      strictArgv(GIT!),
      { reason: 'env', name: 'GIT_CONFIG_COUNT' },
    );
  });

  const bashHost = (extra: TerminalHostOptions = {}): TerminalHostOptions => ({
    shell: 'bash',
    commandPolicy: { allow: [LS] },
    approve: () => true,
    ...extra,
  });

  testIf('bash', BASH !== undefined, 'no bash on PATH')("shell: 'bash' with BASH_ENV pointing at a file the agent wrote", async () => {
    const rc = path.join(tmp, 'agent-rc');
    fs.writeFileSync(rc, 'touch "$ACPT_MARKER"\n');
    await attack(
      (m) => ({ command: `${LS} -d /`, env: [{ name: 'BASH_ENV', value: rc }, { name: 'ACPT_MARKER', value: m }] }),
      bashHost({ envPolicy: { allow: ['BASH_ENV'] } }),
      bashHost(),
      { reason: 'env', name: 'BASH_ENV' },
    );
  });

  testIf('bash', BASH !== undefined, 'no bash on PATH')("shell: 'bash' with BASH_FUNC_ls%% defining ls", async () => {
    await attack(
      (m) => ({ command: 'ls -d /', env: [{ name: 'BASH_FUNC_ls%%', value: `() { touch ${m}; }` }] }),
      // Under an allow list the rebuilt line runs ls by its path, which no function shadows: the attack
      // is shown with a deny-only policy.
      bashHost({ commandPolicy: { deny: ['/nonexistent'] }, envPolicy: { allow: ['BASH_FUNC_*'] } }),
      bashHost(),
      { reason: 'env', name: 'BASH_FUNC_ls%%' },
    );
  });

  testIf('bash', BASH !== undefined, 'no bash on PATH')("shell: 'bash' is looked up through the host's PATH, never the request's", async () => {
    const env = (m: string) => [
      { name: 'PATH', value: `${evilBin}:${process.env.PATH}` },
      { name: 'ACPT_MARKER', value: m },
    ];
    // Without the host, the core looks the shell up through the command's PATH: the agent's bash runs.
    const shown = marker();
    const t = await loadNativeCreateTerminal()({ command: 'true', env: env(shown) }, { shell: 'bash' });
    await t.waitForExit();
    await t.release();
    expect(fs.existsSync(shown)).toBe(true);
    // The host resolved `bash` once, through its own PATH: even with PATH allowed, the real bash runs.
    const kept = marker();
    const { host: h } = host(bashHost({ envPolicy: { allow: ['PATH'] } }));
    expect(await run(h, { command: `${LS} -d /`, env: env(kept) })).toContain('/');
    expect(fs.existsSync(kept)).toBe(false);
    // And by default the request may not set PATH at all.
    const { host: strict } = host(bashHost());
    await expect(strict.createTerminal({ sessionId: S, command: 'ls', env: env(marker()) })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'env', name: 'PATH' },
    });
  });

  test('an argv program is found through the host PATH, not the request PATH (envPolicy allowing PATH)', async () => {
    const m = marker();
    const { host: h } = host({ commandPolicy: { allow: [LS] }, envPolicy: { allow: ['PATH'] } });
    await run(h, { command: 'ls', args: ['-d', '/'], env: [{ name: 'PATH', value: evilBin }, { name: 'ACPT_MARKER', value: m }] });
    expect(fs.existsSync(m)).toBe(false);
  });
});

describe('shell lines that change what the checked words run', () => {
  const env = (m: string) => [{ name: 'ACPT_MARKER', value: m }];
  // Deny-only policies do not look for these (a deny list is a guard rail); an allow list refuses them.
  const loose: TerminalHostOptions = { commandPolicy: { deny: ['curl'] }, envPolicy: { deny: [] } };
  const allowList = (...allow: string[]): TerminalHostOptions => ({ commandPolicy: { allow } });

  test.each([
    ['PATH=<dir> ls f', (d: string) => `PATH=${d} ls f`, { reason: 'env', name: 'PATH' }],
    ['export PATH=<dir>; ls f', (d: string) => `export PATH=${d}; ls f`, { reason: 'env', name: 'PATH' }],
    ['read PATH from a here-document', (d: string) => `read PATH <<EOF\n${d}\nEOF\nls f`, { reason: 'env', name: 'PATH' }],
    ['an alias for ls', (d: string) => `alias ls=${d}/ls\nls f`, { reason: 'redefinition', word: 'ls', kind: 'alias' }],
    ['echo ... | sh', (d: string) => `echo ${d}/ls | sh`, { reason: 'shell-input', word: 'sh' }],
    ['sh <<EOF', (d: string) => `sh <<EOF\n${d}/ls\nEOF`, { reason: 'shell-input', word: 'sh' }],
  ])('%s', async (_what, line, refusal) => {
    await attack((m) => ({ command: line(evilBin), env: env(m) }), loose, allowList('ls', 'echo', 'sh'), refusal);
  });

  testIf('bash', BASH !== undefined, 'no bash on PATH')('hash -p <dir>/rm ls; ls (bash)', async () => {
    await attack(
      (m) => ({ command: `hash -p ${evilBin}/rm ls; ls f`, env: env(m) }),
      { ...loose, shell: '/bin/bash' },
      { ...allowList('ls'), shell: '/bin/bash' },
      { reason: 'redefinition', word: 'ls', kind: 'hash' },
    );
  });

  testIf('cc', CC !== undefined, 'no cc on PATH to build the preload library')('LD_PRELOAD=<so> ls', async () => {
    await attack((m) => ({ command: `LD_PRELOAD=${evilSo!} ls -d /`, env: env(m) }), loose, allowList('ls'), { reason: 'env', name: 'LD_PRELOAD' });
  });
});

// Shell lines judged on tree-sitter-bash, run for real: each line is first shown to run the hidden `touch` (marker file
// written) through a host that lets it through, then refused. The marker stands for the `rm` of the issue.
describe('shell lines judged on tree-sitter-bash', () => {
  const which2 = (name: string): string => which(name) ?? `/usr/bin/${name}`;
  const abs = ['echo', 'cat', 'test', 'awk', 'python3', 'xargs', 'env', 'timeout', 'printf'].map(which2);
  const absAllow = (extra: TerminalHostOptions = {}): TerminalHostOptions => ({ commandPolicy: { allow: abs }, ...extra });
  const open: TerminalHostOptions = {};
  const bash: TerminalHostOptions = { shell: BASH ?? '/bin/bash' };
  const LDSO = ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-linux-aarch64.so.1'].find((p) => fs.existsSync(p));

  // Item 1: an allow list of absolute paths with the default shell (dash).
  test.each([
    ['((touch M))', (m: string) => `((touch ${m}))`],
    ['[[ x ; touch M ; ]]', (m: string) => `[[ x ; touch ${m} ; ]]`],
    ['set -- a; for x do touch M; done', (m: string) => `set -- a; for x do touch ${m}; done`],
  ])('a construct dash reads differently: %s', async (_what, line) => {
    await attack((m) => ({ command: line(m) }), open, absAllow(), { reason: expect.stringMatching(/^(shell-construct|unparsable)$/) });
  });

  // Item 2: shell 'bash'; what bash evaluates inside echo/test/let/declare/printf/read.
  testIf('bash', BASH !== undefined, 'no bash on PATH').each([
    ['a here-document ended by EO\\<newline>F', (m: string) => `cat <<EO\\\nF\n$(touch ${m})\nEO\\\nF`],
    ['echo $((x))', (m: string) => `x='a[$(touch ${m})]'; echo $((x))`],
    ['[[ $x -eq 0 ]]', (m: string) => `x='a[$(touch ${m})]'; [[ $x -eq 0 ]]`],
    ['let', (m: string) => `x='a[$(touch ${m})]'; let x`],
    ['declare -i', (m: string) => `x='a[$(touch ${m})]'; declare -i y=x`],
    ['printf -v', (m: string) => `x='a[$(touch ${m})]'; printf -v "$x" 1`],
    ['read', (m: string) => `x='a[$(touch ${m})]'; read "$x" < /etc/hostname`],
    ['test -v', (m: string) => `x='a[$(touch ${m})]'; test -v "$x"`],
    ['${x@P}', (m: string) => `x='$(touch ${m})'; echo \${x@P}`],
  ])('a value bash evaluates: %s', async (_what, line) => {
    // A name only known at run time (printf -v "$x", read "$x") is refused as an assignment (reason env).
    await attack((m) => ({ command: line(m) }), bash, absAllow(bash), { reason: expect.stringMatching(/^(shell-construct|unparsable|env|env-not-allowed)$/) });
  });

  // Item 3: deny lists catch the wrapper and dash tricks (a guard rail: docs/host-policy.md).
  const denyTouch: TerminalHostOptions = { commandPolicy: { deny: ['touch'] } };
  test.each([
    ['xargs -rn 1 touch', (m: string) => `echo ${m} | xargs -rn 1 touch`],
    ['xargs -0I {} touch {}', (m: string) => `printf '%s' ${m} | xargs -0I {} touch {}`],
    ['env -iS touch', (m: string) => `env -iS touch ${m}`],
    ['timeout -vs KILL 5 touch', (m: string) => `timeout -vs KILL 5 touch ${m}`],
    ['((touch M)) in dash', (m: string) => `((touch ${m}))`],
    ['[[ x ; touch M ; ]] in dash', (m: string) => `[[ x ; touch ${m} ; ]]`],
    ['for x do touch M in dash', (m: string) => `set -- a; for x do touch ${m}; done`],
  ])('a deny list sees through: %s', async (_what, line) => {
    await attack((m) => ({ command: line(m) }), open, denyTouch, { reason: 'deny-rule', word: expect.stringMatching(/touch$/) });
  });

  testIf('bash', which('rbash') !== undefined, 'no rbash on PATH')('a deny list sees through: rbash -c', async () => {
    await attack((m) => ({ command: `rbash -c 'touch ${m}'` }), open, denyTouch, { reason: 'deny-rule', word: 'touch' });
  });

  testIf('glibc', LDSO !== undefined, 'no glibc dynamic loader at a known path')('a deny list sees through: the dynamic loader run as a program', async () => {
    await attack((m) => ({ command: `${LDSO!} ${which2('touch')} ${m}` }), open, denyTouch, { reason: 'deny-rule', word: which2('touch') });
  });

  // Item 4: allowed programs that run code anyway; a host can opt each one in (codeRunners).
  test.each([
    ['awk system()', (m: string) => `awk 'BEGIN{system("touch ${m}")}'`],
    ['python3 reading its program from stdin', (m: string) => `echo "open('${m}', 'w')" | python3`],
    ['python3 -c', (m: string) => `python3 -c "open('${m}', 'w')"`],
    ['xargs touch', (m: string) => `echo ${m} | xargs touch`],
  ])('a code runner is refused: %s', async (_what, line) => {
    await attack((m) => ({ command: line(m) }), open, absAllow({ commandPolicy: { allow: [...abs, 'touch'] } }), { reason: 'code-execution' });
  });

  testIf('git', GIT !== undefined, 'no git on PATH')('a code runner is refused: git -c core.fsmonitor=...', async () => {
    const repo = path.join(tmp, 'repo');
    if (!fs.existsSync(repo)) expect(spawnSync(GIT!, ['init', '-q', repo]).status).toBe(0);
    await attack(
      (m) => ({ command: `git -C ${repo} -c core.fsmonitor='touch ${m}' status` }),
      open,
      { commandPolicy: { allow: [...abs, GIT!, 'touch'] } },
      { reason: 'code-execution', word: 'git' },
    );
  });

  // npx comes with the npm that runs these tests.
  test('a code runner is refused: npx -c', async () => {
    await attack((m) => ({ command: `npx -c 'touch ${m}'` }), open, { commandPolicy: { allow: [...abs, 'npx', 'touch'] } }, { reason: 'code-execution', word: 'npx' });
  });

  test('an unknown wrapper option under an allow list is a refusal, not a guess', async () => {
    const { host: h } = host({ commandPolicy: { allow: [...abs, 'touch'] } });
    await expect(h.createTerminal({ sessionId: S, command: 'timeout --no-such-option 5 touch x' })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'wrapper-option', word: 'timeout' },
    });
  });

  test('a host that opts awk in (codeRunners) lets awk run its program, commands included', async () => {
    const m = marker();
    const h = host({ commandPolicy: { allow: abs, codeRunners: ['awk'] } }).host;
    await run(h, { command: `awk 'BEGIN{system("touch ${m}")}'` });
    expect(fs.existsSync(m)).toBe(true);
  });
});

// Independent attack of 2026-11-27 (r22, r15, r16, r6/r7/r18): each shown to run, then refused.
describe('wrapper globs, start-up files, network redirections, build-tool env', () => {
  const MAKE = which('make');
  const PERL = which('perl');
  const TIMEOUT = which('timeout');
  const SH = which('sh')!;
  const TRUE = which('true')!;

  testIf('timeout', TIMEOUT !== undefined, 'no timeout on PATH')('a glob in a wrapper option: `timeout -k * 5 prog` with files 0, 1, touch', async () => {
    const results: string[] = [];
    for (const policy of [undefined, { allow: [TIMEOUT!, TRUE] }]) {
      const dir = fs.mkdtempSync(path.join(tmp, 'glob-'));
      for (const f of ['0', '1', 'touch']) fs.writeFileSync(path.join(dir, f), 'x');
      const { host: h } = host(policy ? { commandPolicy: policy } : {});
      try {
        await run(h, { command: `timeout -k * 5 ${TRUE}`, cwd: dir });
        results.push(fs.existsSync(path.join(dir, '5')) ? 'touch ran' : 'nothing ran');
      } catch (e) {
        results.push(`${(e as { details: { reason: string } }).details.reason}${fs.existsSync(path.join(dir, '5')) ? ' touch ran' : ''}`);
      }
    }
    // Without a policy the shell expands `*` to `0 1 touch`: timeout -k 0 1 touch 5 true.
    expect(results).toEqual(['touch ran', 'wrapper-option']);
  });

  test.each([['timeout * ls'], ['timeout $T ls'], ['nice -n ~ ls'], ['find . -name *.c -exec ls {} ;']])('run-time words before a wrapped program are refused: %s', async (line) => {
    const { host: h } = host({ commandPolicy: { allow: [LS, ...['timeout', 'nice', 'find'].map((p) => which(p) ?? `/usr/bin/${p}`)] } });
    await expect(h.createTerminal({ sessionId: S, command: line })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'wrapper-option' } });
  });

  // HOME is the host's choice (the overlay is not judged); the agent could write the start-up files there.
  testIf('bash', BASH !== undefined, 'no bash on PATH').each([
    ['bash -l -c true'],
    ['bash -lc true'],
    ['bash --login -c true'],
    ['bash -i -c true'],
    ['bash -ic true'],
    ['sh -l -c true'],
    ["sh -c 'bash -lc true'"],
  ])('a shell that reads start-up files: %s', async (line) => {
    const home = fs.mkdtempSync(path.join(tmp, 'home-'));
    for (const f of ['.bash_profile', '.bashrc', '.profile']) fs.writeFileSync(path.join(home, f), 'touch "$ACPT_MARKER"\n');
    const options = (commandPolicy?: TerminalHostOptions['commandPolicy']): TerminalHostOptions => ({
      env: { HOME: home },
      ...(commandPolicy ? { commandPolicy } : {}),
    });
    await attack(
      (m) => ({ command: line, env: [{ name: 'ACPT_MARKER', value: m }] }),
      options(),
      options({ allow: [BASH!, SH, TRUE] }),
      { reason: 'shell-construct' },
    );
  });

  testIf('bash', BASH !== undefined, 'no bash on PATH')('bash --noprofile --norc -lc: no start-up file, allowed', async () => {
    const home = fs.mkdtempSync(path.join(tmp, 'home-'));
    fs.writeFileSync(path.join(home, '.bash_profile'), 'touch "$ACPT_MARKER"\n');
    const m = marker();
    const { host: h } = host({ env: { HOME: home }, commandPolicy: { allow: [BASH!, TRUE] } });
    await run(h, { command: 'bash --noprofile --norc -lc true', env: [{ name: 'ACPT_MARKER', value: m }] });
    expect(fs.existsSync(m)).toBe(false);
  });

  testIf('bash', BASH !== undefined, 'no bash on PATH').each([['> /dev/tcp/127.0.0.1/PORT'], ['2>> /dev/tcp/127.0.0.1/PORT']])(
    "shell 'bash': a redirection %s reaches the network",
    async (redirect) => {
      let connections = 0;
      const server = net.createServer((s) => {
        connections++;
        s.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as net.AddressInfo).port;
      try {
        const line = `${LS} -d / /nonexistent ${redirect.replace('PORT', String(port))}`;
        await run(host({ shell: BASH! }).host, { command: line });
        const shown = connections;
        const { host: h } = host({ shell: BASH!, commandPolicy: { allow: [LS] } });
        await expect(h.createTerminal({ sessionId: S, command: line })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'shell-construct' } });
        expect([shown, connections]).toEqual([1, 1]);
      } finally {
        server.close();
      }
    },
  );

  testIf('make', MAKE !== undefined, 'no make on PATH').each([['request env'], ['line assignment']])("make's built-in rule runs CC (%s)", async (how) => {
    const dir = fs.mkdtempSync(path.join(tmp, 'make-'));
    fs.writeFileSync(path.join(dir, 'hello.c'), 'int main(void) { return 0; }\n');
    const request = (m: string): Omit<HostCreateTerminalRequest, 'sessionId'> =>
      how === 'request env'
        ? { command: MAKE!, args: ['hello'], cwd: dir, env: [{ name: 'CC', value: `touch ${m} #` }] }
        : { command: `CC='touch ${m} #' make hello`, cwd: dir };
    const policy = (extra: TerminalHostOptions = {}): TerminalHostOptions => ({ commandPolicy: { allow: [MAKE!] }, ...extra });
    await attack(request, policy({ envPolicy: { allow: ['CC'] } }), policy(), {
      reason: 'env',
      name: 'CC',
      field: how === 'request env' ? 'env' : 'command',
    });
  });

  testIf('perl', PERL !== undefined, 'no perl on PATH')('PERL5DB with an allowed perl -d -w', async () => {
    const script = path.join(tmp, 'plain.pl');
    fs.writeFileSync(script, '1;\n');
    await attack(
      (m) => ({ command: PERL!, args: ['-d', '-w', script], env: [{ name: 'PERL5DB', value: `BEGIN { open my $f, ">", "${m}" }` }] }),
      // `perl -d` is itself code-execution (the debugger reads commands from stdin): both hosts opt perl in,
      // so what is tested is the env name
      { ...strictArgv(PERL!, { envPolicy: { allow: ['PERL5DB'] } }), commandPolicy: { allow: [PERL!], codeRunners: ['perl'], shellLines: 'deny' } },
      { ...strictArgv(PERL!), commandPolicy: { allow: [PERL!], codeRunners: ['perl'], shellLines: 'deny' } },
      { reason: 'env', name: 'PERL5DB', field: 'env' },
    );
  });
});
