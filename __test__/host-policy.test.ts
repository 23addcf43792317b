// TerminalHost policy and audit stream, on the scripted fake backend (nothing is executed), with a real
// temporary directory tree for allowedRoots and program resolution (the core's resolveProgram).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TerminalAuditEvent } from '../ts/events';
import { TerminalHost, type ApprovalRequest, type HostCreateTerminalRequest, type TerminalHostOptions } from '../ts/host';
import { jsResolveProgram } from '../ts/native';
import { SECRET_ENV_PATTERNS } from '../ts/policy';
import { DANGEROUS_ENV_PATTERNS } from '../ts/policy-env';
import { fakeBackend, type FakeBackend } from './fixtures/fake-terminal';
import { expectConstructorRejects } from './fixtures/host-assert';

const S = 'sess';
let backend: FakeBackend;
let host: TerminalHost;
let events: TerminalAuditEvent[];
let tmp: string;
let root: string;
let outside: string;
let bin: string;

function newHost(options: TerminalHostOptions = {}): TerminalHost {
  const h = new TerminalHost({ createTerminal: backend.createTerminal, ...options });
  h.onEvent((e) => {
    events.push(e);
  });
  return h;
}

function script(dir: string, name: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

async function failure(work: Promise<unknown>): Promise<Error & { code: string; details: Record<string, unknown> }> {
  return work.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error & { code: string; details: Record<string, unknown> },
  );
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-policy-')));
  root = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  bin = path.join(tmp, 'bin');
  for (const d of [root, path.join(root, 'sub'), outside, bin, path.join(tmp, 'root-sibling')]) fs.mkdirSync(d, { recursive: true });
  fs.symlinkSync(outside, path.join(root, 'escape'));
  fs.symlinkSync(path.join(root, 'sub'), path.join(outside, 'into-root'));
  fs.writeFileSync(path.join(root, 'file.txt'), 'x');
  script(bin, 'build');
  script(bin, 'deploy');
  fs.symlinkSync(path.join(bin, 'deploy'), path.join(bin, 'innocent'));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  backend = fakeBackend();
  events = [];
  host = newHost();
});

afterEach(async () => {
  await host.close();
});

