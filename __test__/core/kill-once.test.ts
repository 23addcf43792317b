// One kill, one SIGTERM per process: the escalation reaches a terminal's processes through several
// ways (its process group, its cgroups, a pty's session), and a process in several of them still
// gets TERM once (KILL only after the grace). A shell that traps TERM prints a line per delivery;
// 300 kills each, on pipes and ptys, directly and through TerminalHost.
import { TerminalHost } from '../../ts/host';
import type { CreateTerminalFn, TerminalLike } from '../../ts/types';
import { createTerminal } from './helpers';

const RUNS = 300;
const AT_ONCE = 6;
const GRACE_MS = 5000;
// bash runs its trap once per TERM it received; after the first it waits 100 ms (a second TERM
// of the same kill would have arrived by then and run the trap again) and exits by itself.
const command = `trap 'echo TERM; t=1' TERM; echo ready; while :; do sleep 0.01; if [ -n "$t" ]; then sleep 0.1; exit 0; fi; done`;
const PTY = { cols: 80, rows: 24 };
const modes = [
  ['a pipe', undefined],
  ['a pty', PTY],
] as const;

/** Runs `one` RUNS times, AT_ONCE at a time; returns the outputs of the runs that saw TERM other than once. */
async function repeat(one: () => Promise<string>): Promise<string[]> {
  const failures: string[] = [];
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < RUNS) {
      started++;
      const out = await one();
      if ((out.match(/TERM/g) ?? []).length !== 1) failures.push(out);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return failures;
}

/** Waits until the command printed `ready` (its trap is set), on its output events. */
function ready(terminal: TerminalLike): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    const off = terminal.onOutput(
      (chunk) => {
        seen += chunk.toString();
        if (seen.includes('ready')) {
          off();
          resolve();
        }
      },
      { replay: true },
    );
  });
}

describe.each(modes)('on %s', (_name, pty) => {
  const options = { killGraceMs: GRACE_MS, ...(pty ? { pty } : {}) };

  test(`kill() sends SIGTERM once to a process that traps it (${RUNS} runs)`, async () => {
    const failures = await repeat(async () => {
      const t = await createTerminal({ command: 'bash', args: ['-c', command] }, options);
      try {
        await ready(t);
        await t.kill();
        expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
        return (await t.currentOutput()).output;
      } finally {
        await t.release();
      }
    });
    expect(failures).toEqual([]);
  });

  test(`TerminalHost's killTerminal sends SIGTERM once to a process that traps it (${RUNS} runs)`, async () => {
    const backend: CreateTerminalFn = (params, opts) => createTerminal(params, { ...opts, ...options });
    const host = new TerminalHost({ createTerminal: backend });
    const started = new Map<string, Promise<void>>();
    host.onCreate(({ terminalId, terminal }) => started.set(terminalId, ready(terminal)));
    try {
      const failures = await repeat(async () => {
        const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'bash', args: ['-c', command] });
        const request = { sessionId: 's', terminalId };
        try {
          await started.get(terminalId);
          await host.killTerminal(request);
          expect(await host.waitForTerminalExit(request)).toEqual({ exitCode: 0, signal: null });
          return (await host.terminalOutput(request)).output;
        } finally {
          await host.releaseTerminal(request);
        }
      });
      expect(failures).toEqual([]);
    } finally {
      await host.close();
    }
  });
});
