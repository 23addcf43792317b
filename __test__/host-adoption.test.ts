// Adoption in a few lines: what a client replacing its own terminal manager needs from
// TerminalHost: arg-less requests run as the client means them (`argless`), the client's own approval
// errors and cancel signal, a host that outlives an agent (`releaseAll`, lenient release), lenient
// numbers on request (`maxTerminals: Infinity`, `clampLimits`), and an ENOENT that names the program
// without telling the agent the host's PATH.
import { agent, client, type AgentConnection } from '@agentclientprotocol/sdk';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { INVALID_PARAMS, registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { createTerminal } from '../ts/index';
import type { TerminalAuditEvent } from '../ts/events';
import { fakeBackend, type FakeBackend } from './fixtures/fake-terminal';

const sessionId = 'sess';
let tmp: string;
let backend: FakeBackend;
const hosts: TerminalHost[] = [];

/** A host on a fresh fake backend (nothing runs), closed after the test. */
function fakeHost(options: ConstructorParameters<typeof TerminalHost>[0] = {}): TerminalHost {
  const host = new TerminalHost({ createTerminal: backend.createTerminal, ...options });
  hosts.push(host);
  return host;
}

beforeEach(() => {
  backend = fakeBackend();
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-adopt-')));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Waits (turn by turn) until `condition()` holds; fails after 10 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${String(condition)}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function rejection(work: Promise<unknown>): Promise<Error & { code: unknown; details?: Record<string, unknown>; data?: unknown }> {
  return work.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error & { code: unknown },
  );
}

describe('ENOENT names the program; the searched PATH is in details/data only', () => {
  const searched = '/nonexistent-a:/nonexistent-b';

  test('createTerminal', async () => {
    const err = await rejection(
      createTerminal({ command: 'no-such-program-xyz', args: ['a'], env: [{ name: 'PATH', value: searched }] }),
    );
    expect(err.code).toBe('ENOENT');
    expect(err.message).toContain('no-such-program-xyz');
    expect(err.message).not.toContain('/nonexistent-a');
    expect(err.details).toEqual({ program: 'no-such-program-xyz', path: searched });
  });

  test('over the wire (registerTerminalHandlers on the native backend)', async () => {
    const host = new TerminalHost({ env: { PATH: searched } });
    const conn: AgentConnection = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
    try {
      const err = await rejection(conn.client.createTerminal({ sessionId, command: 'no-such-program-xyz', args: ['a'] }));
      expect(err.code).toBe(INVALID_PARAMS);
      expect(err.message).toContain('no-such-program-xyz');
      expect(err.message).not.toContain('/nonexistent-a');
      expect(err.data).toEqual({ code: 'ENOENT', program: 'no-such-program-xyz', path: searched });
    } finally {
      conn.close();
      await host.close();
    }
  });
});

describe('a host that outlives an agent', () => {
  test('releaseAll() releases every terminal of every session and the host stays open', async () => {
    const events: TerminalAuditEvent[] = [];
    const host = fakeHost({ onEvent: (e) => void events.push(e) });
    const a = await host.createTerminal({ sessionId: 'one', command: 'x' });
    const b = await host.createTerminal({ sessionId: 'two', command: 'y' });
    await host.releaseAll();
    expect(host.liveTerminals).toBe(0);
    expect(host.isClosed).toBe(false);
    expect(backend.terminals.map((t) => t.released)).toEqual([true, true]);
    expect(events.filter((e) => e.type === 'released').map((e) => [e.terminalId, e.type === 'released' && e.reason])).toEqual([
      [a.terminalId, 'all'],
      [b.terminalId, 'all'],
    ]);
    // The next agent on the same host.
    const c = await host.createTerminal({ sessionId: 'three', command: 'z' });
    expect(host.terminal(c.terminalId)).toBe(backend.terminals[2]);
    await expect(host.terminalOutput({ sessionId: 'one', terminalId: a.terminalId })).rejects.toMatchObject({
      code: 'ERR_TERMINAL_NOT_FOUND',
    });
  });

  test('releasing an id the host never issued: ERR_TERMINAL_NOT_FOUND by default, {} under ignoreUnknownRelease', async () => {
    const strict = fakeHost();
    await expect(strict.releaseTerminal({ sessionId, terminalId: 'never-issued' })).rejects.toMatchObject({
      code: 'ERR_TERMINAL_NOT_FOUND',
    });
    const lenient = fakeHost({ ignoreUnknownRelease: true });
    await expect(lenient.releaseTerminal({ sessionId, terminalId: 'never-issued' })).resolves.toEqual({});
    // Another session's terminal is "unknown" to this session: answered {}, and left alive.
    const other = await lenient.createTerminal({ sessionId: 'other', command: 'x' });
    await expect(lenient.releaseTerminal({ sessionId, terminalId: other.terminalId })).resolves.toEqual({});
    expect(lenient.terminal(other.terminalId)).toBeDefined();
    expect(backend.terminals[0]!.released).toBe(false);
    // The other requests stay strict.
    await expect(lenient.terminalOutput({ sessionId, terminalId: 'never-issued' })).rejects.toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND' });
    expect(() => fakeHost({ ignoreUnknownRelease: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^options\.ignoreUnknownRelease:/) }),
    );
  });
});

