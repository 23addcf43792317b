// Input at scale: stdin pipes, large writes paced and kept in order, and no lost tail over
// 1,000 short pty runs.
import { createHash } from 'node:crypto';

import { createTerminal, run } from './helpers';
import { waitForOutput } from './pty-helpers';

describe("stdin: 'pipe'", () => {
  test('write then closeStdin: cat echoes and exits; later writes reject', async () => {
    await using t = await createTerminal({ command: 'cat' }, { stdin: 'pipe' });
    expect(t.isPty).toBe(false);
    await t.write('hello ');
    await t.write(Buffer.from('world\n'));
    await t.write(new Uint8Array([0xe2, 0x82, 0xac, 0x0a]));
    await t.closeStdin();
    await expect(t.write('late')).rejects.toMatchObject({ code: 'ERR_STDIN_CLOSED' });
    await t.closeStdin(); // idempotent
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect((await t.currentOutput()).output).toBe('hello world\n\u20ac\n');
  });

  test("stdin: 'null' (the default) gives EOF at once", async () => {
    const r = await run({ command: 'cat; echo done' }, { stdin: 'null' });
    expect(r.output).toBe('done\n');
  });

  test('8 MiB through cat in many unawaited writes: every byte, in order', async () => {
    const parts: Buffer[] = [];
    for (let i = 0; i < 64; i++) {
      // 128 KiB parts, each a different run of numbered lines.
      const lines: string[] = [];
      let size = 0;
      for (let j = 0; size < 128 * 1024; j++) {
        const l = `${i}:${j}\n`;
        lines.push(l);
        size += l.length;
      }
      parts.push(Buffer.from(lines.join('').slice(0, 128 * 1024)));
    }
    const all = Buffer.concat(parts);
    expect(all.length).toBe(8 << 20);
    await using t = await createTerminal({ command: 'cat' }, { stdin: 'pipe' });
    // Queued in call order without awaiting; a single huge write too.
    const writes = parts.slice(0, 32).map((p) => t.write(p));
    writes.push(t.write(Buffer.concat(parts.slice(32))));
    writes.push(t.closeStdin());
    await Promise.all(writes);
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect(t.outputBytes).toBe(all.length);
    const out = (await t.currentOutput()).output;
    expect(out.length).toBe(all.length);
    expect(out === all.toString()).toBe(true);
  });

  test('a command that stops reading: the write rejects, never hangs', async () => {
    await using t = await createTerminal({ command: 'head -c 10 >/dev/null; echo read' }, { stdin: 'pipe' });
    const r = await t.write(Buffer.alloc(4 << 20, 0x62)).then(
      () => 'resolved',
      (e) => e.code,
    );
    expect(['EPIPE', 'ERR_TERMINAL_EXITED']).toContain(r);
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
  });
});

describe('large writes through a pty', () => {
  const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

  test('512 KiB in raw mode arrive intact and in order', async () => {
    const data = Buffer.alloc(512 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = 0x21 + ((i * 7 + (i >> 10)) % 90);
    await using t = await createTerminal(
      { command: `stty raw -echo; echo ready; head -c ${data.length} | md5sum` },
      { pty: {} },
    );
    await waitForOutput(t, /ready/);
    const writes = [t.write(data.subarray(0, 1000)), t.write(data.subarray(1000))];
    await Promise.all(writes);
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect((await t.currentOutput()).output).toContain(`${md5(data)}  -`);
  });

  test('300 KB of lines in canonical mode: wc -c counts them all after ^D', async () => {
    const line = 'y'.repeat(99) + '\n';
    const data = line.repeat(3000);
    await using t = await createTerminal({ command: 'stty -echo; echo ready; wc -c' }, { pty: {} });
    await waitForOutput(t, /ready/);
    await t.write(data);
    await t.closeStdin();
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    expect((await t.currentOutput()).output).toBe('ready\r\n300000\r\n');
  });
});

describe('no lost tail', () => {
  test('1,000 short pty runs: every run has its whole output, tail included', async () => {
    const expected = Array.from({ length: 300 }, (_, i) => `${i + 1}`).join('\r\n') + '\r\nTAIL-END\r\n';
    const runs = 1000;
    const concurrency = 8;
    let next = 0;
    const lost: Array<{ run: number; got: number }> = [];
    const started = Date.now();
    const worker = async () => {
      while (next < runs) {
        const n = next++;
        const r = await run({ command: 'seq 1 300; echo TAIL-END' }, { pty: {} });
        if (r.output !== expected || r.status.exitCode !== 0) lost.push({ run: n, got: r.output.length });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const ms = Date.now() - started;
    console.log(`1,000 pty runs (concurrency ${concurrency}): lost tails ${lost.length}, ${ms} ms`);
    expect(lost).toEqual([]);
  }, 120000);

  test('100 pty runs that write 64 KiB and exit at once: nothing lost', async () => {
    let lost = 0;
    let next = 0;
    const worker = async () => {
      while (next < 100) {
        next++;
        const r = await run({ command: "head -c 65536 /dev/zero | tr '\\0' x; echo END" }, { pty: {} });
        if (r.output !== 'x'.repeat(65536) + 'END\r\n') lost++;
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(lost).toBe(0);
  }, 120000);
});
