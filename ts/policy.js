"use strict";
/**
 * Host policy building blocks: allowed working-directory roots and the command policy (allow/deny rules on
 * the programs a request would run); the environment's rules are in `policy-env.ts`. `TerminalHost` composes them;
 * they are exported for clients that build their own host.
 */
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.compileRoots = compileRoots;
exports.resolveCwdInRoots = resolveCwdInRoots;
exports.compileCommandPolicy = compileCommandPolicy;
exports.shellDialect = shellDialect;
exports.checkCommand = checkCommand;
exports.resolveHostShell = resolveHostShell;
const fs = __importStar(require("node:fs"));
const path = __importStar(require("node:path"));
const errors_1 = require("./errors");
const glob_1 = require("./glob");
const native_1 = require("./native");
const shell_analysis_1 = require("./shell-analysis");
// ---------------------------------------------------------------------------------------------------
// Working directory
/** Validates and canonicalizes `allowedRoots` (absolute, existing; symlinks resolved). */
function compileRoots(roots, field) {
    if (roots === undefined || roots === null)
        return undefined;
    if (!Array.isArray(roots))
        throw (0, errors_1.invalidArg)(field, 'must be an array of absolute directory paths');
    return roots.map((root, i) => {
        if (typeof root !== 'string' || !path.isAbsolute(root) || root.includes('\0')) {
            throw (0, errors_1.invalidArg)(`${field}[${i}]`, `must be an absolute path, got ${JSON.stringify(root)}`);
        }
        let real;
        try {
            real = fs.realpathSync(root);
        }
        catch (error) {
            throw (0, errors_1.invalidArg)(`${field}[${i}]`, `${JSON.stringify(root)} cannot be resolved: ${(0, errors_1.errorMessage)(error)}`);
        }
        if (!fs.statSync(real).isDirectory())
            throw (0, errors_1.invalidArg)(`${field}[${i}]`, `${JSON.stringify(root)} is not a directory`);
        return real;
    });
}
/**
 * Resolves `cwd` (absolute) and checks it lies inside one of `roots` (canonical), by the core's rule
 * (`cwdInRoots`: the rule `createTerminal` applies to `allowedRoots`). Returns the canonical directory,
 * which is what the command must be started in (so a symlink swapped later does not matter). Throws
 * `ERR_INVALID_CWD` (missing, not a directory, unresolvable) or `ERR_CWD_OUTSIDE_ROOTS`.
 */
async function resolveCwdInRoots(cwd, roots) {
    let checked;
    try {
        checked = await (0, native_1.loadNative)().cwdInRoots(cwd, [...roots]);
    }
    catch (error) {
        const code = (0, errors_1.errorCode)(error);
        if (code !== 'ERR_INVALID_CWD' && code !== 'ERR_INVALID_ARG')
            throw error;
        throw new errors_1.AcpTerminalError(code, (0, errors_1.errorMessage)(error), { field: 'cwd', cwd });
    }
    const real = checked.resolved;
    if (!checked.inside) {
        const shown = real === cwd ? JSON.stringify(cwd) : `${JSON.stringify(cwd)} (resolved: ${JSON.stringify(real)})`;
        throw new errors_1.AcpTerminalError('ERR_CWD_OUTSIDE_ROOTS', `cwd: ${shown} is outside the directories this client allows (${roots.map((r) => JSON.stringify(r)).join(', ')})`, { field: 'cwd', cwd, resolved: real, allowedRoots: [...roots] });
    }
    return real;
}
/** Extensions Windows runs a bare name with (`PATHEXT`'s usual ones): a name rule `git` matches `git.exe`. */
const WINDOWS_RUNNABLE = /\.(exe|com|cmd|bat)$/i;
/**
 * A string rule as Windows names files: `\` and `/` both separate (a rule with either, or a drive, is a
 * path rule; `*` stops at both), case does not matter, and a name rule matches a file's name with or
 * without the extension it runs by (`acp-tool` matches `ACP-TOOL.CMD`).
 */
