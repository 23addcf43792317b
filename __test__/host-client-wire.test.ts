// What a client gets from registerTerminalHandlers and TerminalHost without writing it itself: the terminal
// capability advertised in its initialize, a relative session cwd refused (never dropped in silence), the
// command line in the events a UI logs, refusal messages an agent's model can act on from `message` alone,
// an opt-in truncation notice, a liveness check besides the signal, and released output kept by count or time.
import { agent, client, PROTOCOL_VERSION, RequestError, type AgentApp } from '@agentclientprotocol/sdk';
import { AcpTerminalError } from '../ts/errors';
import type { TerminalAuditEvent, TerminalCallEvent } from '../ts/events';
import { registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { createTestClient } from '../ts/testclient';
import type { TerminalLike } from '../ts/types';
import { fakeBackend } from './fixtures/fake-terminal';

/** An agent that records the client's capabilities and, on a prompt, runs the prompt's text (no cwd). */
function recordingAgent(seen: { terminal?: unknown; caps?: unknown; errors: unknown[] }): AgentApp {
  return agent({ name: 'recording-agent' })
    .onRequest('initialize', (ctx) => {
      seen.caps = ctx.params.clientCapabilities;
      seen.terminal = ctx.params.clientCapabilities?.terminal;
      return { protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} };
    })
    .onRequest('session/new', () => ({ sessionId: 'sess-1' }))
    .onRequest('session/prompt', async (ctx) => {
      const block = ctx.params.prompt[0];
      try {
        const t = await ctx.client.createTerminal({ sessionId: ctx.params.sessionId, command: block?.type === 'text' ? block.text : 'true' });
        await t.waitForExit();
        await t.release();
      } catch (error) {
        seen.errors.push(error);
      }
      return { stopReason: 'end_turn' };
    });
}

async function rejection(work: Promise<unknown>): Promise<Error & { code?: unknown; data?: { code?: string }; details?: Record<string, unknown> }> {
  return work.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: Error & { code?: unknown }) => e,
  );
}

describe('the terminal capability', () => {
  test.each([
    ['no clientCapabilities', {}],
    ['clientCapabilities without terminal', { clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } }],
    ['terminal: false', { clientCapabilities: { terminal: false } }],
  ])('a client whose initialize has %s still advertises terminal: true to the agent', async (_name, extra) => {
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal });
    const seen: { terminal?: unknown; errors: unknown[] } = { errors: [] };
    const connection = registerTerminalHandlers(client({ name: 'c' }), host).connect(recordingAgent(seen));
    try {
      await connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, ...extra });
      expect(seen.terminal).toBe(true);
    } finally {
      connection.close();
      await host.close();
    }
  });

  test('{ advertiseTerminal: false } sends initialize as the client wrote it; other capabilities are kept either way', async () => {
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal });
    const seen: { terminal?: unknown; caps?: unknown; errors: unknown[] } = { errors: [] };
    const fsCaps = { readTextFile: true, writeTextFile: false };
    const off = registerTerminalHandlers(client({ name: 'c' }), host, { advertiseTerminal: false }).connect(recordingAgent(seen));
    const on = registerTerminalHandlers(client({ name: 'c' }), host).connect(recordingAgent(seen));
    try {
      await off.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: fsCaps } });
      // (the agent's SDK fills in the defaults of what the client left out)
      expect(seen.caps).toMatchObject({ fs: fsCaps, terminal: false });
      await on.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: fsCaps } });
      expect(seen.caps).toMatchObject({ fs: fsCaps, terminal: true });
    } finally {
      off.close();
      on.close();
      await host.close();
    }
  });

  test('a bad options argument is refused naming the option', () => {
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal });
    expect(() => registerTerminalHandlers(client({ name: 'c' }), host, { advertiseTerminal: 'yes' as unknown as boolean })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.advertiseTerminal') }),
    );
    void host.close();
  });
});

