// TerminalHost behaviour on a scripted fake backend (exact control over output and exit).
import { DEFAULT_OUTPUT_BYTE_LIMIT, TerminalHost, type TerminalCreatedEvent, type TerminalHostOptions } from '../ts/host';
import { fakeBackend, type FakeBackend } from './fixtures/fake-terminal';
import { expectConstructorRejects } from './fixtures/host-assert';

const S1 = 'session-1';
const S2 = 'session-2';

let backend: FakeBackend;
let host: TerminalHost;

function newHost(options: TerminalHostOptions = {}): TerminalHost {
  return new TerminalHost({ createTerminal: backend.createTerminal, ...options });
}

beforeEach(() => {
  backend = fakeBackend();
  host = newHost();
});

afterEach(async () => {
  await host.close();
});

describe('createTerminal', () => {
  test('returns an id whose live terminal is reachable and announced to onCreate', async () => {
    const events: TerminalCreatedEvent[] = [];
    host.onCreate((e) => events.push(e));
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'echo hi' });
    expect(host.terminal(terminalId)).toBe(backend.terminals[0]);
    expect(host.liveTerminals).toBe(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ terminalId, sessionId: S1, terminal: backend.terminals[0] });
    expect(events[0]!.request).toMatchObject({ command: 'echo hi', outputByteLimit: DEFAULT_OUTPUT_BYTE_LIMIT });
  });

  test('an unsubscribed or throwing onCreate listener does not affect creation', async () => {
    const seen: string[] = [];
    const off = host.onCreate((e) => seen.push(e.terminalId));
    host.onCreate(() => {
      throw new Error('ui bug');
    });
    await host.createTerminal({ sessionId: S1, command: 'a' });
    off();
    await expect(host.createTerminal({ sessionId: S1, command: 'b' })).resolves.toHaveProperty('terminalId');
    expect(seen).toHaveLength(1);
  });

  test('passes command, args and cwd through; uses the host cwd only when the request has none', async () => {
    host = newHost({ cwd: '/srv/default' });
    await host.createTerminal({ sessionId: S1, command: 'ls', args: ['-l', 'a b'] });
    await host.createTerminal({ sessionId: S1, command: 'ls', cwd: '/tmp' });
    expect(backend.terminals[0]!.params).toMatchObject({ command: 'ls', args: ['-l', 'a b'], cwd: '/srv/default' });
    expect(backend.terminals[1]!.params.cwd).toBe('/tmp');
  });

  test('without a host cwd the request cwd is left to the backend', async () => {
    await host.createTerminal({ sessionId: S1, command: 'pwd' });
    expect(backend.terminals[0]!.params.cwd).toBeUndefined();
  });

  test('applies the 1 MiB default limit when the agent gives none', async () => {
    await host.createTerminal({ sessionId: S1, command: 'x' });
    await host.createTerminal({ sessionId: S1, command: 'x', outputByteLimit: null });
    expect(backend.terminals.map((t) => t.params.outputByteLimit)).toEqual([1048576, 1048576]);
  });

  test('honours defaultOutputByteLimit and the request limit, clamped to maxOutputByteLimit', async () => {
    host = newHost({ defaultOutputByteLimit: 500, maxOutputByteLimit: 1000 });
    await host.createTerminal({ sessionId: S1, command: 'x' });
    await host.createTerminal({ sessionId: S1, command: 'x', outputByteLimit: 700 });
    await host.createTerminal({ sessionId: S1, command: 'x', outputByteLimit: 5000 });
    await host.createTerminal({ sessionId: S1, command: 'x', outputByteLimit: 0 });
    expect(backend.terminals.map((t) => t.params.outputByteLimit)).toEqual([500, 700, 1000, 0]);
  });

  test('the default limit is clamped to maxOutputByteLimit too', async () => {
    host = newHost({ maxOutputByteLimit: 64 });
    await host.createTerminal({ sessionId: S1, command: 'x' });
    expect(backend.terminals[0]!.params.outputByteLimit).toBe(64);
  });

  test('env: host overlay first, the request wins on the same name', async () => {
    host = newHost({ env: { PAGER: 'cat', KEEP: '1' } });
    await host.createTerminal({ sessionId: S1, command: 'x', env: [{ name: 'PAGER', value: 'less' }, { name: 'NEW', value: '2' }] });
    await host.createTerminal({ sessionId: S1, command: 'x' });
    expect(backend.terminals[0]!.params.env).toEqual([
      { name: 'PAGER', value: 'less' },
      { name: 'KEEP', value: '1' },
      { name: 'NEW', value: '2' },
    ]);
    expect(backend.terminals[1]!.params.env).toEqual([
      { name: 'PAGER', value: 'cat' },
      { name: 'KEEP', value: '1' },
    ]);
  });

  test('killGraceMs, shell and inheritEnv reach the backend options', async () => {
    host = newHost({ killGraceMs: 50, shell: '/bin/bash', inheritEnv: false });
    await host.createTerminal({ sessionId: S1, command: 'x' });
    expect(backend.terminals[0]!.options).toEqual({ killGraceMs: 50, shell: '/bin/bash', inheritEnv: false });
  });

  test('backend errors keep their code', async () => {
    await expect(host.createTerminal({ sessionId: S1, command: 'x', cwd: 'relative' })).rejects.toMatchObject({
      code: 'ERR_INVALID_CWD',
    });
    expect(host.liveTerminals).toBe(0);
  });
});

