// The v2 bridge on a scripted fake terminal: update sequence, byte-exact chunks, repair of missed output,
// cancel, the registry and its terminal/cancel handler, and schema validity of every update.
import { agent as v2Agent, client as v2Client, PROTOCOL_VERSION, type TerminalOutputChunk, type UpdateSessionNotification } from '@agentclientprotocol/sdk/experimental/v2';
import { bridgeTerminalToV2, shellLine, startV2Terminal, V2TerminalRegistry, type V2BridgeOptions } from '../ts/v2';
import { fakeBackend, FakeTerminal } from './fixtures/fake-terminal';
import { v2Schema } from './fixtures/json-schema';
import { replayV2 } from './fixtures/v2-replay';

const schema = v2Schema();
const sessionId = 'v2-session';

function recorder(): { sent: UpdateSessionNotification[]; send: V2BridgeOptions['send'] } {
  const sent: UpdateSessionNotification[] = [];
  return { sent, send: (n) => void sent.push(n) };
}

function fake(): FakeTerminal {
  return new FakeTerminal('t-1', { command: 'x' }, undefined);
}

function expectValid(sent: readonly UpdateSessionNotification[]): void {
  for (const n of sent) expect(schema.validate('UpdateSessionNotification', n)).toEqual([]);
}

test('the schema validator rejects malformed updates (so the validity checks below mean something)', () => {
  expect(schema.validate('UpdateSessionNotification', { sessionId, update: { sessionUpdate: 'terminal_output_chunk', terminalId: 't' } })).not.toEqual([]);
  expect(schema.validate('UpdateSessionNotification', { sessionId, update: { sessionUpdate: 'terminal_output_chunk', terminalId: 't', data: 'not base64!' } })).not.toEqual([]);
  expect(schema.validate('UpdateSessionNotification', { sessionId, update: { sessionUpdate: 'terminal_update', terminalId: 't', size: { cols: 0, rows: 1 } } })).not.toEqual([]);
});

test('first update, chunks byte for byte, final update with exit status; all schema-valid', async () => {
  const t = fake();
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'printf', args: ['a b', "it's"], cwd: '/tmp' });
  const euro = Buffer.from('€');
  t.emit(Buffer.concat([Buffer.from('price: '), euro.subarray(0, 1)]));
  t.emit(Buffer.concat([euro.subarray(1), Buffer.from('\n\x1b[1mbold\x1b[0m\n')]));
  t.exit({ exitCode: 7, signal: null });
  await expect(bridge.done).resolves.toEqual({ exitCode: 7, signal: null });

  expect(sent[0]).toEqual({
    sessionId,
    update: { sessionUpdate: 'terminal_update', terminalId: 't-1', command: `printf 'a b' 'it'\\''s'`, cwd: '/tmp', capabilities: { cancel: {} } },
  });
  expect(sent.slice(1, -1).map((n) => n.update.sessionUpdate)).toEqual(['terminal_output_chunk', 'terminal_output_chunk']);
  expect(sent.at(-1)).toEqual({
    sessionId,
    update: { sessionUpdate: 'terminal_update', terminalId: 't-1', exitStatus: { exitCode: 7, signal: null }, capabilities: null },
  });
  const shown = replayV2(sent).get('t-1')!;
  expect(shown.bytes.equals(Buffer.from('price: €\n\x1b[1mbold\x1b[0m\n'))).toBe(true);
  expect(shown.cancellable).toBe(false);
  expect(bridge.exited).toBe(true);
  expect(t.listenerCount).toBe(0);
  expectValid(sent);
});

test('defaults: terminal id from the handle, cwd of this process, cancellable can be turned off', async () => {
  const t = fake();
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'make', cancellable: false, terminalId: 'shown-id' });
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  expect(sent[0]!.update).toEqual({ sessionUpdate: 'terminal_update', terminalId: 'shown-id', command: 'make', cwd: process.cwd() });
  expect(sent.at(-1)!.update).toEqual({ sessionUpdate: 'terminal_update', terminalId: 'shown-id', exitStatus: { exitCode: 0, signal: null } });
  expectValid(sent);
});