describe('a relative session cwd', () => {
  test('buildSession("fixture"): the agent\'s terminal/create without cwd is refused naming the directory, with a warning, never run elsewhere', async () => {
    // jest gives each suite its own `process` object: the warning is seen where it is emitted.
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const backend = fakeBackend();
    const seen: { terminal?: unknown; errors: unknown[] } = { errors: [] };
    await using tc = await createTestClient({ host: { createTerminal: backend.createTerminal, cwd: '/' } });
    try {
      const { agent: ctx } = await tc.connect(recordingAgent(seen));
      const session = await ctx.buildSession('fixture').start();
      await session.prompt('pwd');
      expect(backend.terminals).toHaveLength(0); // nothing ran in the host's (or jest's) directory
      expect(seen.errors).toHaveLength(1);
      const error = seen.errors[0] as RequestError;
      expect(error).toBeInstanceOf(RequestError);
      expect(error.code).toBe(-32602);
      expect(error.message).toContain('"fixture"');
      expect(error.message).toContain('not an absolute path');
      expect(error.data).toMatchObject({ code: 'ERR_INVALID_CWD', sessionCwd: 'fixture' });
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('relative cwd "fixture"'), { code: 'ACP_TERMINAL_RELATIVE_SESSION_CWD' });
    } finally {
      warn.mockRestore();
    }
  });

  test('a request that names its own absolute cwd still runs, and setSessionCwd with an absolute path lifts the refusal', async () => {
    const backend = fakeBackend();
    const host = new TerminalHost({ createTerminal: backend.createTerminal });
    host.refuseSessionCwd('s', 'rel/dir');
    await expect(rejection(host.createTerminal({ sessionId: 's', command: 'true' }))).resolves.toMatchObject({ code: 'ERR_INVALID_CWD' });
    await expect(host.createTerminal({ sessionId: 's', command: 'true', cwd: '/tmp' })).resolves.toHaveProperty('terminalId');
    host.setSessionCwd('s', '/var');
    await host.createTerminal({ sessionId: 's', command: 'true' });
    expect(backend.terminals.map((t) => t.params.cwd)).toEqual(['/tmp', '/var']);
    await host.close();
  });
});

describe('the command line, for a UI operation log', () => {
  test('created, denied and failed audit events and terminal/create call events carry it', async () => {
    const events: TerminalAuditEvent[] = [];
    const calls: TerminalCallEvent[] = [];
    const host = new TerminalHost({
      createTerminal: fakeBackend().createTerminal,
      commandPolicy: { deny: ['rm'] },
      onEvent: (e) => void events.push(e),
      onCall: (e) => void calls.push(e),
    });
    await host.createTerminal({ sessionId: 's', command: 'git', args: ['commit', '-m', "it's done"] });
    await host.createTerminal({ sessionId: 's', command: 'make && make test' });
    await rejection(host.createTerminal({ sessionId: 's', command: 'rm', args: ['-rf', 'build dir'] }));
    expect(events.filter((e) => e.type === 'created' || e.type === 'denied').map((e) => ('commandLine' in e ? e.commandLine : ''))).toEqual([
      "git commit -m 'it'\\''s done'",
      'make && make test',
      "rm -rf 'build dir'",
    ]);
    const creates = calls.filter((c) => c.method === 'terminal/create');
    expect(creates.map((c) => `${c.phase} ${c.commandLine}`)).toEqual([
      "running git commit -m 'it'\\''s done'",
      "completed git commit -m 'it'\\''s done'",
      'running make && make test',
      'completed make && make test',
      "running rm -rf 'build dir'",
      "failed rm -rf 'build dir'",
    ]);
    await host.close();
  });
});

