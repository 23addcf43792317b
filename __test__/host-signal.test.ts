// Every TerminalHost method takes `{ signal }` and reports its calls
// (running/completed/failed). Scripted fake backend, so the moment of the abort relative to the spawn and
// the exit is exact.
import { agent, client } from '@agentclientprotocol/sdk';
import type { TerminalCallEvent } from '../ts/events';
import { registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { fakeBackend, type FakeBackend } from './fixtures/fake-terminal';

const sessionId = 'sess';
let backend: FakeBackend;
let host: TerminalHost;

beforeEach(() => {
  backend = fakeBackend();
  host = new TerminalHost({ createTerminal: backend.createTerminal });
});

afterEach(async () => {
  await host.close();
});

function aborted(reason: unknown = new Error('cancelled by test')): AbortSignal {
  const controller = new AbortController();
  controller.abort(reason);
  return controller.signal;
}

test('a wait whose signal aborts rejects with the reason at once; the command runs on and a later wait works', async () => {
  const { terminalId } = await host.createTerminal({ sessionId, command: 'x' });
  const controller = new AbortController();
  const reason = new Error('agent gave up');
  const wait = host.waitForTerminalExit({ sessionId, terminalId }, { signal: controller.signal });
  controller.abort(reason);
  await expect(wait).rejects.toBe(reason);
  const terminal = backend.terminals[0]!;
  expect(terminal.exited).toBe(false);
  expect(terminal.calls).not.toContain('kill');
  await expect(host.terminalOutput({ sessionId, terminalId })).resolves.toEqual({ output: '', truncated: false });
  const later = host.waitForTerminalExit({ sessionId, terminalId }, { signal: new AbortController().signal });
  terminal.exit({ exitCode: 7, signal: null });
  await expect(later).resolves.toEqual({ exitCode: 7, signal: null });
});

test('an already aborted signal refuses each method before it does anything', async () => {
  const reason = new Error('too late');
  await expect(host.createTerminal({ sessionId, command: 'x' }, { signal: aborted(reason) })).rejects.toBe(reason);
  expect(backend.terminals).toHaveLength(0);
  const { terminalId } = await host.createTerminal({ sessionId, command: 'x' });
  const terminal = backend.terminals[0]!;
  const req = { sessionId, terminalId };
  await expect(host.terminalOutput(req, { signal: aborted(reason) })).rejects.toBe(reason);
  await expect(host.waitForTerminalExit(req, { signal: aborted(reason) })).rejects.toBe(reason);
  await expect(host.killTerminal(req, { signal: aborted(reason) })).rejects.toBe(reason);
  await expect(host.releaseTerminal(req, { signal: aborted(reason) })).rejects.toBe(reason);
  expect(terminal.calls.filter((c) => c === 'kill' || c === 'release' || c === 'currentOutput')).toEqual([]);
  expect(host.liveTerminals).toBe(1);
  // An abort without a reason rejects with the platform's AbortError.
  await expect(host.terminalOutput(req, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
});

test('a create cancelled while its spawn is pending rejects at once and releases what the spawn then starts', async () => {
  const open = backend.hold();
  const controller = new AbortController();
  const reason = new Error('cancelled create');
  const create = host.createTerminal({ sessionId, command: 'x' }, { signal: controller.signal });
  controller.abort(reason);
  await expect(create).rejects.toBe(reason);
  expect(backend.terminals).toHaveLength(0);
  open();
  await new Promise<void>((resolve) => setImmediate(resolve));
  expect(backend.terminals).toHaveLength(1);
  expect(backend.terminals[0]!.released).toBe(true);
  expect(host.liveTerminals).toBe(0);
});

test('a signal that never aborts changes nothing', async () => {
  const { signal } = new AbortController();
  const { terminalId } = await host.createTerminal({ sessionId, command: 'x' }, { signal });
  backend.terminals[0]!.emit('hi');
  await expect(host.terminalOutput({ sessionId, terminalId }, { signal })).resolves.toEqual({ output: 'hi', truncated: false });
  await expect(host.killTerminal({ sessionId, terminalId }, { signal })).resolves.toEqual({});
  await expect(host.waitForTerminalExit({ sessionId, terminalId }, { signal })).resolves.toEqual({ exitCode: null, signal: 'SIGTERM' });
  await expect(host.releaseTerminal({ sessionId, terminalId }, { signal })).resolves.toEqual({});
  expect(backend.terminals[0]!.released).toBe(true);
});

test('a signal that is not an AbortSignal is ERR_INVALID_ARG naming it', async () => {
  const bad = { signal: 'soon' } as unknown as { signal: AbortSignal };
  await expect(host.createTerminal({ sessionId, command: 'x' }, bad)).rejects.toMatchObject({
    code: 'ERR_INVALID_ARG',
    message: expect.stringMatching(/^signal: must be an AbortSignal/),
  });
  await expect(host.waitForTerminalExit({ sessionId, terminalId: 'id' }, bad)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
  expect(backend.terminals).toHaveLength(0);
});

describe('per-call events (onCall)', () => {
  test('each of the five methods, through registerTerminalHandlers, reports running then completed', async () => {
    const calls: TerminalCallEvent[] = [];
    await host.close();
    host = new TerminalHost({ createTerminal: backend.createTerminal, onCall: (e) => void calls.push(e) });
    const conn = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
    try {
      const handle = await conn.client.createTerminal({ sessionId, command: 'build' });
      backend.terminals[0]!.emit('out');
      await handle.currentOutput();
      const wait = handle.waitForExit();
      await new Promise<void>((resolve) => setImmediate(resolve));
      // The wait is still running: a UI can show "waiting".
      expect(calls.at(-1)).toMatchObject({ method: 'terminal/wait_for_exit', phase: 'running', terminalId: handle.id });
      await handle.kill();
      await wait;
      await handle.release();
    } finally {
      conn.close();
    }
    const outcomes = calls.filter((c) => c.phase !== 'running');
    expect(outcomes.map((c) => [c.method, c.phase])).toEqual([
      ['terminal/create', 'completed'],
      ['terminal/output', 'completed'],
      ['terminal/kill', 'completed'],
      ['terminal/wait_for_exit', 'completed'],
      ['terminal/release', 'completed'],
    ]);
    // Every call: one running, then one outcome with the same callId, later.
    for (const outcome of outcomes) {
      const running = calls.filter((c) => c.callId === outcome.callId);
      expect(running.map((c) => c.phase)).toEqual(['running', outcome.phase]);
      expect(outcome.sessionId).toBe(sessionId);
      expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    }
    const id = outcomes[0]!.terminalId;
    expect(id).toMatch(/^term-/);
    expect(calls.find((c) => c.method === 'terminal/create' && c.phase === 'running')!.terminalId).toBeUndefined();
    expect(outcomes.slice(1).every((c) => c.terminalId === id)).toBe(true);
    expect(outcomes[1]).toMatchObject({ truncated: false });
    expect(outcomes[1]!.exitStatus).toBeUndefined();
    expect(outcomes[3]).toMatchObject({ exitStatus: { exitCode: null, signal: 'SIGTERM' } });
    expect(Object.isFrozen(outcomes[0])).toBe(true);
  });

  test('failures and cancellations report failed with the code the caller got', async () => {
    const calls: TerminalCallEvent[] = [];
    host.onCall((e) => void calls.push(e));
    await expect(host.terminalOutput({ sessionId, terminalId: 'nope' })).rejects.toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
    const { terminalId } = await host.createTerminal({ sessionId, command: 'x' });
    const controller = new AbortController();
    const wait = host.waitForTerminalExit({ sessionId, terminalId }, { signal: controller.signal });
    controller.abort(Object.assign(new Error('Request cancelled'), { code: 'ABORT_ERR' }));
    await expect(wait).rejects.toThrow('Request cancelled');
    const failed = calls.filter((c) => c.phase === 'failed');
    expect(failed).toEqual([
      expect.objectContaining({ method: 'terminal/output', terminalId: 'nope', cancelled: false, error: expect.objectContaining({ code: 'ERR_TERMINAL_NOT_FOUND' }) }),
      expect.objectContaining({ method: 'terminal/wait_for_exit', terminalId, cancelled: true, error: { code: 'ABORT_ERR', message: 'Request cancelled' } }),
    ]);
  });

  test('a listener that throws or rejects changes no answer; unsubscribe stops the events', async () => {
    const seen: string[] = [];
    host.onCall(() => {
      throw new Error('UI bug');
    });
    host.onCall(() => Promise.reject(new Error('async UI bug')));
    const off = host.onCall((e) => void seen.push(`${e.method}:${e.phase}`));
    const { terminalId } = await host.createTerminal({ sessionId, command: 'x' });
    off();
    await expect(host.releaseTerminal({ sessionId, terminalId })).resolves.toEqual({});
    expect(seen).toEqual(['terminal/create:running', 'terminal/create:completed']);
    expect(() => host.onCall('x' as never)).toThrow(/^listener: must be a function/);
    expect(() => new TerminalHost({ onCall: 1 as never })).toThrow(/^options\.onCall: must be a function/);
  });
});
