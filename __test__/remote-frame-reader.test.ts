/**
 * The near side's reader of a far end's frames does work linear in what it receives: a hostile far end
 * that announces a large frame and streams it in small chunks cannot make it copy the pending bytes again
 * on every chunk (fifth attack, x9: a 64 MiB frame blocked the host's event loop for ~40 s).
 */
import { FrameReader, KIND_OUTPUT, MAX_INCOMING_FRAME } from '../ts/backends/protocol';

function outputFrame(data: Buffer): Buffer {
  const header = Buffer.alloc(4 + 1 + 12);
  header.writeUInt32BE(1 + 12 + data.length, 0);
  header[4] = KIND_OUTPUT;
  header.writeUInt32BE(7, 5);
  header.writeBigUInt64BE(0n, 9);
  return Buffer.concat([header, data]);
}

test('a frame streamed in many chunks is joined once: bytes copied stay linear in its size', () => {
  const reader = new FrameReader();
  reader.push(Buffer.from('noise\n\x1eACP-TERMINAL-SERVER/2 1.0.0\n'));
  const data = Buffer.alloc(8 << 20, 0x61);
  const frame = outputFrame(data);
  const original = Buffer.concat;
  let copied = 0;
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    copied += list.reduce((n, b) => n + b.length, 0);
    return original.call(Buffer, list, total);
  }) as typeof Buffer.concat;
  const messages = [];
  try {
    for (let off = 0; off < frame.length; off += 16 * 1024) messages.push(...reader.push(frame.subarray(off, off + 16 * 1024)));
  } finally {
    Buffer.concat = original;
  }
  expect(messages).toHaveLength(1);
  expect(messages[0]).toMatchObject({ kind: 'output', sub: 7, dropped: 0 });
  expect((messages[0] as { data: Buffer }).data.equals(data)).toBe(true);
  // Once per frame (plus the header's few bytes), not once per chunk (512 chunks: ~2 GiB copied).
  expect(copied).toBeLessThanOrEqual(2 * frame.length);
});

test('a frame header over the bound is refused before its bytes are awaited', () => {
  const reader = new FrameReader();
  reader.push(Buffer.from('\x1eACP-TERMINAL-SERVER/2 1.0.0\n'));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(MAX_INCOMING_FRAME + 1, 0);
  expect(() => reader.push(header)).toThrow(`the server sent a frame of ${MAX_INCOMING_FRAME + 1} bytes`);
});
