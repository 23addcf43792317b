// registerTerminalHandlers: an SDK 2.x agent talks to a ClientApp served by a TerminalHost (in process,
// scripted fake backend), so every JSON-RPC error code can be provoked exactly.
import { agent, client, RequestError, type AgentConnection } from '@agentclientprotocol/sdk';
import { AcpTerminalError } from '../ts/errors';
import { INTERNAL_ERROR, INVALID_PARAMS, jsonRpcCodeFor, registerTerminalHandlers, RESOURCE_NOT_FOUND, toRequestError } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import type { CreateTerminalFn } from '../ts/types';
import { fakeBackend, type FakeBackend } from './fixtures/fake-terminal';

const sessionId = 'sess';
let backend: FakeBackend;
let host: TerminalHost;
let conn: AgentConnection;

function connect(createTerminal: CreateTerminalFn, maxTerminals?: number): void {
  host = new TerminalHost({ createTerminal, ...(maxTerminals ? { maxTerminals } : {}) });
  const app = registerTerminalHandlers(client({ name: 'test-client' }), host);
  conn = agent({ name: 'test-agent' }).connect(app);
}

beforeEach(() => {
  backend = fakeBackend();
  connect(backend.createTerminal);
});

afterEach(async () => {
  conn.close();
  await host.close();
});

async function rpcError(work: Promise<unknown>): Promise<{ code: number; message: string; data: unknown }> {
  const err = await work.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (e: unknown) => e,
  );
  return err as { code: number; message: string; data: unknown };
}

test('the five methods work through the SDK TerminalHandle', async () => {
  const handle = await conn.client.createTerminal({ sessionId, command: 'build', args: ['--all'] });
  expect(host.terminal(handle.id)).toBe(backend.terminals[0]);
  expect(backend.terminals[0]!.params).toMatchObject({ command: 'build', args: ['--all'] });
  backend.terminals[0]!.emit('compiling');
  await expect(handle.currentOutput()).resolves.toEqual({ output: 'compiling', truncated: false });
  await expect(handle.kill()).resolves.toEqual({});
  await expect(handle.waitForExit()).resolves.toEqual({ exitCode: null, signal: 'SIGTERM' });
  await expect(handle.currentOutput()).resolves.toMatchObject({ exitStatus: { exitCode: null, signal: 'SIGTERM' } });
  await handle.release();
  expect(backend.terminals[0]!.released).toBe(true);
  expect(host.finalOutput(handle.id)?.output).toBe('compiling');
});

test('await using releases the terminal', async () => {
  {
    await using handle = await conn.client.createTerminal({ sessionId, command: 'x' });
    backend.terminals[0]!.exit({ exitCode: 0, signal: null });
    await handle.waitForExit();
  }
  expect(backend.terminals[0]!.released).toBe(true);
});

test.each(['terminal/output', 'terminal/wait_for_exit', 'terminal/kill'] as const)(
  '%s on an unknown id answers -32002 naming the id',
  async (method) => {
    const err = await rpcError(conn.client.request(method, { sessionId, terminalId: 'missing-id' }));
    expect(err.code).toBe(RESOURCE_NOT_FOUND);
    expect(err.message).toMatch(/missing-id/);
    expect(err.data).toMatchObject({ code: 'ERR_TERMINAL_NOT_FOUND', terminalId: 'missing-id' });
  },
);

test('a released id answers -32002 and says it was released; release itself stays idempotent', async () => {
  const handle = await conn.client.createTerminal({ sessionId, command: 'x' });
  await handle.release();
  const err = await rpcError(handle.currentOutput());
  expect(err.code).toBe(RESOURCE_NOT_FOUND);
  expect(err.message).toMatch(/released/);
  await expect(conn.client.request('terminal/release', { sessionId, terminalId: handle.id })).resolves.toBeDefined();
});

test("another session's terminal answers -32002", async () => {
  const handle = await conn.client.createTerminal({ sessionId, command: 'x' });
  const err = await rpcError(conn.client.request('terminal/output', { sessionId: 'other', terminalId: handle.id }));
  expect(err.code).toBe(RESOURCE_NOT_FOUND);
  await handle.release();
});

test('a bad request answers -32602 with a message naming the field', async () => {
  const err = await rpcError(
    conn.client.createTerminal({ sessionId, command: 'x', env: [{ name: 'BAD=NAME', value: '1' }] }),
  );
  expect(err.code).toBe(INVALID_PARAMS);
  expect(err.message).toMatch(/^env\[0\]\.name:/);
  expect(err.data).toMatchObject({ code: 'ERR_INVALID_ARG', field: 'env[0].name' });
});