test('output produced before the bridge subscribed is streamed first (replay), no repair needed', async () => {
  const t = fake();
  t.emit('early ', { silent: true });
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'x' });
  t.emit('late');
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  const chunks = sent.filter((n) => n.update.sessionUpdate === 'terminal_output_chunk');
  expect(chunks.map((n) => Buffer.from((n.update as { data: string }).data, 'base64').toString())).toEqual(['early ', 'late']);
  expect(sent.at(-1)!.update).not.toHaveProperty('output');
  expect(replayV2(sent).get('t-1')!.bytes.toString()).toBe('early late');
  expectValid(sent);
});

test('a backend without replay: early output is repaired with a replacement snapshot', async () => {
  const t = fake();
  const plain = t.onOutput.bind(t);
  t.onOutput = (listener) => plain(listener);
  t.emit('early ', { silent: true });
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'x' });
  t.emit('late');
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  expect(sent.at(-1)!.update).toMatchObject({ output: { data: Buffer.from('early late').toString('base64') } });
  expect(replayV2(sent).get('t-1')!.bytes.toString()).toBe('early late');
  expectValid(sent);
});

test('output that was not delivered as chunks before exit is appended as a last chunk', async () => {
  const t = fake();
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'x' });
  t.emit('head ');
  t.emit('tail', { silent: true });
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  const chunks = sent.filter((n) => n.update.sessionUpdate === 'terminal_output_chunk');
  expect(chunks).toHaveLength(2);
  expect(sent.at(-1)!.update).not.toHaveProperty('output');
  expect(replayV2(sent).get('t-1')!.bytes.toString()).toBe('head tail');
});

test('complete streams need no repair, also when the snapshot was truncated', async () => {
  const t = new FakeTerminal('t-1', { command: 'x', outputByteLimit: 4 }, undefined);
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'x' });
  t.emit('0123456789');
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  expect(sent.at(-1)!.update).not.toHaveProperty('output');
  expect(replayV2(sent).get('t-1')!.bytes.toString()).toBe('0123456789');
});

test('invalid UTF-8 output does not trigger a lossy replacement', async () => {
  const t = fake();
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'x' });
  t.emit(Buffer.from([0x61, 0xff, 0x62]));
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  expect(sent.at(-1)!.update).not.toHaveProperty('output');
  expect(replayV2(sent).get('t-1')!.bytes).toEqual(Buffer.from([0x61, 0xff, 0x62]));
});

test('cancel kills the command; after exit it is refused', async () => {
  const t = fake();
  const { sent, send } = recorder();
  const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'sleep 100' });
  await bridge.cancel();
  await expect(bridge.done).resolves.toEqual({ exitCode: null, signal: 'SIGTERM' });
  await expect(bridge.cancel()).rejects.toMatchObject({ code: 'ERR_TERMINAL_EXITED' });
  expect(sent.at(-1)!.update).toMatchObject({ exitStatus: { exitCode: null, signal: 'SIGTERM' } });
  expectValid(sent);
});

test('updates are sent one at a time, in order, even with a slow sink', async () => {
  const t = fake();
  const order: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const bridge = bridgeTerminalToV2(t, {
    sessionId,
    command: 'x',
    send: async (n) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((r) => setImmediate(r));
      order.push(n.update.sessionUpdate === 'terminal_output_chunk' ? Buffer.from((n.update as TerminalOutputChunk).data, 'base64').toString() : 'update');
      inFlight--;
    },
  });
  t.emit('1');
  t.emit('2');
  t.emit('3');
  t.exit({ exitCode: 0, signal: null });
  await bridge.done;
  expect(order).toEqual(['update', '1', '2', '3', 'update']);
  expect(maxInFlight).toBe(1);
});

test('a failing sink rejects done (after the command exited) and stops sending', async () => {
  const t = fake();
  let calls = 0;
  const bridge = bridgeTerminalToV2(t, {
    sessionId,
    command: 'x',
    send: () => {
      calls++;
      throw new Error('connection closed');
    },
  });
  t.emit('a');
  t.exit({ exitCode: 0, signal: null });
  await expect(bridge.done).rejects.toThrow('connection closed');
  expect(calls).toBe(1);
});

const noop = (): void => undefined;
test.each([
  ['sessionId', { sessionId: '', command: 'x', send: noop }],
  ['command', { sessionId, command: '', send: noop }],
  ['send', { sessionId, command: 'x', send: 'no' }],
  ['cwd', { sessionId, command: 'x', send: noop, cwd: 'rel' }],
  ['terminalId', { sessionId, command: 'x', send: noop, terminalId: '' }],
])('bad %s is ERR_INVALID_ARG naming it', (field, options) => {
  let err: unknown;
  try {
    bridgeTerminalToV2(fake(), options as never);
  } catch (e) {
    err = e;
  }
  expect(err).toMatchObject({ code: 'ERR_INVALID_ARG' });
  expect((err as Error).message.startsWith(`${field}:`)).toBe(true);
});

