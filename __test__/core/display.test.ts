// Display safety: output shown on a real terminal keeps text, colours and cursor movement and loses
// what acts on the user's terminal (clipboard, titles, strings, queries), across chunk boundaries.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createDisplayFilter, renderTerminalOutput, sanitizeForDisplay } from '../../ts/index';
import { createTerminal } from './helpers';

// What an attacker's command prints: a clipboard write, a title, a DECRQSS and a DA query, an APC,
// a C1 CSI in UTF-8, around text with colours and a cursor move.
const hostile =
  'a\x1b[31mred\x1b[0m\x1b]52;c;cHduZWQ=\x07b\x1b]0;owned\x07c\x1bP$qm\x1b\\d\x1b[c\x1b[6n' +
  'e\x1b_Gf=1;AAAA\x1b\\f\u009b6ng\x1b[2;3Hh\x1b[?1049hi\x1b]10;?\x1b\\j\x1b[>0qk';
const shown = 'a\x1b[31mred\x1b[0mbcdef6ng\x1b[2;3Hhijk';

/** The control characters of `text` other than line breaks and tabs (C0, DEL, C1). */
function controls(text: string): string[] {
  return [...text].filter((c) => {
    const n = c.codePointAt(0)!;
    return (n < 0x20 && c !== '\n' && c !== '\t') || (n >= 0x7f && n <= 0x9f);
  });
}

test('sanitizeForDisplay keeps text, colours and cursor movement and drops the rest', () => {
  expect(sanitizeForDisplay(hostile)).toBe(shown);
  expect(sanitizeForDisplay(Buffer.from(hostile))).toBe(shown);
  expect(sanitizeForDisplay('\x1b]2;build\x07x', { allowTitle: true })).toBe('\x1b]2;build\x07x');
  expect(sanitizeForDisplay('\x1b]2;build\x07x')).toBe('x');
  expect(() => sanitizeForDisplay(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG' }));
  expect(() => sanitizeForDisplay('x', { allowTitle: 'yes' as unknown as boolean })).toThrow(
    expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.allowTitle') }),
  );
});

test('a DisplayFilter gives the same output for the stream split at every byte', () => {
  const bytes = Buffer.from(hostile);
  const filter = createDisplayFilter();
  const parts = [];
  for (let i = 0; i < bytes.length; i++) parts.push(filter.write(bytes.subarray(i, i + 1)));
  expect(Buffer.concat(parts).toString()).toBe(shown);
});

test("onOutput(fn, { display: 'safe' }) filters a command's output split across chunks", async () => {
  // The clipboard write is cut in two by a pause: two chunks, neither of which is the sequence.
  const command = `printf 'x\\033[1mbold\\033[0m\\033]5'; sleep 0.2; printf '2;c;cHduZWQ=\\007y\\033[6nz\\n'`;
  const t = await createTerminal({ command });
  let safe = '';
  let raw = '';
  let chunks = 0;
  t.onOutput((c) => {
    safe += c.toString();
    chunks++;
  }, { display: 'safe' });
  t.onOutput((c) => (raw += c.toString()));
  try {
    await t.waitForExit();
    expect(raw).toContain('\x1b]52;c;');
    expect(safe).toBe('x\x1b[1mbold\x1b[0myz\n');
    expect(chunks).toBeGreaterThanOrEqual(2);
    expect(() => t.onOutput(() => undefined, { display: 'unsafe' as 'safe' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.display') }),
    );
  } finally {
    await t.release();
  }
});

test('text mode and renderTerminalOutput return only text (display-safe as they are)', async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'display-')), 'hostile');
  // The hostile output without its cursor move and screen switch: all of its text stays visible.
  fs.writeFileSync(file, hostile.replace('\x1b[2;3H', '').replace('\x1b[?1049h', ''));
  const t = await createTerminal({ command: 'cat', args: [file] }, { pty: { cols: 80, rows: 24 }, output: 'text' });
  try {
    await t.waitForExit();
    const { output } = await t.currentOutput();
    expect(output).toContain('aredbcdef');
    expect(sanitizeForDisplay(output)).toBe(output);
    expect(controls(output)).toEqual([]);
  } finally {
    await t.release();
  }
  const { text } = renderTerminalOutput(hostile);
  expect(sanitizeForDisplay(text)).toBe(text);
  expect(controls(text)).toEqual([]);
});