test.each([
  ['ERR_INVALID_CWD', INVALID_PARAMS],
  ['ERR_INVALID_ARG', INVALID_PARAMS],
  ['ENOENT', INVALID_PARAMS],
  ['E2BIG', INVALID_PARAMS],
  ['ERR_POLICY_DENIED', INVALID_PARAMS],
  ['ERR_CWD_OUTSIDE_ROOTS', INVALID_PARAMS],
  ['ERR_NOT_APPROVED', INVALID_PARAMS],
  ['ERR_TERMINAL_RELEASED', RESOURCE_NOT_FOUND],
  ['EMFILE', INTERNAL_ERROR],
])('a backend error %s answers %i with its message', async (code, rpcCode) => {
  const failing: CreateTerminalFn = async () => {
    throw Object.assign(new Error(`backend says ${code}`), { code });
  };
  conn.close();
  await host.close();
  connect(failing);
  const err = await rpcError(conn.client.createTerminal({ sessionId, command: 'x' }));
  expect(err.code).toBe(rpcCode);
  expect(err.message).toBe(`backend says ${code}`);
  expect(err.data).toMatchObject({ code });
});

test('too many terminals answers -32603 with a clear message', async () => {
  conn.close();
  await host.close();
  connect(backend.createTerminal, 1);
  await conn.client.createTerminal({ sessionId, command: 'a' });
  const err = await rpcError(conn.client.createTerminal({ sessionId, command: 'b' }));
  expect(err.code).toBe(INTERNAL_ERROR);
  expect(err.message).toMatch(/too many terminals/);
  expect(err.data).toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS', maxTerminals: 1 });
});

test('toRequestError keeps RequestErrors and maps codes', async () => {
  const original = new RequestError(-32000, 'auth');
  await expect(toRequestError(original)).resolves.toBe(original);
  const mapped = await toRequestError(new AcpTerminalError('ERR_HOST_CLOSED', 'closed'));
  expect(mapped).toBeInstanceOf(RequestError);
  expect(mapped).toMatchObject({ code: INTERNAL_ERROR, message: 'closed', data: { code: 'ERR_HOST_CLOSED' } });
  await expect(toRequestError('plain string')).resolves.toMatchObject({ code: INTERNAL_ERROR, message: 'plain string' });
  expect(jsonRpcCodeFor(undefined)).toBe(INTERNAL_ERROR);
});

test('policy refusals answer -32602 with the reason in the message and data, and an audit event', async () => {
  conn.close();
  await host.close();
  const audit: unknown[] = [];
  host = new TerminalHost({
    createTerminal: backend.createTerminal,
    allowedRoots: ['/tmp'],
    commandPolicy: { deny: ['rm'] },
    approve: (r) => r.command !== 'git push',
    onEvent: (e) => {
      audit.push(e);
    },
  });
  conn = agent({ name: 'test-agent' }).connect(registerTerminalHandlers(client({ name: 'test-client' }), host));

  const outside = await rpcError(conn.client.createTerminal({ sessionId, command: 'ls', cwd: '/' }));
  expect(outside.code).toBe(INVALID_PARAMS);
  expect(outside.message).toMatch(/^cwd: "\/" is outside the directories this client allows/);
  expect(outside.message).toContain('(terminal/create of ls). Run it in one of the allowed directories');
  expect(outside.data).toMatchObject({ code: 'ERR_CWD_OUTSIDE_ROOTS', resolved: '/' });

  const denied = await rpcError(conn.client.createTerminal({ sessionId, command: 'cd x && rm -rf y', cwd: '/tmp' }));
  expect(denied.code).toBe(INVALID_PARAMS);
  expect(denied.message).toMatch(/`rm` .*is denied by this client's command policy/);
  expect(denied.data).toMatchObject({ code: 'ERR_POLICY_DENIED', reason: 'deny-rule', word: 'rm' });

  const declined = await rpcError(conn.client.createTerminal({ sessionId, command: 'git push', cwd: '/tmp' }));
  expect(declined.code).toBe(INVALID_PARAMS);
  expect(declined.message).toMatch(/not approved by the user/);
  expect(declined.data).toMatchObject({ code: 'ERR_NOT_APPROVED' });

  expect(backend.terminals).toHaveLength(0);
  expect(audit).toEqual([
    expect.objectContaining({ type: 'denied', code: 'ERR_CWD_OUTSIDE_ROOTS' }),
    expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED' }),
    expect.objectContaining({ type: 'denied', code: 'ERR_NOT_APPROVED' }),
  ]);
  const handle = await conn.client.createTerminal({ sessionId, command: 'git status', cwd: '/tmp' });
  await handle.release();
});