test('shellLine quotes only what needs quoting', () => {
  expect(shellLine('ls -la | wc')).toBe('ls -la | wc');
  expect(shellLine('ls', [])).toBe('ls');
  expect(shellLine('echo', ['plain', 'two words', '$HOME', ''])).toBe(`echo plain 'two words' '$HOME' ''`);
});

test('startV2Terminal creates through the backend and bridges with the request command and cwd', async () => {
  const backend = fakeBackend();
  const { sent, send } = recorder();
  const bridge = await startV2Terminal(
    { sessionId, command: 'git', args: ['status'], cwd: '/repo', outputByteLimit: 10 },
    { send, createTerminal: backend.createTerminal, terminalOptions: { killGraceMs: 5 } },
  );
  expect(backend.terminals[0]!.params).toMatchObject({ command: 'git', args: ['status'], cwd: '/repo', outputByteLimit: 10 });
  expect(backend.terminals[0]!.options).toEqual({ killGraceMs: 5 });
  backend.terminals[0]!.exit({ exitCode: 0, signal: null });
  await bridge.done;
  expect(sent[0]!.update).toMatchObject({ command: 'git status', cwd: '/repo', terminalId: 'fake-1' });
});

describe('V2TerminalRegistry', () => {
  test('cancels a running terminal, forgets it after exit, refuses unknown ids', async () => {
    const registry = new V2TerminalRegistry();
    const t = fake();
    const bridge = registry.add(bridgeTerminalToV2(t, { sessionId, send: () => undefined, command: 'x' }));
    expect(registry.get(sessionId, 't-1')).toBe(bridge);
    await expect(registry.cancel({ sessionId: 'other', terminalId: 't-1' })).rejects.toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
    await expect(registry.cancel({ sessionId, terminalId: 't-1' })).resolves.toEqual({});
    await bridge.done;
    expect(registry.get(sessionId, 't-1')).toBeUndefined();
    await expect(registry.cancel({ sessionId, terminalId: 't-1' })).rejects.toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
    await expect(registry.cancel({ sessionId, terminalId: '' })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
  });

  test('serves terminal/cancel on a v2 AgentApp: accepted for a running terminal, -32602 otherwise', async () => {
    const registry = new V2TerminalRegistry();
    const t = fake();
    const bridge = registry.add(bridgeTerminalToV2(t, { sessionId, send: () => undefined, command: 'x' }));
    const app = registry.register(
      v2Agent({ name: 'v2-agent' }).onRequest('initialize', (ctx) => ({
        protocolVersion: ctx.params.protocolVersion,
        info: { name: 'v2-agent', version: '0.0.0' },
      })),
    );
    const conn = v2Client({ name: 'v2-client' }).connect(app);
    try {
      await conn.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, info: { name: 'v2-client', version: '0.0.0' } });
      await expect(conn.agent.request('terminal/cancel', { sessionId, terminalId: 't-1' })).resolves.toBeDefined();
      await expect(bridge.done).resolves.toMatchObject({ signal: 'SIGTERM' });
      const err = (await conn.agent.request('terminal/cancel', { sessionId, terminalId: 't-1' }).catch((e: unknown) => e)) as {
        code: number;
        message: string;
      };
      expect(err.code).toBe(-32602);
      expect(err.message).toMatch(/t-1/);
    } finally {
      conn.close();
    }
  });
});

/** A fake pty terminal: records resizes; `failResize` makes the next one reject. */
class FakePty extends FakeTerminal {
  readonly isPty = true;
  readonly sizes: Array<[number, number]> = [];
  failResize = false;
  async resize(cols: number, rows: number): Promise<void> {
    if (this.failResize) throw Object.assign(new Error('terminal t-1 was released'), { code: 'ERR_TERMINAL_RELEASED' });
    this.sizes.push([cols, rows]);
  }
}

