// agentTerminals(): an agent's own commands shown live in every form, checked from real SDK 2.4 client apps
// over the example agent's stdio (v2 display terminal, v1 `_meta` terminal_output / terminal_output_delta,
// v1 plain content), plus cancel, background work, replay on session/load and a throttled 20 MB flood.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { client as v1Client, type SessionNotification } from '@agentclientprotocol/sdk';
import * as v2 from '@agentclientprotocol/sdk/experimental/v2';
import { zSessionNotification } from '../node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js';
import { agentTerminals } from '../ts/agent-terminals';
import * as backends from '../ts/backends';
import { registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { completeUtf8Length, OutputTail } from '../ts/agent-output';
import { alive, runV1Client, runV2Client, streamPair, terminalOutputText, until, upd, v1AgentApp, v2AgentApp, type Update } from './fixtures/agent-apps';
import { spawnAgent, type AgentProcess } from './fixtures/agent-process';
import { v2Schema } from './fixtures/json-schema';
import { blockUntilGone, HOST_SERVER } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';
import { ZedTerminalDecoder } from './fixtures/zed-terminal-decoder';

const schema = v2Schema();
const example = path.resolve(__dirname, '..', 'examples', 'agent-terminals.mjs');
// Multi-byte characters split across writes, escape sequences, no final newline.
const COMMAND = `printf 'a \\342\\202'; sleep 0.1; printf '\\254 \\033[1mb\\033[0m\\n'; i=0; while [ $i -lt 200 ]; do printf 'line %d ✓\\n' $i; i=$((i+1)); done; printf end`;
const EXPECTED = execFileSync('/bin/sh', ['-c', COMMAND]);

const agents: AgentProcess[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

function start(): AgentProcess {
  const a = spawnAgent(example);
  agents.push(a);
  return a;
}

/** A v1 client over the example agent's stdio; `meta` is what it advertises in clientCapabilities._meta. */
async function v1Run(meta: Record<string, unknown> | undefined, prompt: string): Promise<SessionNotification[]> {
  const updates: SessionNotification[] = [];
  const app = v1Client({ name: 't' }).onNotification('session/update', (ctx) => void updates.push(ctx.params));
  await app.connectWith(start().stream, async (ctx) => {
    await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: meta ? { _meta: meta } : {} });
    const { sessionId } = await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
    await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
  });
  for (const u of updates) expect(zSessionNotification.safeParse(u).success).toBe(true);
  return updates;
}

