/**
 * `quoteForPrompt` over the whole Unicode range: every code point is shown as itself only when it is a
 * visible graphic character, by a rule written here from Unicode properties independently of the
 * implementation's pattern.
 */

import { quoteForPrompt } from '../lib';

/** Blank letters and symbols that render as nothing or as a space (not caught by the categories). */
const BLANK = new Set([0x115f, 0x1160, 0x3164, 0xffa0, 0x2800, 0x1d159]);

function invisible(c: string): boolean {
  const cp = c.codePointAt(0)!;
  if (cp === 0x20) return false;
  return (
    /^\p{General_Category=Other}$/u.test(c) ||
    /^\p{General_Category=Separator}$/u.test(c) ||
    /^\p{Default_Ignorable_Code_Point}$/u.test(c) ||
    BLANK.has(cp)
  );
}
const isMark = (c: string): boolean => /^\p{General_Category=Mark}$/u.test(c);

test('every code point: shown as itself exactly when it is visible; marks only on a visible base', () => {
  const wrong: string[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    const c = String.fromCodePoint(cp);
    if (c === '"' || c === '\\') continue;
    const hex = `\\u{${cp.toString(16).toUpperCase()}}`;
    const alone = quoteForPrompt(c);
    const onLetter = quoteForPrompt(`a${c}`);
    const afterFiller = quoteForPrompt(`\u3164${c}`);
    let ok: boolean;
    if (invisible(c)) {
      const esc = c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : hex;
      ok = alone === `"${esc}"` && onLetter === `"a${esc}"`;
    } else if (isMark(c)) {
      ok = alone === `"${hex}"` && onLetter === `"a${c}"` && afterFiller === `"\\u{3164}${hex}"` && quoteForPrompt(` ${c}`) === `" ${hex}"`;
    } else {
      ok = alone === `"${c}"` && onLetter === `"a${c}"`;
    }
    if (!ok) wrong.push(`U+${cp.toString(16).toUpperCase()} ${JSON.stringify([alone, onLetter, afterFiller])}`);
  }
  expect(wrong.slice(0, 20)).toEqual([]);
  expect(wrong.length).toBe(0);
});

test('look-alike names differ on screen: the filler after ./build.sh, a braille blank, a variation selector', () => {
  expect(quoteForPrompt('./build.sh\u3164')).toBe('"./build.sh\\u{3164}"');
  expect(quoteForPrompt('./build.sh\u2800')).toBe('"./build.sh\\u{2800}"');
  expect(quoteForPrompt('ls\uFE0F')).toBe('"ls\\u{FE0F}"');
  expect(quoteForPrompt('caf\u00E9 cafe\u0301')).toBe('"caf\u00E9 cafe\u0301"');
  expect(quoteForPrompt('x \u0301y')).toBe('"x \\u{301}y"');
  expect(quoteForPrompt('"\u0338')).toBe('"\\"\\u{338}"');
});
