// Issue 20 item 1: agents omit `cwd` in terminal/create (kimi-cli always does) and mean the session's
// directory. The host learns each session's cwd from the session/new, session/load and session/resume the
// client sends (registerTerminalHandlers, createTestClient), or from setSessionCwd / cwdForSession.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agent, client, PROTOCOL_VERSION, type AgentApp } from '@agentclientprotocol/sdk';
import { registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { trackSessionCwds } from '../ts/session-cwds';
import { createTestClient } from '../ts/testclient';
import { connectOverStreams } from './fixtures/acp-wire';
import { fakeBackend } from './fixtures/fake-terminal';

let root: string;
let dirA: string;
let dirB: string;

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-session-cwd-')));
  dirA = path.join(root, 'a');
  dirB = path.join(root, 'b');
  fs.mkdirSync(dirA);
  fs.mkdirSync(dirB);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/**
 * An agent like kimi-cli: `session/new` answers a fresh id; each prompt runs its text as a shell line in
 * a terminal created WITHOUT cwd (unless the text starts with `cwd=<dir> `), and answers with the output
 * or the error as the agent message. `results` collects them per session.
 */
function cwdlessAgent(results: Map<string, string[]>): AgentApp {
  let next = 1;
  return agent({ name: 'cwdless-agent' })
    .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: true } }))
    .onRequest('session/new', () => ({ sessionId: `s-${next++}` }))
    .onRequest('session/load', () => ({}))
    .onRequest('session/prompt', async (ctx) => {
      const { sessionId } = ctx.params;
      const block = ctx.params.prompt[0];
      let command = block?.type === 'text' ? block.text : 'pwd';
      let cwd: string | undefined;
      const explicit = /^cwd=(\S+) (.*)$/.exec(command);
      if (explicit) [, cwd, command] = explicit as unknown as [string, string, string];
      const list = results.get(sessionId) ?? [];
      results.set(sessionId, list);
      try {
        const terminal = await ctx.client.createTerminal({ sessionId, command, ...(cwd ? { cwd } : {}) });
        await terminal.waitForExit();
        const { output } = await terminal.currentOutput();
        await terminal.release();
        list.push(output.trim());
      } catch (error) {
        list.push(`error ${(error as { data?: { code?: string } }).data?.code}`);
      }
      return { stopReason: 'end_turn' };
    });
}

test("an agent omitting cwd runs in each session's own directory (createTestClient, in process)", async () => {
  const results = new Map<string, string[]>();
  await using tc = await createTestClient({ host: { cwd: root } });
  const { agent: ctx } = await tc.connect(cwdlessAgent(results));
  const a = await ctx.buildSession(dirA).start();
  const b = await ctx.buildSession(dirB).start();
  await a.prompt('pwd');
  await b.prompt('pwd');
  await a.prompt('pwd');
  // The request's own cwd wins over the session's.
  await b.prompt(`cwd=${dirA} pwd`);
  expect(results.get(a.sessionId)).toEqual([dirA, dirA]);
  expect(results.get(b.sessionId)).toEqual([dirB, dirA]);
  expect(tc.host.sessionCwdOf(a.sessionId)).toBe(dirA);
});

test('the same over an ndjson byte stream (registerTerminalHandlers), and session/load teaches its cwd too', async () => {
  const results = new Map<string, string[]>();
  const host = new TerminalHost({ cwd: root });
  const wire = connectOverStreams(host, client({ name: 'c' }), cwdlessAgent(results));
  try {
    const ctx = wire.clientConnection.agent;
    await ctx.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
    const { sessionId: first } = await ctx.request('session/new', { cwd: dirA, mcpServers: [] });
    await ctx.request('session/load', { sessionId: 'old-session', cwd: dirB, mcpServers: [] });
    const { sessionId: other } = await ctx.request('session/new', { cwd: dirB, mcpServers: [] });
    for (const sessionId of [first, 'old-session', other, 'never-announced']) {
      await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'pwd' }] });
    }
    expect(results.get(first)).toEqual([dirA]);
    expect(results.get('old-session')).toEqual([dirB]);
    expect(results.get(other)).toEqual([dirB]);
    // A session the client never announced falls back to the host's cwd.
    expect(results.get('never-announced')).toEqual([root]);
  } finally {
    wire.agentConnection.close();
    wire.clientConnection.close();
    await host.close();
  }
});

test('app.connectWith(agentApp, op) learns the sessions too, and closes the in-process agent after op', async () => {
  const results = new Map<string, string[]>();
  const host = new TerminalHost({ cwd: root });
  const app = registerTerminalHandlers(client({ name: 'c' }), host);
  let agentClosed: Promise<void> | undefined;
  const agentApp = cwdlessAgent(results).onConnect((connection) => {
    agentClosed = connection.closed;
  });
  try {
    await app.connectWith(agentApp, async (ctx) => {
      await ctx.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
      const { sessionId } = await ctx.request('session/new', { cwd: dirB, mcpServers: [] });
      await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'pwd' }] });
    });
    expect([...results.values()]).toEqual([[dirB]]);
    await expect(agentClosed).resolves.toBeUndefined();
  } finally {
    await host.close();
  }
});

test('allowedRoots apply to the session directory', async () => {
  const results = new Map<string, string[]>();
  await using tc = await createTestClient({ host: { cwd: dirA, allowedRoots: [dirA] } });
  const { agent: ctx } = await tc.connect(cwdlessAgent(results));
  const outside = await ctx.buildSession(dirB).start();
  const inside = await ctx.buildSession(dirA).start();
  await outside.prompt('pwd');
  await inside.prompt('pwd');
  expect(results.get(outside.sessionId)).toEqual(['error ERR_CWD_OUTSIDE_ROOTS']);
  expect(results.get(inside.sessionId)).toEqual([dirA]);
});