describe('v1 _meta terminal convention (what Zed and codex-acp speak)', () => {
  test.each(['terminal_output', 'terminal_output_delta'])('%s: terminal_info in the tool_call, text increments, terminal_exit last', async (key) => {
    const updates = (await v1Run({ [key]: true }, `$ ${COMMAND}`)).map(upd);
    const first = updates[0]!;
    expect(first).toMatchObject({ sessionUpdate: 'tool_call', kind: 'execute', status: 'in_progress' });
    const info = (first._meta as { terminal_info: { terminal_id: string; cwd: string } }).terminal_info;
    expect(first.content).toEqual([{ type: 'terminal', terminalId: info.terminal_id }]);
    expect(info.cwd).toBe(process.cwd());
    const increments = updates.filter((u) => (u._meta as Record<string, unknown> | undefined)?.[key]);
    expect(increments.length).toBeGreaterThan(1);
    const text = increments.map((u) => (u._meta as Record<string, { data: string; terminal_id: string }>)[key]!.data).join('');
    // Characters are never split: the text equals the bytes, decoded once.
    expect(text).toBe(EXPECTED.toString('utf8'));
    expect(text).not.toContain('\ufffd');
    const last = updates.at(-1)!;
    expect(last._meta).toEqual({ terminal_exit: { terminal_id: info.terminal_id, exit_code: 0, signal: null } });
    expect(last.status).toBe('completed');
  });

  test('a client without the convention gets the tool call text: the tail, then the exit status', async () => {
    const updates = (await v1Run(undefined, `$ ${COMMAND}`)).map(upd);
    expect(updates[0]).toMatchObject({ sessionUpdate: 'tool_call', kind: 'execute', status: 'in_progress' });
    expect(updates.some((u) => u._meta !== undefined)).toBe(false);
    const last = updates.at(-1)!;
    expect(last.status).toBe('completed');
    const text = (last.content as Array<{ content: { text: string } }>)[0]!.content.text;
    expect(text).toBe(`${EXPECTED.toString('utf8')}\n[exit code 0]`);
    // Throttled: fewer updates than the command's 200 lines.
    expect(updates.length).toBeLessThan(50);
  });

  test('session/cancel stops the running command (TERM to its group) and terminal_exit carries the signal', async () => {
    const updates: SessionNotification[] = [];
    const app = v1Client({ name: 't' }).onNotification('session/update', (ctx) => void updates.push(ctx.params));
    await app.connectWith(start().stream, async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: { _meta: { terminal_output_delta: true } } });
      const { sessionId } = await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
      const prompt = ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '$ sleep 60 & echo "pid $!"; wait' }] });
      const text = (): string =>
        updates.map((u) => ((upd(u)._meta as { terminal_output_delta?: { data: string } })?.terminal_output_delta?.data ?? '')).join('');
      const pid = Number((await until(() => /pid (\d+)\n/.exec(text())))[1]);
      expect(alive(pid)).toBe(true);
      await ctx.notify('session/cancel', { sessionId });
      await prompt;
      await until(() => !alive(pid));
    });
    const exit = updates.map(upd).at(-1)!;
    expect((exit._meta as { terminal_exit: unknown }).terminal_exit).toMatchObject({ exit_code: null, signal: 'SIGTERM' });
    for (const u of updates) expect(zSessionNotification.safeParse(u).success).toBe(true);
  });
});

describe('v2 display terminals', () => {
  /** A v2 client over the example agent's stdio; resolves once the agent reported idle after `prompt`. */
  async function v2Session(
    op: (ctx: v2.ClientContext, sessionId: string, updates: v2.UpdateSessionNotification[]) => Promise<void>,
  ): Promise<v2.UpdateSessionNotification[]> {
    const updates: v2.UpdateSessionNotification[] = [];
    const app = v2.client({ name: 't' }).onNotification('session/update', (ctx) => void updates.push(ctx.params));
    await app.connectWith(start().stream, async (ctx) => {
      await ctx.request('initialize', { protocolVersion: v2.PROTOCOL_VERSION, info: { name: 't', version: '1' }, capabilities: {} });
      const { sessionId } = await ctx.request('session/new', { cwd: '/tmp' });
      await op(ctx, sessionId, updates);
    });
    for (const n of updates) expect(schema.validate('UpdateSessionNotification', n)).toEqual([]);
    return updates;
  }
  const idles = (updates: v2.UpdateSessionNotification[]): Update[] =>
    updates.map(upd).filter((u) => u.sessionUpdate === 'state_update' && u.state === 'idle');

  test('a Zed-style decoder rebuilds the exact bytes; the exit status comes after the last byte', async () => {
    const updates = await v2Session(async (ctx, sessionId, seen) => {
      await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `$ ${COMMAND}` }] });
      await until(() => idles(seen).length > 0);
    });
    const zed = new ZedTerminalDecoder();
    for (const n of updates) zed.apply(n as never);
    expect(zed.terminals.size).toBe(1);
    const [id, shown] = [...zed.terminals][0]!;
    expect(shown.output.equals(EXPECTED)).toBe(true);
    expect(shown).toMatchObject({ command: COMMAND, cwd: process.cwd(), exitStatus: { exitCode: 0, signal: null }, bytesAfterExit: 0 });
    const toolCall = updates.map(upd).find((u) => u.sessionUpdate === 'tool_call_update' && u.content)!;
    expect(toolCall).toMatchObject({ kind: 'execute', status: 'in_progress', content: [{ type: 'terminal', terminalId: id }] });
    expect(updates.map(upd).some((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed')).toBe(true);
  });

  test('background work: listed after the turn, cancelled only by terminal/cancel (-32602 after), pid gone', async () => {
    await v2Session(async (ctx, sessionId, seen) => {
      await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '& sleep 60 & echo "pid $!"; wait' }] });
      const idle = await until(() => idles(seen)[0]);
      const background = idle.background as Array<{ type: string; terminalId: string }>;
      expect(background).toHaveLength(1);
      const terminalId = background[0]!.terminalId;
      const zed = new ZedTerminalDecoder();
      const shown = async (): Promise<string> => {
        for (const n of seen.splice(0)) zed.apply(n as never);
        return zed.terminals.get(terminalId)?.output.toString() ?? '';
      };
      const pid = Number((await (async () => { for (;;) { const m = /pid (\d+)\n/.exec(await shown()); if (m) return m; await new Promise((r) => setTimeout(r, 20)); } })())[1]);
      // session/cancel ends the turn, not the background work.
      await ctx.notify('session/cancel', { sessionId });
      await new Promise((r) => setTimeout(r, 300));
      expect(alive(pid)).toBe(true);
      await expect(ctx.request('terminal/cancel', { sessionId, terminalId: 'no-such-terminal' })).rejects.toMatchObject({ code: -32602 });
      await expect(ctx.request('terminal/cancel', { sessionId, terminalId })).resolves.toEqual({});
      await until(() => !alive(pid));
      await until(() => seen.map(upd).some((u) => u.sessionUpdate === 'state_update' && Array.isArray(u.background) && u.background.length === 0));
      await shown();
      expect(zed.terminals.get(terminalId)!.exitStatus).toEqual({ exitCode: null, signal: 'SIGTERM' });
      await expect(ctx.request('terminal/cancel', { sessionId, terminalId })).rejects.toMatchObject({ code: -32602 });
    });
  });
});

