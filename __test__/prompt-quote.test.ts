// quoteForPrompt (ts/prompt-quote.ts): text an agent wrote, shown to a user who decides on it. The r17 attack:
// an argument that returns the cursor and erases the line makes a sanitizeForDisplay'd prompt read
// "Run /usr/bin/ls -la" for an `rm -rf`; quoted, the screen shows every character of the real request.
import { quoteForPrompt, renderTerminalOutput, sanitizeForDisplay } from '../lib';

/** What a terminal shows for `text` (the package's own emulator). */
function screen(text: string): string {
  return renderTerminalOutput(`${text}\n`, { cols: 200, rows: 3 }).text.trim();
}

const spoof = ['-rf', '/tmp/victim', '\r\x1b[2KRun /usr/bin/ls -la in /tmp?\x1b[K\x1b[99C'];

test('the attack: sanitizeForDisplay keeps CR and erase-line, so the prompt reads as another command', () => {
  const shown = screen(sanitizeForDisplay(`Run /usr/bin/rm ${spoof.join(' ')} in /tmp?`));
  expect(shown).toMatch(/^Run \/usr\/bin\/ls -la in \/tmp\?/);
  expect(shown).not.toMatch(/rm|victim/);
});

test('quoted, the prompt is one line that shows the real request, escapes included', () => {
  const prompt = `Run ${['/usr/bin/rm', ...spoof].map(quoteForPrompt).join(' ')} in ${quoteForPrompt('/tmp')}?`;
  expect(prompt).toBe('Run "/usr/bin/rm" "-rf" "/tmp/victim" "\\rRun /usr/bin/ls -la in /tmp?\\u{1B}[K\\u{1B}[99C" in "/tmp"?'.replace('\\rRun', '\\r\\u{1B}[2KRun'));
  expect(screen(prompt)).toBe(prompt);
});

test('every control and invisible character is escaped; quotes and backslashes too; printable text is kept', () => {
  const cases: [string, string][] = [
    ['ls -la', '"ls -la"'],
    ['a\nb\tc\rd', '"a\\nb\\tc\\rd"'],
    ['\x00\x07\x1b\x7f\x9b', '"\\u{0}\\u{7}\\u{1B}\\u{7F}\\u{9B}"'],
    ['abc\u202Efdp.exe', '"abc\\u{202E}fdp.exe"'], // right-to-left override
    ['r\u200Bm \u00A0x\u2028y', '"r\\u{200B}m \\u{A0}x\\u{2028}y"'], // zero-width space, no-break space, line separator
    ['\uD800 \uE000', '"\\u{D800} \\u{E000}"'], // lone surrogate, private use
    ['say "hi" \\n', '"say \\"hi\\" \\\\n"'],
    ['naïve 日本 ✓', '"naïve 日本 ✓"'],
  ];
  expect(cases.map(([text]) => quoteForPrompt(text))).toEqual(cases.map(([, quoted]) => quoted));
  // Distinct texts stay distinct: an escape typed literally is not the character.
  expect(quoteForPrompt('\\u{1B}')).not.toBe(quoteForPrompt('\x1b'));
});

test('a non-string is refused with a code naming the argument', () => {
  expect(() => quoteForPrompt(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('text') }));
});
