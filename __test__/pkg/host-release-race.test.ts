// Issue 10 ("also seen"): `host.close()` right after `waitForTerminalExit` resolved must report the
// release with `wasRunning: false`: the caller saw the exit, so the host's audit trail must agree.
// The race depended on which of two waitForExit() continuations ran first, so the test loops.
import { TerminalHost } from '../../ts/host';
import type { TerminalAuditEvent } from '../../ts/events';

const ROUNDS = 60;

test(`released says wasRunning: false after waitForTerminalExit, ${ROUNDS} rounds on real commands`, async () => {
  const wrong: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const events: TerminalAuditEvent[] = [];
    const host = new TerminalHost({ onEvent: (e) => void events.push(e) });
    const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'true' });
    await host.waitForTerminalExit({ sessionId: 's', terminalId });
    await host.close();
    const types = events.map((e) => e.type);
    const released = events.find((e) => e.type === 'released');
    if (types.join() !== 'created,exited,released' || released?.type !== 'released' || released.wasRunning) {
      wrong.push(`round ${round}: ${JSON.stringify(events.map((e) => [e.type, 'wasRunning' in e ? e.wasRunning : '-']))}`);
    }
  }
  expect(wrong).toEqual([]);
});

test('the same after killTerminal + waitForTerminalExit: killed says wasRunning: true, released false', async () => {
  for (let round = 0; round < 20; round++) {
    const events: TerminalAuditEvent[] = [];
    const host = new TerminalHost({ onEvent: (e) => void events.push(e) });
    const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'sleep', args: ['30'] });
    await host.killTerminal({ sessionId: 's', terminalId });
    await host.waitForTerminalExit({ sessionId: 's', terminalId });
    await host.close();
    expect(events.map((e) => [e.type, 'wasRunning' in e ? e.wasRunning : '-'])).toEqual([
      ['created', '-'],
      ['killed', true],
      ['exited', '-'],
      ['released', false],
    ]);
  }
});
