// Issue 22 item 4 / issue 20 item 2: every TerminalHost method takes `{ signal }`. Scripted fake backend,
// so the moment of the abort relative to the spawn and the exit is exact.
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