describe('in process', () => {
  test('replay on session/load: a new connection gets the tail so far, then the live output', async () => {
    const kit = agentTerminals({ updateIntervalMs: 10 });
    const started: Array<Promise<unknown>> = [];
    let release: (() => void) | undefined;
    const app = v1AgentApp()
      .onRequest('session/load', () => ({}))
      .onRequest('session/prompt', async (ctx) => {
        const t = await kit.createTerminal(ctx, { sessionId: 's', command: 'echo one; exec sleep 30' });
        started.push(t.waitForExit());
        release = () => void kit.close();
        return { stopReason: 'end_turn' };
      });
    const connector = kit.v1(app);
    const run = (op: Parameters<typeof runV1Client>[2]): Promise<SessionNotification[]> =>
      runV1Client(connector, { _meta: { terminal_output: true } }, op);
    const text = terminalOutputText;
    const first = await run(async (ctx, updates) => {
      await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
      await ctx.request('session/prompt', { sessionId: 's', prompt: [] });
      await until(() => text(updates) === 'one\n');
    });
    expect(text(first)).toBe('one\n');
    const second = await run(async (ctx, updates) => {
      await ctx.request('session/load', { sessionId: 's', cwd: '/tmp', mcpServers: [] });
      await until(() => text(updates) === 'one\n');
      release!();
      await until(() => updates.some((u) => (upd(u)._meta as { terminal_exit?: unknown })?.terminal_exit));
    });
    expect(upd(second[0]!)).toMatchObject({ sessionUpdate: 'tool_call', _meta: { terminal_info: {} } });
    expect(text(second)).toBe('one\n');
    expect((upd(second.at(-1)!)._meta as { terminal_exit: unknown }).terminal_exit).toMatchObject({ exit_code: null, signal: 'SIGTERM' });
    await Promise.all(started);
  });

  test('a 20 MB flood to a slow client: bounded update rate, memory bounded by outputByteLimit, v2 ends with the exact tail', async () => {
    const limit = 64 * 1024;
    const kit = agentTerminals({ updateIntervalMs: 50 });
    const command = 'head -c 20000000 /dev/urandom | base64 -w 100';
    const sent: v2.UpdateSessionNotification[] = [];
    let handle: Awaited<ReturnType<typeof kit.createTerminal>> | undefined;
    const app = v2AgentApp().onRequest('session/prompt', async (ctx) => {
        handle = await kit.createTerminal(ctx, { sessionId: 's', command, outputByteLimit: limit });
        return { messageId: 'm' };
      });
    const [agentSide, clientSide] = streamPair();
    kit.v2(app).connect(agentSide);
    // The client reads one message per 100 ms: slower than the kit's 20 updates/s.
    const slowClient = {
      readable: clientSide.readable.pipeThrough(
        new TransformStream({
          transform: async (message, controller) => {
            await new Promise((r) => setTimeout(r, 100));
            controller.enqueue(message);
          },
        }),
      ),
      writable: clientSide.writable,
    };
    let stats: ReturnType<typeof kit.outputStats>;
    const startedAt = Date.now();
    await v2
      .client({ name: 'c' })
      .onNotification('session/update', (ctx) => void sent.push(ctx.params))
      .connectWith(slowClient as never, async (ctx) => {
        await ctx.request('initialize', { protocolVersion: v2.PROTOCOL_VERSION, info: { name: 'c', version: '1' } });
        await ctx.request('session/new', { cwd: '/tmp' });
        await ctx.request('session/prompt', { sessionId: 's', prompt: [{ type: 'text', text: 'go' }] });
        await until(() => handle);
        await handle!.waitForExit();
        stats = kit.outputStats(handle!.id);
        await until(() => sent.some((n) => upd(n).exitStatus));
      });
    const elapsed = Date.now() - startedAt;
    const zed = new ZedTerminalDecoder();
    for (const n of sent) zed.apply(n as never);
    const shown = [...zed.terminals.values()][0]!;
    const all = (await handle!.currentOutput()).output;
    // The client ends with the output's exact tail: what it shows is a suffix of the output at least `limit` long.
    expect(shown.output.length).toBeGreaterThanOrEqual(Math.min(limit, 27_000_000));
    expect(Buffer.from(all).subarray(-1000).equals(shown.output.subarray(-1000))).toBe(true);
    const outputs = sent.filter((n) => upd(n).sessionUpdate === 'terminal_output_chunk' || upd(n).output);
    expect(outputs.length).toBeLessThanOrEqual(elapsed / 50 + 5);
    // Memory, from the kit's own counts: the tail never held three times the limit (though the core
    // delivered far bigger chunks), and at most two output updates (base64 of at most `limit` bytes
    // each) waited for the slow client.
    expect(stats!.totalBytes).toBe(26_933_335); // base64 of 20 000 000 bytes in lines of 100
    expect(stats!.peakHeldBytes).toBeLessThan(3 * limit);
    expect(stats!.peakQueuedBytes).toBeLessThanOrEqual(3 * limit);
    for (const n of sent) expect(schema.validate('UpdateSessionNotification', n)).toEqual([]);
    await kit.close();
  }, 120_000);
});