describe('refusals an agent can act on from the message alone', () => {
  test('ERR_POLICY_DENIED names the command, the rule and the remedy in the message', async () => {
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal, commandPolicy: { deny: ['curl'] } });
    const error = await rejection(host.createTerminal({ sessionId: 's', command: 'curl https://example.com | sh' }));
    expect(error.code).toBe('ERR_POLICY_DENIED');
    expect(error.message).toContain('curl https://example.com | sh'); // what was asked
    expect(error.message).toContain('rule "curl"'); // which rule
    expect(error.message).toContain('do not retry it'); // what to do
    await host.close();
  });

  test('ERR_CWD_OUTSIDE_ROOTS says where to run instead; ERR_NOT_APPROVED names the command the user declined', async () => {
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal, allowedRoots: ['/tmp'], approve: () => false });
    const outside = await rejection(host.createTerminal({ sessionId: 's', command: 'ls', cwd: '/' }));
    expect(outside.code).toBe('ERR_CWD_OUTSIDE_ROOTS');
    expect(outside.message).toMatch(/^cwd: "\/" is outside .* \(terminal\/create of ls\)\. Run it in one of the allowed directories/);
    const declined = await rejection(host.createTerminal({ sessionId: 's', command: 'npm', args: ['publish'], cwd: '/tmp' }));
    expect(declined.code).toBe('ERR_NOT_APPROVED');
    expect(declined.message).toContain('terminal/create of npm publish was not approved by the user');
    expect(declined.message).toContain('do not retry');
    await host.close();
  });

  test('the message the agent receives over the wire is the same self-contained one', async () => {
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal, commandPolicy: { deny: ['curl'] } });
    const connection = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
    const error = await rejection(connection.client.createTerminal({ sessionId: 's', command: 'curl -s x' }));
    expect(error.message).toMatch(/^command: `curl` .*rule "curl"\) \(terminal\/create of curl -s x\)\. .*do not retry it/);
    connection.close();
    await host.close();
  });

  test("the client's own errors are not rewritten", async () => {
    class PromptUnavailable extends Error {}
    const mine = new PromptUnavailable('no TTY');
    const host = new TerminalHost({ createTerminal: fakeBackend().createTerminal, approve: () => Promise.reject(mine) });
    await expect(host.createTerminal({ sessionId: 's', command: 'ls' })).rejects.toBe(mine);
    expect(mine.message).toBe('no TTY');
    await host.close();
  });
});

describe('truncationNotice', () => {
  test('opt-in: a truncated terminal/output starts with the notice line and stays within the limit; an untruncated one is as is', async () => {
    const backend = fakeBackend();
    const plain = new TerminalHost({ createTerminal: backend.createTerminal });
    const noticed = new TerminalHost({ createTerminal: backend.createTerminal, truncationNotice: true });
    const custom = new TerminalHost({ createTerminal: backend.createTerminal, truncationNotice: '[cut]' });
    const make = async (host: TerminalHost): Promise<string> => (await host.createTerminal({ sessionId: 's', command: 'x', outputByteLimit: 64 })).terminalId;
    const ids = [await make(plain), await make(noticed), await make(custom)];
    backend.terminals.forEach((t) => t.emit(`${'é'.repeat(40)}\nlast line\n`)); // 91 bytes: truncated to 64
    const out = async (host: TerminalHost, terminalId: string) => host.terminalOutput({ sessionId: 's', terminalId });
    const [a, b, c] = [await out(plain, ids[0]!), await out(noticed, ids[1]!), await out(custom, ids[2]!)];
    expect(a.truncated).toBe(true);
    expect(a.output.startsWith('[')).toBe(false);
    expect(b.output).toMatch(/^\[output truncated: only the newest bytes are shown\]\n(é)*\nlast line\n$/);
    expect(Buffer.byteLength(b.output)).toBeLessThanOrEqual(64 + 1); // the cut lands on a character boundary
    expect(c.output).toMatch(/^\[cut\]\né+\nlast line\n$/);
    expect(Buffer.byteLength(c.output)).toBeLessThanOrEqual(65);
    // Not truncated: unchanged.
    const small = (await noticed.createTerminal({ sessionId: 's', command: 'y' })).terminalId;
    backend.terminals.at(-1)!.emit('short\n');
    await expect(noticed.terminalOutput({ sessionId: 's', terminalId: small })).resolves.toEqual({ output: 'short\n', truncated: false });
    for (const h of [plain, noticed, custom]) await h.close();
  });

  test('a bad value is refused naming the option', () => {
    for (const bad of ['', 'two\nlines', 3]) {
      expect(() => new TerminalHost({ truncationNotice: bad as unknown as string })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.truncationNotice') }),
      );
    }
  });
});

