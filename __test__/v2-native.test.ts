// The v2 bridge on real commands (native core): the updates, decoded back, equal the command's bytes.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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

// 6 MB, below the listener's 8 MiB pending bound: a JS thread starved by a loaded machine may fall
// behind, but never far enough for the core to drop bytes (a drop, reported to the listener, is the
// documented overload behaviour and would make this exact comparison depend on the machine's load).
test('a 6 MB command streams every byte as output chunks (the listener is attached at creation; no repair needed)', async () => {
  const lines = 400_000;
  const big = pacedLines(lines);
  const expected = execFileSync('/bin/sh', ['-c', big], { maxBuffer: 64 * 1024 * 1024 });
  expect(expected.length).toBe(6_000_000);
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

test('a pty terminal: size in the first update, an update on resize, and the command sees each size (schema-valid)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-v2-pty-'));
  const flag = path.join(dir, 'go');
  const sent: UpdateSessionNotification[] = [];
  try {
    const bridge = await startV2Terminal(
      { sessionId, command: `stty size; while [ ! -e '${flag}' ]; do sleep 0.02; done; stty size` },
      { send: (n) => void sent.push(n), pty: { cols: 100, rows: 30 } },
    );
    while (!(await bridge.terminal.currentOutput()).output.includes('30 100')) await new Promise((r) => setTimeout(r, 20));
    await bridge.resize(120, 40);
    fs.writeFileSync(flag, '');
    await expect(bridge.done).resolves.toEqual({ exitCode: 0, signal: null });
    expect(sent[0]!.update).toMatchObject({ sessionUpdate: 'terminal_update', size: { cols: 100, rows: 30 } });
    const resized = sent.findIndex((n) => (n.update as { size?: { cols?: number } }).size?.cols === 120);
    expect(sent[resized]!.update).toEqual({ sessionUpdate: 'terminal_update', terminalId: bridge.terminalId, size: { cols: 120, rows: 40 } });
    // The output written at the new size comes after the update that announced it.
    const before = replayV2(sent.slice(0, resized)).get(bridge.terminalId)!;
    expect(before.bytes.toString()).not.toContain('40 120');
    const shown = replayV2(sent).get(bridge.terminalId)!;
    expect(shown.bytes.toString()).toMatch(/30 100\r\n[^]*40 120\r\n/);
    expect(shown.size).toEqual({ cols: 120, rows: 40 });
    for (const n of sent) expect(schema.validate('UpdateSessionNotification', n)).toEqual([]);
    await bridge.terminal.release();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