function compileWindowsRule(rule, label) {
    const slashes = (f) => f.replace(/\\/g, '/');
    const re = (0, glob_1.globToRegExp)(slashes(rule), 'i');
    if (/[\\/]|^[a-z]:/i.test(rule)) {
        return {
            label,
            matches: (c) => [path.win32.isAbsolute(c.word) ? c.word : undefined, c.path, c.realPath].some((f) => f !== undefined && re.test(slashes(f))),
        };
    }
    const names = (f) => {
        const base = path.win32.basename(f);
        return WINDOWS_RUNNABLE.test(base) ? [base, base.replace(WINDOWS_RUNNABLE, '')] : [base];
    };
    return {
        label,
        matches: (c) => [c.word, c.path, c.realPath].some((f) => f !== undefined && !c.dynamic && names(f).some((n) => re.test(n))),
    };
}
function compileRule(rule, field, platform) {
    if (typeof rule === 'function') {
        const fn = rule;
        return {
            label: fn.name ? `function ${fn.name}` : 'a function rule',
            matches(command, forDeny) {
                try {
                    return fn({ ...command }) === true;
                }
                catch {
                    return forDeny;
                }
            },
        };
    }
    if (rule instanceof RegExp) {
        return {
            label: String(rule),
            matches: (c) => [c.word, c.path, c.realPath].some((f) => f !== undefined && (0, glob_1.safeTest)(rule, f)),
        };
    }
    if (typeof rule === 'string' && rule.length > 0 && !rule.includes('\0')) {
        const label = JSON.stringify(rule);
        if (platform === 'win32')
            return compileWindowsRule(rule, label);
        const re = (0, glob_1.globToRegExp)(rule);
        if (rule.includes('/')) {
            return {
                label,
                matches: (c) => [path.isAbsolute(c.word) ? c.word : undefined, c.path, c.realPath].some((f) => f !== undefined && re.test(f)),
            };
        }
        return {
            label,
            matches: (c) => [c.word, c.path, c.realPath].some((f) => f !== undefined && !c.dynamic && re.test(path.basename(f))),
        };
    }
    throw (0, errors_1.invalidArg)(field, `must be a non-empty string, a RegExp or a function, got ${JSON.stringify(rule)}`);
}
/** Validates a `CommandPolicy`; invalid entries throw `ERR_INVALID_ARG` naming the field. */
function compileCommandPolicy(policy, field, platform = process.platform) {
    if (policy === undefined || policy === null)
        return undefined;
    if (typeof policy !== 'object')
        throw (0, errors_1.invalidArg)(field, 'must be an object { allow?, deny?, codeRunners?, shellLines? }');
    const p = policy;
    const list = (rules, name) => {
        if (rules === undefined)
            return undefined;
        if (!Array.isArray(rules))
            throw (0, errors_1.invalidArg)(`${field}.${name}`, 'must be an array of rules');
        return rules.map((r, i) => compileRule(r, `${field}.${name}[${i}]`, platform));
    };
    if (p.shellLines !== undefined && p.shellLines !== 'check' && p.shellLines !== 'deny') {
        throw (0, errors_1.invalidArg)(`${field}.shellLines`, `must be 'check' or 'deny', got ${JSON.stringify(p.shellLines)}`);
    }
    return {
        allow: list(p.allow, 'allow'),
        deny: list(p.deny, 'deny') ?? [],
        codeRunners: list(p.codeRunners, 'codeRunners') ?? [],
        shellLines: p.shellLines ?? 'check',
    };
}
/**
 * The dialect of the shell that runs a host's shell lines: `shell` is the host's (resolved) shell, or
 * undefined for the platform's default (`/bin/sh`; on Windows `%ComSpec%`, cmd.exe).
 */
function shellDialect(shell, platform = process.platform) {
    if (platform !== 'win32')
        return 'posix';
    if (shell === undefined)
        return 'cmd';
    const stem = (shell.split(/[\\/]/).pop() ?? shell).toLowerCase().replace(/\.exe$/, '');
    if (stem === 'cmd')
        return 'cmd';
    if (stem === 'powershell' || stem === 'pwsh')
        return 'powershell';
    return 'posix';
}
/**
 * Characters of a cmd.exe line whose reading by cmd differs from bash's (the analysis's): `%` and `!`
 * expand variables before cmd splits commands (a variable holding `&` makes a new command), `^` escapes,
 * `'`, `\`, `` ` `` and `$` quote or escape for bash only, `#` starts a comment for bash only, `;`, `,` and
 * `=` end cmd's command name where bash reads one word, `( )` group, globs and braces expand for bash only,
 * and a line break is a new command. Under an allow list a cmd line may hold letters, digits, spaces, `" & |
 * < >` and `_ - . / : @ + =` (never at a command's start) only.
 */