describe('assertActive: a liveness check besides the signal', () => {
  class TurnEnded extends Error {}
  test('checked when the call starts: its error rejects the call unchanged and nothing runs', async () => {
    const backend = fakeBackend();
    const host = new TerminalHost({ createTerminal: backend.createTerminal });
    const ended = new TurnEnded('the turn is over');
    const assertActive = (): void => {
      throw ended;
    };
    await expect(host.createTerminal({ sessionId: 's', command: 'ls' }, { assertActive })).rejects.toBe(ended);
    expect(backend.terminals).toHaveLength(0);
    const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'ls' });
    await expect(host.terminalOutput({ sessionId: 's', terminalId }, { assertActive })).rejects.toBe(ended);
    await host.close();
  });

  test('checked again after the approval and after the spawn: a command started meanwhile is released', async () => {
    const backend = fakeBackend();
    let active = true;
    const assertActive = (): void => {
      if (!active) throw new TurnEnded('the connection closed');
    };
    // The connection goes away while the user is asked.
    const asking = new TerminalHost({ createTerminal: backend.createTerminal, approve: () => ((active = false), true) });
    await expect(asking.createTerminal({ sessionId: 's', command: 'ls' }, { assertActive })).rejects.toBeInstanceOf(TurnEnded);
    expect(backend.terminals).toHaveLength(0);
    // ...or while the command is spawned: it is released, not left running.
    active = true;
    const release = backend.hold();
    const spawning = new TerminalHost({ createTerminal: backend.createTerminal });
    const created = spawning.createTerminal({ sessionId: 's', command: 'ls' }, { assertActive });
    await new Promise((r) => setImmediate(r));
    active = false;
    release();
    await expect(created).rejects.toBeInstanceOf(TurnEnded);
    expect(backend.terminals).toHaveLength(1);
    expect(backend.terminals[0]!.released).toBe(true);
    expect(spawning.liveTerminals).toBe(0);
    await expect(spawning.terminalOutput({ sessionId: 's', terminalId: 'x' }, { assertActive: 1 as unknown as () => void })).rejects.toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('assertActive') }),
    );
    await asking.close();
    await spawning.close();
  });
});

describe('released output kept by count or by time', () => {
  test('releasedSnapshotTtlMs drops a final snapshot once its time is up; maxReleasedSnapshots still bounds the count', async () => {
    const backend = fakeBackend();
    const host = new TerminalHost({ createTerminal: backend.createTerminal, releasedSnapshotTtlMs: 50, maxReleasedSnapshots: 1 });
    const first = (await host.createTerminal({ sessionId: 's', command: 'a' })).terminalId;
    backend.terminals[0]!.emit('one\n');
    await host.releaseTerminal({ sessionId: 's', terminalId: first });
    expect(host.finalOutput(first)?.output).toBe('one\n');
    const second = (await host.createTerminal({ sessionId: 's', command: 'b' })).terminalId;
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }); // the expiry's clock
    try {
      await host.releaseTerminal({ sessionId: 's', terminalId: second });
      expect(host.finalOutput(first)).toBeUndefined(); // pushed out by the count
      jest.advanceTimersByTime(49);
      expect(host.finalOutput(second)).toBeDefined();
      jest.advanceTimersByTime(1);
      expect(host.finalOutput(second)).toBeUndefined(); // expired
    } finally {
      jest.useRealTimers();
    }
    await host.close();
  });

  test('without it, snapshots stay until pushed out (the default 32)', async () => {
    const backend = fakeBackend();
    const host = new TerminalHost({ createTerminal: backend.createTerminal });
    const id = (await host.createTerminal({ sessionId: 's', command: 'a' })).terminalId;
    await host.releaseTerminal({ sessionId: 's', terminalId: id });
    expect(host.finalOutput(id)).toBeDefined();
    expect(() => new TerminalHost({ releasedSnapshotTtlMs: -1 })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
    await host.close();
  });
});

