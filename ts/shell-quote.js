"use strict";
/** POSIX shell quoting, the one quoting function of the TS layer. */
Object.defineProperty(exports, "__esModule", { value: true });
exports.shellQuote = shellQuote;
exports.shellWord = shellWord;
/** Words that read the same quoted or not (no shell metacharacter, no glob, no `~` at the start). */
const PLAIN_WORD = /^[A-Za-z0-9_/.,:=@%+-]+$/;
/** Quotes `word` for a POSIX shell: always single quotes (`'` becomes `'\''`), so any text is one word. */
function shellQuote(word) {
    return `'${word.replace(/'/g, `'\\''`)}'`;
}
/** Quotes `word` only when it needs it (for display): `ls` stays `ls`, `a b` becomes `'a b'`. */
function shellWord(word) {
    return PLAIN_WORD.test(word) ? word : shellQuote(word);
}
