"use strict";
/**
 * What a shell line or an argv would run, for the host's command policy: the native core parses the
 * line with tree-sitter-bash (src/shell/) and reports its programs (wrappers unwrapped, programs that
 * run code from their arguments flagged), the variables it assigns, and every construct outside plain
 * commands of literal words joined by `&&`, `||`, `;`, `|` with redirections to literal paths.
 *
 * This is a check, not a sandbox: an allowed program can still do anything its own input tells it
 * (a Makefile, an npm script, a repository's git config). Under an allow list every refusal refuses
 * the line; a deny list only sees the programs found, which a determined agent can hide.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.SHELL_BUILTINS = exports.SAFE_SHELL_BUILTINS = void 0;
exports.shellCommandWords = shellCommandWords;
exports.argvCommandWords = argvCommandWords;
const native_1 = require("./native");
/**
 * Shell builtins that cannot run another program or read code from somewhere (or only run a command
 * that is itself reported and checked); a strict allow list admits them without a rule.
 */
exports.SAFE_SHELL_BUILTINS = new Set([
    ':', '[', 'true', 'false', 'test', 'echo', 'printf', 'cd', 'pwd', 'export', 'unset', 'set', 'shift',
    'exit', 'return', 'break', 'continue', 'local', 'readonly', 'declare', 'typeset', 'umask', 'wait',
    'type', 'times', 'jobs', 'shopt', 'pushd', 'popd', 'dirs',
    // These only run a command that is itself found and checked:
    'command', 'builtin', 'time',
]);
/**
 * Every builtin a POSIX shell or bash resolves before searching PATH (so `kill` on a shell line is the
 * builtin even where /usr/bin/kill exists). Includes the unsafe ones (`eval`, `source`, `.`, `trap`, ...).
 */
exports.SHELL_BUILTINS = new Set([
    ...exports.SAFE_SHELL_BUILTINS,
    'eval', 'source', '.', 'exec', 'trap', 'alias', 'unalias', 'kill', 'ulimit', 'fg', 'bg', 'disown', 'enable',
    'history', 'fc', 'mapfile', 'readarray', 'compgen', 'complete', 'bind', 'caller', 'suspend', 'logout',
    'read', 'let', 'hash', 'getopts',
]);
function fromNative(a) {
    const refusals = a.refusals.map((r) => ({
        reason: r.reason,
        construct: r.construct,
        position: r.position,
        ...(r.word != null ? { word: r.word } : {}),
    }));
    const redefinitions = [];
    for (const r of refusals) {
        if (r.reason !== 'redefinition' || r.word === undefined)
            continue;
        const kind = r.construct.endsWith('alias)') ? 'alias' : r.construct.endsWith('(hash)') ? 'hash' : 'enable';
        redefinitions.push({ kind, name: r.word });
    }
    return {
        words: a.programs.map((p) => ({
            word: p.word,
            dynamic: p.dynamic,
            position: p.position,
            ...(p.runsCode != null ? { runsCode: p.runsCode } : {}),
            ...(p.guessed ? { guessed: true } : {}),
        })),
        incomplete: a.malformed,
        assignments: a.assignments.map((s) => ({ word: s.name, dynamic: s.dynamic })),
        refusals,
        redefinitions,
        uncheckedShells: refusals.filter((r) => r.reason === 'shell-input' && r.word !== undefined).map((r) => r.word),
    };
}
/** Analyses a shell line (parsed by the native core with tree-sitter-bash). */
function shellCommandWords(line) {
    return fromNative((0, native_1.loadNative)().analyseShellLine(line));
}
/** Analyses an argv (`[program, ...args]`): the program, the programs behind wrappers, `sh -c` lines. */
function argvCommandWords(argv) {
    return fromNative((0, native_1.loadNative)().analyseShellArgv([...argv]));
}
