// Streaming from the first byte: options.onOutput is attached before the command
// starts; listeners attached in the tick that receives the handle get the whole stream too.
import { TerminalHost } from '../../ts/host';
import { pacedLines } from '../fixtures/paced-lines';
import { blockingListener, createTerminal, eventually, outputReaching } from './helpers';

/** `n` distinct lines, `line 000000001\n` ...: 15 bytes each (paced: see the fixture). */
const DISTINCT = pacedLines;
function expectedLines(n: number): Buffer {
  const parts: string[] = [];
  for (let i = 1; i <= n; i++) parts.push(`line ${String(i).padStart(9, '0')}\n`);
  return Buffer.from(parts.join(''));
}
const LINES_20MB = 1_400_000; // 21,000,000 bytes
let expected20MB: Buffer;
beforeAll(() => {
  expected20MB = expectedLines(LINES_20MB);
});

/** Collects chunks and what was reported dropped (the 8 MiB bound of a listener that fell behind). */
function collector() {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let dropped = 0;
  return {
    listener: (chunk: Buffer, info?: { dropped: number }) => {
      chunks.push(chunk);
      bytes += chunk.length;
      dropped += info?.dropped ?? 0;
    },
    /** Everything delivered or reported dropped. */
    get accounted() {
      return bytes + dropped;
    },
    get bytes() {
      return bytes;
    },
    get dropped() {
      return dropped;
    },
    all: () => Buffer.concat(chunks),
  };
}

describe('createTerminal(params, { onOutput })', () => {
  test.each([
    ['everything retained', undefined],
    ['a 1 KiB outputByteLimit', 1024],
  ])('20 MB of distinct lines arrive byte-exact, exactly once, in order (%s)', async (_what, limit) => {
    // `cat` echoes the lines as this test writes them, 1 MiB at a time: the command can never run
    // more than a few MiB ahead of the JS thread, so the 8 MiB bound of a listener that falls
    // behind (a loaded machine descheduling this process) cannot drop anything here.
    const c = collector();
    const t = await createTerminal(
      { command: 'cat', ...(limit !== undefined ? { outputByteLimit: limit } : {}) },
      { onOutput: c.listener, stdin: 'pipe' },
    );
    for (let at = 0; at < expected20MB.length; at += 1 << 20) await t.write(expected20MB.subarray(at, at + (1 << 20)));
    await t.closeStdin();
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    await eventually(() => c.accounted >= t.outputBytes, 'every byte delivered');
    expect(t.outputBytes).toBe(expected20MB.length);
    expect(c.dropped).toBe(0);
    expect(c.all().equals(expected20MB)).toBe(true);
    const out = await t.currentOutput();
    expect(out.truncated).toBe(limit !== undefined);
    if (limit !== undefined) expect(out.output).toBe(expected20MB.subarray(-limit).toString());
    await t.release();
  });

  test('a command that ends at once (`printf x`) is never missed (200 runs)', async () => {
    for (let i = 0; i < 200; i++) {
      const c = collector();
      const t = await createTerminal({ command: 'printf', args: ['x'] }, { onOutput: c.listener });
      await t.waitForExit();
      await eventually(() => c.bytes >= 1, 'the byte delivered');
      await t.release();
      expect(c.all().toString()).toBe('x');
    }
  });

  test('options.onOutput that is not a function is ERR_INVALID_ARG naming it; nothing runs', async () => {
    await expect(createTerminal({ command: 'true' }, { onOutput: 5 as never })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringContaining('options.onOutput'),
    });
    const c = collector();
    const t = await createTerminal({ command: 'echo fine' }, { onOutput: null, pty: undefined });
    t.onOutput(c.listener);
    await t.waitForExit();
    await eventually(() => c.bytes >= 5, 'delivered');
    await t.release();
  });

  test('a listener blocking 100 ms per call holds the command back: every byte before the exit, none dropped, retention intact', async () => {
    const total = 8 * 1024 * 1024;
    const { listener, seen } = blockingListener(100);
    const t = await createTerminal({ command: `yes abcdefgh | head -c ${total}`, outputByteLimit: 1000 }, { onOutput: listener });
    await t.waitForExit();
    expect(seen.delivered).toBe(total);
    expect(t.outputBytes).toBe(total);
    expect(seen.largest).toBeLessThanOrEqual(256 * 1024);
    expect(seen.dropped).toBe(0);
    expect((await t.currentOutput()).output).toBe('abcdefgh\n'.repeat(Math.ceil(total / 9)).slice(0, total).slice(-1000));
    await t.release();
  });
});

