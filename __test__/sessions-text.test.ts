// Pure helpers of ShellSessions: key-name parsing and the text rendering of raw terminal output.
import { isKeyName, parseKeys } from '../ts/sessions';
import { renderTerminalOutput, renderTerminalOutputAsync, renderTerminalText } from '../ts/screen-text';

describe('parseKeys', () => {
  test('key names and sequences of key names are keys', () => {
    expect(parseKeys('C-c')).toEqual(['C-c']);
    expect(parseKeys('  Up Enter ')).toEqual(['Up', 'Enter']);
    expect(parseKeys('Escape')).toEqual(['Escape']);
    expect(parseKeys('M-x')).toEqual(['M-x']);
    expect(parseKeys('S-Tab C-M-a F12 BSpace DC IC PgUp PageDown BTab')).toHaveLength(9);
  });

  test('anything else is text (a single character, shell words, mixed)', () => {
    for (const text of ['q', 'ls -la', 'echo C-c', 'C-c echo', 'Up && ls', 'F13', 'C-', 'enter', '']) {
      expect(parseKeys(text)).toBeNull();
    }
    expect(isKeyName('C-c')).toBe(true);
    expect(isKeyName('c')).toBe(false);
  });
});

describe('renderTerminalText', () => {
  test('drops colours, modes, OSC titles and string sequences', () => {
    const raw = '\x1b]0;title\x07\x1b[?2004h\x1b[1;31mred\x1b[0m \x1bP1$r\x1b\\plain\x1b(B\x1b=\r\n';
    expect(renderTerminalText(raw)).toBe('red plain\n');
  });

  test('applies carriage returns, erase-in-line and backspaces (progress bars collapse)', () => {
    expect(renderTerminalText('10%\r50%\r100%\r\n')).toBe('100%\n');
    expect(renderTerminalText('downloading 123456\r\x1b[Kdone\r\n')).toBe('done\n');
    expect(renderTerminalText('abc\b\bX\r\n')).toBe('aXc\n');
  });

  test('cursor up redraws earlier lines in place', () => {
    expect(renderTerminalText('a: 1\r\nb: 1\r\n\x1b[2Aa: 2\r\n\x1b[Kb: 2\r\n')).toBe('a: 2\nb: 2\n');
  });

  test('keeps multi-byte characters whole and trims trailing spaces', () => {
    expect(renderTerminalText('héllo 😀   \r\nx\tY')).toBe('héllo 😀\nx       Y');
  });

  test('what a full-screen program drew on the alternate screen is gone once it returns', () => {
    const raw = 'before\r\n\x1b[?1049h\x1b[H\x1b[2Jscreen stuff\x1b[5;1Hmore\x1b[?1049lafter\r\n';
    expect(renderTerminalText(raw)).toBe('before\nafter\n');
    expect(renderTerminalText('drawing\x1b[?1049lback', { alternateScreen: true })).toBe('back');
    expect(renderTerminalOutput('x\x1b[?1049h').alternateScreen).toBe(true);
    expect(renderTerminalOutput('\x1b[?1049h..\x1b[?1049l').alternateScreen).toBe(false);
    expect(renderTerminalOutput('no switch', { alternateScreen: true }).alternateScreen).toBe(true);
  });

  test('an unterminated escape at the end is dropped, not shown', () => {
    expect(renderTerminalText('ok\x1b[3')).toBe('ok');
    expect(renderTerminalText('ok\x1b]0;ti')).toBe('ok');
  });
  test('the native emulator: wrapped rows joined, every line kept, bytes accepted, bad options refused', () => {
    const long = 'y'.repeat(130);
    expect(renderTerminalText(`${long}\r\nend`, { cols: 40 })).toBe(`${long}\nend`);
    // Far more lines than a screen or a scrollback: none is lost.
    let raw = '';
    for (let i = 0; i < 20_000; i++) raw += `line ${i}\r\n`;
    const lines = renderTerminalText(raw, { cols: 20, rows: 5 }).split('\n');
    expect(lines).toHaveLength(20_001);
    expect(lines[0]).toBe('line 0');
    expect(lines[19_999]).toBe('line 19999');
    expect(renderTerminalText(Buffer.from('h\xc3\xa9\r\n', 'latin1'))).toBe('hé\n');
    expect(renderTerminalOutput('x\x1b[?1049hscreen', { alternateScreen: false })).toEqual({ text: 'x', alternateScreen: true, truncated: false });
    expect(renderTerminalOutput(Buffer.from('\x1b[?1049h')).alternateScreen).toBe(true);
    for (const [options, field] of [
      [{ cols: 0 }, 'options.cols'],
      [{ rows: 1.5 }, 'options.rows'],
      [{ alternateScreen: 1 }, 'options.alternateScreen'],
      [{ tabWidth: 4 }, 'options.tabWidth'],
    ] as const) {
      expect(() => renderTerminalText('x', options as never)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining(field) }));
    }
    expect(() => renderTerminalText(5 as never)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('data') }));
  });

  test('renderTerminalOutputAsync: the same result, rendered while the event loop keeps turning; bad input rejects', async () => {
    let raw = '';
    for (let i = 0; i < 100_000; i++) raw += `\x1b[32mline\x1b[0m ${i}\r\n`;
    const expected = renderTerminalOutput(raw, { cols: 40, rows: 10 });
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const pending = renderTerminalOutputAsync(raw, { cols: 40, rows: 10 });
    expect(turned).toBe(false);
    const r = await pending;
    // A render done on the JS thread would have settled before the next turn of the loop.
    expect(turned).toBe(true);
    expect(r).toEqual(expected);
    expect(r.text.split('\n')).toHaveLength(100_001);
    // The input is copied at the call: changing the buffer afterwards changes nothing.
    const bytes = Buffer.from('abc\r\n');
    const copied = renderTerminalOutputAsync(bytes);
    bytes.fill(0x7a);
    expect((await copied).text).toBe('abc\n');
    await expect(renderTerminalOutputAsync('x\x1b[?1049hscreen')).resolves.toEqual({ text: 'x', alternateScreen: true, truncated: false });
    for (const [options, field] of [
      [{ cols: 0 }, 'options.cols'],
      [{ alternateScreen: 'yes' }, 'options.alternateScreen'],
    ] as const) {
      await expect(renderTerminalOutputAsync('x', options as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining(field) });
    }
    await expect(renderTerminalOutputAsync(5 as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('data') });
    // The addon still works after the refusals.
    expect((await renderTerminalOutputAsync('ok')).text).toBe('ok');
  });
});

