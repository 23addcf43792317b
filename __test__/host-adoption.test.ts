// Issue 22 (adoption in a few lines): what a client replacing its own terminal manager needs from
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