describe('listeners attached in the tick that receives the handle', () => {
  test('terminal.onOutput right after `await createTerminal` gets the whole 20 MB stream', async () => {
    const c = collector();
    const t = await createTerminal({ command: DISTINCT(LINES_20MB), outputByteLimit: 4096 });
    t.onOutput(c.listener);
    await t.waitForExit();
    await eventually(() => c.accounted >= t.outputBytes, 'every byte delivered');
    expect(c.dropped).toBe(0);
    expect(c.all().equals(expected20MB)).toBe(true);
    await t.release();
  });

  test('a command that already ended before the handle arrived is seen whole (`printf x`, 200 runs)', async () => {
    for (let i = 0; i < 200; i++) {
      const t = await createTerminal({ command: 'printf', args: ['x'] });
      const c = collector();
      t.onOutput(c.listener);
      await t.waitForExit();
      await eventually(() => c.bytes >= 1, 'the byte delivered');
      await t.release();
      expect(c.all().toString()).toBe('x');
    }
  });

  test('while the JS thread is busy in that tick, at most the hold (4 MiB) plus a pipe is read; then every byte follows', async () => {
    const c = collector();
    const t = await createTerminal({ command: DISTINCT(LINES_20MB), outputByteLimit: 1024 });
    const until = Date.now() + 500;
    while (Date.now() < until) {
      // busy: the hold stays, so the pump pauses once 4 MiB are held
    }
    const readWhileBusy = t.outputBytes;
    t.onOutput(c.listener);
    await t.waitForExit();
    await eventually(() => c.accounted >= t.outputBytes, 'every byte delivered');
    expect(c.dropped).toBe(0);
    expect(readWhileBusy).toBeLessThanOrEqual(4 * 1024 * 1024 + 2 * 1024 * 1024);
    expect(c.all().equals(expected20MB)).toBe(true);
    await t.release();
  });

  test('after that tick, a listener gets what arrives from its subscription on (replay: the retained tail)', async () => {
    // `late` is written once the test writes a line, after both listeners are attached.
    const t = await createTerminal({ command: 'printf early; read _; printf late' }, { stdin: 'pipe' });
    await outputReaching(t, (b) => b.toString() === 'early', "'early'");
    const plain = collector();
    const replayed = collector();
    t.onOutput(plain.listener);
    t.onOutput(replayed.listener, { replay: true });
    await t.write('\n');
    await t.waitForExit();
    await eventually(() => plain.bytes >= 4 && replayed.bytes >= 9, 'delivered');
    expect(plain.all().toString()).toBe('late');
    expect(replayed.all().toString()).toBe('earlylate');
    await t.release();
  });
});

describe('TerminalHost.onCreate', () => {
  test('terminal.onOutput attached synchronously in onCreate gets the whole 20 MB stream, byte-exact', async () => {
    const host = new TerminalHost();
    const c = collector();
    host.onCreate(({ terminal }) => {
      terminal.onOutput(c.listener);
    });
    try {
      const { terminalId } = await host.createTerminal({ sessionId: 's', command: DISTINCT(LINES_20MB) });
      const t = host.terminal(terminalId)!;
      await host.waitForTerminalExit({ sessionId: 's', terminalId });
      await eventually(() => c.accounted >= t.outputBytes!, 'every byte delivered');
      expect(c.dropped).toBe(0);
      expect(c.all().equals(expected20MB)).toBe(true);
      // The agent's own view stays the host's bounded tail (1 MiB by default).
      const out = await host.terminalOutput({ sessionId: 's', terminalId });
      expect(out.truncated).toBe(true);
      expect(Buffer.from(out.output).equals(expected20MB.subarray(-1024 * 1024))).toBe(true);
    } finally {
      await host.close();
    }
  });
});