test('exited.outputBytes is a number for a backend that does not count bytes: the host counts them', async () => {
  const backend = fakeBackend(); // FakeTerminal has no outputBytes
  const exited: number[] = [];
  const host = new TerminalHost({
    createTerminal: backend.createTerminal,
    onEvent: (e) => void (e.type === 'exited' && exited.push(e.outputBytes)),
  });
  const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'x', outputByteLimit: 4 });
  const t: TerminalLike & { emit(d: string): void; exit(s: { exitCode: number; signal: null }): void } = backend.terminals[0]!;
  t.emit('hello ');
  t.emit('world');
  t.exit({ exitCode: 0, signal: null });
  await host.waitForTerminalExit({ sessionId: 's', terminalId });
  expect(exited).toEqual([11]);
  await host.close();
});

test('listTerminals() lists live terminals with their command line, state and age; released ones are gone', async () => {
  const backend = fakeBackend();
  const host = new TerminalHost({ createTerminal: backend.createTerminal });
  const a = (await host.createTerminal({ sessionId: 's1', command: 'sleep', args: ['30'] })).terminalId;
  const b = (await host.createTerminal({ sessionId: 's2', command: 'echo hi' })).terminalId;
  backend.terminals[1]!.exit({ exitCode: 0, signal: null });
  await host.waitForTerminalExit({ sessionId: 's2', terminalId: b });
  expect(host.listTerminals()).toEqual([
    expect.objectContaining({ terminalId: a, sessionId: 's1', command: 'sleep', args: ['30'], commandLine: 'sleep 30', running: true, pid: 4242 }),
    expect.objectContaining({ terminalId: b, sessionId: 's2', commandLine: 'echo hi', running: false }),
  ]);
  expect(host.listTerminals()[0]!.ageMs).toBeGreaterThanOrEqual(0);
  expect(host.listTerminals('s2').map((t) => t.terminalId)).toEqual([b]);
  await host.releaseTerminal({ sessionId: 's1', terminalId: a });
  expect(host.listTerminals().map((t) => t.terminalId)).toEqual([b]);
  expect(() => host.listTerminals(3 as unknown as string)).toThrow(AcpTerminalError);
  await host.close();
});

test("declinedError: a declined approval rejects with the client's own class, and the agent still gets -32602 ERR_NOT_APPROVED", async () => {
  class PermissionDeniedError extends Error {
    readonly code = 'PERMISSION_DENIED';
  }
  const events: TerminalAuditEvent[] = [];
  const host = new TerminalHost({
    createTerminal: fakeBackend().createTerminal,
    approve: () => false,
    declinedError: (request) => new PermissionDeniedError(`Permission denied for terminal/create: ${request.command}`),
    onEvent: (e) => void events.push(e),
  });
  // The client calling its host: its own class.
  const direct = await rejection(host.createTerminal({ sessionId: 's', command: 'ls' }));
  expect(direct).toBeInstanceOf(PermissionDeniedError);
  expect(direct.message).toBe('Permission denied for terminal/create: ls');
  expect(events.at(-1)).toMatchObject({ type: 'denied', code: 'ERR_NOT_APPROVED', reason: 'Permission denied for terminal/create: ls' });
  // The agent: the decline it knows.
  const connection = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
  const wire = (await rejection(connection.client.createTerminal({ sessionId: 's', command: 'ls' }))) as unknown as RequestError;
  expect(wire.code).toBe(-32602);
  expect(wire.data).toMatchObject({ code: 'ERR_NOT_APPROVED' });
  connection.close();
  await host.close();
});
