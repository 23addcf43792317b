// A host whose shell lines run through the user's login shell (`$SHELL -l -c`, as clients do, or
// `wsl.exe -e sh -c`): the `shell` option takes the shell with its arguments, the line is appended
// last, the shell's profile runs, and the command policy judges the line the shell runs, never the
// shell itself. Bad values are ERR_INVALID_ARG naming the field.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TerminalAuditEvent } from '../ts/events';
import { TerminalHost } from '../ts/host';
import type { TerminalHostOptions } from '../ts/host-types';
import { fakeBackend } from './fixtures/fake-terminal';

const S = 'sess';
let home: string;
const hosts: TerminalHost[] = [];

/** A host whose HOME has a login profile exporting LOGIN_MARK (and, so the policy can see it, a PATH). */
function loginHost(options: TerminalHostOptions = {}): TerminalHost {
  const host = new TerminalHost({ shell: ['bash', '-l', '-c'], env: { HOME: home }, ...options });
  hosts.push(host);
  return host;
}

async function run(host: TerminalHost, command: string): Promise<{ output: string; exitCode: number | null | undefined }> {
  const { terminalId } = await host.createTerminal({ sessionId: S, command });
  const status = await host.waitForTerminalExit({ sessionId: S, terminalId });
  const { output } = await host.terminalOutput({ sessionId: S, terminalId });
  await host.releaseTerminal({ sessionId: S, terminalId });
  return { output, exitCode: status.exitCode };
}

beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-login-')));
  // Only a login shell reads .bash_profile: the variable proves the profile ran.
  fs.writeFileSync(path.join(home, '.bash_profile'), 'export LOGIN_MARK=from-profile\n');
  fs.writeFileSync(path.join(home, 'victim'), 'keep me\n');
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

test("shell: ['bash', '-l', '-c'] runs each shell line in a login shell (its profile runs)", async () => {
  const host = loginHost();
  await expect(run(host, 'echo "$LOGIN_MARK" && shopt -q login_shell && echo login')).resolves.toEqual({
    output: 'from-profile\nlogin\n',
    exitCode: 0,
  });
});

// An allow list refuses a login shell (its start-up files run unchecked): __test__/host-policy-login-shell.test.ts.
test('under a deny list the login shell runs ls (its profile too) and rm is refused: the line is judged, not the shell', async () => {
  const events: TerminalAuditEvent[] = [];
  const host = loginHost({ commandPolicy: { deny: ['rm'] }, onEvent: (e) => void events.push(e) });
  const listed = await run(host, `ls ${home}`);
  expect(listed).toEqual({ output: 'victim\n', exitCode: 0 });
  await expect(run(host, 'printenv LOGIN_MARK')).resolves.toEqual({ output: 'from-profile\n', exitCode: 0 });
  await expect(host.createTerminal({ sessionId: S, command: `rm ${home}/victim` })).rejects.toMatchObject({
    code: 'ERR_POLICY_DENIED',
    details: { word: 'rm' },
  });
  // The shell itself is not a program the allow list has to name, and the audit shows the agent's line.
  expect(events.filter((e) => e.type === 'created').map((e) => e.commandLine)).toEqual([`ls ${home}`, 'printenv LOGIN_MARK']);
  expect(fs.readFileSync(path.join(home, 'victim'), 'utf8')).toBe('keep me\n');
});

test('the backend gets the shell (resolved through the host PATH), its arguments and the line last, with shell: false', async () => {
  const backend = fakeBackend();
  const host = new TerminalHost({ createTerminal: backend.createTerminal, shell: ['bash', '-l', '-c'] });
  hosts.push(host);
  await host.createTerminal({ sessionId: S, command: 'make && make test' });
  await host.createTerminal({ sessionId: S, command: 'git', args: ['status'] });
  const [line, argv] = backend.terminals;
  expect(path.isAbsolute(line!.params.command)).toBe(true);
  expect(path.basename(line!.params.command)).toBe('bash');
  expect(line!.params.args).toEqual(['-l', '-c', 'make && make test']);
  expect(line!.options?.shell).toBe(false);
  // A request with args runs its program directly, as with any shell.
  expect(argv!.params).toMatchObject({ command: 'git', args: ['status'] });
});

test.each([
  [{ shell: [] }, 'options.shell', /must name the shell first/],
  [{ shell: ['bash', 3] }, 'options.shell[1]', /must be a string/],
  [{ shell: ['bash', '-c\0'] }, 'options.shell[1]', /NUL/],
  [{ shell: ['no-such-shell-acp', '-l', '-c'] }, 'options.shell[0]', /cannot be found/],
  [{ shell: { path: 'bash' } }, 'options.shell', /must be false, a shell, or a shell with its arguments/],
  [{ shell: true }, 'options.shell', /must be false, a shell/],
])('a bad shell (%j) is ERR_INVALID_ARG naming %s', (options, field, message) => {
  let error: unknown;
  try {
    new TerminalHost(options as unknown as TerminalHostOptions);
  } catch (e) {
    error = e;
  }
  expect(error).toMatchObject({ code: 'ERR_INVALID_ARG', details: { field } });
  expect((error as Error).message).toMatch(new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}: `));
  expect((error as Error).message).toMatch(message);
});