describe('in process, more', () => {
  /** A v1 agent app whose prompt runs `body` with the handler's ctx, served through `kit.v1`. */
  function v1Prompting(kit: ReturnType<typeof agentTerminals>, body: (ctx: unknown) => Promise<void>) {
    return kit.v1(
      v1AgentApp().onRequest('session/prompt', async (ctx) => {
        await body(ctx);
        return { stopReason: 'end_turn' };
      }),
    );
  }

  test("prefer: 'client' uses the client's own terminal/create when it advertises terminal: true, embedded in the tool call", async () => {
    const kit = agentTerminals();
    const host = new TerminalHost();
    let form: string | undefined;
    let output = '';
    const [agentSide, clientSide] = streamPair();
    v1Prompting(kit, async (ctx) => {
      const t = await kit.createTerminal(ctx, { sessionId: 's', command: 'echo from-client' }, { prefer: 'client' });
      form = t.form;
      await t.waitForExit();
      output = (await t.currentOutput()).output;
      await t.release();
    }).connect(agentSide);
    const updates: SessionNotification[] = [];
    const app = registerTerminalHandlers(v1Client({ name: 'c' }).onNotification('session/update', (ctx) => void updates.push(ctx.params)), host);
    await app.connectWith(clientSide as never, async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: { terminal: true } });
      await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
      await ctx.request('session/prompt', { sessionId: 's', prompt: [] });
    });
    expect(form).toBe('client');
    expect(output).toBe('from-client\n');
    expect(upd(updates[0]!)).toMatchObject({ sessionUpdate: 'tool_call', content: [{ type: 'terminal' }] });
    await host.close();
    await kit.close();
  });

  test('v1 flood: throttled, a visible marker for what was skipped, and the exact tail at the end', async () => {
    const limit = 16 * 1024;
    const kit = agentTerminals({ updateIntervalMs: 50 });
    const command = 'head -c 6000000 /dev/urandom | base64 -w 100';
    let all = '';
    const agent = v1Prompting(kit, async (ctx) => {
      const t = await kit.createTerminal(ctx, { sessionId: 's', command, outputByteLimit: limit });
      await t.waitForExit();
      all = (await t.currentOutput()).output;
      await t.release();
    });
    const updates = await runV1Client(agent, { _meta: { terminal_output: true } }, async (ctx) => {
      await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
      await ctx.request('session/prompt', { sessionId: 's', prompt: [] });
    });
    const text = terminalOutputText(updates);
    expect(text).toMatch(/\[acp-terminal: \d+ bytes not shown\]/);
    expect(text.endsWith(all.slice(-limit + 200))).toBe(true);
    await kit.close();
  }, 60_000);

  test('v2 session/resume replays the snapshot, then chunks; tool_call/cancel stops it and ends the tool call cancelled', async () => {
    const kit = agentTerminals({ updateIntervalMs: 10 });
    const app = v2AgentApp()
      .onRequest('session/resume', () => ({}))
      .onRequest('session/prompt', async (ctx) => {
        await kit.createTerminal(ctx, { sessionId: 's', command: 'echo one; sleep 0.3; echo two; exec sleep 30' }, { toolCallId: undefined });
        return { messageId: 'm' };
      });
    const connector = kit.v2(app);
    const run = (op: Parameters<typeof runV2Client>[1]): Promise<v2.UpdateSessionNotification[]> => runV2Client(connector, op);
    const decode = (seen: v2.UpdateSessionNotification[]): ZedTerminalDecoder => {
      const zed = new ZedTerminalDecoder();
      for (const n of seen) zed.apply(n as never);
      return zed;
    };
    await run(async (ctx, seen) => {
      await ctx.request('session/new', { cwd: '/tmp' });
      await ctx.request('session/prompt', { sessionId: 's', prompt: [{ type: 'text', text: 'go' }] });
      await until(() => [...decode(seen).terminals.values()][0]?.output.toString() === 'one\n');
    });
    const second = await run(async (ctx, seen) => {
      await ctx.request('session/resume', { sessionId: 's', cwd: '/tmp' });
      await until(() => [...decode(seen).terminals.values()][0]?.output.toString() === 'one\ntwo\n');
      const toolCallId = upd(seen.find((n) => upd(n).sessionUpdate === 'tool_call_update')!).toolCallId as string;
      await expect(ctx.request('tool_call/cancel', { sessionId: 's', toolCallId: 'nope' })).rejects.toMatchObject({ code: -32602 });
      await ctx.request('tool_call/cancel', { sessionId: 's', toolCallId });
      await until(() => seen.some((n) => upd(n).status === 'cancelled'));
    });
    // The snapshot came first (a terminal_update with output), then the live chunk.
    const kinds = second.map(upd).filter((u) => u.output || u.sessionUpdate === 'terminal_output_chunk').map((u) => (u.output ? 'snapshot' : 'chunk'));
    expect(kinds[0]).toBe('snapshot');
    const shown = [...decode(second).terminals.values()][0]!;
    expect(shown.exitStatus).toEqual({ exitCode: null, signal: 'SIGTERM' });
    await kit.close();
  });
});

