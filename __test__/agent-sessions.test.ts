// agentTerminals().shellSessions(): each execute of a persistent ShellSessions session shows live in the
// client (one display terminal per command), keeps streaming across `running` results, shows typed input
// and C-c, and ends with the command's exit status; v2 checked with a Zed-style decoder, v1 with its zod.
import { agentTerminals } from '../ts/agent-terminals';
import { ShellSessions } from '../ts/sessions';
import { runV1Client, runV2Client, until, v1AgentApp, v2AgentApp } from './fixtures/agent-apps';
import { ZedTerminalDecoder } from './fixtures/zed-terminal-decoder';

describe('ShellSessions reported live', () => {
  let shells: ShellSessions;
  beforeEach(() => {
    shells = new ShellSessions({ cwd: '/tmp' });
  });
  afterEach(async () => {
    await shells.closeAll();
  });

  test('v2: a running command streams between calls; typed input and ^C are shown; exit 130 after the last byte', async () => {
    const kit = agentTerminals({ updateIntervalMs: 10 });
    const reported = kit.shellSessions(shells);
    let agentCtx: unknown;
    const app = v2AgentApp((ctx) => {
      agentCtx = ctx;
      return { sessionId: 's' };
    });
    const zed = new ZedTerminalDecoder();
    await runV2Client(kit.v2(app), async (ctx, seen) => {
      await ctx.request('session/new', { cwd: '/tmp' });
      let decoded = 0;
      const shown = (): string => {
        for (const n of seen.slice(decoded)) zed.apply(n as never);
        decoded = seen.length;
        return [...zed.terminals.values()].map((t) => t.output.toString()).join('|');
      };
      const first = await reported.execute(agentCtx, 's', { command: 'read -r x; echo "got $x"; i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.1; done', timeoutMs: 300 });
      expect(first.status).toBe('running');
      const typed = await reported.execute(agentCtx, 's', { command: 'hello', isInput: true, timeoutMs: 500 });
      expect(typed.status).toBe('running');
      // No call pending: the display keeps streaming.
      await until(() => /tick 3\r?\n/.test(shown()));
      const mid = shown();
      await until(() => shown().length > mid.length);
      const stopped = await reported.execute(agentCtx, 's', { command: 'C-c', timeoutMs: 5000 });
      expect(stopped.status).toBe('completed');
      expect(stopped.exitCode).toBe(130);
      await until(() => {
        shown();
        return [...zed.terminals.values()][0]?.exitStatus;
      });
      expect(zed.terminals.size).toBe(1);
      const terminal = [...zed.terminals.values()][0]!;
      const text = terminal.output.toString();
      expect(text.startsWith('hello\r\n')).toBe(true);
      expect(text).toContain('got hello');
      expect(text).toMatch(/tick 3\r?\n/);
      // ^C shown once, where it was pressed (a tick already on its way may follow it).
      expect(text.split('^C')).toHaveLength(2);
      expect(text.indexOf('^C')).toBeGreaterThan(text.indexOf('tick 3'));
      expect(text.slice(text.indexOf('^C'))).toMatch(/^\^C(\s|tick \d+\r?\n)*$/);
      expect(terminal).toMatchObject({ command: expect.stringContaining('read -r x'), exitStatus: { exitCode: 130, signal: null }, bytesAfterExit: 0 });
      // The next command is a new display terminal.
      await reported.execute(agentCtx, 's', { command: 'echo second' });
      await until(() => {
        shown();
        return zed.terminals.size === 2 && [...zed.terminals.values()][1]!.exitStatus;
      });
      expect([...zed.terminals.values()][1]!.output.toString()).toBe('second\r\n');
    });
    reported.close();
    await kit.close();
  }, 60_000);

  test('v1 _meta form: the running command is cancelled by session/cancel through the session (C-c)', async () => {
    const kit = agentTerminals({ updateIntervalMs: 10 });
    const reported = kit.shellSessions(shells);
    let agentCtx: unknown;
    const app = v1AgentApp((ctx) => {
      agentCtx = ctx;
      return { sessionId: 's' };
    }).onNotification('session/cancel', () => undefined);
    const seen = await runV1Client(kit.v1(app), { _meta: { terminal_output_delta: true } }, async (ctx, updates) => {
      await ctx.request('session/new', { cwd: '/tmp', mcpServers: [] });
      const result = await reported.execute(agentCtx, 's', { command: 'echo started; sleep 30', timeoutMs: 300 });
      expect(result.status).toBe('running');
      const pid = shells.shellPid()!;
      expect(pid).toBeGreaterThan(0);
      await ctx.notify('session/cancel', { sessionId: 's' });
      await until(() => updates.some((n) => (n.update as { _meta?: { terminal_exit?: unknown } })._meta?.terminal_exit));
    });
    const updates = seen.map((n) => n.update as { sessionUpdate: string; _meta?: Record<string, { data?: string }> });
    expect(updates[0]).toMatchObject({ sessionUpdate: 'tool_call', _meta: { terminal_info: {} } });
    const text = updates.map((u) => u._meta?.terminal_output_delta?.data ?? '').join('');
    expect(text).toContain('started');
    expect(updates.at(-1)!._meta!.terminal_exit).toMatchObject({ exit_code: 130, signal: null });
    // The session itself is alive and usable: only the command was interrupted.
    await expect(shells.execute({ command: 'echo alive' })).resolves.toMatchObject({ content: 'alive', status: 'completed' });
    reported.close();
    await kit.close();
  }, 60_000);
});
