// The ACP layers on Windows, unchanged: TerminalHost, registerTerminalHandlers (through
// createTestClient and an in-process agent), and the v2 bridge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { acp, root } from './helpers.mjs';

const require = createRequire(`${root}/package.json`);

test('TerminalHost: create, output, waitForExit, release for a session', async () => {
  const host = new acp.TerminalHost();
  try {
    const { terminalId } = await host.createTerminal({ sessionId: 's1', command: 'echo host-ok& exit /b 3' });
    const exit = await host.waitForTerminalExit({ sessionId: 's1', terminalId });
    assert.deepEqual(exit, { exitCode: 3, signal: null });
    const out = await host.terminalOutput({ sessionId: 's1', terminalId });
    assert.equal(out.output, 'host-ok\r\n');
    await host.releaseTerminal({ sessionId: 's1', terminalId });
  } finally {
    await host.close();
  }
});

test('TerminalHost: kill of a running terminal reports exitCode null and a signal', async () => {
  const host = new acp.TerminalHost();
  try {
    const { terminalId } = await host.createTerminal({ sessionId: 's1', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] });
    await host.killTerminal({ sessionId: 's1', terminalId });
    const exit = await host.waitForTerminalExit({ sessionId: 's1', terminalId });
    assert.equal(exit.exitCode, null);
    assert.ok(['SIGTERM', 'SIGKILL'].includes(exit.signal), JSON.stringify(exit));
  } finally {
    await host.close();
  }
});

test('createTestClient + registerTerminalHandlers: an agent runs a command in the client terminal', async () => {
  const { agent, PROTOCOL_VERSION } = require('@agentclientprotocol/sdk');
  const app = agent({ name: 'win-agent' })
    .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }))
    .onRequest('session/new', () => ({ sessionId: 's1' }))
    .onRequest('session/prompt', async (ctx) => {
      const { sessionId } = ctx.params;
      const terminal = await ctx.client.createTerminal({ sessionId, command: 'echo via-acp' });
      await ctx.client.notify('session/update', {
        sessionId,
        update: { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'echo', content: [{ type: 'terminal', terminalId: terminal.id }] },
      });
      await terminal.waitForExit();
      return { stopReason: 'end_turn' };
    });
  const tc = await acp.createTestClient();
  try {
    const { agent: conn } = await tc.connect(app);
    const session = await conn.buildSession(process.cwd()).start();
    await session.prompt('run it');
    const [id] = tc.terminalIds();
    const out = await tc.output(id);
    assert.equal(out.output, 'via-acp\r\n');
    assert.deepEqual(out.exitStatus, { exitCode: 0, signal: null });
  } finally {
    await tc.close();
  }
});

test('v2 bridge: startV2Terminal sends the updates and the exit status', async () => {
  const updates = [];
  const bridge = await acp.startV2Terminal({ sessionId: 's1', command: 'echo v2-ok' }, { send: (n) => void updates.push(n) });
  const exitStatus = await bridge.done;
  assert.deepEqual(exitStatus, { exitCode: 0, signal: null });
  const bytes = updates
    .map((n) => n.update ?? n.params?.update)
    .filter((u) => u?.sessionUpdate === 'terminal_output_chunk')
    .map((u) => Buffer.from(u.data, 'base64').toString())
    .join('');
  assert.equal(bytes, 'v2-ok\r\n');
  await bridge.terminal.release();
});