describe("the agent's own tool call", () => {
  test.each([
    ['content', undefined],
    ['terminal_output', { terminal_output: true }],
  ] as const)('%s: updates go into the given toolCallId and leave its status to the agent', async (_form, meta) => {
    const kit = agentTerminals({ updateIntervalMs: 10 });
    const app = v1AgentApp().onRequest('session/prompt', async (ctx) => {
        await ctx.client.notify('session/update', { sessionId: 's', update: { sessionUpdate: 'tool_call', toolCallId: 'mine', title: 'Build', kind: 'execute', status: 'in_progress' } });
        const t = await kit.createTerminal(ctx, { sessionId: 's', command: 'echo built' }, { toolCallId: 'mine', title: 'Build' });
        await t.waitForExit();
        await t.release();
        return { stopReason: 'end_turn' };
      });
    const updates = await runV1Client(kit.v1(app), meta ? { _meta: meta } : {}, async (ctx) => {
      await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
      await ctx.request('session/prompt', { sessionId: 's', prompt: [] });
    });
    const ours = updates.slice(1).map(upd);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.every((u) => u.toolCallId === 'mine')).toBe(true);
    expect(ours.filter((u) => u.sessionUpdate === 'tool_call_update').some((u) => u.status !== undefined)).toBe(false);
    await kit.close();
  });
});

