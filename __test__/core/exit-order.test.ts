// The exit is reported after the last byte reached every listener: `waitForExit()`, TerminalHost's
// `exited` event and the v2 bridge's `done` come after each `onOutput` listener received the whole
// output, on pipes and on ptys. Each case runs 300 commands (a few at a time) that end right after
// writing to both streams, the pattern where the tail used to arrive a turn of the event loop late.
import type { UpdateSessionNotification } from '@agentclientprotocol/sdk/experimental/v2';
import { TerminalHost } from '../../ts/host';
import type { CreateTerminalFn } from '../../ts/types';
import { startV2Terminal } from '../../ts/v2';
import { createTerminal } from './helpers';

const RUNS = 300;
const AT_ONCE = 6;
const command = 'echo a; echo b >&2; exit 3';
const PTY = { cols: 80, rows: 24 };
const modes = [
  ['a pipe', undefined, 'a\nb\n'],
  ['a pty', PTY, 'a\r\nb\r\n'],
] as const;

/** Runs `one` RUNS times, AT_ONCE at a time; returns the runs whose listener missed bytes at the exit. */
async function repeat(one: () => Promise<string | undefined>): Promise<string[]> {
  const failures: string[] = [];
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < RUNS) {
      started++;
      const failure = await one();
      if (failure !== undefined) failures.push(failure);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return failures;
}

describe.each(modes)('on %s', (_name, pty, expected) => {
  test(`waitForExit() resolves after every listener received the last byte (${RUNS} runs)`, async () => {
    const failures = await repeat(async () => {
      let first = '';
      let second = '';
      const t = await createTerminal({ command }, { onOutput: (c) => (first += c.toString()), ...(pty ? { pty } : {}) });
      t.onOutput((c) => (second += c.toString()));
      try {
        const status = await t.waitForExit();
        expect(status).toEqual({ exitCode: 3, signal: null });
        const seen = [first, second];
        return seen.every((s) => s === expected) ? undefined : JSON.stringify(seen);
      } finally {
        await t.release();
      }
    });
    expect(failures).toEqual([]);
  });

  test(`currentOutput() shows the exit status only after every listener received the last byte (${RUNS} runs)`, async () => {
    const failures = await repeat(async () => {
      let seen = '';
      const t = await createTerminal({ command }, pty ? { pty } : {});
      t.onOutput((c) => (seen += c.toString()));
      try {
        // Poll until the exit shows: by then the listener has the whole output.
        for (;;) {
          const out = await t.currentOutput();
          if (out.exitStatus) return seen === expected ? undefined : JSON.stringify(seen);
          await new Promise((r) => setImmediate(r));
        }
      } finally {
        await t.release();
      }
    });
    expect(failures).toEqual([]);
  });

  test(`TerminalHost emits 'exited' after the onCreate listener received the last byte (${RUNS} runs)`, async () => {
    const backend: CreateTerminalFn = (params, options) => createTerminal(params, { ...options, ...(pty ? { pty } : {}) });
    const seen = new Map<string, string>();
    const atExit = new Map<string, string>();
    const exited = new Map<string, () => void>();
    const host = new TerminalHost({
      createTerminal: backend,
      onEvent: (e) => {
        if (e.type !== 'exited') return;
        atExit.set(e.terminalId, seen.get(e.terminalId) ?? '');
        exited.get(e.terminalId)?.();
      },
    });
    host.onCreate(({ terminalId, terminal }) => {
      seen.set(terminalId, '');
      terminal.onOutput((c: Buffer) => seen.set(terminalId, seen.get(terminalId) + c.toString()));
    });
    try {
      const failures = await repeat(async () => {
        let done!: () => void;
        const gotExit = new Promise<void>((r) => (done = r));
        const { terminalId } = await host.createTerminal({ sessionId: 's', command });
        exited.set(terminalId, done);
        if (atExit.has(terminalId)) done();
        await gotExit;
        const status = await host.waitForTerminalExit({ sessionId: 's', terminalId });
        expect(status).toEqual({ exitCode: 3, signal: null });
        await host.releaseTerminal({ sessionId: 's', terminalId });
        const got = atExit.get(terminalId);
        return got === expected ? undefined : JSON.stringify(got);
      });
      expect(failures).toEqual([]);
    } finally {
      await host.close();
    }
  });

  test(`the v2 bridge's updates and done come after a listener of its terminal received the last byte (${RUNS} runs)`, async () => {
    const failures = await repeat(async () => {
      const sent: UpdateSessionNotification[] = [];
      let streamed = '';
      let seen = '';
      let atExit: string | undefined;
      const bridge = await startV2Terminal(
        { sessionId: 's', command },
        {
          send: (n) => {
            const u = n.update as { sessionUpdate: string; data?: string; exitStatus?: unknown };
            if (u.sessionUpdate === 'terminal_output_chunk') streamed += Buffer.from(u.data!, 'base64').toString();
            if (u.exitStatus) {
              sent.push(n);
              atExit = seen;
            }
          },
          ...(pty ? { pty } : {}),
        },
      );
      bridge.terminal.onOutput((c: Buffer) => (seen += c.toString()));
      try {
        const status = await bridge.done;
        expect(status).toEqual({ exitCode: 3, signal: null });
        const final = sent[0]?.update as { output?: unknown } | undefined;
        const ok = atExit === expected && streamed === expected && final !== undefined && final.output === undefined;
        return ok ? undefined : JSON.stringify({ atExit, streamed, final });
      } finally {
        await bridge.terminal.release();
      }
    });
    expect(failures).toEqual([]);
  });
});
