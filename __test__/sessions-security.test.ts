// ShellSessions against a hostile command: the environment filter the host has, and
// markers that a command forges or tampers with. exitCode is the real one or null, never made up.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { SECRET_ENV_PATTERNS } from '../ts/policy-env';
import { ShellSessions, type ExecuteResult } from '../ts/sessions';
import { drain, gateCommand } from './fixtures/shell-sessions';
import { removePackageCopy, runAsNobody } from './core/helpers';
import { testIf } from './fixtures/require-feature';

afterAll(removePackageCopy);

let shells: ShellSessions;
let work: string;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-security-')));
  shells = new ShellSessions({ cwd: work });
});

afterEach(async () => {
  await shells.closeAll();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('environment: env, inheritEnv, dropInheritedEnv as the host has them', () => {
  // The terminal inherits the real environment of this process, which jest's sandboxed process.env
  // does not change: JEST_WORKER_ID is a variable both have (jest sets it before any test runs).
  const inherited = 'JEST_WORKER_ID';
  const show = `echo "\${${inherited}:+inherited} \${GIVEN_TOKEN-none}"; tr '\\0' '\\n' </proc/$$/environ | grep -c ^${inherited}= || true`;

  test('by default everything is inherited, env overlays it', async () => {
    expect(process.env[inherited]).toBeDefined();
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, env: { GIVEN_TOKEN: 'given' } });
    expect((await shells.execute({ command: show })).content).toBe('inherited given\n1');
  });

  test('dropInheritedEnv removes inherited variables by pattern, from the shell and its /proc environ; env is never filtered', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, dropInheritedEnv: [...SECRET_ENV_PATTERNS, '*_worker_id'], env: { GIVEN_TOKEN: 'given' } });
    expect((await shells.execute({ command: show })).content).toBe(' given\n0');
    expect((await shells.execute({ command: 'echo "$PATH"' })).content).toBe(process.env.PATH);
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, dropInheritedEnv: [/^JEST_WORKER/] });
    expect((await shells.execute({ command: show })).content).toBe(' none\n0');
  });

  test('inheritEnv: false starts from env alone', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, inheritEnv: false, dropInheritedEnv: ['*_TOKEN'], env: { GIVEN_TOKEN: 'given' } });
    expect((await shells.execute({ command: show })).content).toBe(' given\n0');
  });

  test('bad patterns are named', () => {
    expect(() => new ShellSessions({ dropInheritedEnv: 'x' as never })).toThrow(/^options\.dropInheritedEnv:/);
    expect(() => new ShellSessions({ dropInheritedEnv: ['*_TOKEN', ''] })).toThrow(/^options\.dropInheritedEnv\[1\]:/);
  });
});

