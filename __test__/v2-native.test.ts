// The v2 bridge on real commands (native core): the updates, decoded back, equal the command's bytes.
import { execFileSync } from 'node:child_process';
import type { UpdateSessionNotification } from '@agentclientprotocol/sdk/experimental/v2';
import { startV2Terminal } from '../ts/v2';
import { v2Schema } from './fixtures/json-schema';
import { replayV2 } from './fixtures/v2-replay';
import { pacedLines } from './fixtures/paced-lines';

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

test('a 20 MB command streams every byte as output chunks (the listener is attached at creation; no repair needed)', async () => {
  const lines = 1_400_000;
  const big = pacedLines(lines);
  const expected = execFileSync('/bin/sh', ['-c', big], { maxBuffer: 64 * 1024 * 1024 });
  expect(expected.length).toBe(21_000_000);
  const sent: UpdateSessionNotification[] = [];
  // A small retained tail: the final snapshot could not repair a gap in the stream.
  const bridge = await startV2Terminal({ sessionId, command: big, outputByteLimit: 4096 }, { send: (n) => void sent.push(n) });
  await expect(bridge.done).resolves.toEqual({ exitCode: 0, signal: null });
  // Only output chunks carry the bytes: the final update has no replacement snapshot.
  const final = sent[sent.length - 1]!.update as { sessionUpdate: string; output?: unknown; exitStatus?: unknown };
  expect(final).toMatchObject({ sessionUpdate: 'terminal_update', exitStatus: { exitCode: 0, signal: null } });
  expect(final.output).toBeUndefined();
  const chunks = sent
    .filter((n) => n.update.sessionUpdate === 'terminal_output_chunk')
    .map((n) => Buffer.from((n.update as { data: string }).data, 'base64'));
  expect(Buffer.concat(chunks).equals(expected)).toBe(true);
  await bridge.terminal.release();
}, 120_000);
