// createTestClient used exactly as an agent author would: an in-process SDK agent under test runs a
// command in the client's terminal, embeds it in a tool call, and the test asserts on what the client saw.
import { agent, PROTOCOL_VERSION, type AgentApp } from '@agentclientprotocol/sdk';
import { createTestClient } from '../ts/testclient';
import { TerminalHost } from '../ts/host';

/** The "agent under test": on each prompt, asks permission, runs the prompt text as a shell line. */
function agentUnderTest(): AgentApp {
  let terminalCapability = false;
  return agent({ name: 'agent-under-test' })
    .onRequest('initialize', (ctx) => {
      terminalCapability = ctx.params.clientCapabilities?.terminal === true;
      return { protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} };
    })
    .onRequest('session/new', () => ({ sessionId: 'sess-1' }))
    .onRequest('session/prompt', async (ctx) => {
      if (!terminalCapability) throw new Error('no terminal capability');
      const block = ctx.params.prompt[0];
      const command = block?.type === 'text' ? block.text : 'true';
      const { sessionId } = ctx.params;
      const permission = await ctx.client.request('session/request_permission', {
        sessionId,
        toolCall: { toolCallId: 'call-1', title: command },
        options: [
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
          { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
        ],
      });
      if (permission.outcome.outcome !== 'selected' || permission.outcome.optionId !== 'yes') return { stopReason: 'refusal' };
      const terminal = await ctx.client.createTerminal({ sessionId, command });
      await ctx.client.notify('session/update', {
        sessionId,
        update: { sessionUpdate: 'tool_call', toolCallId: 'call-1', title: command, kind: 'execute', status: 'in_progress', content: [{ type: 'terminal', terminalId: terminal.id }] },
      });
      const exit = await terminal.waitForExit();
      await terminal.release();
      await ctx.client.notify('session/update', {
        sessionId,
        update: { sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: exit.exitCode === 0 ? 'completed' : 'failed' },
      });
      return { stopReason: 'end_turn' };
    });
}

test('runs real terminals, records updates, keeps the output of released terminals', async () => {
  await using tc = await createTestClient();
  const { agent: ctx, initializeResponse } = await tc.connect(agentUnderTest());
  expect(initializeResponse.protocolVersion).toBe(PROTOCOL_VERSION);
  const session = await ctx.buildSession('/tmp').start();
  await expect(session.prompt('echo from-the-agent; exit 4')).resolves.toMatchObject({ stopReason: 'end_turn' });

  const [terminalId] = tc.terminalIds();
  expect(tc.terminalIds()).toHaveLength(1);
  await expect(tc.output(terminalId!)).resolves.toEqual({ output: 'from-the-agent\n', truncated: false, exitStatus: { exitCode: 4, signal: null } });
  const done = await tc.waitForUpdate((n) => n.update.sessionUpdate === 'tool_call_update');
  expect(done.update).toMatchObject({ status: 'failed' });
  expect(tc.permissionRequests).toHaveLength(1);
  expect(tc.host.liveTerminals).toBe(0);
});

test('waitForUpdate resolves on a future update', async () => {
  await using tc = await createTestClient();
  const { agent: ctx } = await tc.connect(agentUnderTest());
  const session = await ctx.buildSession('/tmp').start();
  const toolCall = tc.waitForUpdate((n) => n.update.sessionUpdate === 'tool_call');
  await session.prompt('true');
  await expect(toolCall).resolves.toMatchObject({ sessionId: 'sess-1', update: { sessionUpdate: 'tool_call' } });
});

test('permission policy "reject" picks the reject option, so no terminal runs', async () => {
  await using tc = await createTestClient({ permission: 'reject' });
  const { agent: ctx } = await tc.connect(agentUnderTest());
  const session = await ctx.buildSession('/tmp').start();
  await expect(session.prompt('echo never')).resolves.toMatchObject({ stopReason: 'refusal' });
  expect(tc.terminalIds()).toEqual([]);
});

test('custom permission function and an injected host are used; the host is not closed by the client', async () => {
  const host = new TerminalHost({ maxTerminals: 2 });
  const tc = await createTestClient({ host, permission: () => ({ outcome: { outcome: 'selected', optionId: 'yes' } }) });
  expect(tc.host).toBe(host);
  const { agent: ctx } = await tc.connect(agentUnderTest());
  const session = await ctx.buildSession('/tmp').start();
  await session.prompt('true');
  expect(tc.terminalIds()).toHaveLength(1);
  await tc.close();
  expect(host.isClosed).toBe(false);
  await host.close();
});

test('close rejects pending waits and refuses new connections', async () => {
  const tc = await createTestClient();
  const pending = tc.waitForUpdate(() => false);
  await tc.close();
  await expect(pending).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
  await expect(tc.connect(agentUnderTest())).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
  expect(tc.host.isClosed).toBe(true);
});

test('waitForUpdate honours an abort signal', async () => {
  await using tc = await createTestClient();
  const controller = new AbortController();
  const pending = tc.waitForUpdate(() => false, { signal: controller.signal });
  controller.abort(new Error('gave up'));
  await expect(pending).rejects.toThrow('gave up');
});
