// TerminalHost policy: where a command may start (allowedRoots) and the bounds it runs under (limits,
// timeoutMs), on the scripted fake backend with a real temporary tree (fixtures/policy-host.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TerminalHost } from '../ts/host';
import { expectConstructorRejects } from './fixtures/host-assert';
import { backend, events, failure, newHost, outside, root, S, tmp, usePolicyFixtures } from './fixtures/policy-host';

let host: TerminalHost;

usePolicyFixtures();

beforeEach(() => {
  host = newHost();
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
