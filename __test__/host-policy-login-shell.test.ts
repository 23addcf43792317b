// The host's own login shell under an allow list (found by the fourth independent attack): with
// `shell: ['bash', '-l', '-c']` each line runs after the shell's start-up files, and an allowed line can
// write them (`echo` is a builtin, the redirection a literal path): the next request's shell ran what it
// wrote, which no check saw. The combination is refused when the host is created, unless a sandbox keeps
// HOME read-only; a shell without start-up files stays accepted.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { containmentInfo } from '../ts/index';
import { TerminalHost } from '../ts/host';
import type { TerminalHostOptions } from '../ts/host-types';
import { checkCommand, compileCommandPolicy } from '../ts/policy';
import { loadNativeResolveProgram } from '../ts/native';
import { testIf } from './fixtures/require-feature';

const S = 'login';
let home: string;
let work: string;
const hosts: TerminalHost[] = [];
const info = containmentInfo().sandbox;
const sandboxed = testIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`);

function host(options: TerminalHostOptions): TerminalHost {
  const h = new TerminalHost({ cwd: work, env: { HOME: home }, timeoutMs: 20_000, ...options });
  hosts.push(h);
  return h;
}

async function run(h: TerminalHost, command: string): Promise<string> {
  const { terminalId } = await h.createTerminal({ sessionId: S, command });
  await h.waitForTerminalExit({ sessionId: S, terminalId });
  const { output } = await h.terminalOutput({ sessionId: S, terminalId });
  await h.releaseTerminal({ sessionId: S, terminalId });
  return output;
}

const victim = (): string => path.join(work, 'victim');
const ALLOW = { allow: ['ls'] };
/** The line an allowed `echo` writes into the login profile: the next login shell deletes the victim. */
const writeProfile = (): string => `echo 'rm -f ${victim()}' >> ${path.join(home, '.bash_profile')}`;

beforeEach(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-login-home-')));
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-login-work-')));
  fs.writeFileSync(victim(), 'keep me\n');
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

test('the attack: the allow list passes the line that writes the profile, and the next login shell runs it', async () => {
  const policy = compileCommandPolicy(ALLOW, 'commandPolicy')!;
  const checked = checkCommand(policy, { command: writeProfile(), args: [], shellLine: true, cwd: work, path: process.env.PATH, resolve: loadNativeResolveProgram() });
  expect(checked.line).toBeDefined(); // allowed: a builtin and a redirection to a literal path
  const open = host({ shell: ['bash', '-l', '-c'] });
  await run(open, checked.line!);
  expect(fs.existsSync(victim())).toBe(true);
  await run(open, 'ls'); // the next request: its login shell reads the profile
  expect(fs.existsSync(victim())).toBe(false);
});

test.each([
  [['bash', '-l', '-c']],
  [['bash', '-lc']],
  [['bash', '--login', '-c']],
  [['bash', '-i', '-c']],
  [['sh', '-l', '-c']],
  [['bash', '--rcfile', 'rc', '-c']],
])('an allow list with the host shell %j is ERR_INVALID_ARG naming options.shell', (shell) => {
  let error: unknown;
  try {
    host({ shell, commandPolicy: ALLOW });
  } catch (e) {
    error = e;
  }
  expect(error).toMatchObject({ code: 'ERR_INVALID_ARG', details: { field: 'options.shell' } });
  expect((error as Error).message).toMatch(/start-up files.*allow list would not hold/);
});

test('a shell without start-up files, and a login shell under a deny list, are accepted', async () => {
  const plain = host({ shell: ['bash', '--noprofile', '--norc', '-c'], commandPolicy: ALLOW });
  fs.writeFileSync(path.join(home, '.bash_profile'), `rm -f ${victim()}\n`);
  fs.writeFileSync(path.join(home, '.bashrc'), `rm -f ${victim()}\n`);
  expect(await run(plain, `ls ${work}`)).toBe('victim\n');
  expect(fs.existsSync(victim())).toBe(true);
  // A login bash runs ~/.bash_logout at exit whatever --noprofile says (r6-08): refused like `-l`.
  expect(() => host({ shell: ['bash', '--noprofile', '-l', '-c'], commandPolicy: ALLOW })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
  expect(() => host({ shell: ['bash', '-l', '-c'], commandPolicy: { deny: ['rm'] } })).not.toThrow();
});

describe('with a sandbox', () => {
  sandboxed('HOME outside every writable root: the login shell is accepted, and the profile cannot be written', async () => {
    const h = host({ shell: ['bash', '-l', '-c'], commandPolicy: ALLOW, sandbox: { writableRoots: [work] } });
    // Read-only outside the roots (or, for a HOME under the host's /tmp, not there at all: the sandbox's /tmp is its own).
    await expect(run(h, writeProfile())).resolves.toMatch(/Read-only file system|Permission denied|No such file or directory/);
    expect(fs.existsSync(path.join(home, '.bash_profile'))).toBe(false);
    expect(await run(h, `ls ${work}`)).toBe('victim\n');
  });

  sandboxed('HOME inside a writable root (or the root itself): refused', () => {
    for (const writableRoots of [[home], [path.dirname(home)]]) {
      expect(() => host({ shell: ['bash', '-l', '-c'], commandPolicy: ALLOW, sandbox: { writableRoots } })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARG', details: expect.objectContaining({ field: 'options.shell' }) }),
      );
    }
  });

  sandboxed('an envPolicy that lets a request set HOME: refused', () => {
    expect(() =>
      host({ shell: ['bash', '-l', '-c'], commandPolicy: ALLOW, envPolicy: { allow: ['HOME'] }, sandbox: { writableRoots: [work] } }),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
  });
});