describe('maxTerminals', () => {
  test('refuses the terminal beyond the limit with a clear error, and accepts again after a release', async () => {
    host = newHost({ maxTerminals: 2 });
    const a = await host.createTerminal({ sessionId: S1, command: 'a' });
    await host.createTerminal({ sessionId: S2, command: 'b' });
    const err = await host.createTerminal({ sessionId: S1, command: 'c' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
    expect((err as Error).message).toMatch(/maxTerminals \(2\)/);
    await host.releaseTerminal({ sessionId: S1, terminalId: a.terminalId });
    await expect(host.createTerminal({ sessionId: S1, command: 'c' })).resolves.toHaveProperty('terminalId');
  });

  test('creations still in flight count against the limit', async () => {
    host = newHost({ maxTerminals: 1 });
    const open = backend.hold();
    const first = host.createTerminal({ sessionId: S1, command: 'a' });
    await expect(host.createTerminal({ sessionId: S1, command: 'b' })).rejects.toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
    open();
    await expect(first).resolves.toHaveProperty('terminalId');
  });

  test('defaults to 64', async () => {
    for (let i = 0; i < 64; i++) await host.createTerminal({ sessionId: S1, command: 'x' });
    await expect(host.createTerminal({ sessionId: S1, command: 'x' })).rejects.toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
  });
});

describe('output, wait, kill', () => {
  test('output has no exitStatus while running and gets it after exit', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    const t = backend.terminals[0]!;
    t.emit('hello ');
    const running = await host.terminalOutput({ sessionId: S1, terminalId });
    expect(running).toEqual({ output: 'hello ', truncated: false });
    expect('exitStatus' in running).toBe(false);
    t.emit('world');
    t.exit({ exitCode: 3, signal: null });
    expect(await host.terminalOutput({ sessionId: S1, terminalId })).toEqual({
      output: 'hello world',
      truncated: false,
      exitStatus: { exitCode: 3, signal: null },
    });
  });

  test('waitForTerminalExit resolves with the exit status', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    const waiting = host.waitForTerminalExit({ sessionId: S1, terminalId });
    backend.terminals[0]!.exit({ exitCode: 0, signal: null });
    await expect(waiting).resolves.toEqual({ exitCode: 0, signal: null });
  });

  test('kill stops the command and the id stays valid', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    await expect(host.killTerminal({ sessionId: S1, terminalId })).resolves.toEqual({});
    await expect(host.waitForTerminalExit({ sessionId: S1, terminalId })).resolves.toEqual({ exitCode: null, signal: 'SIGTERM' });
    await expect(host.terminalOutput({ sessionId: S1, terminalId })).resolves.toHaveProperty('exitStatus');
    expect(backend.terminals[0]!.released).toBe(false);
  });
});