describe('allowedRoots', () => {
  beforeEach(() => {
    host = newHost({ allowedRoots: [root] });
  });

  test.each([
    ['the root itself', () => root, () => root],
    ['a directory below it', () => path.join(root, 'sub'), () => path.join(root, 'sub')],
    ['a path with .. that stays inside', () => path.join(root, 'sub', '..', 'sub'), () => path.join(root, 'sub')],
    ['a symlink from outside that points inside', () => path.join(outside, 'into-root'), () => path.join(root, 'sub')],
  ])('%s is allowed and the command starts in the resolved directory', async (_what, cwd, resolved) => {
    await host.createTerminal({ sessionId: S, command: 'x', cwd: cwd() });
    expect(backend.terminals[0]!.params.cwd).toBe(resolved());
    expect(events[0]).toMatchObject({ type: 'created', cwd: resolved() });
  });

  test.each([
    ['a symlink inside that points outside', () => path.join(root, 'escape'), () => outside],
    ['.. out of the root', () => path.join(root, '..', 'outside'), () => outside],
    ['a sibling whose name starts like the root', () => path.join(tmp, 'root-sibling'), () => path.join(tmp, 'root-sibling')],
    ['/', () => '/', () => '/'],
  ])('%s is refused with ERR_CWD_OUTSIDE_ROOTS and a denied event', async (_what, cwd, resolved) => {
    const err = await failure(host.createTerminal({ sessionId: S, command: 'x', cwd: cwd() }));
    expect(err.code).toBe('ERR_CWD_OUTSIDE_ROOTS');
    expect(err.message).toMatch(/^cwd: .*outside the directories this client allows/);
    expect(err.details).toMatchObject({ resolved: resolved(), allowedRoots: [root] });
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_CWD_OUTSIDE_ROOTS', sessionId: S, command: 'x', cwd: resolved() })]);
  });

  test.each([
    ['missing', () => path.join(root, 'nope'), /does not exist/],
    ['a file', () => path.join(root, 'file.txt'), /not a directory/],
    ['relative', () => 'sub', /absolute/],
  ])('a %s cwd is ERR_INVALID_CWD (a failed event, not a denial)', async (_what, cwd, message) => {
    const err = await failure(host.createTerminal({ sessionId: S, command: 'x', cwd: cwd() }));
    expect(err.code).toBe('ERR_INVALID_CWD');
    expect(err.message).toMatch(message);
    expect(events).toEqual([expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_CWD' })]);
  });

  test('requests without cwd are checked against the host cwd, then the process cwd', async () => {
    host = newHost({ allowedRoots: [root], cwd: outside });
    await expect(host.createTerminal({ sessionId: S, command: 'x' })).rejects.toMatchObject({ code: 'ERR_CWD_OUTSIDE_ROOTS' });
    const inProcessCwd = newHost({ allowedRoots: [root] });
    const expected = fs.realpathSync(process.cwd()).startsWith(root + '/') ? 'created' : 'ERR_CWD_OUTSIDE_ROOTS';
    const result = await inProcessCwd.createTerminal({ sessionId: S, command: 'x' }).then(
      () => 'created',
      (e: { code: string }) => e.code,
    );
    expect(result).toBe(expected);
    await inProcessCwd.close();
  });

  test('roots given through a symlink are resolved once, at construction', async () => {
    const link = path.join(tmp, 'root-link');
    fs.symlinkSync(root, link);
    host = newHost({ allowedRoots: [link] });
    await host.createTerminal({ sessionId: S, command: 'x', cwd: path.join(root, 'sub') });
    expect(backend.terminals[0]!.params.cwd).toBe(path.join(root, 'sub'));
    fs.unlinkSync(link);
  });

  test.each([
    ['options.allowedRoots', { allowedRoots: '/tmp' }],
    ['options.allowedRoots[0]', { allowedRoots: ['relative'] }],
    ['options.allowedRoots[0]', { allowedRoots: ['/definitely/not/here'] }],
    ['options.allowedRoots[1]', { allowedRoots: ['/tmp', 42] }],
  ])('the constructor rejects a bad %s', (field, options) => {
    expect(() => new TerminalHost(options as never)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
    try {
      new TerminalHost(options as never);
    } catch (e) {
      expect((e as Error).message.startsWith(`${field}:`)).toBe(true);
    }
  });

  test('a cwd with a NUL byte is ERR_INVALID_ARG', async () => {
    await expect(host.createTerminal({ sessionId: S, command: 'x', cwd: `${root}\0/x` })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
  });
});

describe('commandPolicy', () => {
  // Programs are found through the host's PATH (its env overlay here), never the request's.
  const withPath = (options: TerminalHostOptions): TerminalHost => newHost({ env: { PATH: `${bin}:/usr/bin:/bin` }, ...options });

  test('deny by name: argv requests are resolved through PATH and refused with ERR_POLICY_DENIED', async () => {
    host = withPath({ commandPolicy: { deny: ['deploy'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'deploy', args: ['--prod'] }));
    expect(err.code).toBe('ERR_POLICY_DENIED');
    expect(err.message).toContain(`\`deploy\` (${path.join(bin, 'deploy')}) is denied by this client's command policy (rule "deploy")`);
    expect(err.details).toMatchObject({ reason: 'deny-rule', word: 'deploy', program: path.join(bin, 'deploy') });
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED', command: 'deploy', args: ['--prod'] })]);
  });

  test('a symlink to a denied program is refused through its real path', async () => {
    host = withPath({ commandPolicy: { deny: [path.join(bin, 'deploy')] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'innocent', args: ['x'] }));
    expect(err.code).toBe('ERR_POLICY_DENIED');
    expect(err.message).toContain('-> ' + path.join(bin, 'deploy'));
  });

  test('an allowed argv request runs the resolved absolute path, reported as program', async () => {
    host = withPath({ commandPolicy: { allow: [`${bin}/*`] } });
    await host.createTerminal({ sessionId: S, command: 'build', args: ['all'] });
    expect(backend.terminals[0]!.params).toMatchObject({ command: path.join(bin, 'build'), args: ['all'] });
    expect(events[0]).toMatchObject({ type: 'created', command: 'build', program: path.join(bin, 'build') });
  });

  test('allow list: anything else is refused, naming the program', async () => {
    host = withPath({ commandPolicy: { allow: ['build'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'deploy', args: ['x'] }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'not-allowed', word: 'deploy' } });
    expect(err.message).toMatch(/not among the commands this client allows/);
  });

  test('an argv program that does not exist keeps the core code ENOENT (a failed event)', async () => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'no-such-program-xyz', args: ['a'] }));
    expect(err.code).toBe('ENOENT');
    expect(events[0]).toMatchObject({ type: 'failed', code: 'ENOENT' });
  });

  test.each([
    ['git status && rm -rf build', 'rm'],
    ['echo $(rm -rf build)', 'rm'],
    ['sudo rm -rf /', 'rm'],
    ['FOO=1 command rm x', 'rm'],
    ["bash -c 'rm x'", 'rm'],
    ['find . -exec rm {} +', 'rm'],
  ])('shell lines: %j is refused because of %s', async (line, word) => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: line }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { word } });
    expect(backend.terminals).toHaveLength(0);
  });

  test('argv requests that run a shell line are checked too', async () => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    await expect(host.createTerminal({ sessionId: S, command: '/bin/bash', args: ['-c', 'ls; rm -rf x'] })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { word: 'rm' },
    });
  });

  test('with only deny rules, run-time command words pass (they cannot be checked)', async () => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    await expect(host.createTerminal({ sessionId: S, command: '$CMD x' })).resolves.toHaveProperty('terminalId');
  });

  test('with an allow list, run-time command words and malformed lines are refused', async () => {
    host = withPath({ commandPolicy: { allow: ['ls'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'ls; $CMD' })).rejects.toMatchObject({ details: { reason: 'dynamic', word: '$CMD' } });
    await expect(host.createTerminal({ sessionId: S, command: 'ls "unterminated' })).rejects.toMatchObject({ details: { reason: 'unparsable' } });
  });

  test('with an allow list, safe builtins need no rule but eval and unknown names do', async () => {
    host = withPath({ commandPolicy: { allow: ['ls', 'grep'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'cd /tmp && ls | grep x; echo done; exit 0' })).resolves.toHaveProperty('terminalId');
    await expect(host.createTerminal({ sessionId: S, command: "eval 'ls'" })).rejects.toMatchObject({ details: { word: 'eval' } });
    await expect(host.createTerminal({ sessionId: S, command: 'myfunc' })).rejects.toMatchObject({ details: { word: 'myfunc' } });
  });

  test("shellLines: 'deny' refuses every arg-less request", async () => {
    host = withPath({ commandPolicy: { shellLines: 'deny' } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'ls' }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'shell-line' } });
    expect(err.message).toMatch(/args/);
    await expect(host.createTerminal({ sessionId: S, command: 'ls', args: ['-l'] })).resolves.toHaveProperty('terminalId');
  });

  test('with shell: false, an arg-less command is a program, checked as such', async () => {
    host = withPath({ shell: false, commandPolicy: { allow: ['build'] } });
    await host.createTerminal({ sessionId: S, command: 'build' });
    expect(backend.terminals[0]!.params.command).toBe(path.join(bin, 'build'));
  });

  test('RegExp and function rules; a throwing function counts as a match for deny', async () => {
    const seen: unknown[] = [];
    host = withPath({
      commandPolicy: {
        deny: [
          /\/deploy$/,
          (c) => {
            seen.push(c);
            return false;
          },
        ],
      },
    });
    await expect(host.createTerminal({ sessionId: S, command: 'deploy', args: ['x'] })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    await host.createTerminal({ sessionId: S, command: 'build', args: ['x'] });
    expect(seen).toContainEqual({ word: 'build', path: path.join(bin, 'build'), realPath: path.join(bin, 'build'), builtin: false, dynamic: false });
    const throwing = withPath({
      commandPolicy: {
        deny: [
          () => {
            throw new Error('rule bug');
          },
        ],
      },
    });
    await expect(throwing.createTerminal({ sessionId: S, command: 'ls' })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    await throwing.close();
  });

  test.each([
    ['options.commandPolicy', { commandPolicy: 'strict' }],
    ['options.commandPolicy.allow', { commandPolicy: { allow: 'ls' } }],
    ['options.commandPolicy.deny[0]', { commandPolicy: { deny: [''] } }],
    ['options.commandPolicy.deny[1]', { commandPolicy: { deny: ['rm', 7] } }],
    ['options.commandPolicy.shellLines', { commandPolicy: { shellLines: 'maybe' } }],
  ])('the constructor rejects a bad %s', expectConstructorRejects);
});

