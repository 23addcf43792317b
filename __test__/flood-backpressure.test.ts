// A listener behind a flood holds the command back (backpressure on the reader, as
// `cmd | slow_consumer` does) instead of losing bytes: every byte reaches it, none is dropped,
// before the exit is reported; one call gets at most 256 KiB and the event loop turns between
// calls; kill and timeout work while reading waits; a terminal without a listener is not held.
import { blockingListener, createTerminal, eventually } from './core/helpers';

const MiB = 1024 * 1024;

/** A listener blocking `ms` per call that also records the interval ticks seen at each call. */
function tickedListener(ms: number) {
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const calls: number[] = [];
  const inner = blockingListener(ms);
  return {
    seen: inner.seen,
    calls,
    stop: () => clearInterval(ticker),
    listener: (chunk: Buffer, info: { dropped: number }) => {
      calls.push(ticks);
      inner.listener(chunk, info);
    },
  };
}

describe.each([
  ['a pipe', undefined],
  ['a pty', {}],
])('a listener behind a flood, on %s', (_what, pty) => {
  test('gets every byte before the exit is reported, none dropped, at most 256 KiB a call, timers running between calls', async () => {
    const total = 24 * MiB;
    const l = tickedListener(5);
    try {
      const t = await createTerminal({ command: `head -c ${total} /dev/zero`, outputByteLimit: 1024 }, { onOutput: l.listener, pty });
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      // At the exit, not eventually: the exit is ordered after the last byte.
      expect(l.seen.delivered).toBe(total);
      expect(l.seen.dropped).toBe(0);
      expect(t.outputBytes).toBe(total);
      expect(l.seen.largest).toBeLessThanOrEqual(256 * 1024);
      await t.release();
    } finally {
      l.stop();
    }
    // Calls in one turn of the loop (no tick between them), but the exit's delivery (the last
    // run): the threadsafe call and at most one setImmediate after it.
    const runs: number[] = [];
    for (let i = 0; i < l.calls.length; i++) {
      if (i > 0 && l.calls[i] === l.calls[i - 1]) runs[runs.length - 1]!++;
      else runs.push(1);
    }
    runs.pop();
    expect(runs.length).toBeGreaterThan(10);
    expect(Math.max(...runs)).toBeLessThanOrEqual(2);
  });

  test('holds the command back while it is blocked: what is read stays near the pause mark (2 MiB)', async () => {
    // The first call blocks the JS thread 400 ms: a reader that kept reading would take the
    // whole 64 MiB meanwhile.
    let first = true;
    let readDuringBlock = -1;
    let delivered = 0;
    let dropped = 0;
    const t = await createTerminal({ command: `head -c ${64 * MiB} /dev/zero`, outputByteLimit: 1024 }, { pty });
    // Attached in the tick that receives the handle: it gets the output from its first byte.
    t.onOutput((chunk, info) => {
      delivered += chunk.length;
      dropped += info.dropped;
      if (first) {
        first = false;
        const until = Date.now() + 400;
        while (Date.now() < until) {
          // blocks the JS thread
        }
        readDuringBlock = t.outputBytes;
      }
    });
    await t.waitForExit();
    expect(delivered).toBe(64 * MiB);
    expect(dropped).toBe(0);
    expect(readDuringBlock).toBeGreaterThan(0);
    // Bounded by the larger of the first-output hold (4 MiB, read before the listener is attached
    // in the handle's tick and then replayed to it) and the pause mark (2 MiB) plus the first
    // chunk, each overshot by at most one read (1 MiB): far from the 64 MiB a reader that kept
    // reading would take. A flood's reads are 1 MiB once paced, so the hold's overshoot is too.
    expect(readDuringBlock).toBeLessThanOrEqual(5 * MiB);
    await t.release();
  });

  test('kill() works while reading waits for the listener, and the exit still follows its last byte', async () => {
    const { listener, seen } = blockingListener(30);
    const t = await createTerminal({ command: 'yes', outputByteLimit: 1024 }, { onOutput: listener, pty });
    await eventually(() => seen.calls >= 3, 'the listener is called');
    await t.kill();
    const exit = await t.waitForExit();
    expect(exit.signal).toBe('SIGTERM');
    expect(seen.delivered).toBe(t.outputBytes);
    expect(seen.dropped).toBe(0);
    await t.release();
  });

  test('timeoutMs works while reading waits for the listener', async () => {
    const { listener, seen } = blockingListener(30);
    const t = await createTerminal({ command: 'yes', outputByteLimit: 1024 }, { onOutput: listener, pty, timeoutMs: 300 });
    const exit = await t.waitForExit();
    expect(exit.signal).toBe('SIGTERM');
    expect(t.timedOut).toBe(true);
    expect(seen.delivered).toBe(t.outputBytes);
    expect(seen.dropped).toBe(0);
    await t.release();
  });
});

test('a listener that unsubscribes while reading waits for it lets the command run on', async () => {
  let unsubscribe: (() => void) | undefined;
  let calls = 0;
  const t = await createTerminal({ command: `head -c ${64 * MiB} /dev/zero`, outputByteLimit: 1024 });
  unsubscribe = t.onOutput(() => {
    calls++;
    const until = Date.now() + 200;
    while (Date.now() < until) {
      // blocks the JS thread: the reader pauses for this listener
    }
    unsubscribe?.();
    unsubscribe = undefined;
  });
  expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
  expect(calls).toBe(1);
  expect(t.outputBytes).toBe(64 * MiB);
  await t.release();
});

test('a terminal without a listener is not held back by a slow listener of another terminal', async () => {
  // The slow terminal's listener keeps its reader waiting; the other terminal's 64 MiB still
  // flow, and it exits first.
  const { listener, seen } = blockingListener(20);
  const slow = await createTerminal({ command: 'yes', outputByteLimit: 1024 }, { onOutput: listener });
  await eventually(() => seen.calls >= 2, 'the slow listener is called');
  const free = await createTerminal({ command: `head -c ${64 * MiB} /dev/zero`, outputByteLimit: 1024 });
  expect(await free.waitForExit()).toEqual({ exitCode: 0, signal: null });
  expect(free.outputBytes).toBe(64 * MiB);
  expect((await slow.currentOutput()).exitStatus ?? null).toBeNull();
  await free.release();
  await slow.kill();
  await slow.waitForExit();
  expect(seen.delivered).toBe(slow.outputBytes);
  expect(seen.dropped).toBe(0);
  await slow.release();
});