describe('pty size: announced in the updates, changed by resize', () => {
  test('size in the first terminal_update and a terminal_update on each resize, before later output; all schema-valid', async () => {
    const t = new FakePty('t-1', { command: 'top' }, undefined);
    const { sent, send } = recorder();
    const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'top', cwd: '/tmp', size: { cols: 100, rows: 30 } });
    t.emit('at 100x30');
    await bridge.resize(120, 40);
    t.emit('at 120x40');
    await bridge.resize(80, 24);
    t.exit({ exitCode: 0, signal: null });
    await bridge.done;
    expect(t.sizes).toEqual([[120, 40], [80, 24]]);
    expect(sent[0]!.update).toEqual({
      sessionUpdate: 'terminal_update',
      terminalId: 't-1',
      command: 'top',
      cwd: '/tmp',
      size: { cols: 100, rows: 30 },
      capabilities: { cancel: {} },
    });
    const shape = sent.map(({ update }) =>
      update.sessionUpdate === 'terminal_output_chunk'
        ? Buffer.from((update as TerminalOutputChunk).data, 'base64').toString()
        : JSON.stringify((update as { size?: unknown }).size ?? null),
    );
    expect(shape).toEqual([
      '{"cols":100,"rows":30}',
      'at 100x30',
      '{"cols":120,"rows":40}',
      'at 120x40',
      '{"cols":80,"rows":24}',
      'null', // the final update (exit status) leaves the size as it is
    ]);
    expect(sent.at(-1)!.update).not.toHaveProperty('size');
    expect(replayV2(sent).get('t-1')!.size).toEqual({ cols: 80, rows: 24 });
    expectValid(sent);
  });

  test('resize refuses bad sizes, a terminal that is not a pty and an exited one; a failed resize restores the size', async () => {
    const t = new FakePty('t-1', { command: 'x' }, undefined);
    const { sent, send } = recorder();
    const bridge = bridgeTerminalToV2(t, { sessionId, send, command: 'x', size: { cols: 100, rows: 30 } });
    await expect(bridge.resize(0, 10)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^cols: must be an integer from 1 to 65535, got 0/) });
    await expect(bridge.resize(10, 65536)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^rows:/) });
    await expect(bridge.resize(10.5, 10)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
    t.failResize = true;
    await expect(bridge.resize(50, 20)).rejects.toMatchObject({ code: 'ERR_TERMINAL_RELEASED' });
    t.failResize = false;
    t.exit({ exitCode: 0, signal: null });
    await bridge.done;
    await expect(bridge.resize(50, 20)).rejects.toMatchObject({ code: 'ERR_TERMINAL_EXITED' });
    const sizes = sent.filter((n) => 'size' in n.update).map((n) => (n.update as { size: unknown }).size);
    expect(sizes).toEqual([{ cols: 100, rows: 30 }, { cols: 50, rows: 20 }, { cols: 100, rows: 30 }]);
    expect(replayV2(sent).get('t-1')!.size).toEqual({ cols: 100, rows: 30 });
    expectValid(sent);

    const pipe = fake();
    const plain = bridgeTerminalToV2(pipe, { sessionId, send, command: 'x' });
    await expect(plain.resize(80, 24)).rejects.toMatchObject({ code: 'ERR_NOT_A_PTY' });
    expect(() => bridgeTerminalToV2(pipe, { sessionId, send, command: 'x', size: { cols: 80, rows: 0 } })).toThrow(/^size\.rows: must be an integer/);
    pipe.exit({ exitCode: 0, signal: null });
    await plain.done;
  });

  test('startV2Terminal with pty: the size reaches the backend and the first update; no pty, no size', async () => {
    const backend = fakeBackend();
    const { sent, send } = recorder();
    const bridge = await startV2Terminal({ sessionId, command: 'x' }, { send, createTerminal: backend.createTerminal, pty: { cols: 132 } });
    expect(backend.terminals[0]!.options).toMatchObject({ pty: { cols: 132, rows: 24 } });
    expect(sent[0]!.update).toMatchObject({ size: { cols: 132, rows: 24 } });
    backend.terminals[0]!.exit({ exitCode: 0, signal: null });
    await bridge.done;
    const plain = await startV2Terminal({ sessionId, command: 'y' }, { send, createTerminal: backend.createTerminal });
    expect(sent.at(-1)!.update).not.toHaveProperty('size');
    backend.terminals[1]!.exit({ exitCode: 0, signal: null });
    await plain.done;
    await expect(startV2Terminal({ sessionId, command: 'z' }, { send, createTerminal: backend.createTerminal, pty: { rows: 70000 } })).rejects.toThrow(/^pty\.rows:/);
    expectValid(sent);
  });
});