describe('lenient numbers, on request', () => {
  test('maxTerminals: Infinity is no bound (other non-integers are still refused)', async () => {
    const host = fakeHost({ maxTerminals: Infinity });
    for (let i = 0; i < 70; i++) await host.createTerminal({ sessionId, command: 'x' }); // past the default 64
    expect(host.liveTerminals).toBe(70);
    for (const maxTerminals of [-Infinity, Number.NaN, 2.5, 0]) {
      expect(() => fakeHost({ maxTerminals })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^options\.maxTerminals:/) }));
    }
  });

  test.each([
    [1.9, 1],
    [-5, 0],
    [Infinity, Number.MAX_SAFE_INTEGER],
  ])('clampLimits: a request outputByteLimit of %p runs with %p (refused without clampLimits)', async (given, applied) => {
    const strict = fakeHost();
    await expect(strict.createTerminal({ sessionId, command: 'x', outputByteLimit: given })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/^outputByteLimit:/),
    });
    const lenient = fakeHost({ clampLimits: true });
    await lenient.createTerminal({ sessionId, command: 'x', outputByteLimit: given });
    expect(backend.terminals[0]!.params.outputByteLimit).toBe(applied);
  });

  test('over the wire too (the SDK schema would refuse a fractional limit before the host): clamped, or refused naming the field', async () => {
    for (const clampLimits of [true, false]) {
      const host = fakeHost({ clampLimits });
      const conn = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
      try {
        const answer = conn.client.request('terminal/create', { sessionId, command: 'x', outputByteLimit: 1.5 });
        if (clampLimits) {
          await expect(answer).resolves.toHaveProperty('terminalId');
          expect(backend.terminals[0]!.params.outputByteLimit).toBe(1);
        } else {
          await expect(answer).rejects.toMatchObject({
            code: INVALID_PARAMS,
            message: expect.stringMatching(/^outputByteLimit:/),
            data: { code: 'ERR_INVALID_ARG', field: 'outputByteLimit' },
          });
        }
      } finally {
        conn.close();
      }
    }
  });

  test('clampLimits: killGraceMs is clamped too; a string or NaN is still refused', async () => {
    expect(() => fakeHost({ killGraceMs: 2.5 })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
    const host = fakeHost({ clampLimits: true, killGraceMs: -3 });
    await host.createTerminal({ sessionId, command: 'x' });
    expect(backend.terminals[0]!.options).toMatchObject({ killGraceMs: 0 });
    const grace = fakeHost({ clampLimits: true, killGraceMs: 2.5 });
    await grace.createTerminal({ sessionId, command: 'x' });
    expect(backend.terminals[1]!.options).toMatchObject({ killGraceMs: 2 });
    await expect(grace.createTerminal({ sessionId, command: 'x', outputByteLimit: '10' as never })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/^outputByteLimit:/),
    });
    await expect(grace.createTerminal({ sessionId, command: 'x', outputByteLimit: Number.NaN })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
    });
    expect(() => fakeHost({ clampLimits: 1 as never })).toThrow(expect.objectContaining({ message: expect.stringMatching(/^options\.clampLimits:/) }));
  });
});

