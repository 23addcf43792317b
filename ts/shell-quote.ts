/** POSIX shell quoting, the one quoting function of the TS layer. */

/** Words that read the same quoted or not (no shell metacharacter, no glob, no `~` at the start). */
const PLAIN_WORD = /^[A-Za-z0-9_/.,:=@%+-]+$/;

/** Quotes `word` for a POSIX shell: always single quotes (`'` becomes `'\''`), so any text is one word. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Quotes `word` only when it needs it (for display): `ls` stays `ls`, `a b` becomes `'a b'`. */
export function shellWord(word: string): string {
  return PLAIN_WORD.test(word) ? word : shellQuote(word);
}
