// Retention (byte limit, UTF-8 boundaries, truncated), exitStatus timing and onOutput streaming.
import { createTerminal, outputReaching, run } from './helpers';

/** The longest suffix of `s` that starts on a character boundary and fits `limit` bytes. */
function tail(s: string, limit: number): string {
  const b = Buffer.from(s);
  let i = Math.max(0, b.length - limit);
  while (i < b.length && (b[i]! & 0xc0) === 0x80) i++;
  return b.subarray(i).toString();
}

describe('outputByteLimit', () => {
  const text = 'a\u00e9\u20ac\u{1F600}'.repeat(50); // 1-, 2-, 3- and 4-byte characters

  test('keeps the newest bytes, cut on a character boundary, for every limit', async () => {
    const total = Buffer.byteLength(text);
    for (let limit = 0; limit <= 24; limit++) {
      const r = await run({ command: 'printf', args: ['%s', text], outputByteLimit: limit });
      expect(r.output).toBe(tail(text, limit));
      expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(limit);
      expect(r.truncated).toBe(limit < total);
    }
    const all = await run({ command: 'printf', args: ['%s', text], outputByteLimit: total });
    expect(all).toMatchObject({ output: text, truncated: false });
  });

  test('limit 0 keeps nothing, limit 1 keeps one ASCII byte', async () => {
    expect(await run({ command: 'echo hello', outputByteLimit: 0 })).toMatchObject({ output: '', truncated: true });
    expect(await run({ command: 'true', outputByteLimit: 0 })).toMatchObject({ output: '', truncated: false });
    expect(await run({ command: 'printf hello', outputByteLimit: 1 })).toMatchObject({ output: 'o', truncated: true });
    expect(await run({ command: "printf 'ab\\303\\251'", outputByteLimit: 1 })).toMatchObject({
      output: '',
      truncated: true,
    });
  });

  test('invalid UTF-8 becomes U+FFFD and still fits the limit', async () => {
    const r = await run({ command: "printf 'ok\\377\\376!'" });
    expect(r.output).toBe('ok\uFFFD\uFFFD!');
    const limited = await run({ command: "printf 'xy\\377\\377ab'", outputByteLimit: 4 });
    expect(Buffer.byteLength(limited.output)).toBeLessThanOrEqual(4);
    expect(limited.output).toBe('ab');
    expect(limited.truncated).toBe(true);
  });

  test('no limit keeps everything (8 MB)', async () => {
    const r = await run({ command: 'head -c 8000000 /dev/zero | tr "\\0" x' });
    expect(r.output.length).toBe(8_000_000);
    expect(r.truncated).toBe(false);
  });

  test('a big flood keeps exactly the last bytes', async () => {
    const r = await run({ command: 'seq 1 300000', outputByteLimit: 1000 });
    const expected = Array.from({ length: 300000 }, (_, i) => `${i + 1}\n`).join('');
    expect(r.output).toBe(tail(expected, 1000));
    expect(r.truncated).toBe(true);
  });

  test('an incomplete character is held back while running, U+FFFD once exited', async () => {
    const t = await createTerminal({ command: "printf 'x\\342\\202'; exec sleep 30" });
    try {
      // Once all three bytes arrived, the two of the incomplete euro sign are held back.
      await outputReaching(t, (b) => b.length === 3, 'the three bytes');
      const running = await t.currentOutput();
      expect(running.output).toBe('x');
      expect(running.exitStatus).toBeUndefined();
      await t.kill();
      const done = await t.currentOutput();
      expect(done.output).toBe('x\uFFFD');
      expect(done.exitStatus).toBeDefined();
    } finally {
      await t.release();
    }
  });

  test('a character completed later is kept whole', async () => {
    // The last byte is written once the test writes a line, after the first two were read.
    const t = await createTerminal({ command: "printf '\\342\\202'; read _; printf '\\254'" }, { stdin: 'pipe' });
    try {
      await outputReaching(t, (b) => b.length === 2, 'the first two bytes');
      await t.write('\n');
      await t.waitForExit();
      expect((await t.currentOutput()).output).toBe('\u20ac');
    } finally {
      await t.release();
    }
  });

  test('truncated is sticky', async () => {
    const t = await createTerminal({ command: 'printf 0123456789; read _; printf a; exec sleep 30', outputByteLimit: 5 }, { stdin: 'pipe' });
    try {
      await outputReaching(t, (b) => b.length === 10, 'the ten digits');
      expect(await t.currentOutput()).toMatchObject({ output: '56789', truncated: true });
      const a = outputReaching(t, (b) => b.toString() === 'a', "'a'");
      await t.write('\n');
      await a;
      expect((await t.currentOutput()).output).toBe('6789a');
      expect((await t.currentOutput()).truncated).toBe(true);
    } finally {
      await t.release();
    }
  });
});