describe('approve', () => {
  test('sees the request as it will run, and nothing runs before it answers true', async () => {
    const asked: ApprovalRequest[] = [];
    let answer!: (ok: boolean) => void;
    host = newHost({
      allowedRoots: [root],
      env: { PATH: `${bin}:/usr/bin:/bin` },
      approve: (r) => {
        asked.push(r);
        return new Promise<boolean>((res) => (answer = res));
      },
    });
    const creating = host.createTerminal({
      sessionId: S,
      command: 'build',
      args: ['--fast'],
      cwd: path.join(outside, 'into-root'),
      env: [{ name: 'MODE', value: 'fast' }],
    });
    let settled = false;
    creating.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (asked.length === 0 && !settled) await new Promise((r) => setImmediate(r));
    expect(backend.terminals).toHaveLength(0);
    expect(asked[0]).toMatchObject({
      sessionId: S,
      command: 'build',
      args: ['--fast'],
      cwd: path.join(root, 'sub'),
      env: [
        { name: 'PATH', value: `${bin}:/usr/bin:/bin` },
        { name: 'MODE', value: 'fast' },
      ],
      program: path.join(bin, 'build'),
      commands: [expect.objectContaining({ word: 'build', path: path.join(bin, 'build') })],
    });
    answer(true);
    await expect(creating).resolves.toHaveProperty('terminalId');
    expect(backend.terminals).toHaveLength(1);
  });

  test.each([
    ['false', () => false, /not approved by the user/],
    ['a truthy non-boolean', () => 'yes' as unknown as boolean, /not approved by the user/],
    [
      'a throw',
      () => {
        throw new Error('dialog crashed');
      },
      /approval failed \(dialog crashed\)/,
    ],
    ['a rejection', () => Promise.reject(new Error('gone')), /approval failed \(gone\)/],
  ])('%s refuses with ERR_NOT_APPROVED and a denied event', async (_what, approve, message) => {
    host = newHost({ approve });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'ls' }));
    expect(err.code).toBe('ERR_NOT_APPROVED');
    expect(err.message).toMatch(message);
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_NOT_APPROVED' })]);
  });

  test('is not asked when the policy already refused', async () => {
    const approve = jest.fn(() => true);
    host = newHost({ approve, commandPolicy: { deny: ['rm'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'rm x' })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    expect(approve).not.toHaveBeenCalled();
  });

  test('pending approvals count against maxTerminals; closing during approval fails the create', async () => {
    let answer!: (ok: boolean) => void;
    host = newHost({ maxTerminals: 1, approve: () => new Promise<boolean>((res) => (answer = res)) });
    const first = host.createTerminal({ sessionId: S, command: 'ls' });
    await expect(host.createTerminal({ sessionId: S, command: 'ls' })).rejects.toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
    while (!answer) await new Promise((r) => setImmediate(r));
    const closing = host.close();
    answer(true);
    await expect(first).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
    await closing;
    expect(backend.terminals).toHaveLength(0);
    expect(events.map((e) => e.type)).toEqual(['denied', 'failed']);
  });
});

