"use strict";
/**
 * Glob patterns for the host policy: command rules (`policy.ts`) and environment name rules
 * (`policy-env.ts`) both match with these.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.globToRegExp = globToRegExp;
exports.safeTest = safeTest;
function escapeRegExp(text) {
    return text.replace(/[.+^${}()|[\]\\]/g, '\\$&');
}
/**
 * Compiles a glob to an anchored RegExp: `*` matches any run of characters except `/`, `**` any run
 * including `/`, `?` one character except `/`.
 */
function globToRegExp(glob, flags = '') {
    let re = '';
    for (let i = 0; i < glob.length; i++) {
        const c = glob[i];
        if (c === '*' && glob[i + 1] === '*') {
            re += '.*';
            i++;
        }
        else if (c === '*')
            re += '[^/]*';
        else if (c === '?')
            re += '[^/]';
        else
            re += escapeRegExp(c);
    }
    return new RegExp(`^${re}$`, flags);
}
/** Tests `re` on `text` from the start, whatever `lastIndex` a /g or /y RegExp was left with. */
function safeTest(re, text) {
    re.lastIndex = 0; // a /g or /y RegExp keeps state between calls
    return re.test(text);
}
