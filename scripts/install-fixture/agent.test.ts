// An agent author's jest suite: an in-process SDK agent, driven by createTestClient, whose terminal
// requests are answered by TerminalHost; failures come back with the documented JSON-RPC codes.
import { agent, PROTOCOL_VERSION, RequestError, type AgentApp } from '@agentclientprotocol/sdk';
import { createTestClient, TerminalHost } from 'acp-terminal';

function agentUnderTest(): AgentApp {
  return agent({ name: 'agent-under-test' })
    .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }))
    .onRequest('session/new', () => ({ sessionId: 'sess-1' }))
    .onRequest('session/prompt', async (ctx) => {
      const { sessionId } = ctx.params;
      const block = ctx.params.prompt[0];
      const command = block?.type === 'text' ? block.text : 'true';
      const codes: number[] = [];
      for (const bad of [
        () => ctx.client.request('terminal/output', { sessionId, terminalId: 'no-such-terminal' }),
        () => ctx.client.createTerminal({ sessionId, command: 'true', cwd: 'relative/dir' }),
      ]) {
        try {
          await bad();
        } catch (e) {
          codes.push(e instanceof RequestError ? e.code : 0);
        }
      }
      const terminal = await ctx.client.createTerminal({ sessionId, command });
      await ctx.client.notify('session/update', {
        sessionId,
        update: {
          sessionUpdate: 'tool_call',
          toolCallId: 'call-1',
          title: `${command} ${codes.join(',')}`,
          kind: 'execute',
          status: 'in_progress',
          content: [{ type: 'terminal', terminalId: terminal.id }],
        },
      });
      await terminal.waitForExit();
      await terminal.release();
      return { stopReason: 'end_turn' };
    });
}

test('the agent runs a command in the test client and gets -32002 / -32602 for bad requests', async () => {
  await using host = new TerminalHost({ cwd: process.cwd() });
  await using tc = await createTestClient({ host });
  const { agent: client } = await tc.connect(agentUnderTest());
  const session = await client.buildSession('/tmp').start();
  await expect(session.prompt('echo from-the-agent')).resolves.toMatchObject({ stopReason: 'end_turn' });
  const [terminalId] = tc.terminalIds();
  await expect(tc.output(terminalId!)).resolves.toEqual({
    output: 'from-the-agent\n',
    truncated: false,
    exitStatus: { exitCode: 0, signal: null },
  });
  expect(host.finalOutput(terminalId!)).toEqual({ output: 'from-the-agent\n', truncated: false, exitStatus: { exitCode: 0, signal: null } });
  const call = await tc.waitForUpdate((n) => n.update.sessionUpdate === 'tool_call');
  expect(call.update).toMatchObject({ title: 'echo from-the-agent -32002,-32602' });
});