describe('ids and sessions', () => {
  test.each(['terminalOutput', 'waitForTerminalExit', 'killTerminal', 'releaseTerminal'] as const)(
    '%s: an unknown id is ERR_TERMINAL_NOT_FOUND naming terminalId',
    async (method) => {
      const err = await host[method]({ sessionId: S1, terminalId: 'nope' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND', details: { terminalId: 'nope' } });
      expect((err as Error).message).toMatch(/terminalId.*"nope"/);
    },
  );

  test.each(['terminalOutput', 'waitForTerminalExit', 'killTerminal', 'releaseTerminal'] as const)(
    "%s: another session's terminal is treated as unknown and left alone",
    async (method) => {
      const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
      const before = [...backend.terminals[0]!.calls]; // the host's own exit watch
      await expect(host[method]({ sessionId: S2, terminalId })).rejects.toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
      expect(backend.terminals[0]!.calls).toEqual(before);
      expect(host.terminal(terminalId)).toBeDefined();
    },
  );

  test('ids issued by another host are unknown here', async () => {
    const other = newHost();
    const { terminalId } = await other.createTerminal({ sessionId: S1, command: 'x' });
    await other.releaseTerminal({ sessionId: S1, terminalId });
    await expect(host.releaseTerminal({ sessionId: S1, terminalId })).rejects.toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
    await other.close();
  });

  test('ids are unique per host', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await host.createTerminal({ sessionId: S1, command: 'x' })).terminalId);
    expect(ids.size).toBe(5);
  });
});

describe('release', () => {
  test('kills, keeps the final snapshot, frees the terminal; other methods then fail with "released"', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    const t = backend.terminals[0]!;
    t.emit('partial output');
    await expect(host.releaseTerminal({ sessionId: S1, terminalId })).resolves.toEqual({});
    expect(t.released).toBe(true);
    expect(t.calls).toContain('kill');
    expect(host.terminal(terminalId)).toBeUndefined();
    expect(host.liveTerminals).toBe(0);
    expect(host.finalOutput(terminalId)).toEqual({
      output: 'partial output',
      truncated: false,
      exitStatus: { exitCode: null, signal: 'SIGTERM' },
    });
    const err = await host.terminalOutput({ sessionId: S1, terminalId }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
    expect((err as Error).message).toMatch(/released/);
  });

  test('is idempotent, also when two releases race', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    const both = await Promise.all([
      host.releaseTerminal({ sessionId: S1, terminalId }),
      host.releaseTerminal({ sessionId: S1, terminalId }),
    ]);
    expect(both).toEqual([{}, {}]);
    await expect(host.releaseTerminal({ sessionId: S1, terminalId })).resolves.toEqual({});
    expect(backend.terminals[0]!.calls.filter((c) => c === 'release')).toHaveLength(1);
  });

  test('a second release waits for the first to finish', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    const first = host.releaseTerminal({ sessionId: S1, terminalId });
    await host.releaseTerminal({ sessionId: S1, terminalId });
    expect(backend.terminals[0]!.released).toBe(true);
    await first;
  });

  test('keeps at most maxReleasedSnapshots final snapshots, dropping the oldest', async () => {
    host = newHost({ maxReleasedSnapshots: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
      backend.terminals[i]!.emit(`out${i}`);
      await host.releaseTerminal({ sessionId: S1, terminalId });
      ids.push(terminalId);
    }
    expect(host.finalOutput(ids[0]!)).toBeUndefined();
    expect(host.finalOutput(ids[1]!)?.output).toBe('out1');
    expect(host.finalOutput(ids[2]!)?.output).toBe('out2');
  });

  test('finalOutput is undefined for live and unknown terminals', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S1, command: 'x' });
    expect(host.finalOutput(terminalId)).toBeUndefined();
    expect(host.finalOutput('nope')).toBeUndefined();
  });

  test('releaseSession releases exactly that session', async () => {
    const a = await host.createTerminal({ sessionId: S1, command: 'a' });
    const b = await host.createTerminal({ sessionId: S1, command: 'b' });
    const c = await host.createTerminal({ sessionId: S2, command: 'c' });
    await host.releaseSession(S1);
    expect(host.terminal(a.terminalId)).toBeUndefined();
    expect(host.terminal(b.terminalId)).toBeUndefined();
    expect(host.terminal(c.terminalId)).toBeDefined();
    expect(backend.terminals.map((t) => t.released)).toEqual([true, true, false]);
  });
});