test('v2 pty: the size is announced in the first terminal_update and the command runs at it', async () => {
  const kit = agentTerminals({ updateIntervalMs: 10 });
  const app = v2AgentApp().onRequest('session/prompt', async (ctx) => {
    const t = await kit.createTerminal(ctx, { sessionId: 's', command: 'stty size' }, { pty: { cols: 100, rows: 30 } });
    await t.waitForExit();
    await t.release();
    return { messageId: 'm' };
  });
  const seen = await runV2Client(kit.v2(app), async (ctx) => {
    await ctx.request('session/new', { cwd: '/tmp' });
    await ctx.request('session/prompt', { sessionId: 's', prompt: [{ type: 'text', text: 'go' }] });
  });
  expect(upd(seen[0]!)).toMatchObject({ sessionUpdate: 'terminal_update', size: { cols: 100, rows: 30 } });
  const zed = new ZedTerminalDecoder();
  for (const n of seen) zed.apply(n as never);
  expect([...zed.terminals.values()][0]!.output.toString()).toBe('30 100\r\n');
  await kit.close();
});

describe('output bookkeeping', () => {
  test('the tail keeps exactly the newest bytes; a gap empties it', () => {
    const tail = new OutputTail(5);
    for (const s of ['ab', 'cdef', 'gh', 'ijklmnop']) tail.push(Buffer.from(s));
    expect(tail.all().toString()).toBe('lmnop');
    expect(tail.total).toBe(16);
    tail.gap(3);
    expect(tail.held).toBe(0);
    expect(tail.total).toBe(19);
  });

  test('an incomplete UTF-8 sequence at the end is held back, a complete one is not', () => {
    const euro = Buffer.from('€');
    expect(completeUtf8Length(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))).toBe(1);
    expect(completeUtf8Length(Buffer.concat([Buffer.from('a'), euro]))).toBe(4);
    expect(completeUtf8Length(Buffer.from([0x61, 0xff]))).toBe(2);
  });
});

