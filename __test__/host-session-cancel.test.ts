// The client's session/cancel as a safety net for agents that neither kill nor release their terminal after
// a cancel (fast-agent 0.10.48 did so on every run): the host sees the cancel on the wire, as it sees
// session/new, and after `killAfterCancelMs` kills that session's commands still running from before the
// cancel (an audited `killed`, reason `cancel`); their output stays readable until they are released.
import * as fs from 'node:fs';
import { agent, PROTOCOL_VERSION, type AgentApp } from '@agentclientprotocol/sdk';
import type { TerminalAuditEvent } from '../ts/events';
import { DEFAULT_KILL_AFTER_CANCEL_MS, TerminalHost } from '../ts/host';
import { createTestClient } from '../ts/testclient';
import { describeIf } from './fixtures/require-feature';

/** Live (not zombie) processes of process group `pgid`, read from /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
  }
  return members;
}

/** Waits until `pgid` has no live member (the kill ends the group; its members are reaped a moment later). */
async function groupGone(pgid: number): Promise<number[]> {
  const deadline = Date.now() + 5000;
  while (groupMembers(pgid).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return groupMembers(pgid);
}

/** Resolves with the first audit event of `host` matching `predicate` (from now on). */
function nextEvent(host: TerminalHost, predicate: (e: TerminalAuditEvent) => boolean): Promise<TerminalAuditEvent> {
  return new Promise((resolve) => {
    const off = host.onEvent((e) => {
      if (predicate(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/**
 * fast-agent's behaviour: a prompt starts a command with two background children in the client's terminal,
 * shows it in a tool call, and on session/cancel ends the turn as cancelled, without terminal/kill or
 * terminal/release.
 */
function agentThatIgnoresItsTerminalOnCancel(): AgentApp {
  const cancelled = new Map<string, () => void>();
  return agent({ name: 'fast-agent-like' })
    .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }))
    .onRequest('session/new', () => ({ sessionId: `sess-${cancelled.size + 1}` }))
    .onNotification('session/cancel', (ctx) => cancelled.get(ctx.params.sessionId)?.())
    .onRequest('session/prompt', async (ctx) => {
      const { sessionId } = ctx.params;
      const turnCancelled = new Promise<void>((resolve) => cancelled.set(sessionId, resolve));
      const terminal = await ctx.client.createTerminal({ sessionId, command: 'sleep 30 & sleep 30 & echo started; wait' });
      await ctx.client.notify('session/update', {
        sessionId,
        update: { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'long job', content: [{ type: 'terminal', terminalId: terminal.id }] },
      });
      await turnCancelled;
      return { stopReason: 'cancelled' }; // ...and the terminal is left as it is
    });
}

/** Starts a prompt whose command runs; resolves with the terminal's id and pid, and the session. */
async function startLongJob(tc: Awaited<ReturnType<typeof createTestClient>>) {
  const { agent: ctx } = await tc.connect(agentThatIgnoresItsTerminalOnCancel());
  const session = await ctx.buildSession('/tmp').start();
  const turn = session.prompt('run the long job');
  const update = await tc.waitForUpdate((n) => n.update.sessionUpdate === 'tool_call');
  const content = update.update.sessionUpdate === 'tool_call' ? update.update.content?.[0] : undefined;
  const terminalId = content?.type === 'terminal' ? content.terminalId : '';
  const live = tc.host.listTerminals().find((t) => t.terminalId === terminalId)!;
  // The command and both of its children run (wait for the echo: the children were started before it).
  for (;;) {
    const out = await tc.output(terminalId);
    if (out?.output.includes('started')) break;
    await new Promise((r) => setImmediate(r));
  }
  return { ctx, session, turn, terminalId, pid: live.pid, sessionId: update.sessionId };
}

test('the default grace is 2 s', () => {
  expect(DEFAULT_KILL_AFTER_CANCEL_MS).toBe(2000);
});

describeIf('linux', process.platform === 'linux', 'the process group is read from /proc')('after session/cancel (Linux: the process group is read from /proc)', () => {
  test('the commands the agent left running are killed after the grace, audited; the output stays readable until released', async () => {
    await using tc = await createTestClient({ host: { killAfterCancelMs: 300 } });
    const events: TerminalAuditEvent[] = [];
    tc.host.onEvent((e) => void events.push(e));
    const { ctx, turn, terminalId, pid, sessionId } = await startLongJob(tc);
    expect(groupMembers(pid).length).toBe(3); // sh and its two sleeps

    const killed = nextEvent(tc.host, (e) => e.type === 'killed');
    const exited = nextEvent(tc.host, (e) => e.type === 'exited');
    const cancelledAt = Date.now();
    await ctx.notify('session/cancel', { sessionId });
    await expect(turn).resolves.toMatchObject({ stopReason: 'cancelled' });
    // The agent answered the cancel and did nothing more: everything still runs until the grace is over.
    expect(groupMembers(pid).length).toBe(3);

    await expect(killed).resolves.toMatchObject({ type: 'killed', terminalId, sessionId, reason: 'cancel', wasRunning: true });
    expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(290);
    await expect(exited).resolves.toMatchObject({ exitStatus: { exitCode: null, signal: 'SIGTERM' } });
    await expect(groupGone(pid)).resolves.toEqual([]); // the whole group, children included

    // Killed, not released: the client (and the agent) can still read it.
    await expect(tc.output(terminalId)).resolves.toEqual({ output: 'started\n', truncated: false, exitStatus: { exitCode: null, signal: 'SIGTERM' } });
    expect(tc.host.listTerminals().map((t) => t.terminalId)).toEqual([terminalId]);
    expect(events.filter((e) => e.type === 'released')).toEqual([]);
  });

  test('killAfterCancelMs: false kills nothing on a cancel; another session and later commands are not touched', async () => {
    await using off = await createTestClient({ host: { killAfterCancelMs: false } });
    await using on = await createTestClient({ host: { killAfterCancelMs: 100 } });
    const kept = await startLongJob(off);
    const cut = await startLongJob(on);
    const killed = nextEvent(on.host, (e) => e.type === 'killed');
    await off.host.cancelSession(kept.sessionId); // resolves at once: nothing is scheduled
    await kept.ctx.notify('session/cancel', { sessionId: kept.sessionId });
    await cut.ctx.notify('session/cancel', { sessionId: cut.sessionId });
    // A command the same session starts after its cancel is not the cancelled turn's.
    const later = await on.host.createTerminal({ sessionId: cut.sessionId, command: 'sleep 30' });
    await killed;
    await on.host.waitForTerminalExit({ sessionId: cut.sessionId, terminalId: cut.terminalId });
    await expect(groupGone(cut.pid)).resolves.toEqual([]);
    expect(on.host.listTerminals().find((t) => t.terminalId === later.terminalId)?.running).toBe(true);
    expect(groupMembers(kept.pid).length).toBe(3);
    expect(off.host.listTerminals()[0]!.running).toBe(true);
  });
});

test('a command that ended before the grace is not killed again; a bad option or session id is refused naming it', async () => {
  const events: TerminalAuditEvent[] = [];
  const host = new TerminalHost({ killAfterCancelMs: 50, onEvent: (e) => void events.push(e) });
  const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'exit 0' });
  const cancelled = host.cancelSession('s'); // scheduled: the command may still run now
  await host.waitForTerminalExit({ sessionId: 's', terminalId });
  await cancelled;
  expect(events.filter((e) => e.type === 'killed')).toEqual([]);
  expect(() => host.cancelSession(1 as unknown as string)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
  expect(() => new TerminalHost({ killAfterCancelMs: -5 })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.killAfterCancelMs') }));
  await host.close();
});