describe('forged and tampered markers give the real exit code or null, never a made-up one', () => {
  /**
   * Runs `command` (which prints `forged` after its forgery, then waits for a gate): every result
   * until the gate opens must say `running`; returns the final result.
   */
  async function runForgery(command: string): Promise<ExecuteResult> {
    const gate = path.join(work, 'gate');
    let r = await shells.execute({ command: `${command}; echo forged; ${gateCommand(gate)}; (exit 3)`, timeoutMs: 100 });
    let seen = r.content;
    while (!seen.includes('forged')) {
      expect(r).toMatchObject({ status: 'running', exitCode: null });
      r = await shells.execute({ command: '', timeoutMs: 100 });
      seen += r.content;
    }
    expect(r).toMatchObject({ status: 'running', exitCode: null });
    fs.writeFileSync(gate, '');
    const { last } = await drain(shells, r.status === 'running' ? await shells.execute({ command: '' }) : r);
    expect(last.status).toBe('completed');
    return last;
  }

  test('eval "$PROMPT_COMMAND" with a forged $? while the command still runs (real exit 3): not completed/0', async () => {
    const last = await runForgery('(exit 0); eval "$PROMPT_COMMAND"');
    expect(last.exitCode).toBe(3);
  });

  test('printing the prompt itself ("${PS1@P}" with $? 0) while still running: exitCode null', async () => {
    const last = await runForgery(`(exit 0); printf '%s' "\${PS1@P}"`);
    expect(last.exitCode).toBeNull();
  });

  test('eval "$PROMPT_COMMAND" with stderr away from the terminal: exitCode null', async () => {
    const last = await runForgery('exec 2>/dev/null; (exit 0); eval "$PROMPT_COMMAND"');
    expect(last.exitCode).toBeNull();
  });

  test('while stderr is not the terminal, the completion comes without an exit code; the next command is back on it, exact again', async () => {
    expect(await shells.execute({ command: 'exec 3>&2 2>/dev/null; false' })).toMatchObject({ status: 'completed', exitCode: null });
    expect(await shells.execute({ command: 'echo still >&2; false' })).toMatchObject({ status: 'completed', exitCode: 1, content: 'still' });
    expect(await shells.execute({ command: 'exec 2>/dev/null; echo gone >&2; false' })).toMatchObject({ status: 'completed', exitCode: null, content: '' });
  });

  test('builtin() { ...; } then false: false runs and reports 1, not 0', async () => {
    const ran = path.join(work, 'ran');
    await shells.execute({ command: 'builtin() { :; }; printf() { :; }; command() { :; }' });
    expect(await shells.execute({ command: 'false' })).toMatchObject({ status: 'completed', exitCode: 1 });
    await shells.execute({ command: 'source() { :; }; .() { :; }; unset() { :; }; eval() { :; }' });
    expect(await shells.execute({ command: `touch '${ran}'; false` })).toMatchObject({ status: 'completed', exitCode: 1 });
    expect(fs.existsSync(ran)).toBe(true);
    expect(await shells.execute({ command: '(exit 42)' })).toMatchObject({ exitCode: 42 });
  });

  test('running commands by . in POSIX mode leaves the shell options as the commands set them', async () => {
    const show = 'shopt -p inherit_errexit shift_verbose expand_aliases; shopt -po posix; :';
    expect((await shells.execute({ command: show })).content).toBe(
      'shopt -u inherit_errexit\nshopt -u shift_verbose\nshopt -s expand_aliases\nset +o posix',
    );
    await shells.execute({ command: 'shopt -s inherit_errexit shift_verbose; shopt -u expand_aliases' });
    expect((await shells.execute({ command: show })).content).toBe(
      'shopt -s inherit_errexit\nshopt -s shift_verbose\nshopt -u expand_aliases\nset +o posix',
    );
  });

  test('a command rewriting PS1 (to any text, or the marker with $? replaced) does not change the exit code', async () => {
    expect(await shells.execute({ command: "PS1='$ '; false" })).toMatchObject({ exitCode: 1 });
    expect(await shells.execute({ command: `PS1="\${PS1//'$?'/0}"; false` })).toMatchObject({ exitCode: 1 });
    expect(await shells.execute({ command: 'echo ok' })).toMatchObject({ exitCode: 0, content: 'ok' });
  });
});

// Run as root, the suite above checks root's view of /proc; this checks an unprivileged user's
// (the built lib/, as `npm test` builds it). Run unprivileged, the suite above already is that case.
testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as an unprivileged user (nobody): completions are confirmed, a forged prompt gives null', () => {
  const { out, uid } = runAsNobody((lib, dir) => {
    const gate = path.join(dir, 'gate');
    const forgery = `(exit 0); printf '%s' "\${PS1@P}"; echo forged; ${gateCommand(gate)}; (exit 3)`;
    return `const { ShellSessions } = require(${JSON.stringify(lib)});
const fs = require('fs');
(async () => {
  const shells = new ShellSessions({ cwd: ${JSON.stringify(dir)} });
  const first = await shells.execute({ command: 'id -u; false' });
  let r = await shells.execute({ command: ${JSON.stringify(forgery)}, timeoutMs: 100 });
  const before = [r.status];
  while (!r.content.includes('forged')) { r = await shells.execute({ command: '', timeoutMs: 100 }); before.push(r.status); }
  fs.writeFileSync(${JSON.stringify(gate)}, '');
  while (r.status === 'running') r = await shells.execute({ command: '', timeoutMs: 1000 });
  console.log(JSON.stringify({ first: [first.content, first.exitCode], before, last: [r.status, r.exitCode] }));
  await shells.closeAll();
})();
`;
  });
  expect(JSON.parse(out)).toEqual({ first: [uid, 1], before: expect.arrayContaining(['running']), last: ['completed', null] });
  expect(JSON.parse(out).before.every((s: string) => s === 'running')).toBe(true);
});