describe('setSessionCwd and cwdForSession (fake backend)', () => {
  test('recorded per session, forgotten by releaseSession and by undefined; a request cwd wins', async () => {
    const backend = fakeBackend();
    await using host = new TerminalHost({ createTerminal: backend.createTerminal, cwd: '/host' });
    host.setSessionCwd('s1', '/one');
    host.setSessionCwd('s2', '/two');
    await host.createTerminal({ sessionId: 's1', command: 'x' });
    await host.createTerminal({ sessionId: 's2', command: 'x', cwd: null });
    await host.createTerminal({ sessionId: 's2', command: 'x', cwd: '/own' });
    await host.releaseSession('s1');
    await host.createTerminal({ sessionId: 's1', command: 'x' });
    host.setSessionCwd('s2', undefined);
    await host.createTerminal({ sessionId: 's2', command: 'x' });
    expect(backend.terminals.map((t) => t.params.cwd)).toEqual(['/one', '/two', '/own', '/host', '/host']);
  });

  test('bad input is ERR_INVALID_ARG naming the field', async () => {
    await using host = new TerminalHost({ createTerminal: fakeBackend().createTerminal });
    expect(() => host.setSessionCwd('s', 'relative/dir')).toThrow(/^cwd: must be an absolute path/);
    expect(() => host.setSessionCwd('', '/x')).toThrow(/^sessionId: must be a non-empty string/);
    expect(() => host.setSessionCwd('s', '/x\0y')).toThrow(/^cwd: contains a NUL byte/);
    expect(() => new TerminalHost({ cwdForSession: '/x' as never })).toThrow(/^options\.cwdForSession: must be a function/);
  });

  test('the hook sees the recorded directory and decides; undefined falls back to the host cwd', async () => {
    const backend = fakeBackend();
    const asked: Array<[string, string | undefined]> = [];
    await using host = new TerminalHost({
      createTerminal: backend.createTerminal,
      cwd: '/host',
      cwdForSession: async (sessionId, known) => {
        asked.push([sessionId, known]);
        if (sessionId === 'mapped') return '/workspaces/mapped';
        if (sessionId === 'bad') return 'not/absolute';
        return known;
      },
    });
    host.setSessionCwd('known', '/known');
    await host.createTerminal({ sessionId: 'mapped', command: 'x' });
    await host.createTerminal({ sessionId: 'known', command: 'x' });
    await host.createTerminal({ sessionId: 'other', command: 'x' });
    await host.createTerminal({ sessionId: 'mapped', command: 'x', cwd: '/own' });
    await expect(host.createTerminal({ sessionId: 'bad', command: 'x' })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/^cwdForSession: must return an absolute path or undefined, got "not\/absolute"/),
    });
    expect(backend.terminals.map((t) => t.params.cwd)).toEqual(['/workspaces/mapped', '/known', '/host', '/own']);
    // Not asked when the request has its own cwd.
    expect(asked).toEqual([['mapped', undefined], ['known', '/known'], ['other', undefined], ['bad', undefined]]);
  });
});

describe('trackSessionCwds (message level)', () => {
  /** Sends `out` through the wrapped writable and `in` through the wrapped readable, in order. */
  async function pass(host: TerminalHost, steps: Array<['out' | 'in', object]>): Promise<void> {
    const toAgent = new TransformStream<object, object>();
    const fromAgent = new TransformStream<object, object>();
    const wrapped = trackSessionCwds({ writable: toAgent.writable, readable: fromAgent.readable } as never, host);
    const writer = wrapped.writable.getWriter();
    const agentSide = toAgent.readable.getReader();
    const agentWriter = fromAgent.writable.getWriter();
    const clientSide = wrapped.readable.getReader();
    for (const [dir, message] of steps) {
      if (dir === 'out') {
        await writer.write(message as never);
        expect((await agentSide.read()).value).toBe(message); // passed on unchanged
      } else {
        await agentWriter.write(message);
        expect((await clientSide.read()).value).toBe(message);
      }
    }
  }

  test('records answered session/new, session/load and session/resume; ignores errors and bad directories', async () => {
    await using host = new TerminalHost({ createTerminal: fakeBackend().createTerminal });
    await pass(host, [
      ['out', { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/a', mcpServers: [] } }],
      ['out', { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/refused', mcpServers: [] } }],
      ['out', { jsonrpc: '2.0', id: 3, method: 'session/new', params: { cwd: 'relative', mcpServers: [] } }],
      ['in', { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'no' } }],
      ['in', { jsonrpc: '2.0', id: 1, result: { sessionId: 'new-1' } }],
      ['in', { jsonrpc: '2.0', id: 3, result: { sessionId: 'new-3' } }],
      ['out', { jsonrpc: '2.0', id: 4, method: 'session/load', params: { sessionId: 'old', cwd: '/b', mcpServers: [] } }],
      ['out', { jsonrpc: '2.0', id: 5, method: 'session/resume', params: { sessionId: 'older', cwd: '/c' } }],
      // An agent request with the same id as a pending one is not a response.
      ['out', { jsonrpc: '2.0', id: 6, method: 'session/new', params: { cwd: '/d', mcpServers: [] } }],
      ['in', { jsonrpc: '2.0', id: 6, method: 'terminal/create', params: { sessionId: 'x', command: 'y' } }],
    ]);
    expect(host.sessionCwdOf('new-1')).toBe('/a');
    expect(host.sessionCwdOf('new-3')).toBeUndefined();
    expect(host.sessionCwdOf('old')).toBe('/b');
    expect(host.sessionCwdOf('older')).toBe('/c');
    expect(host.sessionCwdOf('x')).toBeUndefined();
  });
});
