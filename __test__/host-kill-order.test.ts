// The host answers `terminal/kill` before the `terminal/wait_for_exit` it caused. Checked on
// the wire: an SDK agent and an SDK ClientApp (registerTerminalHandlers + TerminalHost on the native core)
// talk newline-delimited JSON over a pair of byte streams, and the bytes the client writes are recorded.
import { TerminalHost } from '../ts/host';
import { connectOverStreams } from './fixtures/acp-wire';

const sessionId = 'sess';
const ROUNDS = 1000;

test(`terminal/kill is answered before the wait_for_exit it ends (${ROUNDS} rounds, on the wire)`, async () => {
  const host = new TerminalHost({ killGraceMs: 5000, maxTerminals: 4 });
  const wire = connectOverStreams(host);
  const ctx = wire.agentConnection.client;
  const misordered: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const { terminalId } = await ctx.request('terminal/create', { sessionId, command: 'sleep', args: ['30'] });
      const firstWritten = wire.written.length;
      // Two concurrent requests: the wait is pending when the kill arrives.
      const wait = ctx.request('terminal/wait_for_exit', { sessionId, terminalId });
      const kill = ctx.request('terminal/kill', { sessionId, terminalId });
      const [exit, killed] = await Promise.all([wait, kill]);
      expect(exit).toEqual({ exitCode: null, signal: 'SIGTERM' });
      expect(killed).toEqual({});
      const responses = wire.written.slice(firstWritten);
      // Both responses were written; the kill's (an empty result) must come first.
      expect(responses).toHaveLength(2);
      const killFirst = responses[0]!.result !== null && Object.keys(responses[0]!.result as object).length === 0;
      if (!killFirst) misordered.push(round);
      await ctx.request('terminal/release', { sessionId, terminalId });
    }
  } finally {
    wire.agentConnection.close();
    wire.clientConnection.close();
    await host.close();
  }
  expect(misordered).toEqual([]);
}, 300_000);

test('a wait that ends without a kill is answered at once, and a kill after the exit still answers', async () => {
  const host = new TerminalHost();
  const wire = connectOverStreams(host);
  const ctx = wire.agentConnection.client;
  try {
    const { terminalId } = await ctx.request('terminal/create', { sessionId, command: 'exit 4' });
    await expect(ctx.request('terminal/wait_for_exit', { sessionId, terminalId })).resolves.toEqual({ exitCode: 4, signal: null });
    await expect(ctx.request('terminal/kill', { sessionId, terminalId })).resolves.toEqual({});
    await expect(ctx.request('terminal/wait_for_exit', { sessionId, terminalId })).resolves.toEqual({ exitCode: 4, signal: null });
    await ctx.request('terminal/release', { sessionId, terminalId });
  } finally {
    wire.agentConnection.close();
    wire.clientConnection.close();
    await host.close();
  }
});
