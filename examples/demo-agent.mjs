// Demo ACP agent (its own process, ACP over stdio): on a prompt it runs three commands in the client's
// terminals with the SDK's ctx.createTerminal(): one succeeds, one fails with its exit code, one is
// stopped by a timeout (race waitForExit with a timer, then kill, output, release: the spec's recipe).
import { Readable, Writable } from 'node:stream';
import { agent, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { runWithTimeout } from './timeout.mjs';

const STEPS = [
  { title: 'A command that succeeds', command: 'for i in 1 2 3; do echo "building step $i"; sleep 0.3; done; echo done', timeoutMs: 30_000 },
  { title: 'A command that fails', command: 'echo "checking config"; ls /no/such/config >&2; exit 3', timeoutMs: 30_000 },
  { title: 'A long command stopped by a 2 s timeout', command: 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.4; done', timeoutMs: 2_000 },
];

let canUseTerminals = false;
const app = agent({ name: 'acp-terminal-demo-agent' })
  .onRequest('initialize', (ctx) => {
    canUseTerminals = ctx.params.clientCapabilities?.terminal === true;
    return { protocolVersion: PROTOCOL_VERSION, agentCapabilities: {}, agentInfo: { name: 'acp-terminal-demo-agent', version: '0.1.0' } };
  })
  .onRequest('session/new', () => ({ sessionId: `demo-${process.pid}` }))
  .onRequest('session/prompt', async (ctx) => {
    const { sessionId } = ctx.params;
    if (!canUseTerminals) throw new Error('this demo needs clientCapabilities.terminal');
    const update = (u) => ctx.client.notify('session/update', { sessionId, update: u });
    for (const [i, step] of STEPS.entries()) {
      const toolCallId = `step-${i + 1}`;
      const terminal = await ctx.client.createTerminal({ sessionId, command: step.command, outputByteLimit: 64 * 1024 });
      await update({ sessionUpdate: 'tool_call', toolCallId, title: step.title, kind: 'execute', status: 'in_progress', content: [{ type: 'terminal', terminalId: terminal.id }] });
      const result = await runWithTimeout(terminal, step.timeoutMs);
      const ok = !result.timedOut && result.exitStatus.exitCode === 0;
      await update({ sessionUpdate: 'tool_call_update', toolCallId, status: ok ? 'completed' : 'failed', rawOutput: result });
    }
    return { stopReason: 'end_turn' };
  });

await app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin))).closed;
