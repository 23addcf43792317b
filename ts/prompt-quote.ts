/**
 * Text an agent wrote, quoted for a person who decides on it (an `approve` prompt): one line that shows every
 * character for what it is. `sanitizeForDisplay` is for output shown on a terminal: it keeps carriage returns,
 * cursor movement and line erasing, which can make a prompt read differently from the command that runs.
 */

import { invalidArg } from './errors';

/**
 * Characters shown escaped: controls (C0, DEL, C1), format (bidi overrides, zero-width), surrogates, private use,
 * unassigned, separators other than a space; default-ignorable code points (variation selectors, U+115F, U+1160,
 * U+3164, U+FFA0, U+180B-F, ...); the blank letters and symbols that render as nothing or as a space (U+2800 braille
 * blank); and combining marks, which draw on the character before them (the quote, a space or an escape) and so
 * can disguise it. A mark right after a visible letter or symbol is kept (accents on names).
 */
const HIDDEN =
  /[\\"]|[\p{C}\p{Z}\p{Default_Ignorable_Code_Point}\u2800\u3164\uFFA0\u115F\u1160\u{1D159}]|(?<![\p{L}\p{N}\p{P}\p{S}\p{M}])\p{M}|(?<=[\\"\p{C}\p{Z}\p{Default_Ignorable_Code_Point}\u2800\u3164\uFFA0\u115F\u1160\u{1D159} ]\p{M}*)\p{M}/gu;

/** The escape of one character: `\"`, `\\`, `\n`, `\r`, `\t`, or `\u{…}` (its code point in hex). */
function escapeChar(c: string): string {
  if (c === ' ') return c;
  if (c === '\\' || c === '"') return `\\${c}`;
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (c === '\t') return '\\t';
  return `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;
}

/**
 * `text` in double quotes, on one line, unambiguous: `"` and `\` are escaped, and every character that is not
 * visible printable text (control characters including ESC, CR and LF; DEL and C1 controls; format characters such
 * as bidirectional overrides and zero-width spaces; line and paragraph separators; spaces other than U+0020; lone
 * surrogates; private-use and unassigned code points) is written as an escape (`\n`, `\r`, `\t`, `\u{1B}`). Two
 * different texts never quote the same. Throws `ERR_INVALID_ARG` when `text` is not a string.
 */
export function quoteForPrompt(text: string): string {
  if (typeof text !== 'string') throw invalidArg('text', 'must be a string');
  return `"${text.replace(HIDDEN, escapeChar)}"`;
}
