// The v2 bridge on real commands (native core): the updates, decoded back, equal the command's bytes.
import { execFileSync } from 'node:child_process';
import type { UpdateSessionNotification } from '@agentclientprotocol/sdk/experimental/v2';
import { startV2Terminal } from '../ts/v2';
import { v2Schema } from './fixtures/json-schema';
import { replayV2 } from './fixtures/v2-replay';

const schema = v2Schema();
const sessionId = 'native-v2';
// Multi-byte characters, escape sequences and enough volume to arrive in many chunks.
const command = `i=0; while [ $i -lt 3000 ]; do printf 'line %d €✓ \\033[1mbold\\033[0m\\n' $i; i=$((i+1)); done; printf 'no newline'`;

test('decoded updates equal the command output byte for byte and every update is schema-valid', async () => {
  const expected = execFileSync('/bin/sh', ['-c', command]);
  const sent: UpdateSessionNotification[] = [];
  const bridge = await startV2Terminal({ sessionId, command, cwd: '/tmp' }, { send: (n) => void sent.push(n) });
  await expect(bridge.done).resolves.toEqual({ exitCode: 0, signal: null });
  const shown = replayV2(sent).get(bridge.terminalId)!;
  expect(shown.bytes.equals(expected)).toBe(true);
  expect(shown).toMatchObject({ command, cwd: '/tmp', exitStatus: { exitCode: 0, signal: null }, cancellable: false });
  for (const n of sent) expect(schema.validate('UpdateSessionNotification', n)).toEqual([]);
  await bridge.terminal.release();
});

test('cancel stops a real command and the final update carries the signal', async () => {
  const sent: UpdateSessionNotification[] = [];
  const bridge = await startV2Terminal({ sessionId, command: 'echo ready; exec sleep 60' }, { send: (n) => void sent.push(n) });
  // Cancel only once the command printed (poll the state; no fixed delay).
  while (!(await bridge.terminal.currentOutput()).output.includes('ready')) await new Promise((r) => setTimeout(r, 20));
  await bridge.cancel();
  await expect(bridge.done).resolves.toEqual({ exitCode: null, signal: 'SIGTERM' });
  const shown = replayV2(sent).get(bridge.terminalId)!;
  expect(shown.bytes.toString()).toBe('ready\n');
  expect(shown.exitStatus).toEqual({ exitCode: null, signal: 'SIGTERM' });
  await bridge.terminal.release();
});
