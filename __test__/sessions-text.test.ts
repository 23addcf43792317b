// Pure helpers of ShellSessions: key-name parsing and the text rendering of raw terminal output.
import { isKeyName, parseKeys } from '../ts/sessions';
import { endsOnAlternateScreen, renderTerminalText } from '../ts/screen-text';

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
    expect(endsOnAlternateScreen('x\x1b[?1049h')).toBe(true);
    expect(endsOnAlternateScreen('\x1b[?1049h..\x1b[?1049l')).toBe(false);
    expect(endsOnAlternateScreen('no switch', true)).toBe(true);
  });

  test('an unterminated escape at the end is dropped, not shown', () => {
    expect(renderTerminalText('ok\x1b[3')).toBe('ok');
    expect(renderTerminalText('ok\x1b]0;ti')).toBe('ok');
  });
});