const CMD_PLAIN = /^[\p{L}\p{N} \t"&|<>_\-./:@+=]$/u;
/**
 * Under an allow list, a line that cmd.exe or PowerShell runs is refused unless the bash analysis reads
 * it as they do: PowerShell's grammar is not bash's at all (shell lines are refused: send argv), and a cmd
 * line must keep to [CMD_PLAIN]'s characters, assign nothing (`x=1 calc` is the command `x` to cmd) and
 * have no `=` in a command word.
 */
function refuseForeignDialect(check, analysis) {
    if (!check.shellLine || check.dialect === undefined || check.dialect === 'posix')
        return;
    if (check.dialect === 'powershell') {
        throw denied('command: this client runs shell lines with PowerShell, whose commands its command policy cannot check; send the program in `command` and its arguments in `args`', { field: 'command', reason: 'shell-line', dialect: 'powershell' });
    }
    const refuse = (construct, position) => {
        throw denied(`command: the line uses ${construct} at index ${position}, which cmd.exe reads differently from the command policy's analysis (cmd lines may hold letters, digits, spaces, quotes, & | < > and _ - . / : @ + = only; send argv otherwise)`, { field: 'command', reason: 'shell-construct', construct, position, dialect: 'cmd' });
    };
    let position = 0;
    for (const ch of check.command) {
        if (!CMD_PLAIN.test(ch))
            refuse(`\`${ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch}\``, position);
        position += ch.length;
    }
    const assignment = analysis.assignments[0];
    if (assignment)
        refuse(`the assignment \`${assignment.word}\``, Math.max(0, check.command.indexOf(assignment.word)));
    const named = analysis.words.find((w) => w.word.includes('='));
    if (named)
        refuse(`\`=\` in the command \`${named.word}\``, Math.max(0, check.command.indexOf('=')));
}
function denied(message, details) {
    return new errors_1.AcpTerminalError('ERR_POLICY_DENIED', message, details);
}
function describe(command) {
    if (command.path === undefined)
        return `\`${command.word}\``;
    const real = command.realPath && command.realPath !== command.path ? ` -> ${command.realPath}` : '';
    return `\`${command.word}\` (${command.path}${real})`;
}
function resolveWith(check, word) {
    // Only defined fields: the core's resolveProgram rejects an explicit null although its types allow it.
    return check.resolve(word, {
        ...(check.cwd !== undefined ? { cwd: check.cwd } : {}),
        ...(check.path !== undefined ? { path: check.path } : {}),
    });
}
/**
 * Under an allow list, what would make the checked words run something else is refused: assignments of
 * variables the environment policy refuses (or whose name is only known at run time), then every
 * construct the analysis does not understand (`shell-construct`, `shell-input`, `wrapper-option`,
 * `redefinition`), named with its position in the line.
 */
function refuseUncheckable(analysis, check) {
    for (const a of analysis.assignments) {
        if (a.dynamic) {
            throw denied(`command: the line assigns \`${a.word}\`, a variable known only when it runs, so what that changes cannot be checked`, {
                field: 'command',
                reason: 'env',
                name: a.word,
            });
        }
        if (check.env?.denies(a.word, undefined)) {
            throw denied(`command: the line sets \`${a.word}\`, which can change which program runs or load code into it`, {
                field: 'command',
                reason: 'env',
                name: a.word,
            });
        }
    }
    const r = analysis.refusals[0];
    if (r === undefined)
        return;
    const at = check.shellLine ? ` at index ${r.position}` : '';
    const details = { field: 'command', reason: r.reason, construct: r.construct, position: r.position };
    if (r.word !== undefined)
        details.word = r.word;
    const redefinition = analysis.redefinitions.find((d) => d.name === r.word);
    if (r.reason === 'redefinition' && redefinition)
        details.kind = redefinition.kind;
    const why = {
        'shell-construct': 'only plain commands joined by &&, ||, ; and | are allowed',
        'shell-input': `give the commands with \`${r.word ?? 'sh'} -c '...'\``,
        'wrapper-option': 'what it runs cannot be known',
        redefinition: 'what runs under that name is not what was checked',
    };
    throw denied(`command: the line uses ${r.construct}${at}, which this client's command policy cannot check (${why[r.reason]})`, details);
}
function realPathOf(file) {
    try {
        return fs.realpathSync(file);
    }
    catch {
        return undefined;
    }
}
/**
 * Finds the programs of a request and checks them against `policy`. For a direct request, resolution
 * errors of the program itself (`ENOENT`, `EACCES`) are thrown as they are, exactly as spawning would
 * fail. Throws `ERR_POLICY_DENIED` with a message naming the program and the rule.
 */
function checkCommand(policy, check) {
    if (check.shellLine && policy.shellLines === 'deny') {
        throw denied('command: shell lines are not allowed by this client; send the program in `command` and its arguments in `args`', { field: 'command', reason: 'shell-line' });
    }
    const analysis = check.shellLine ? (0, shell_analysis_1.shellCommandWords)(check.command) : (0, shell_analysis_1.argvCommandWords)([check.command, ...check.args]);
    if (analysis.incomplete && policy.allow) {
        throw denied('command: the shell line is malformed or too deeply nested, so its programs cannot be checked', {
            field: 'command',
            reason: 'unparsable',
        });
    }
    if (policy.allow) {
        refuseForeignDialect(check, analysis);
        refuseUncheckable(analysis, check);
    }
    const commands = [];
    let program;
    analysis.words.forEach((w, index) => {
        const top = !check.shellLine && index === 0;
        let resolved;
        // On a shell line a builtin name runs the builtin, whatever PATH holds: nothing to look up.
        const shellBuiltin = check.shellLine && !w.word.includes('/') && shell_analysis_1.SHELL_BUILTINS.has(w.word);
        if (!w.dynamic && !shellBuiltin) {
            try {
                resolved = resolveWith(check, w.word);
            }
            catch (error) {
                if (top)
                    throw error; // the core would fail the same way: ENOENT / EACCES
                resolved = undefined;
            }
        }
        const command = {
            word: w.word,
            path: resolved,
            realPath: resolved === undefined ? undefined : realPathOf(resolved),
            builtin: !w.word.includes('/') && shell_analysis_1.SHELL_BUILTINS.has(w.word) && !top,
            dynamic: w.dynamic,
            ...(w.runsCode !== undefined ? { runsCode: w.runsCode } : {}),
        };
        if (top)
            program = resolved;
        commands.push(command);
    });
    for (const command of commands) {
        if (command.dynamic)
            continue;
        const rule = policy.deny.find((r) => r.matches(command, true));
        if (rule) {
            throw denied(`command: ${describe(command)} is denied by this client's command policy (rule ${rule.label})`, {
                field: 'command',
                reason: 'deny-rule',
                word: command.word,
                program: command.path,
                rule: rule.label,
            });
        }
    }
    if (policy.allow) {
        for (const command of commands) {
            if (command.dynamic) {
                throw denied(`command: \`${command.word}\` is only known when the line runs, so it cannot be checked against the commands this client allows`, { field: 'command', reason: 'dynamic', word: command.word });
            }
            if (command.runsCode !== undefined && !policy.codeRunners?.some((r) => r.matches(command, false))) {
                throw denied(`command: ${describe(command)} would run code given in its arguments or stdin (${command.runsCode}); this client does not let it (see the command policy's codeRunners)`, { field: 'command', reason: 'code-execution', word: command.word, program: command.path, why: command.runsCode });
            }
            if (command.builtin && shell_analysis_1.SAFE_SHELL_BUILTINS.has(command.word))
                continue;
            if (policy.allow.some((r) => r.matches(command, false)))
                continue;
            const notFound = command.path === undefined && !command.builtin ? ' (not found in PATH)' : '';
            throw denied(`command: ${describe(command)}${notFound} is not among the commands this client allows`, {
                field: 'command',
                reason: 'not-allowed',
                word: command.word,
                program: command.path,
            });
        }
    }
    return { ...(program !== undefined ? { program } : {}), commands };
}
/**
 * The shell for shell lines as an absolute path: a bare name (`bash`) is found through the host's PATH
 * (`hostPath`) and a relative path against the host's cwd, never through a request's PATH or cwd (the
 * core would look it up through the command's environment). An unknown shell is `ERR_INVALID_ARG`
 * naming `options.shell`.
 */
function resolveHostShell(shell, hostPath, cwd, resolve) {
    if (shell.length === 0 || shell.includes('\0'))
        throw (0, errors_1.invalidArg)('options.shell', 'must be false or a non-empty path');
    if (path.isAbsolute(shell))
        return shell;
    try {
        return resolve(shell, { ...(cwd !== undefined ? { cwd } : {}), ...(hostPath !== undefined ? { path: hostPath } : {}) });
    }
    catch (error) {
        throw (0, errors_1.invalidArg)('options.shell', `${JSON.stringify(shell)} cannot be found through the host's PATH (${(0, errors_1.errorMessage)(error)})`);
    }
}