describe('close', () => {
  test('releases everything and refuses new terminals', async () => {
    await host.createTerminal({ sessionId: S1, command: 'a' });
    await host.createTerminal({ sessionId: S2, command: 'b' });
    await host.close();
    expect(host.isClosed).toBe(true);
    expect(backend.terminals.every((t) => t.released)).toBe(true);
    await expect(host.createTerminal({ sessionId: S1, command: 'c' })).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
  });

  test('await using releases on scope exit', async () => {
    {
      await using scoped = newHost();
      await scoped.createTerminal({ sessionId: S1, command: 'a' });
    }
    expect(backend.terminals[0]!.released).toBe(true);
  });

  test('a terminal whose creation finishes after close is released and the create fails', async () => {
    const open = backend.hold();
    const creating = host.createTerminal({ sessionId: S1, command: 'a' });
    const closing = host.close();
    open();
    await expect(creating).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
    await closing;
    expect(backend.terminals[0]!.released).toBe(true);
  });
});

describe('validation', () => {
  test.each([
    ['sessionId', { command: 'x' }],
    ['sessionId', { sessionId: '', command: 'x' }],
    ['command', { sessionId: S1, command: '' }],
    ['command', { sessionId: S1, command: 42 }],
    ['args', { sessionId: S1, command: 'x', args: 'a b' }],
    ['args[1]', { sessionId: S1, command: 'x', args: ['a', 2] }],
    ['outputByteLimit', { sessionId: S1, command: 'x', outputByteLimit: -1 }],
    ['outputByteLimit', { sessionId: S1, command: 'x', outputByteLimit: 1.5 }],
    ['outputByteLimit', { sessionId: S1, command: 'x', outputByteLimit: '10' }],
    ['env[0].name', { sessionId: S1, command: 'x', env: [{ name: 'A=B', value: '1' }] }],
    ['env[0].value', { sessionId: S1, command: 'x', env: [{ name: 'A', value: 1 }] }],
    ['params', null],
  ])('createTerminal rejects a bad %s with ERR_INVALID_ARG naming it', async (field, request) => {
    const err = await host.createTerminal(request as never).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_INVALID_ARG' });
    expect((err as Error).message.startsWith(`${field}:`)).toBe(true);
    expect(backend.terminals).toHaveLength(0);
  });

  test.each([
    ['sessionId', { terminalId: 't' }],
    ['terminalId', { sessionId: S1 }],
    ['terminalId', { sessionId: S1, terminalId: 7 }],
  ])('terminal requests reject a bad %s with ERR_INVALID_ARG', async (field, request) => {
    const err = await host.terminalOutput(request as never).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_INVALID_ARG' });
    expect((err as Error).message.startsWith(`${field}:`)).toBe(true);
  });

  test.each([
    ['options.cwd', { cwd: 'relative/dir' }],
    ['options.defaultOutputByteLimit', { defaultOutputByteLimit: -5 }],
    ['options.maxOutputByteLimit', { maxOutputByteLimit: Number.NaN }],
    ['options.maxTerminals', { maxTerminals: 0 }],
    ['options.maxReleasedSnapshots', { maxReleasedSnapshots: 1.5 }],
    ['options.killGraceMs', { killGraceMs: -1 }],
    ['options.env[0].name', { env: { '': 'x' } }],
    ['options.shell', { shell: true }],
    ['options.inheritEnv', { inheritEnv: 'yes' }],
    ['options.createTerminal', { createTerminal: 'native' }],
  ])('the constructor rejects a bad %s', expectConstructorRejects);

  test('releaseSession rejects a non-string session id', async () => {
    await expect(host.releaseSession(undefined as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
  });
});
