// createTestClient used exactly as an agent author would: an in-process SDK agent under test runs a
// command in the client's terminal, embeds it in a tool call, and the test asserts on what the client saw.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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

test('host options given inline are contextually typed under strict (onEvent: (e) => ... compiles: ts-jest type-checks this file)', async () => {
  const types: string[] = [];
  await using tc = await createTestClient({ host: { onEvent: (e) => void types.push(e.type), cwd: '/tmp' } });
  const { agent: ctx } = await tc.connect(agentUnderTest());
  const session = await ctx.buildSession('/tmp').start();
  await session.prompt('true');
  expect(types).toEqual(['created', 'exited', 'released']);
});

describe('leak checks', () => {
  /** An agent that starts a command and never releases it. */
  function leakyAgent(): AgentApp {
    return agent({ name: 'leaky' })
      .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }))
      .onRequest('session/new', () => ({ sessionId: 'sess-leak' }))
      .onRequest('session/prompt', async (ctx) => {
        await ctx.client.createTerminal({ sessionId: ctx.params.sessionId, command: 'sleep', args: ['30'] });
        return { stopReason: 'end_turn' };
      });
  }

  test('assertNoLiveTerminals() names each terminal the agent never released: id, session, command line, state, age', async () => {
    await using tc = await createTestClient();
    tc.assertNoLiveTerminals(); // nothing yet
    const { agent: ctx } = await tc.connect(leakyAgent());
    const session = await ctx.buildSession('/tmp').start();
    await session.prompt('go');
    let thrown: unknown;
    try {
      tc.assertNoLiveTerminals();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'ERR_LIVE_TERMINALS', details: { terminals: [expect.objectContaining({ commandLine: 'sleep 30', running: true })] } });
    const [leaked] = tc.host.listTerminals();
    expect((thrown as Error).message).toMatch(
      new RegExp(`^1 terminal was never released:\\n  ${leaked!.terminalId} \\(session sess-leak\\): sleep 30, running for \\d+\\.\\d s \\(pid ${leaked!.pid}\\)$`),
    );
    await tc.host.releaseAll();
    tc.assertNoLiveTerminals();
  });

  test("jest --detectOpenHandles names a terminal a test never released (its id, command line and session), and where its host was made", () => {
    const lib = path.join(__dirname, '..', 'lib', 'index.js');
    if (!fs.existsSync(lib)) throw new Error('lib/ is not built: run node scripts/build-ts.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-open-handles-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'leak.test.js'),
        [
          `const { TerminalHost } = require(${JSON.stringify(lib)});`,
          "test('forgets to release', async () => {",
          '  const host = new TerminalHost();',
          "  await host.createTerminal({ sessionId: 'agent-session', command: 'sleep', args: ['30'] });",
          "  const { terminalId } = await host.createTerminal({ sessionId: 'agent-session', command: 'true' });",
          "  await host.releaseTerminal({ sessionId: 'agent-session', terminalId });",
          '});',
          '',
        ].join('\n'),
      );
      const jestBin = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
      const config = JSON.stringify({ testEnvironment: 'node', transform: {}, rootDir: dir });
      const r = spawnSync(process.execPath, [jestBin, '--ci', '--detectOpenHandles', '--config', config], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
      const out = `${r.stdout}${r.stderr}`;
      expect(out).toContain('Jest has detected the following 1 open handle');
      expect(out).toMatch(/●\s+acp-terminal term-[0-9a-f]+-1: sleep 30 \(session agent-session\) was never released/);
      expect(out).toMatch(/at Object\.<anonymous> \(leak\.test\.js:3:\d+\)/); // where the test made the host
      expect(out).not.toContain(': true (session'); // the released one is not listed
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
