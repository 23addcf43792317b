// An ACP agent (its own process, ACP over stdio, SDK 2.x) that runs commands itself and shows them live in
// any client through acp-terminal's agentTerminals(): a v2 display terminal for a v2 client, the v1
// `_meta` terminal convention for clients that advertise it (Zed), plain tool-call text otherwise.
// Its "model" is scripted: each prompt line `$ <command>` runs a command and waits for it; `& <command>`
// leaves it running after the turn (background work). It serves ACP v1 and v2 through the SDK's router.
//
//   node examples/agent-terminals.mjs            (speak ACP to it on stdin/stdout)
import { Readable, Writable } from 'node:stream';
import { agent, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import * as v2 from '@agentclientprotocol/sdk/experimental/v2';
import acpTerminal from '../lib/index.js';

const sessions = new Set();
/** v2 sessions whose foreground work runs, and how to reach their client. */
const busy = new Set();
let notifyV2;
const kit = acpTerminal.agentTerminals({
  // v2: the kit hands the background list; the agent puts it in its own state updates.
  onBackgroundChange: (sessionId, background) =>
    void notifyV2?.({ sessionId, update: { sessionUpdate: 'state_update', state: busy.has(sessionId) ? 'running' : 'idle', background } }),
});

/** The scripted model: the commands of a prompt, one per line. */
function plan(text) {
  return text
    .split('\n')
    .map((line) => /^([$&]) (.+)$/.exec(line.trim()))
    .filter(Boolean)
    .map(([, mode, command]) => ({ command, background: mode === '&' }));
}

/** Runs a prompt's commands through the kit (the same code for v1 and v2). */
async function turn(ctx, sessionId, text) {
  for (const step of plan(text)) {
    const terminal = await kit.createTerminal(ctx, { sessionId, command: step.command, outputByteLimit: 1024 * 1024 });
    if (!step.background) {
      await terminal.waitForExit();
      await terminal.release();
    }
  }
}

const promptText = (prompt) => prompt.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

const v1App = agent({ name: 'acp-terminal-agent' })
  .onRequest('initialize', () => ({
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: { loadSession: true },
    agentInfo: { name: 'acp-terminal-agent', version: '0.1.0' },
  }))
  .onRequest('session/new', () => {
    const sessionId = `s-${process.pid}-${sessions.size + 1}`;
    sessions.add(sessionId);
    return { sessionId };
  })
  .onRequest('session/load', () => ({}))
  .onRequest('session/prompt', async (ctx) => {
    await turn(ctx, ctx.params.sessionId, promptText(ctx.params.prompt));
    return { stopReason: 'end_turn' };
  })
  .onNotification('session/cancel', () => undefined);

const v2App = v2
  .agent({ name: 'acp-terminal-agent' })
  .onRequest('initialize', () => ({
    protocolVersion: v2.PROTOCOL_VERSION,
    info: { name: 'acp-terminal-agent', version: '0.1.0' },
    capabilities: { session: { resume: {} } },
  }))
  .onRequest('session/new', (ctx) => {
    const sessionId = `s-${process.pid}-${sessions.size + 1}`;
    sessions.add(sessionId);
    notifyV2 = (n) => ctx.client.notify('session/update', n);
    return { sessionId };
  })
  .onRequest('session/resume', (ctx) => {
    notifyV2 = (n) => ctx.client.notify('session/update', n);
    return {};
  })
  .onRequest('session/prompt', (ctx) => {
    // v2: the prompt is acknowledged at once; the turn runs on and ends with an idle state update.
    const { sessionId } = ctx.params;
    const messageId = `m-${Date.now()}`;
    const state = (update) => ctx.client.notify('session/update', { sessionId, update: { sessionUpdate: 'state_update', ...update } });
    busy.add(sessionId);
    void (async () => {
      await state({ state: 'running', background: kit.background(sessionId) });
      let stopReason = 'end_turn';
      try {
        await turn(ctx, sessionId, promptText(ctx.params.prompt));
      } catch {
        stopReason = 'refusal';
      }
      busy.delete(sessionId);
      await state({ state: 'idle', stopReason, background: kit.endTurn(sessionId) });
    })();
    return { messageId };
  })
  .onNotification('session/cancel', () => undefined);

const router = v2.agentProtocolRouter().withV1(kit.v1(v1App)).withV2(kit.v2(v2App));
await router.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin))).closed;
await kit.close();