describe('no count makes the text larger than its screen allows, and maxBytes bounds it', () => {
  test('REP repeats at most the rest of the row (the attack: 2000 x `a ESC[999999999b` rendered 131 million characters)', () => {
    const r = renderTerminalOutput('a\x1b[999999999b'.repeat(2000) + '\r\n', { cols: 160, rows: 40 });
    expect(r.text.length).toBe(2000 * 160 + 1);
    expect(r.truncated).toBe(false);
    expect(renderTerminalText('ab\x1b[3b')).toBe('abbbb');
  });

  test('maxBytes keeps the newest text (a cursor-forward flood: 12 bytes give 160 characters)', async () => {
    const input = 'a\x1b[999Cb\r\n'.repeat(2000);
    const whole = renderTerminalOutput(input, { cols: 160 });
    expect(whole).toMatchObject({ truncated: false });
    expect(whole.text.length).toBe(2000 * 161);
    const cut = await renderTerminalOutputAsync(input, { cols: 160, maxBytes: 65536 });
    expect(cut.truncated).toBe(true);
    expect(cut.text.length).toBeLessThanOrEqual(65536);
    expect(whole.text.endsWith(cut.text)).toBe(true);
    expect(renderTerminalOutput('é'.repeat(10), { maxBytes: 5 })).toEqual({ text: 'éé', alternateScreen: false, truncated: true });
  });

  test('a bad maxBytes is refused, naming the field', () => {
    for (const maxBytes of [-1, 1.5, 'x']) {
      expect(() => renderTerminalOutput('x', { maxBytes: maxBytes as number })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/options\.maxBytes/) }),
      );
    }
  });
});