describe('dropInheritedEnv', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.ACPT_TEST_TOKEN = 'secret-1';
    process.env.ACPT_AWS_LIKE = 'keep';
    process.env.AWS_ACPT_TEST = 'secret-2';
    process.env.acpt_lower_secret = 'secret-3';
    process.env.PAGER = 'less';
  });
  afterEach(() => {
    for (const k of ['ACPT_TEST_TOKEN', 'ACPT_AWS_LIKE', 'AWS_ACPT_TEST', 'acpt_lower_secret', 'PAGER']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  test('drops matching inherited variables, keeps the rest; the overlay and the request env are never filtered', async () => {
    host = newHost({ dropInheritedEnv: ['*_TOKEN', 'AWS_*', /secret$/i], env: { HOST_TOKEN: 'overlay' } });
    await host.createTerminal({ sessionId: S, command: 'x', env: [{ name: 'REQ_TOKEN', value: 'request' }] });
    const t = backend.terminals[0]!;
    expect(t.options).toMatchObject({ inheritEnv: false });
    const env = new Map(t.params.env!.map((e) => [e.name, e.value]));
    expect(env.has('ACPT_TEST_TOKEN')).toBe(false);
    expect(env.has('AWS_ACPT_TEST')).toBe(false);
    expect(env.has('acpt_lower_secret')).toBe(false);
    expect(env.get('ACPT_AWS_LIKE')).toBe('keep');
    expect(env.get('PATH')).toBe(process.env.PATH);
    expect(env.get('HOST_TOKEN')).toBe('overlay');
    expect(env.get('REQ_TOKEN')).toBe('request');
    // The core's PAGER=cat default must still win over an inherited PAGER.
    expect(env.has('PAGER')).toBe(false);
  });

  test('glob strings are case-insensitive; SECRET_ENV_PATTERNS drops the usual suspects', async () => {
    process.env.acpt_gh_token = 'x';
    host = newHost({ dropInheritedEnv: SECRET_ENV_PATTERNS });
    await host.createTerminal({ sessionId: S, command: 'x' });
    const names = backend.terminals[0]!.params.env!.map((e) => e.name);
    expect(names).not.toContain('acpt_gh_token');
    expect(names).not.toContain('ACPT_TEST_TOKEN');
    expect(names).not.toContain('AWS_ACPT_TEST');
    delete process.env.acpt_gh_token;
  });

  test('the env seen by onCreate and approve holds no inherited variables', async () => {
    let approved: ApprovalRequest | undefined;
    host = newHost({ dropInheritedEnv: ['*_TOKEN'], approve: (r) => ((approved = r), true) });
    const seen: unknown[] = [];
    host.onCreate((e) => seen.push(e.request.env));
    await host.createTerminal({ sessionId: S, command: 'x', env: [{ name: 'A', value: '1' }] });
    expect(approved!.env).toEqual([{ name: 'A', value: '1' }]);
    expect(seen).toEqual([[{ name: 'A', value: '1' }]]);
  });

  test('no effect when inheritEnv is false; invalid patterns are rejected', async () => {
    host = newHost({ inheritEnv: false, dropInheritedEnv: ['*'] });
    await host.createTerminal({ sessionId: S, command: 'x' });
    expect(backend.terminals[0]!.params.env).toBeUndefined();
    expect(() => new TerminalHost({ dropInheritedEnv: ['ok', ''] })).toThrow(/options\.dropInheritedEnv\[1\]/);
    expect(() => new TerminalHost({ dropInheritedEnv: '*_TOKEN' as never })).toThrow(/options\.dropInheritedEnv/);
  });
});

describe('limits and timeoutMs', () => {
  test('reach the backend options', async () => {
    const limits = { cpuSeconds: 10, addressSpaceBytes: 2 ** 31, openFiles: 256, fileSizeBytes: 2 ** 20, processes: 50 };
    host = newHost({ timeoutMs: 5000, limits });
    await host.createTerminal({ sessionId: S, command: 'x' });
    expect(backend.terminals[0]!.options).toEqual({ timeoutMs: 5000, limits });
  });

  test.each([
    ['options.timeoutMs', { timeoutMs: 0 }],
    ['options.timeoutMs', { timeoutMs: Number.NaN }],
    ['options.limits', { limits: 5 }],
    ['options.limits.processes', { limits: { processes: -1 } }],
    ['options.limits.cpuSeconds', { limits: { cpuSeconds: 1.5 } }],
    ['options.limits.files', { limits: { files: 10 } }],
  ])('the constructor rejects a bad %s', expectConstructorRejects);
});

describe('onEvent', () => {
  test('created → killed → exited → released, with the fields an audit needs', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S, command: 'make', args: ['all'], cwd: root, outputByteLimit: 100 });
    const t = backend.terminals[0]!;
    Object.defineProperty(t, 'outputBytes', { get: () => 1234 });
    await host.killTerminal({ sessionId: S, terminalId });
    await host.releaseTerminal({ sessionId: S, terminalId });
    expect(events.map((e) => e.type)).toEqual(['created', 'killed', 'exited', 'released']);
    const [created, killed, exited, released] = events;
    expect(created).toEqual({
      type: 'created',
      time: expect.any(Number),
      sessionId: S,
      terminalId,
      command: 'make',
      args: ['all'],
      cwd: root,
      pid: 4242,
      outputByteLimit: 100,
    });
    expect(killed).toMatchObject({ type: 'killed', terminalId, sessionId: S, wasRunning: true });
    expect(exited).toMatchObject({
      type: 'exited',
      terminalId,
      exitStatus: { exitCode: null, signal: 'SIGTERM' },
      durationMs: expect.any(Number),
      outputBytes: 1234,
    });
    expect(released).toMatchObject({ type: 'released', terminalId, reason: 'request', wasRunning: false });
    expect(Object.isFrozen(created)).toBe(true);
  });

  test('a release of a running terminal reports wasRunning, exited comes first; session and close reasons', async () => {
    const a = await host.createTerminal({ sessionId: S, command: 'a' });
    await host.createTerminal({ sessionId: 'other', command: 'b' });
    await host.releaseTerminal({ sessionId: S, terminalId: a.terminalId });
    await host.releaseSession('other');
    const c = await host.createTerminal({ sessionId: S, command: 'c' });
    await host.close();
    const released = events.filter((e) => e.type === 'released');
    expect(released.map((e) => e.type === 'released' && [e.reason, e.wasRunning])).toEqual([
      ['request', true],
      ['session', true],
      ['close', true],
    ]);
    const order = events.filter((e) => 'terminalId' in e && e.terminalId === c.terminalId).map((e) => e.type);
    expect(order).toEqual(['created', 'exited', 'released']);
    const exited = events.find((e) => e.type === 'exited');
    expect(exited).toMatchObject({ outputBytes: undefined, exitStatus: { exitCode: null, signal: 'SIGTERM' } });
  });

  test('a natural exit is reported once, with its status', async () => {
    await host.createTerminal({ sessionId: S, command: 'x' });
    backend.terminals[0]!.exit({ exitCode: 3, signal: null });
    while (!events.some((e) => e.type === 'exited')) await new Promise((r) => setImmediate(r));
    expect(events.filter((e) => e.type === 'exited')).toEqual([expect.objectContaining({ exitStatus: { exitCode: 3, signal: null } })]);
  });

  test('invalid requests and backend failures are failed events; nothing leaks env values', async () => {
    await expect(host.createTerminal({ sessionId: S, command: 'x', outputByteLimit: -1 })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
    await expect(host.createTerminal({ sessionId: S, command: 'x', cwd: 'rel' })).rejects.toMatchObject({ code: 'ERR_INVALID_CWD' });
    await expect(host.createTerminal(null as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
    expect(events).toEqual([
      expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_ARG', command: 'x', message: expect.stringMatching(/^outputByteLimit:/) }),
      expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_CWD', cwd: 'rel' }),
      expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_ARG', sessionId: '', command: '' }),
    ]);
    await host.createTerminal({ sessionId: S, command: 'x', env: [{ name: 'SECRET', value: 'hunter2' }] });
    expect(JSON.stringify(events)).not.toContain('hunter2');
  });

  test('maxTerminals refusals are denied events', async () => {
    host = newHost({ maxTerminals: 1 });
    await host.createTerminal({ sessionId: S, command: 'a' });
    await expect(host.createTerminal({ sessionId: S, command: 'b' })).rejects.toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
    expect(events[1]).toMatchObject({ type: 'denied', code: 'ERR_TOO_MANY_TERMINALS', command: 'b', reason: expect.stringMatching(/too many/) });
  });

  test('throwing and rejecting listeners break nothing; the option and unsubscribe work', async () => {
    const fromOption: string[] = [];
    host = newHost({
      onEvent: (e) => {
        fromOption.push(e.type);
        throw new Error('audit sink down');
      },
    });
    host.onEvent(async () => {
      throw new Error('async sink down');
    });
    const later: string[] = [];
    const off = host.onEvent((e) => {
      later.push(e.type);
    });
    const { terminalId } = await host.createTerminal({ sessionId: S, command: 'x' });
    off();
    await host.killTerminal({ sessionId: S, terminalId });
    await host.releaseTerminal({ sessionId: S, terminalId });
    await expect(host.createTerminal({ sessionId: S, command: 'y' })).resolves.toHaveProperty('terminalId');
    expect(later).toEqual(['created']);
    expect(fromOption).toEqual(['created', 'killed', 'exited', 'released', 'created']);
    expect(events.map((e) => e.type)).toEqual(fromOption);
    expect(() => host.onEvent('nope' as never)).toThrow(/listener/);
  });
});

describe('program resolution', () => {
  test('jsResolveProgram follows execvp: PATH order, relative paths against cwd, ENOENT / EACCES', () => {
    const other = path.join(tmp, 'bin2');
    fs.mkdirSync(other, { recursive: true });
    script(other, 'build');
    fs.writeFileSync(path.join(other, 'not-exec'), 'x', { mode: 0o644 });
    expect(jsResolveProgram('build', { path: `${bin}:${other}` })).toBe(path.join(bin, 'build'));
    expect(jsResolveProgram('build', { path: `/nonexistent:${other}:${bin}` })).toBe(path.join(other, 'build'));
    expect(jsResolveProgram('./build', { cwd: bin })).toBe(path.join(bin, 'build'));
    expect(jsResolveProgram('build', { cwd: bin, path: '' })).toBe(path.join(bin, 'build'));
    expect(() => jsResolveProgram('not-exec', { path: other })).toThrow(expect.objectContaining({ code: 'EACCES' }));
    expect(() => jsResolveProgram('nothing-here', { path: other })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => jsResolveProgram('./nothing', { cwd: other })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

   
  const nativeResolve = (require('../index.js') as { resolveProgram?: typeof jsResolveProgram }).resolveProgram;
  (nativeResolve ? test : test.skip)('the core resolveProgram agrees with the JS fallback', () => {
    for (const [cmd, opts] of [
      ['sh', {}],
      ['build', { path: `${bin}:/usr/bin` }],
      ['./build', { cwd: bin }],
      ['env', { path: '/usr/bin:/bin' }],
    ] as const) {
      // The core joins a relative path to cwd without normalizing it (`/x/bin/./build`): same file.
      expect(path.normalize(nativeResolve!(cmd, opts))).toBe(jsResolveProgram(cmd, opts));
    }
    expect(() => nativeResolve!('nothing-here-xyz', {})).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});

describe('envPolicy', () => {
  const req = (name: string, value = '/tmp/x'): HostCreateTerminalRequest => ({ sessionId: S, command: 'ls', args: ['-l'], env: [{ name, value }] });

  test.each([
    'LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV', 'ENV', 'BASH_FUNC_ls%%', 'SHELLOPTS', 'BASHOPTS', 'PS4',
    'PROMPT_COMMAND', 'IFS', 'PATH', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0',
    'GIT_CONFIG_PARAMETERS', 'GIT_EXEC_PATH', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_EDITOR', 'EDITOR', 'VISUAL', 'PAGER',
    'NODE_OPTIONS', 'PYTHONSTARTUP', 'PYTHONPATH', 'PERL5OPT', 'PERL5LIB', 'RUBYOPT', 'JAVA_TOOL_OPTIONS', 'ld_preload',
  ])('with a command policy, a request setting %s is refused (reason env, naming it)', async (name) => {
    host = newHost({ commandPolicy: { deny: ['rm'] } });
    const err = await failure(host.createTerminal(req(name)));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { field: 'env', reason: 'env', name } });
    expect(err.message).toMatch(new RegExp(`^env: \`${name.replace(/[$%]/g, '\\$&')}\` is not allowed`));
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED' })]);
  });

  test('ordinary variables, and a pager turned off, pass', async () => {
    host = newHost({ commandPolicy: { deny: ['rm'] } });
    await host.createTerminal({
      sessionId: S,
      command: 'ls',
      args: ['-l'],
      env: [
        { name: 'CI', value: '1' },
        { name: 'NODE_ENV', value: 'test' },
        { name: 'PAGER', value: 'cat' },
        { name: 'GIT_PAGER', value: '' },
        { name: 'LANG', value: 'C.UTF-8' },
      ],
    });
    expect(backend.terminals).toHaveLength(1);
    await expect(host.createTerminal(req('GIT_PAGER', 'less'))).rejects.toMatchObject({ details: { name: 'GIT_PAGER' } });
  });

  test('the host overlay is not judged (the host chose it); without any policy nothing is judged', async () => {
    host = newHost({ commandPolicy: { deny: ['rm'] }, env: { LD_LIBRARY_PATH: '/opt/lib' } });
    await host.createTerminal({ sessionId: S, command: 'ls', args: ['-l'] });
    expect(backend.terminals[0]!.params.env).toEqual([{ name: 'LD_LIBRARY_PATH', value: '/opt/lib' }]);
    const open = newHost({ approve: () => true });
    await expect(open.createTerminal(req('LD_PRELOAD'))).resolves.toHaveProperty('terminalId');
    await open.close();
  });

  test('envPolicy alone applies it; allow extends, deny replaces, { deny: [] } turns it off', async () => {
    host = newHost({ envPolicy: {} });
    await expect(host.createTerminal(req('BASH_ENV'))).rejects.toMatchObject({ details: { reason: 'env', name: 'BASH_ENV' } });
    const allowing = newHost({ commandPolicy: { deny: ['rm'] }, envPolicy: { allow: ['PATH', /^EDITOR$/] } });
    await expect(allowing.createTerminal(req('PATH'))).resolves.toHaveProperty('terminalId');
    await expect(allowing.createTerminal(req('EDITOR'))).resolves.toHaveProperty('terminalId');
    // A host-given allow replaces the default exceptions: PAGER=cat is refused again.
    await expect(allowing.createTerminal(req('PAGER', 'cat'))).rejects.toMatchObject({ details: { name: 'PAGER' } });
    const extended = newHost({ commandPolicy: { deny: ['rm'] }, envPolicy: { deny: [...DANGEROUS_ENV_PATTERNS, 'MY_HOOK', (n, v) => n === 'X' && v === 'bad'] } });
    await expect(extended.createTerminal(req('my_hook'))).rejects.toMatchObject({ details: { name: 'my_hook' } });
    await expect(extended.createTerminal(req('X', 'bad'))).rejects.toMatchObject({ details: { name: 'X' } });
    await expect(extended.createTerminal(req('X', 'good'))).resolves.toHaveProperty('terminalId');
    const off = newHost({ commandPolicy: { deny: ['rm'] }, envPolicy: { deny: [] } });
    await expect(off.createTerminal(req('LD_PRELOAD'))).resolves.toHaveProperty('terminalId');
    await Promise.all([allowing.close(), extended.close(), off.close()]);
  });

  test.each([
    ['options.envPolicy', { envPolicy: 'strict' }],
    ['options.envPolicy.deny', { envPolicy: { deny: 'PATH' } }],
    ['options.envPolicy.deny[1]', { envPolicy: { deny: ['PATH', ''] } }],
    ['options.envPolicy.allow[0]', { envPolicy: { allow: [7] } }],
    ['options.envPolicy.bogus', { envPolicy: { bogus: [] } }],
  ])('the constructor rejects a bad %s', expectConstructorRejects);
});

describe('shell lines under an allow list: what the checked words will run', () => {
  const allow = (options: Partial<TerminalHostOptions> = {}): TerminalHost =>
    newHost({ commandPolicy: { allow: ['ls', 'grep', 'bash', 'sh', 'myhelper'] }, ...options });

  test.each([
    ['PATH=/tmp/x ls f', { reason: 'env', name: 'PATH' }],
    ['export PATH=/tmp/x; ls f', { reason: 'env', name: 'PATH' }],
    ['LD_PRELOAD=/tmp/e.so ls', { reason: 'env', name: 'LD_PRELOAD' }],
    ['declare -x BASH_ENV=/tmp/rc; bash -c ls', { reason: 'env', name: 'BASH_ENV' }],
    ['printf -v PATH /tmp/x; ls', { reason: 'env', name: 'PATH' }],
    [': ${PATH:=/tmp/x}; ls', { reason: 'env', name: 'PATH' }],
    ['for PATH in /tmp/x; do ls; done', { reason: 'env', name: 'PATH' }],
    ['env GIT_SSH_COMMAND=x ls', { reason: 'env', name: 'GIT_SSH_COMMAND' }],
    ['declare -n r=PATH; r=/tmp/x; ls', { reason: 'env', name: 'r' }],
    ['export "$X"; ls', { reason: 'env', name: '$X' }],
    ['while IFS= read -r l; do echo "$l"; done < f', { reason: 'env', name: 'IFS' }],
    ['hash -p /tmp/x/rm ls; ls', { reason: 'redefinition', word: 'ls', kind: 'hash' }],
    ["alias ls='rm -rf'\nls x", { reason: 'redefinition', word: 'ls', kind: 'alias' }],
    ['enable -n echo; echo hi', { reason: 'redefinition', word: 'echo', kind: 'enable' }],
    ['ls() { grep x f; }; ls', { reason: 'redefinition', word: 'ls', kind: 'function' }],
    ['builtin() { ls; }; builtin cd /', { reason: 'redefinition', word: 'builtin', kind: 'function' }],
    ['function grep { ls; }', { reason: 'redefinition', word: 'grep', kind: 'function' }],
    ['echo rm f | sh', { reason: 'shell-input', word: 'sh' }],
    ['sh <<EOF\nrm f\nEOF', { reason: 'shell-input', word: 'sh' }],
    ['bash <<< "rm f"', { reason: 'shell-input', word: 'bash' }],
    ['bash -s < script', { reason: 'shell-input', word: 'bash' }],
    ['bash script.sh', { reason: 'shell-input', word: 'bash' }],
  ])('%j is refused', async (line, details) => {
    host = allow();
    const err = await failure(host.createTerminal({ sessionId: S, command: line }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { field: 'command', ...details } });
    expect(backend.terminals).toHaveLength(0);
  });

  test.each([
    "bash -c 'ls | grep x'",
    'f() { ls; }',
    'x=1; ls $x',
    'ls | grep -c x; echo "$?"',
    'cd /tmp && ls',
  ])('%j passes', async (line) => {
    host = allow();
    await expect(host.createTerminal({ sessionId: S, command: line })).resolves.toHaveProperty('terminalId');
  });

  test('IFS assignments pass once the host allows IFS; deny-only policies do not look at assignments', async () => {
    host = allow({ envPolicy: { allow: ['IFS'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'IFS=, read -r a b < f; echo "$a"' })).resolves.toHaveProperty('terminalId');
    const denyOnly = newHost({ commandPolicy: { deny: ['rm'] } });
    await expect(denyOnly.createTerminal({ sessionId: S, command: 'PATH=/tmp/x ls; alias x=y; echo a | sh' })).resolves.toHaveProperty('terminalId');
    await denyOnly.close();
  });
});

describe('the shell used for shell lines', () => {
  test("a bare name is resolved once through the host's PATH; an unknown one is ERR_INVALID_ARG", async () => {
    host = newHost({ shell: 'sh' });
    await host.createTerminal({ sessionId: S, command: 'ls', env: [{ name: 'PATH', value: bin }] });
    expect(backend.terminals[0]!.options!.shell).toBe(jsResolveProgram('sh'));
    expect(path.isAbsolute(backend.terminals[0]!.options!.shell as string)).toBe(true);
    expect(() => new TerminalHost({ shell: 'no-such-shell-xyz' })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^options\.shell:/) }));
    const relative = newHost({ shell: './build', cwd: bin });
    await relative.createTerminal({ sessionId: S, command: 'x' });
    expect(backend.terminals[1]!.options!.shell).toBe(path.join(bin, 'build'));
    await relative.close();
  });
});
