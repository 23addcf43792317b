/**
 * Text an agent wrote, quoted for a person who decides on it (an `approve` prompt): one line that shows every
 * character for what it is. `sanitizeForDisplay` is for output shown on a terminal: it keeps carriage returns,
 * cursor movement and line erasing, which can make a prompt read differently from the command that runs.
 */

import { invalidArg } from './errors';

/** Characters shown escaped: controls (C0, DEL, C1), format (bidi overrides, zero-width), surrogates, private use, unassigned, separators other than a space. */
const HIDDEN = /[\\"]|[\p{C}\p{Z}]/gu;

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