describe('exitStatus and waitForExit', () => {
  test('exitStatus appears only after the exit, together with all output', async () => {
    // The command ends once the test writes a line, after this first look.
    const t = await createTerminal({ command: 'echo first; read _; echo last; exit 7' }, { stdin: 'pipe' });
    try {
      await outputReaching(t, (b) => b.toString() === 'first\n', "'first'");
      const early = await t.currentOutput();
      expect(early.exitStatus).toBeUndefined();
      expect('exitStatus' in early).toBe(false);
      await t.write('\n');
      const status = await t.waitForExit();
      expect(status).toEqual({ exitCode: 7, signal: null });
      expect(await t.currentOutput()).toEqual({
        output: 'first\nlast\n',
        truncated: false,
        exitStatus: { exitCode: 7, signal: null },
      });
    } finally {
      await t.release();
    }
  });

  test('death by signal: exitCode null and the POSIX signal name', async () => {
    expect((await run({ command: 'kill -TERM $$' })).status).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect((await run({ command: 'kill -KILL $$' })).status).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect((await run({ command: 'kill -INT $$' })).status).toEqual({ exitCode: null, signal: 'SIGINT' });
  });

  test('any number of concurrent waiters, later calls resolve with the same status', async () => {
    // The command exits once the test writes a line, after the 200 waiters are waiting.
    const t = await createTerminal({ command: 'read _; exit 3' }, { stdin: 'pipe' });
    try {
      const waiting = Promise.all(Array.from({ length: 200 }, () => t.waitForExit()));
      await t.write('\n');
      const all = await waiting;
      for (const s of all) expect(s).toEqual({ exitCode: 3, signal: null });
      expect(await t.waitForExit()).toEqual({ exitCode: 3, signal: null });
    } finally {
      await t.release();
    }
  });

  test('a background grandchild holding the pipe does not hold back the exit', async () => {
    const t = await createTerminal({ command: 'echo before; sleep 30 & echo after' });
    try {
      expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
      const out = await t.currentOutput();
      expect(out.output).toBe('before\nafter\n');
    } finally {
      await t.release();
    }
  });
});

describe('onOutput', () => {
  test('delivers the raw bytes in order, coalesced', async () => {
    const t = await createTerminal({ command: 'for i in $(seq 1 20000); do echo "line $i"; done' });
    const chunks: Buffer[] = [];
    t.onOutput((c) => chunks.push(c));
    await t.waitForExit();
    const all = Buffer.concat(chunks).toString();
    expect(all).toBe((await t.currentOutput()).output);
    expect(all.split('\n')).toHaveLength(20001);
    // 20,000 separate writes arrive in far fewer calls.
    expect(chunks.length).toBeLessThan(20000);
    await t.release();
  });

  test('a slow listener blocks neither the command nor the retention', async () => {
    // A listener attached in the tick that receives the handle gets the output from its first byte.
    const t = await createTerminal({ command: 'seq 1 100000' });
    let calls = 0;
    let bytes = 0;
    t.onOutput((c) => {
      calls++;
      bytes += c.length;
      const until = Date.now() + 50;
      while (Date.now() < until);
    });
    await t.waitForExit();
    const out = await t.currentOutput();
    expect(out.output.endsWith('99999\n100000\n')).toBe(true);
    // waitForExit resolved after the listener got its last byte.
    expect(bytes).toBe(Buffer.byteLength(out.output));
    expect(calls).toBeGreaterThan(0);
    await t.release();
  });

  test('raw bytes are passed as they are (invalid UTF-8 untouched)', async () => {
    const t = await createTerminal({ command: "printf 'a\\377b'" });
    const chunks: Buffer[] = [];
    t.onOutput((c) => chunks.push(c));
    await t.waitForExit();
    expect(Buffer.concat(chunks)).toEqual(Buffer.from([0x61, 0xff, 0x62]));
    await t.release();
  });

  test('replay delivers the retained output first, with no gap or overlap', async () => {
    for (let i = 0; i < 20; i++) {
      // `early` is written, then the rest once the test writes a line: the replaying listener is
      // attached after `early` was read, before the rest (i % 2 == 0) or while it streams.
      const t = await createTerminal({ command: 'echo early; read _; seq 1 2000' }, { stdin: 'pipe' });
      const early = outputReaching(t, (b) => b.toString() === 'early\n', "'early'");
      await early;
      let streaming: Promise<Buffer> | undefined;
      if (i % 2 === 1) {
        streaming = outputReaching(t, (b) => b.length > 0, 'the first line of seq');
        await t.write('\n');
        await streaming;
      }
      const chunks: Buffer[] = [];
      t.onOutput((c) => chunks.push(c), { replay: true });
      if (!streaming) await t.write('\n');
      await t.waitForExit();
      expect(Buffer.concat(chunks).toString()).toBe((await t.currentOutput()).output);
      expect(Buffer.concat(chunks).toString().startsWith('early\n1\n')).toBe(true);
      await t.release();
    }
  });

  test('replay respects the limit: only the retained tail is replayed', async () => {
    // `end` is written once the test writes a line: the replaying listener is attached after `seq`
    // wrote everything and before `end`.
    const t = await createTerminal({ command: 'seq 1 1000; read _; echo end', outputByteLimit: 10 }, { stdin: 'pipe' });
    await outputReaching(t, (b) => b.length >= 3893, 'all of seq');
    const chunks: Buffer[] = [];
    t.onOutput((c) => chunks.push(c), { replay: true });
    await t.write('\n');
    await t.waitForExit();
    expect(Buffer.concat(chunks).toString()).toBe('\n999\n1000\nend\n');
    await t.release();
  });

  test('unsubscribe stops delivery', async () => {
    // `two` is written once the test writes a line, after the listener unsubscribed on `one`.
    const t = await createTerminal({ command: 'echo one; read _; echo two' }, { stdin: 'pipe' });
    const got: string[] = [];
    const unsub = t.onOutput((c) => {
      got.push(c.toString());
      unsub();
    });
    await outputReaching(t, (b) => b.toString() === 'one\n', "'one'");
    await t.write('\n');
    await t.waitForExit();
    expect(got.join('')).toBe('one\n');
    await t.release();
  });
});
