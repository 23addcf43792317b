// Text mode (options.output 'text'): what a person would see on the terminal.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { createTerminal, run } from './helpers';
import { waitForOutput } from './pty-helpers';

const text = { pty: {}, output: 'text' } as const;

describe('text mode', () => {
  test('a progress bar collapses to its last state; colours are consumed', async () => {
    const r = await run(
      {
        command:
          "printf 'start\\n'; i=0; while [ $i -le 100 ]; do printf '\\r\\033[32mprogress %3d%%\\033[0m' $i; i=$((i+5)); done; printf '\\ndone\\n'",
      },
      text,
    );
    expect(r.status).toEqual({ exitCode: 0, signal: null });
    expect(r.output).toBe('start\nprogress 100%\ndone');
    expect(r.truncated).toBe(false);
  });

  test('backspaces apply and long lines wrapped by the terminal come back as one line', async () => {
    const long = 'x'.repeat(130);
    const r = await run({ command: `printf 'abc\\b\\bZ\\n${long}\\n'` }, { pty: { cols: 40, rows: 10 }, output: 'text' });
    expect(r.output).toBe(`aZc\n${long}`);
  });

  test('terminal queries never reach the output, and are answered like xterm', async () => {
    const r = await run(
      { command: "printf 'a\\033[6n\\033[c\\033[>c\\033]10;?\\007\\033]11;?\\033\\\\\\033]0;title\\007b\\n'" },
      text,
    );
    // sh never reads them and the tty is in cooked mode: no answer is sent, so none is echoed.
    expect(r.output).toBe('ab');
    // A program that asks for the cursor position gets the answer on its input.
    const py = await run(
      {
        command: 'python3',
        args: ['-c', "import os,tty; tty.setraw(0); os.write(1, b'ab\\x1b[6n'); print(repr(os.read(0, 32)), end='')"],
      },
      text,
    );
    expect(py.output).toBe("abb'\\x1b[1;3R'");
  });

  test('less renders as its screen, pages with Space, quits with q', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-text-')), 'lines.txt');
    fs.writeFileSync(file, Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    await using t = await createTerminal(
      { command: 'less', args: [file], env: [{ name: 'LESS', value: '' }] },
      { pty: { cols: 80, rows: 24 }, output: 'text' },
    );
    const first = await waitForOutput(t, /^line 23\n/m);
    const rows = first.split('\n');
    expect(rows.slice(0, 23)).toEqual(Array.from({ length: 23 }, (_, i) => `line ${i + 1}`));
    expect(rows).toHaveLength(24); // 23 lines and less's prompt line
    expect(first).not.toContain('\x1b');
    await t.sendKeys(['Space']);
    const second = await waitForOutput(t, /^line 46\n/m);
    expect(second.split('\n')[0]).toBe('line 24');
    await t.sendKeys(['q']);
    expect(await t.waitForExit()).toEqual({ exitCode: 0, signal: null });
    // less left the alternate screen: its pages are gone from what a person sees.
    expect((await t.currentOutput()).output).not.toContain('line 24');
    fs.rmSync(path.dirname(file), { recursive: true });
  });

  test('outputByteLimit keeps the tail of the text on a character boundary', async () => {
    const r = await run({ command: 'seq 1 2000', outputByteLimit: 100 }, text);
    expect(r.output.length).toBeLessThanOrEqual(100);
    expect(r.output.endsWith('\n1999\n2000')).toBe(true);
    expect(r.truncated).toBe(true);
    const euro = await run({ command: "printf '\\342\\202\\254%.0s' $(seq 1 50)", outputByteLimit: 10 }, text);
    expect(euro.output).toBe('\u20ac'.repeat(3));
  });

  test('the scrollback bounds memory; dropping lines sets truncated', async () => {
    const r = await run({ command: 'seq 1 3000' }, { pty: { cols: 80, rows: 10 }, output: 'text', scrollback: 50 });
    const lines = r.output.split('\n');
    expect(lines).toHaveLength(59); // 50 lines of scrollback, 9 on screen, the empty last row trimmed
    expect(lines[lines.length - 1]).toBe('3000');
    expect(lines[0]).toBe('2942');
    expect(r.truncated).toBe(true);
    const all = await run({ command: 'seq 1 30' }, { pty: { cols: 80, rows: 10 }, output: 'text', scrollback: 50 });
    expect(all.output).toBe(Array.from({ length: 30 }, (_, i) => `${i + 1}`).join('\n'));
    expect(all.truncated).toBe(false);
  });

  test('a flood renders exactly its last lines (what scrolls off unseen is skipped, never mis-rendered)', async () => {
    // 4 MiB of output through the batched renderer: distinct lines, colours on some, a title in the middle.
    const command =
      "seq 1 150000 | awk '{ if ($1 % 7 == 0) printf \"\\033[1;3%dm%s\\033[0m\\n\", $1 % 8, $1; else print \"line \" $1; if ($1 == 90000) printf \"\\033]0;t\\007\" }'";
    const r = await run({ command }, { pty: { cols: 80, rows: 24 }, output: 'text', scrollback: 1000 });
    expect(r.status).toEqual({ exitCode: 0, signal: null });
    const want: string[] = [];
    for (let n = 150000 - 1022; n <= 150000; n++) want.push(n % 7 === 0 ? `${n}` : `line ${n}`);
    expect(r.output).toBe(want.join('\n'));
    expect(r.truncated).toBe(true);
  });

  test('resize re-renders at the new width; onOutput still delivers raw bytes', async () => {
    await using t = await createTerminal({ command: "read x; printf '\\033[1mbold\\033[0m\\n'; tput cols" }, text);
    const chunks: Buffer[] = [];
    t.onOutput((c) => chunks.push(c), { replay: true });
    await t.resize(50, 20);
    await t.write('\n');
    await t.waitForExit();
    expect((await t.currentOutput()).output).toBe('\nbold\n50'); // the echoed Enter, then the program
    await new Promise((r) => setImmediate(r));
    expect(Buffer.concat(chunks).toString()).toContain('\x1b[1mbold');
  });
});