describe("argless: 'shell' | 'auto'", () => {
  let x: string;
  let spaced: string;
  beforeAll(() => {
    x = path.join(tmp, 'x');
    fs.mkdirSync(x, { recursive: true });
    // Two programs: the one asked for (its path has spaces) and the one a shell line finds instead.
    spaced = path.join(x, 'tool with space');
    fs.writeFileSync(spaced, '#!/bin/sh\necho "ran the tool with space ($#)"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(x, 'tool'), '#!/bin/sh\necho "ran tool with $# arguments: $*"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(x, 'hello'), '#!/bin/sh\necho "hello ($0)"\n', { mode: 0o755 });
  });

  /** Runs `request` on a native host with `options`; resolves with its output once it exited. */
  async function output(options: ConstructorParameters<typeof TerminalHost>[0], request: { command: string; args?: string[] }): Promise<string> {
    const host = new TerminalHost(options);
    hosts.push(host);
    const { terminalId } = await host.createTerminal({ sessionId, ...request });
    await host.waitForTerminalExit({ sessionId, terminalId });
    return (await host.terminalOutput({ sessionId, terminalId })).output;
  }

  test("an existing executable whose path has spaces runs under 'auto' (and is split under 'shell')", async () => {
    await expect(output({}, { command: spaced })).resolves.toBe('ran tool with 2 arguments: with space\n');
    await expect(output({ argless: 'shell' }, { command: spaced })).resolves.toBe('ran tool with 2 arguments: with space\n');
    await expect(output({ argless: 'auto' }, { command: spaced })).resolves.toBe('ran the tool with space (0)\n');
    await expect(output({ argless: 'auto' }, { command: spaced, args: [] })).resolves.toBe('ran the tool with space (0)\n');
    // Relative to the cwd too.
    await expect(output({ argless: 'auto', cwd: x }, { command: './tool with space' })).resolves.toBe('ran the tool with space (0)\n');
  });

  test("'auto': a bare name found in PATH runs without a shell; shell syntax, builtins and unknown names stay shell lines", async () => {
    const env = { PATH: `${x}:/usr/bin:/bin` };
    await expect(output({ argless: 'auto', env }, { command: 'hello' })).resolves.toBe(`hello (${path.join(x, 'hello')})\n`);
    await expect(output({ argless: 'auto', env }, { command: 'hello | tr a-z A-Z' })).resolves.toBe(`HELLO (${path.join(x, 'hello').toUpperCase()})\n`);
    await expect(output({ argless: 'auto', env }, { command: 'cd /' })).resolves.toBe('');
    await expect(output({ argless: 'auto', env }, { command: 'umask' })).resolves.toMatch(/^0\d{3}\n$/); // a builtin only
    await expect(output({ argless: 'auto', env }, { command: 'no-such-program-xyz' })).resolves.toMatch(/not found/); // the shell says so
    // Which of these ran without a shell: what the backend got.
    const host = fakeHost({ argless: 'auto', env });
    for (const command of ['hello', 'hello | tr a-z A-Z', 'cd /', 'umask', 'no-such-program-xyz', 'hello;']) {
      await host.createTerminal({ sessionId, command });
    }
    expect(backend.terminals.map((t) => [t.params.command, t.options?.shell])).toEqual([
      [path.join(x, 'hello'), false],
      ['hello | tr a-z A-Z', undefined],
      ['cd /', undefined],
      ['umask', undefined],
      ['no-such-program-xyz', undefined],
      ['hello;', undefined],
    ]);
  });

  // docs/replacing-a-terminal-manager.md lists these three as where 'auto' and acpx 0.19 part: acpx refuses
  // the create (ENOENT, ENOENT, EACCES), the host runs a shell line whose exit status says the same.
  test("'auto' where acpx refuses the create: an unknown bare name, args: [] with a shell line, a non-executable file", async () => {
    const notExecutable = path.join(x, 'notes.txt');
    fs.writeFileSync(notExecutable, 'echo should not run\n', { mode: 0o644 });
    const run = async (request: { command: string; args?: string[] }): Promise<{ output: string; exitCode: number | null | undefined }> => {
      const host = new TerminalHost({ argless: 'auto', cwd: x });
      hosts.push(host);
      const { terminalId } = await host.createTerminal({ sessionId, ...request });
      const { exitCode } = await host.waitForTerminalExit({ sessionId, terminalId });
      return { output: (await host.terminalOutput({ sessionId, terminalId })).output, exitCode };
    };
    await expect(run({ command: 'no-such-program-xyz' })).resolves.toEqual({ output: expect.stringMatching(/no-such-program-xyz: .*not found/), exitCode: 127 });
    await expect(run({ command: 'echo one && echo two', args: [] })).resolves.toEqual({ output: 'one\ntwo\n', exitCode: 0 });
    await expect(run({ command: './notes.txt' })).resolves.toEqual({ output: expect.stringMatching(/notes\.txt: .*[Pp]ermission denied/), exitCode: 126 });
  });

  test('what the backend gets: the resolved program and shell: false for a direct run, the line as is otherwise', async () => {
    const host = fakeHost({ argless: 'auto' });
    await host.createTerminal({ sessionId, command: spaced });
    await host.createTerminal({ sessionId, command: `${spaced} --flag` });
    expect(backend.terminals[0]!.params.command).toBe(spaced);
    expect(backend.terminals[0]!.options).toMatchObject({ shell: false });
    expect(backend.terminals[1]!.params.command).toBe(`${spaced} --flag`);
    expect(backend.terminals[1]!.options?.shell).toBeUndefined();
  });

  test('per request: a function chooses', async () => {
    const host = fakeHost({ argless: (request) => (request.sessionId === 'direct' ? 'auto' : 'shell') });
    await host.createTerminal({ sessionId: 'direct', command: spaced });
    await host.createTerminal({ sessionId: 'lines', command: spaced });
    expect(backend.terminals.map((t) => t.options?.shell)).toEqual([false, undefined]);
    const bad = fakeHost({ argless: () => 'bash' as never });
    await expect(bad.createTerminal({ sessionId, command: 'x' })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/^options\.argless:/),
    });
    expect(() => fakeHost({ argless: 'direct' as never })).toThrow(expect.objectContaining({ message: expect.stringMatching(/^options\.argless:/) }));
  });

  test('the command policy judges what really runs, in both modes', async () => {
    // Denying the program asked for: refused under 'auto' (it would run), not under 'shell' (it would not).
    const deny = { deny: ['tool with space'] };
    await expect(fakeHost({ argless: 'auto', commandPolicy: deny }).createTerminal({ sessionId, command: spaced })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
    });
    await expect(fakeHost({ argless: 'shell', commandPolicy: deny }).createTerminal({ sessionId, command: spaced })).resolves.toBeDefined();
    // Denying the program a shell line would run instead: the reverse.
    const denyTool = { deny: ['tool'] };
    await expect(fakeHost({ argless: 'shell', commandPolicy: denyTool }).createTerminal({ sessionId, command: spaced })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { word: path.join(x, 'tool') },
    });
    await expect(fakeHost({ argless: 'auto', commandPolicy: denyTool }).createTerminal({ sessionId, command: spaced })).resolves.toBeDefined();
    // An allow list of the program asked for: only 'auto' runs it.
    const allow = { allow: [spaced] };
    await expect(fakeHost({ argless: 'auto', commandPolicy: allow }).createTerminal({ sessionId, command: spaced })).resolves.toBeDefined();
    await expect(fakeHost({ argless: 'shell', commandPolicy: allow }).createTerminal({ sessionId, command: spaced })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
    });
    // The approver is told the program that will run.
    const asked: unknown[] = [];
    await fakeHost({ argless: 'auto', approve: (r) => (asked.push(r), true) }).createTerminal({ sessionId, command: spaced });
    expect(asked[0]).toMatchObject({ command: spaced, args: [], program: spaced });
    // A bare name is judged as found where it runs: through the PATH the request gives the command.
    const approving = fakeHost({ argless: 'auto', approve: (r) => (asked.push(r), true) });
    await approving.createTerminal({ sessionId, command: 'hello', env: [{ name: 'PATH', value: x }] });
    expect(asked[1]).toMatchObject({ command: 'hello', program: path.join(x, 'hello') });
    expect(backend.terminals.at(-1)!.params.command).toBe(path.join(x, 'hello'));
  });
});

