// Issue 11, findings 1 and 2, run for real (native core): each attack is first shown to execute code
// (a marker file appears) through a host that lets it through (the variable allowed by `envPolicy`, or a
// deny-only policy), then refused by the host's default policy, with nothing spawned.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
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

function host(options: TerminalHostOptions): { host: TerminalHost; events: TerminalAuditEvent[] } {
  const events: TerminalAuditEvent[] = [];
  const h = new TerminalHost({ cwd: tmp, onEvent: (e) => void events.push(e), ...options });
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

describe('finding 1: code run through the request env', () => {
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
      strictArgv(GIT!, { envPolicy: { allow: ['GIT_CONFIG_*'] } }),
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
      bashHost({ envPolicy: { allow: ['BASH_FUNC_*'] } }),
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

describe('finding 2: shell lines that change what the checked words run', () => {
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