describe('cancel, close and release: nothing orphaned, nothing lost', () => {
  async function untilAsync(what: () => Promise<boolean>, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  async function pidOf(t: { currentOutput(): Promise<{ output: string }> }): Promise<number> {
    let pid = 0;
    await untilAsync(async () => {
      const m = /pid (\d+)\n/.exec((await t.currentOutput()).output);
      if (m) pid = Number(m[1]);
      return pid > 0;
    });
    return pid;
  }
  test('v2 session/cancel kills the foreground commands (TERM, then KILL after the grace), signal in the last update', async () => {
    const kit = agentTerminals({ updateIntervalMs: 10, terminalOptions: { killGraceMs: 300 } });
    const handles: Array<Awaited<ReturnType<typeof kit.createTerminal>>> = [];
    const app = v2AgentApp()
      .onRequest('session/prompt', async (ctx) => {
        // Foreground: the agent sends no idle state update, the turn is still running.
        handles.push(await kit.createTerminal(ctx, { sessionId: 's', command: 'sleep 60 & echo "pid $!"; wait' }));
        handles.push(await kit.createTerminal(ctx, { sessionId: 's', command: 'trap "" TERM; sleep 60 & echo "pid $!"; wait' }));
        return { messageId: 'm' };
      })
      .onNotification('session/cancel', () => undefined);
    const seen = await runV2Client(kit.v2(app), async (ctx, updates) => {
      await ctx.request('session/new', { cwd: '/tmp' });
      await ctx.request('session/prompt', { sessionId: 's', prompt: [{ type: 'text', text: 'go' }] });
      const pids = [await pidOf(handles[0]!), await pidOf(handles[1]!)];
      const all = [...pids, handles[0]!.pid!, handles[1]!.pid!];
      for (const pid of all) expect(alive(pid)).toBe(true);
      await ctx.notify('session/cancel', { sessionId: 's' });
      await until(() => all.every((pid) => !alive(pid)));
      await until(() => updates.filter((n) => upd(n).exitStatus).length === 2);
    });
    const zed = new ZedTerminalDecoder();
    for (const n of seen) zed.apply(n as never);
    expect(zed.terminals.get(handles[0]!.id)!.exitStatus).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(zed.terminals.get(handles[1]!.id)!.exitStatus).toEqual({ exitCode: null, signal: 'SIGKILL' });
    // The exit is each terminal's last update, and its tool call ends cancelled.
    for (const h of handles) {
      const own = seen.map(upd).filter((u) => u.terminalId === h.id || u.toolCallId === h.toolCallId);
      expect(own.filter((u) => u.terminalId === h.id).at(-1)!.exitStatus).toBeDefined();
      expect(own.at(-1)).toMatchObject({ sessionUpdate: 'tool_call_update', status: 'cancelled' });
    }
    await kit.close();
  });

  test("session/close ends that session's terminals, kit.close() every other one (pids gone); a start racing close is refused", async () => {
    const kit = agentTerminals({ updateIntervalMs: 10 });
    const handles = new Map<string, Awaited<ReturnType<typeof kit.createTerminal>>>();
    let promptCtx: unknown;
    const app = v1AgentApp(() => ({ sessionId: `s${handles.size + 1}` }))
      .onRequest('session/close' as never, (() => ({})) as never)
      .onRequest('session/prompt', async (ctx) => {
        promptCtx = ctx;
        handles.set(ctx.params.sessionId, await kit.createTerminal(ctx, { sessionId: ctx.params.sessionId, command: 'sleep 60 & echo "pid $!"; wait' }));
        return { stopReason: 'end_turn' };
      });
    await runV1Client(kit.v1(app), {}, async (ctx) => {
      for (const s of ['s1', 's2']) {
        await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
        await ctx.request('session/prompt', { sessionId: s, prompt: [] });
      }
      const pids = new Map<string, number[]>();
      for (const [s, h] of handles) pids.set(s, [h.pid!, await pidOf(h)]);
      for (const pid of [...pids.values()].flat()) expect(alive(pid)).toBe(true);
      await (ctx.request as (m: string, p: unknown) => Promise<unknown>)('session/close', { sessionId: 's1' });
      await until(() => pids.get('s1')!.every((pid) => !alive(pid)));
      expect(pids.get('s2')!.every(alive)).toBe(true);
      // A command whose start races kit.close() (close finds no terminal yet): refused, and it does not survive.
      const pidFile = path.join(os.tmpdir(), `acp-agent-race-${process.pid}`);
      fs.rmSync(pidFile, { force: true });
      const racing = kit.createTerminal(promptCtx, { sessionId: 's2', command: `echo $$ > ${pidFile}; exec sleep 60` }).then(
        () => 'started',
        (e: unknown) => e,
      );
      await kit.close();
      await until(() => pids.get('s2')!.every((pid) => !alive(pid)), 5000);
      expect(await racing).toMatchObject({ code: 'ERR_HOST_CLOSED' });
      if (fs.existsSync(pidFile)) expect(alive(Number(fs.readFileSync(pidFile, 'utf8')))).toBe(false);
      fs.rmSync(pidFile, { force: true });
    });
  });
});

test('release() while a client replays (its session/load not answered yet): the final update still reaches it, nothing throws', async () => {
  const kit = agentTerminals({ updateIntervalMs: 10 });
  let handle: Awaited<ReturnType<typeof kit.createTerminal>> | undefined;
  let released: unknown = 'not yet';
  const app = v1AgentApp()
    .onRequest('session/load', async () => {
      // The agent releases the terminal while answering the load: the client is mid-replay.
      await handle!.kill();
      released = await handle!.release().then(
        () => 'ok',
        (e: unknown) => e,
      );
      return {};
    })
    .onRequest('session/prompt', async (ctx) => {
      handle = await kit.createTerminal(ctx, { sessionId: 's', command: 'echo one; exec sleep 30' });
      return { stopReason: 'end_turn' };
    });
  const connector = kit.v1(app);
  const run = (op: Parameters<typeof runV1Client>[2]): Promise<SessionNotification[]> =>
    runV1Client(connector, { _meta: { terminal_output: true } }, op);
  const text = terminalOutputText;
  const exitOf = (updates: SessionNotification[]): unknown => updates.map((u) => (upd(u)._meta as { terminal_exit?: unknown })?.terminal_exit).find(Boolean);
  await run(async (ctx, updates) => {
    await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
    await ctx.request('session/prompt', { sessionId: 's', prompt: [] });
    await until(() => text(updates) === 'one\n');
  });
  const second = await run(async (ctx, updates) => {
    await ctx.request('session/load', { sessionId: 's', cwd: '/tmp', mcpServers: [] });
    await until(() => exitOf(updates));
  });
  expect(released).toBe('ok');
  expect(upd(second[0]!)).toMatchObject({ sessionUpdate: 'tool_call', _meta: { terminal_info: { terminal_id: handle!.id } } });
  expect(text(second)).toBe('one\n');
  expect(exitOf(second)).toMatchObject({ terminal_id: handle!.id, exit_code: null, signal: 'SIGTERM' });
  expect(alive(handle!.pid!)).toBe(false);
  // Once the replay went out, the released terminal is forgotten.
  expect(kit.outputStats(handle!.id)).toBeUndefined();
  await kit.close();
});

test('the tail copies only the kept bytes of a chunk larger than its limit', () => {
  const tail = new OutputTail(4);
  tail.push(Buffer.from('ab'));
  tail.push(Buffer.from('0123456789'));
  expect(tail.all().toString()).toBe('6789');
  expect(tail.peakHeld).toBeLessThan(3 * 4);
  expect(tail.total).toBe(12);
  tail.push(Buffer.from('x'));
  expect(tail.all().toString()).toBe('789x');
});

// The ninth attack's B4 through the kit: with a remote backend's createTerminal, the server could queue
// the exit of a command that exits at once before it read the kit's `subscribe` (sent in the tick that
// got the handle); the exit update then went out, and the report unsubscribed, before any output came.
describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built`)('a remote createTerminal', () => {
  test('the exit update holds the output of a command the server saw exit before the kit subscribed', async () => {
    const backend = backends.command([HOST_SERVER]);
    const text = Array.from({ length: 1000 }, (_, i) => String.fromCharCode(33 + (i % 89))).join('');
    const kit = agentTerminals({
      createTerminal: async (params, options) => {
        const t = await backend.createTerminal(params, options);
        // Nothing is read until the command is gone and its exit queued; the kit subscribes after this.
        blockUntilGone(t.pid);
        return t;
      },
    });
    let total: number | undefined;
    const connector = kit.v1(
      v1AgentApp().onRequest('session/prompt', async (ctx) => {
        const t = await kit.createTerminal(ctx, { sessionId: 's', command: 'printf', args: ['%s', text] });
        await t.waitForExit();
        total = kit.outputStats(t.id)?.totalBytes;
        await t.release();
        return { stopReason: 'end_turn' };
      }),
    );
    try {
      const updates = await runV1Client(connector, {}, async (ctx) => {
        await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
        await ctx.request('session/prompt', { sessionId: 's', prompt: [] });
      });
      expect(total).toBe(1000);
      const last = upd(updates.at(-1)!);
      expect(last.status).toBe('completed');
      expect((last.content as Array<{ content: { text: string } }>)[0]!.content.text).toBe(`${text}\n[exit code 0]`);
    } finally {
      await kit.close();
      await backend.close();
    }
  });
});
