// `$/cancel_request` of a `terminal/wait_for_exit`, on the wire: an SDK agent cancels its
// request (cancellationSignal), the client (registerTerminalHandlers + TerminalHost on the native core)
// answers it with the SDK's -32800 at once, the command runs on, and a later wait gets its exit.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import { TerminalHost } from '../ts/host';
import { connectOverStreams, type Wire } from './fixtures/acp-wire';

const sessionId = 'sess';
let host: TerminalHost;
let wire: Wire;
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-cancel-'));
  host = new TerminalHost();
  wire = connectOverStreams(host);
});

afterEach(async () => {
  wire.agentConnection.close();
  wire.clientConnection.close();
  await host.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Resolves when the host's `method` is next called (the request reached the host). */
function nextCall(method: 'waitForTerminalExit' | 'createTerminal'): Promise<void> {
  return new Promise((resolve) => {
    const original = host[method].bind(host) as (...args: unknown[]) => unknown;
    (host as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      (host as unknown as Record<string, unknown>)[method] = original;
      resolve();
      return original(...args);
    };
  });
}

test('a cancelled terminal/wait_for_exit is answered -32800 at once; the command runs on; a later wait works', async () => {
  const flag = path.join(dir, 'go');
  const ctx = wire.agentConnection.client;
  const { terminalId } = await ctx.request('terminal/create', {
    sessionId,
    command: `while [ ! -e '${flag}' ]; do sleep 0.02; done; echo finished`,
  });
  const controller = new AbortController();
  const reached = nextCall('waitForTerminalExit');
  const wait = ctx.request('terminal/wait_for_exit', { sessionId, terminalId }, { cancellationSignal: controller.signal });
  await reached;
  controller.abort();
  // The command cannot end before the flag exists: only the cancel can answer this wait.
  const error = (await wait.then(() => undefined, (e: unknown) => e)) as RequestError;
  expect(error).toBeInstanceOf(RequestError);
  expect(error.code).toBe(-32800);
  const answer = wire.written.find((m) => m.error !== undefined);
  expect(answer?.error).toMatchObject({ code: -32800, message: 'Request cancelled' });

  await expect(ctx.request('terminal/output', { sessionId, terminalId })).resolves.toEqual({ output: '', truncated: false });
  fs.writeFileSync(flag, '');
  await expect(ctx.request('terminal/wait_for_exit', { sessionId, terminalId })).resolves.toEqual({ exitCode: 0, signal: null });
  await expect(ctx.request('terminal/output', { sessionId, terminalId })).resolves.toMatchObject({ output: 'finished\n' });
  await ctx.request('terminal/release', { sessionId, terminalId });
});

test('cancelling one of two waits on the same terminal leaves the other pending', async () => {
  const flag = path.join(dir, 'go');
  const ctx = wire.agentConnection.client;
  const { terminalId } = await ctx.request('terminal/create', { sessionId, command: `while [ ! -e '${flag}' ]; do sleep 0.02; done` });
  const controller = new AbortController();
  const kept = ctx.request('terminal/wait_for_exit', { sessionId, terminalId });
  const reached = nextCall('waitForTerminalExit');
  const cancelled = ctx.request('terminal/wait_for_exit', { sessionId, terminalId }, { cancellationSignal: controller.signal });
  await reached;
  controller.abort();
  await expect(cancelled).rejects.toMatchObject({ code: -32800 });
  fs.writeFileSync(flag, '');
  await expect(kept).resolves.toEqual({ exitCode: 0, signal: null });
});