describe('approve(request, { signal }): the client keeps its own errors', () => {
  class PromptUnavailableError extends Error {
    readonly code = 'PROMPT_UNAVAILABLE';
  }

  test('a throw or a rejection reaches the caller of createTerminal unchanged (a failed event, nothing runs)', async () => {
    const events: TerminalAuditEvent[] = [];
    const thrown = new PromptUnavailableError('no TTY to ask the user');
    for (const approve of [
      () => {
        throw thrown;
      },
      () => Promise.reject(thrown),
    ]) {
      const host = fakeHost({ approve, onEvent: (e) => void events.push(e) });
      await expect(host.createTerminal({ sessionId, command: 'ls' })).rejects.toBe(thrown);
    }
    expect(backend.terminals).toHaveLength(0);
    expect(events.map((e) => [e.type, e.type === 'failed' && e.code])).toEqual([
      ['failed', 'PROMPT_UNAVAILABLE'],
      ['failed', 'PROMPT_UNAVAILABLE'],
    ]);
  });

  test('refusal by false stays ERR_NOT_APPROVED', async () => {
    await expect(fakeHost({ approve: () => false }).createTerminal({ sessionId, command: 'ls' })).rejects.toMatchObject({
      code: 'ERR_NOT_APPROVED',
      details: { reason: 'declined' },
    });
  });

  test("the approver gets a signal, aborted with the caller's reason when the caller cancels", async () => {
    let seen: AbortSignal | undefined;
    const host = fakeHost({
      approve: (_request, { signal }) => {
        seen = signal;
        return new Promise<boolean>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('prompt closed'))));
      },
    });
    const controller = new AbortController();
    const creating = host.createTerminal({ sessionId, command: 'ls' }, { signal: controller.signal });
    await until(() => seen !== undefined);
    expect(seen?.aborted).toBe(false);
    const reason = new Error('cancelled by the agent');
    controller.abort(reason);
    await expect(creating).rejects.toBe(reason);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(reason);
    expect(backend.terminals).toHaveLength(0);
  });

  test('without a caller signal the approver still gets one, aborted when the host closes', async () => {
    let seen: AbortSignal | undefined;
    const host = fakeHost({ approve: (_request, { signal }) => ((seen = signal), new Promise<boolean>(() => undefined)) });
    const creating = host.createTerminal({ sessionId, command: 'ls' });
    creating.catch(() => undefined);
    await until(() => seen !== undefined);
    expect(seen?.aborted).toBe(false);
    await host.close();
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toMatchObject({ code: 'ERR_HOST_CLOSED' });
  });

  test('over the wire: a RequestError the approver throws is sent as is; cancelling the create aborts the prompt', async () => {
    const { RequestError } = await import('@agentclientprotocol/sdk');
    let seen: AbortSignal | undefined;
    const host = fakeHost({
      approve: (request, { signal }) => {
        seen = signal;
        if (request.command === 'refuse') throw new RequestError(-32000, 'authenticate first', { why: 'auth' });
        return new Promise<boolean>(() => undefined);
      },
    });
    const conn = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
    try {
      await expect(conn.client.createTerminal({ sessionId, command: 'refuse' })).rejects.toMatchObject({
        code: -32000,
        message: 'authenticate first',
        data: { why: 'auth' },
      });
      seen = undefined;
      const controller = new AbortController();
      const creating = conn.client.request('terminal/create', { sessionId, command: 'ls' }, { cancellationSignal: controller.signal });
      creating.catch(() => undefined);
      await until(() => seen !== undefined);
      const prompt = seen as AbortSignal | undefined; // set by the approver meanwhile
      expect(prompt?.aborted).toBe(false);
      controller.abort();
      await expect(creating).rejects.toMatchObject({ code: -32800 });
      await until(() => prompt?.aborted === true);
    } finally {
      conn.close();
    }
  });
});
