/**
 * Host policy building blocks: allowed working-directory roots and the command policy (allow/deny rules on
 * the programs a request would run); the environment's rules are in `policy-env.ts`. `TerminalHost` composes them;
 * they are exported for clients that build their own host.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { AcpTerminalError, errorCode, errorMessage, invalidArg } from './errors';
import { envRefusal, type CompiledEnvPolicy } from './policy-env';
import { globToRegExp, safeTest } from './glob';
import { loadNative } from './native';
import {
  argvCommandWords,
  argvCommandWordsAsync,
  SAFE_SHELL_BUILTINS,
  SHELL_BUILTINS,
  shellCommandWords,
  shellCommandWordsAsync,
  type CommandWord,
  type RebuildPiece,
  type ShellAnalysis,
  type ShellRefusal,
} from './shell-analysis';
import type { ResolveProgramFn } from './types';

// ---------------------------------------------------------------------------------------------------
// Working directory

/**
 * Validates `allowedRoots` and pins them: the core resolves each root (`canonicalRoots`: absolute,
 * an existing directory, symlinks resolved) by the rule it applies when it checks a cwd against them.
 */
export function compileRoots(roots: unknown, field: string): string[] | undefined {
  if (roots === undefined || roots === null) return undefined;
  if (!Array.isArray(roots)) throw invalidArg(field, 'must be an array of absolute directory paths');
  roots.forEach((root: unknown, i) => {
    if (typeof root !== 'string') throw invalidArg(`${field}[${i}]`, `must be an absolute path, got ${JSON.stringify(root)}`);
  });
  return loadNative().canonicalRoots(roots as string[]);
}

/**
 * Resolves `cwd` (absolute) and checks it lies inside one of `roots` (canonical), by the core's rule
 * (`cwdInRoots`: the rule `createTerminal` applies to `allowedRoots`). Returns the canonical directory,
 * which is what the command must be started in (so a symlink swapped later does not matter). Throws
 * `ERR_INVALID_CWD` (missing, not a directory, unresolvable) or `ERR_CWD_OUTSIDE_ROOTS`.
 */
export async function resolveCwdInRoots(cwd: string, roots: readonly string[]): Promise<string> {
  let checked: { resolved: string; inside: boolean };
  try {
    checked = await loadNative().cwdInRoots(cwd, [...roots]);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ERR_INVALID_CWD' && code !== 'ERR_INVALID_ARG') throw error;
    throw new AcpTerminalError(code, errorMessage(error), { field: 'cwd', cwd });
  }
  const real = checked.resolved;
  if (!checked.inside) {
    const shown = real === cwd ? JSON.stringify(cwd) : `${JSON.stringify(cwd)} (resolved: ${JSON.stringify(real)})`;
    throw new AcpTerminalError(
      'ERR_CWD_OUTSIDE_ROOTS',
      `cwd: ${shown} is outside the directories this client allows (${roots.map((r) => JSON.stringify(r)).join(', ')})`,
      { field: 'cwd', cwd, resolved: real, allowedRoots: [...roots] },
    );
  }
  return real;
}

// ---------------------------------------------------------------------------------------------------
// Commands

/** A program a request would run, as the command policy sees it. */
export interface PolicyCommand {
  /** The word as written (`rm`, `./build.sh`, `/usr/bin/git`, `$CMD`). */
  word: string;
  /** Absolute path it resolves to through PATH and the cwd, or undefined (a builtin, not found, dynamic). */
  path: string | undefined;
  /** `path` with symlinks resolved, or undefined. */
  realPath: string | undefined;
  /** True for a shell builtin name (`cd`, `eval`, `kill`); builtins win over PATH in a shell. */
  builtin: boolean;
  /** True when the word is only known at run time (`$CMD`, `$(...)`, a glob); it cannot be matched. */
  dynamic: boolean;
  /** Set when the program would run code given in its arguments or stdin (`python3 -c`, `awk` `system()`): why. */
  runsCode?: string;
  /** Set when the program (one the analysis reads options of: git, tar, node, make, ...) was given an option it does not know: which. */
  unknownOption?: string;
}

/**
 * A command rule. A string without `/` is a glob on the program's name (`rm`, `python*`): it matches the
 * basename of the word, of its resolved path and of its real path. A string with `/` is a glob on the
 * absolute path (`/usr/bin/*`, `/opt/**`; `*` stops at `/`, `**` does not): it matches the resolved or
 * the real path. A RegExp is tested on the word, the path and the real path. A function decides itself
 * (one that throws counts as a match for `deny` and as no match for `allow`).
 */
export type CommandRule = string | RegExp | ((command: PolicyCommand) => boolean);

/** Allow/deny rules on the programs of a `terminal/create`. */
export interface CommandPolicy {
  /**
   * When present, every program found must match one of these (shell builtins in `SAFE_SHELL_BUILTINS`
   * excepted), and a shell line is approved only when every part of it is understood: plain commands of
   * literal words joined by `&&`, `||`, `;`, `|`, with redirections to literal paths. Anything else
   * (arithmetic, substitutions, loops, functions, `eval`, `[[ ]]`, an unknown wrapper option, a
   * malformed line, a `$CMD` command word, ...) is refused. An empty list refuses everything.
   */
  allow?: readonly CommandRule[];
  /**
   * A program matching any of these is refused (checked before `allow`). A guard rail, not a boundary:
   * it sees the programs the analysis finds (behind wrappers, inside loops and substitutions), and a
   * determined agent can hide one (`$CMD`, a script, an interpreter). Use the sandbox as the boundary.
   */
  deny?: readonly CommandRule[];
  /**
   * Under an allow list, programs that run code given in their arguments or stdin (`awk` with
   * `system()`, `python3 -c`, an interpreter reading stdin, `git -c`, a possible git alias, `npx`,
   * `npm exec`, `find -exec`, `xargs`, `sed` `e`, `env -S`, ...) are refused even when allowed, unless
   * they match one of these rules too (same rule forms as `allow`). See docs/host-policy.md for the table.
   */
  codeRunners?: readonly CommandRule[];
  /**
   * Arg-less requests (shell lines): `'check'` (default) checks the line (see `allow`); `'deny'` refuses
   * every shell line, so agents must send argv.
   */
  shellLines?: 'check' | 'deny';
}

interface CompiledRule {
  readonly label: string;
  /**
   * True for a rule that names one program (a string without `*` or `?`) or decides itself (a function);
   * false for a broad rule (a glob, a directory, a RegExp), which admits only programs the analysis understands.
   */
  readonly exact?: boolean;
  matches(command: PolicyCommand, forDeny: boolean): boolean;
}

/** A validated command policy. */
export interface CompiledCommandPolicy {
  readonly allow: readonly CompiledRule[] | undefined;
  readonly deny: readonly CompiledRule[];
  /** Programs allowed to run code from their arguments or stdin (empty when absent). */
  readonly codeRunners?: readonly CompiledRule[];
  readonly shellLines: 'check' | 'deny';
}

/** Extensions Windows runs a bare name with (`PATHEXT`'s usual ones): a name rule `git` matches `git.exe`. */
const WINDOWS_RUNNABLE = /\.(exe|com|cmd|bat)$/i;

/**
 * A string rule as Windows names files: `\` and `/` both separate (a rule with either, or a drive, is a
 * path rule; `*` stops at both), case does not matter, and a name rule matches a file's name with or
 * without the extension it runs by (`acp-tool` matches `ACP-TOOL.CMD`).
 */
function compileWindowsRule(rule: string, label: string): CompiledRule {
  const slashes = (f: string): string => f.replace(/\\/g, '/');
  const re = globToRegExp(slashes(rule), 'i');
  if (/[\\/]|^[a-z]:/i.test(rule)) {
    return {
      label,
      matches: (c) =>
        [path.win32.isAbsolute(c.word) ? c.word : undefined, c.path, c.realPath].some((f) => f !== undefined && re.test(slashes(f))),
    };
  }
  const names = (f: string): string[] => {
    const base = path.win32.basename(f);
    return WINDOWS_RUNNABLE.test(base) ? [base, base.replace(WINDOWS_RUNNABLE, '')] : [base];
  };
  return {
    label,
    matches: (c) =>
      [c.word, c.path, c.realPath].some((f) => f !== undefined && !c.dynamic && names(f).some((n) => re.test(n))),
  };
}

function compileRule(rule: unknown, field: string, platform: NodeJS.Platform): CompiledRule {
  if (typeof rule === 'function') {
    const fn = rule as (command: PolicyCommand) => boolean;
    return {
      label: fn.name ? `function ${fn.name}` : 'a function rule',
      matches(command, forDeny) {
        try {
          return fn({ ...command }) === true;
        } catch {
          return forDeny;
        }
      },
    };
  }
  // The matchers below test the word, the path and the real path in turn (no array per call: a check runs them for
  // every program of the line).
  if (rule instanceof RegExp) {
    const test = (f: string | undefined): boolean => f !== undefined && safeTest(rule, f);
    return { label: String(rule), matches: (c) => test(c.word) || test(c.path) || test(c.realPath) };
  }
  if (typeof rule === 'string' && rule.length > 0 && !rule.includes('\0')) {
    const label = JSON.stringify(rule);
    if (platform === 'win32') return compileWindowsRule(rule, label);
    const re = globToRegExp(rule);
    if (rule.includes('/')) {
      const test = (f: string | undefined): boolean => f !== undefined && re.test(f);
      return { label, matches: (c) => (path.isAbsolute(c.word) && re.test(c.word)) || test(c.path) || test(c.realPath) };
    }
    const test = (f: string | undefined): boolean => f !== undefined && re.test(path.basename(f));
    return { label, matches: (c) => !c.dynamic && (test(c.word) || test(c.path) || test(c.realPath)) };
  }
  throw invalidArg(field, `must be a non-empty string, a RegExp or a function, got ${JSON.stringify(rule)}`);
}

/** Validates a `CommandPolicy`; invalid entries throw `ERR_INVALID_ARG` naming the field. */
export function compileCommandPolicy(
  policy: unknown,
  field: string,
  platform: NodeJS.Platform = process.platform,
): CompiledCommandPolicy | undefined {
  if (policy === undefined || policy === null) return undefined;
  if (typeof policy !== 'object') throw invalidArg(field, 'must be an object { allow?, deny?, codeRunners?, shellLines? }');
  const p = policy as CommandPolicy;
  const list = (rules: unknown, name: string): CompiledRule[] | undefined => {
    if (rules === undefined) return undefined;
    if (!Array.isArray(rules)) throw invalidArg(`${field}.${name}`, 'must be an array of rules');
    return rules.map((r: unknown, i) => ({
      ...compileRule(r, `${field}.${name}[${i}]`, platform),
      exact: typeof r === 'function' || (typeof r === 'string' && !/[*?]/.test(r)),
    }));
  };
  if (p.shellLines !== undefined && p.shellLines !== 'check' && p.shellLines !== 'deny') {
    throw invalidArg(`${field}.shellLines`, `must be 'check' or 'deny', got ${JSON.stringify(p.shellLines)}`);
  }
  return {
    allow: list(p.allow, 'allow'),
    deny: list(p.deny, 'deny') ?? [],
    codeRunners: list(p.codeRunners, 'codeRunners') ?? [],
    shellLines: p.shellLines ?? 'check',
  };
}

/** What the command policy needs to know about a request. */
export interface CommandCheck {
  /** The request's `command`. */
  command: string;
  /** The request's `args` (empty: a shell line, unless `shell` is false). */
  args: readonly string[];
  /** True when `command` is a shell line (no args and the host uses a shell). */
  shellLine: boolean;
  /** The cwd the command will start in (undefined: this process's). */
  cwd: string | undefined;
  /** The `PATH` the command will see (undefined: leave it to `resolve`'s default). */
  path: string | undefined;
  /** Program resolution (the core's `resolveProgram`). */
  resolve: ResolveProgramFn;
  /** A resolved program's path with its symlinks resolved (default: this machine's `realpath`; a remote backend's far end). */
  realPath?: (file: string) => string | undefined;
  /** The environment policy, for variables the line assigns (under an allow list). */
  env?: CompiledEnvPolicy;
  /**
   * Whose grammar the shell line is run by (default `'posix'`): the analysis reads lines as bash does,
   * which is what runs them on Unix. On Windows the default shell is cmd.exe (`shellDialect`).
   */
  dialect?: ShellDialect;
}

/** The grammar a shell line is run by: a POSIX shell (sh, bash), cmd.exe, or PowerShell. */
export type ShellDialect = 'posix' | 'cmd' | 'powershell';

/**
 * The dialect of the shell that runs a host's shell lines: `shell` is the host's (resolved) shell, or
 * undefined for the platform's default (`/bin/sh`; on Windows `%ComSpec%`, cmd.exe).
 */
export function shellDialect(shell: string | undefined, platform: NodeJS.Platform = process.platform): ShellDialect {
  if (platform !== 'win32') return 'posix';
  if (shell === undefined) return 'cmd';
  const stem = (shell.split(/[\\/]/).pop() ?? shell).toLowerCase().replace(/\.exe$/, '');
  if (stem === 'cmd') return 'cmd';
  if (stem === 'powershell' || stem === 'pwsh') return 'powershell';
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
function refuseForeignDialect(check: CommandCheck, analysis: ShellAnalysis): void {
  if (!check.shellLine || check.dialect === undefined || check.dialect === 'posix') return;
  if (check.dialect === 'powershell') {
    throw denied(
      'command: this client runs shell lines with PowerShell, whose commands its command policy cannot check; send the program in `command` and its arguments in `args`',
      { field: 'command', reason: 'shell-line', dialect: 'powershell' },
    );
  }
  const refuse = (construct: string, position: number): never => {
    throw denied(
      `command: the line uses ${construct} at index ${position}, which cmd.exe reads differently from the command policy's analysis (cmd lines may hold letters, digits, spaces, quotes, & | < > and _ - . / : @ + = only; send argv otherwise)`,
      { field: 'command', reason: 'shell-construct', construct, position, dialect: 'cmd' },
    );
  };
  let position = 0;
  for (const ch of check.command) {
    if (!CMD_PLAIN.test(ch)) refuse(`\`${ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch}\``, position);
    position += ch.length;
  }
  const assignment = analysis.assignments[0];
  if (assignment) refuse(`the assignment \`${assignment.word}\``, Math.max(0, check.command.indexOf(assignment.word)));
  const named = analysis.words.find((w) => w.word.includes('='));
  if (named) refuse(`\`=\` in the command \`${named.word}\``, Math.max(0, check.command.indexOf('=')));
}

/** Result of a passed command check. */
export interface CommandCheckResult {
  /** For a direct (argv) request: the absolute path that will be executed (under an allow list, the real path checked). */
  program?: string;
  /** The programs found (for the approval callback and the audit trail). */
  commands: PolicyCommand[];
  /**
   * Under an allow list, for a shell line: the line to run instead of the request's, rebuilt from what was
   * checked (every word single-quoted, every program word replaced by the real path of the program checked).
   */
  line?: string;
  /** Under an allow list, for an argv request: the argv to run instead (its program and nested `-c` lines rebuilt). */
  argv?: string[];
}

/** A builtin name written unquoted in a rebuild (quoting cannot change which builtin runs, but keeps bash's parsing of `export a=$b`). */
const BARE_BUILTIN = /^([A-Za-z_][A-Za-z0-9_]*|\[|:)$/;

/** `text` single-quoted for sh and bash. */
function shq(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * Writes a rebuild: text pieces as they are, each program as the real path checked for it (a shell builtin as
 * its name), nested lines as one quoted word. `argv`: the top level is an argument list, written unquoted.
 */
function writeRebuild(pieces: readonly RebuildPiece[], commands: readonly PolicyCommand[], argv: boolean): string[] {
  const args: string[] = [];
  const stack: string[] = [];
  let current = '';
  for (const p of pieces) {
    const top = argv && stack.length === 0;
    if (p.kind === 'open') {
      stack.push(current);
      current = '';
      continue;
    }
    let text: string;
    if (p.kind === 'close') {
      const inner = current;
      current = stack.pop() ?? '';
      text = argv && stack.length === 0 ? inner : shq(inner);
      if (argv && stack.length === 0) {
        args.push(text);
        continue;
      }
    } else if (p.kind === 'text') {
      text = p.text;
      if (top) {
        args.push(text);
        continue;
      }
    } else {
      const command = commands[p.program];
      if (command === undefined) throw new Error('rebuild names a program that was not found');
      const builtin = !top && command.builtin;
      const real = command.realPath ?? command.path;
      if (!builtin && real === undefined) throw new Error('rebuild needs a resolved program');
      text = builtin ? (BARE_BUILTIN.test(command.word) ? command.word : shq(command.word)) : top ? real! : shq(real!);
      if (top) {
        args.push(text);
        continue;
      }
    }
    current += text;
  }
  return argv ? args : [current];
}

function denied(message: string, details: Record<string, unknown>): AcpTerminalError {
  return new AcpTerminalError('ERR_POLICY_DENIED', message, details);
}

function describe(command: PolicyCommand): string {
  if (command.path === undefined) return `\`${command.word}\``;
  const real = command.realPath && command.realPath !== command.path ? ` -> ${command.realPath}` : '';
  return `\`${command.word}\` (${command.path}${real})`;
}

/** The kernel's trees: under them a relative name is a device, a descriptor or another process's file. */
const KERNEL_TREES = ['/dev', '/proc', '/sys'];

/**
 * Under an allow list a command never starts inside /dev, /proc or /sys: there a relative operand the
 * analysis reads as a file (`python3 stdin`, `perl 0`, `make -f stdin`) is the line's own stdin or another
 * process's descriptor. The line's own `cd` is judged by the analysis; this is the cwd it starts from (a
 * request's, or a ShellSessions shell's after an earlier `cd /dev`), as `judge` reads it (this process's when
 * the request has none). `real` is it resolved (`/dev/fd` is /proc) by the same realpath as the programs
 * (`startCwd`).
 */
function refuseKernelCwd(cwd: string | undefined, real: string | undefined): void {
  if (cwd === undefined || real === undefined) return;
  const tree = KERNEL_TREES.find((t) => real === t || real.startsWith(`${t}/`));
  if (tree !== undefined) {
    throw denied(
      `cwd: ${JSON.stringify(cwd)} is inside ${tree}, where a relative name is a device or a process's descriptor; under this client's allow list commands start elsewhere`,
      { field: 'cwd', reason: 'kernel-cwd', cwd, resolved: real },
    );
  }
}

/**
 * What a check's lookups are given: its cwd (this process's when the request has none, as the core would
 * take it) and PATH. Only defined fields: the core's resolveProgram rejects an explicit null although its
 * types allow it.
 */
function lookupOptions(cwd: string | undefined, check: CommandCheck): { cwd?: string; path?: string } {
  const options: { cwd?: string; path?: string } = {};
  if (cwd !== undefined) options.cwd = cwd;
  if (check.path !== undefined) options.path = check.path;
  return options;
}

function processCwd(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined; // removed: left to the core, which fails the lookup the same way
  }
}

/**
 * Under an allow list, what would make the checked words run something else is refused: assignments of
 * variables the environment policy refuses (or whose name is only known at run time), then every
 * construct the analysis does not understand (`shell-construct`, `shell-input`, `wrapper-option`,
 * `redefinition`), named with its position in the line.
 */
function refuseUncheckable(analysis: ShellAnalysis, check: CommandCheck): void {
  for (const a of analysis.assignments) {
    if (a.dynamic) {
      throw denied(`command: the line assigns \`${a.word}\`, a variable known only when it runs, so what that changes cannot be checked`, {
        field: 'command',
        reason: 'env',
        name: a.word,
      });
    }
    if (check.env?.denies(a.word, undefined)) {
      const { reason, why } = envRefusal(check.env, a.word, undefined);
      throw denied(`command: the line sets \`${a.word}\`: ${why}`, { field: 'command', reason, name: a.word });
    }
  }
  const r = analysis.refusals[0];
  if (r === undefined) return;
  const at = check.shellLine ? ` at index ${r.position}` : '';
  const details: Record<string, unknown> = { field: 'command', reason: r.reason, construct: r.construct, position: r.position };
  if (r.word !== undefined) details.word = r.word;
  const redefinition = analysis.redefinitions.find((d) => d.name === r.word);
  if (r.reason === 'redefinition' && redefinition) details.kind = redefinition.kind;
  const why: Record<ShellRefusal['reason'], string> = {
    'shell-construct': 'only plain commands joined by &&, ||, ; and | are allowed',
    'shell-input': `give the commands with \`${r.word ?? 'sh'} -c '...'\``,
    'wrapper-option': 'what it runs cannot be known',
    redefinition: 'what runs under that name is not what was checked',
  };
  throw denied(`command: the line uses ${r.construct}${at}, which this client's command policy cannot check (${why[r.reason]})`, details);
}

/**
 * `file` with its symlinks resolved, now (never cached: a link retargeted between two checks must be seen).
 * The libc `realpath` (one readlink per component) rather than Node's JS walk (an lstat and a Stats object per
 * component): the same answer on Unix at a third of the cost. Windows keeps Node's walk, whose answer for
 * substituted drives and network shares the rules were written against.
 */
const realpathNow: (file: string) => string = process.platform === 'win32' ? fs.realpathSync : fs.realpathSync.native;

function realPathOf(file: string): string | undefined {
  try {
    return realpathNow(file);
  } catch {
    return undefined;
  }
}

/**
 * Finds the programs of a request and checks them against `policy`. For a direct request, resolution
 * errors of the program itself (`ENOENT`, `EACCES`) are thrown as they are, exactly as spawning would
 * fail. Throws `ERR_POLICY_DENIED` with a message naming the program and the rule.
 */
export function checkCommand(policy: CompiledCommandPolicy, check: CommandCheck): CommandCheckResult {
  refuseBeforeAnalysis(policy, check);
  const start = startCwd(check);
  const analysis = check.shellLine ? shellCommandWords(check.command, start) : argvCommandWords([check.command, ...check.args], start);
  return judge(policy, check, analysis, start);
}

/**
 * `checkCommand` with the analysis computed off the JS thread (a libuv worker), so that checking a long line
 * never stalls the event loop: what `TerminalHost` uses.
 */
export async function checkCommandAsync(policy: CompiledCommandPolicy, check: CommandCheck): Promise<CommandCheckResult> {
  refuseBeforeAnalysis(policy, check);
  const start = startCwd(check);
  const analysis = check.shellLine
    ? await shellCommandWordsAsync(check.command, start)
    : await argvCommandWordsAsync([check.command, ...check.args], start);
  return judge(policy, check, analysis, start);
}

/**
 * The directory the command starts in, as the analysis judges relative path operands (scripts, makefiles,
 * preloads: `perl dev/stdin` started in `/` reads the line's stdin): the check's cwd (the request's, the
 * host's default, a session's current one) or this process's, with its symlinks resolved (the machine's that
 * runs it: a backend's far end). Unresolvable (no such directory: the create fails on it) it is judged as
 * given; `undefined` (no cwd at all) makes every relative operand a refusal.
 */
function startCwd(check: CommandCheck): string | undefined {
  const cwd = check.cwd ?? processCwd();
  if (cwd === undefined) return undefined;
  return (check.realPath ?? realPathOf)(cwd) ?? cwd;
}

/**
 * The longest string the kernel passes to a program (`MAX_ARG_STRLEN`, 128 KiB with its NUL): a longer line
 * or argument could not be run at all (`E2BIG`), so it is refused before it is analysed.
 */
export const MAX_CHECKED_STRING_BYTES = 131_071;

function refuseBeforeAnalysis(policy: CompiledCommandPolicy, check: CommandCheck): void {
  if (check.shellLine && policy.shellLines === 'deny') {
    throw denied(
      'command: shell lines are not allowed by this client; send the program in `command` and its arguments in `args`',
      { field: 'command', reason: 'shell-line' },
    );
  }
  [check.command, ...check.args].forEach((s, i) => {
    // A UTF-16 length is at most the UTF-8 one, and at least a third of it: count bytes only when it may matter.
    if (s.length * 3 <= MAX_CHECKED_STRING_BYTES) return;
    const bytes = Buffer.byteLength(s);
    if (bytes <= MAX_CHECKED_STRING_BYTES) return;
    const field = i === 0 ? 'command' : `args[${i - 1}]`;
    throw new AcpTerminalError(
      'ERR_INVALID_ARG',
      `${field}: ${bytes} bytes, more than the ${MAX_CHECKED_STRING_BYTES} a single argument of a program may have, so it cannot run (the command policy does not analyse it)`,
      { field, bytes, limit: MAX_CHECKED_STRING_BYTES },
    );
  });
}

/**
 * The most programs one request may name. Judging a program (its lookup on PATH, its real path) is
 * synchronous work on the JS thread: bounding the count bounds how long one request holds the event loop
 * (a 120 KiB `ls;ls;...` names ~40 000); the core hands over no more than the first 1001 of them
 * (`MAX_PROGRAMS` in src/binding/shell.rs, the same number). No terminal command needs more.
 */
export const MAX_CHECKED_PROGRAMS = 1000;

/** The command policy's verdict on a request, given the analysis of its line or argv. */
function judge(policy: CompiledCommandPolicy, check: CommandCheck, analysis: ShellAnalysis, start: string | undefined): CommandCheckResult {
  if (analysis.programCount > MAX_CHECKED_PROGRAMS) {
    throw new AcpTerminalError(
      'ERR_INVALID_ARG',
      `command: ${analysis.programCount} programs, more than the ${MAX_CHECKED_PROGRAMS} the command policy checks in one request; split the work into several commands`,
      { field: 'command', programs: analysis.programCount, limit: MAX_CHECKED_PROGRAMS },
    );
  }
  if (analysis.incomplete && policy.allow) {
    throw denied('command: the shell line is malformed or too deeply nested, so its programs cannot be checked', {
      field: 'command',
      reason: 'unparsable',
    });
  }
  // The cwd read once for the kernel-tree check and every lookup (Node keeps process.cwd() until a chdir).
  const cwd = check.cwd ?? processCwd();
  if (policy.allow) {
    refuseForeignDialect(check, analysis);
    refuseUncheckable(analysis, check);
    refuseKernelCwd(cwd, start);
  }
  const commands: PolicyCommand[] = [];
  let program: string | undefined;
  // One lookup per distinct word in this check (`ls; ls | ls` looks `ls` up once): the same PATH and cwd give the
  // same answer within one check, and nothing is kept past it (a link retargeted before the next check is seen).
  const looked = new Map<string, { path: string | undefined; realPath: string | undefined }>();
  const realPath = check.realPath ?? realPathOf;
  // One options object for every lookup.
  const lookup = lookupOptions(cwd, check);
  const words = analysis.words;
  for (let index = 0; index < words.length; index++) {
    const w: CommandWord = words[index]!;
    const top = !check.shellLine && index === 0;
    const builtinName = !w.word.includes('/') && SHELL_BUILTINS.has(w.word);
    let found: { path: string | undefined; realPath: string | undefined } | undefined;
    // On a shell line a builtin name runs the builtin, whatever PATH holds: nothing to look up.
    if (!w.dynamic && !(check.shellLine && builtinName)) {
      found = top ? undefined : looked.get(w.word);
      if (found === undefined) {
        let resolved: string | undefined;
        try {
          resolved = check.resolve(w.word, lookup);
        } catch (error) {
          if (top) throw error; // the core would fail the same way: ENOENT / EACCES
          resolved = undefined;
        }
        found = { path: resolved, realPath: resolved === undefined ? undefined : realPath(resolved) };
        looked.set(w.word, found);
      }
    }
    const resolved = found?.path;
    const command: PolicyCommand = {
      word: w.word,
      path: resolved,
      realPath: found?.realPath,
      builtin: builtinName && !top,
      dynamic: w.dynamic,
    };
    if (w.runsCode !== undefined) command.runsCode = w.runsCode;
    if (w.unknownOption !== undefined) command.unknownOption = w.unknownOption;
    if (top) program = resolved;
    commands.push(command);
  }

  for (const command of commands) {
    if (command.dynamic) continue;
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
        throw denied(
          `command: \`${command.word}\` is only known when the line runs, so it cannot be checked against the commands this client allows`,
          { field: 'command', reason: 'dynamic', word: command.word },
        );
      }
      if (command.runsCode !== undefined && !policy.codeRunners?.some((r) => r.matches(command, false))) {
        throw denied(
          `command: ${describe(command)} would run code given in its arguments or stdin (${command.runsCode}); this client does not let it (see the command policy's codeRunners)`,
          { field: 'command', reason: 'code-execution', word: command.word, program: command.path, why: command.runsCode },
        );
      }
      const optedIn = (): boolean => policy.codeRunners?.some((r) => r.matches(command, false)) === true;
      if (command.unknownOption !== undefined && !optedIn()) {
        throw denied(
          `command: ${describe(command)} is given ${command.unknownOption}, so what it would run cannot be known; this client does not let it (see the command policy's codeRunners)`,
          { field: 'command', reason: 'unknown-option', word: command.word, program: command.path, option: command.unknownOption },
        );
      }
      if (command.builtin && SAFE_SHELL_BUILTINS.has(command.word)) continue;
      const matching = policy.allow.filter((r) => r.matches(command, false));
      if (matching.length > 0) {
        refuseNotUnderstood(command, matching);
        continue;
      }
      const notFound = command.path === undefined && !command.builtin ? ' (not found in PATH)' : '';
      throw denied(`command: ${describe(command)}${notFound} is not among the commands this client allows`, {
        field: 'command',
        reason: 'not-allowed',
        word: command.word,
        program: command.path,
      });
    }
  }
  if (policy.allow && (check.dialect === undefined || check.dialect === 'posix')) {
    return { ...rebuilt(analysis, commands, check), commands };
  }
  return { ...(program !== undefined ? { program } : {}), commands };
}

/** The grammar the analysis reads a program name's arguments with, or null (not understood); cached. */
const grammars = new Map<string, string | null>();
function grammarOf(name: string): string | null {
  let g = grammars.get(name);
  if (g === undefined) {
    g = loadNative().shellProgramGrammar(name) ?? null;
    if (grammars.size < 4096) grammars.set(name, g);
  }
  return g;
}

/**
 * Programs that restrict themselves when started under this name (`rbash` is `bash -r`, `rvim` is `vim -Z`):
 * run by a real path under another name (the rebuild runs `/usr/bin/bash` for `rbash`), the restrictions are gone.
 */
const RESTRICTED: ReadonlySet<string> = new Set(['rbash', 'rksh', 'rksh93', 'rzsh', 'rmksh', 'rview', 'rvim', 'rgvim', 'rgview', 'red', 'rnano']);

/**
 * Refuse what is not understood (`unknown-program`), under an allow list, for a program that `matching`
 * rules allow:
 * - a program that runs under another name than the word checked (its real path is `vim` where the word
 *   was `rvim`, `busybox` where it was `ls`) when the analysis reads the two names differently: the
 *   rebuild runs the real path, so the arguments were judged by the wrong grammar;
 * - a restricted name (`rbash`, `rvim`, ...) whose real path has another name: it would run unrestricted;
 * - a program the analysis does not understand (not a plain program, wrapper, code runner or shell of its
 *   tables) that only broad rules (a glob, a directory, a RegExp) allow: it may run another program or code
 *   through options nobody read (`setpriv`, `valgrind`, `gdb`, ...). A rule naming it exactly admits it.
 */
function refuseNotUnderstood(command: PolicyCommand, matching: readonly CompiledRule[]): void {
  const real = command.realPath ?? command.path;
  const name = path.basename(command.word);
  let grammar = grammarOf(name);
  if (!command.builtin && real !== undefined) {
    const runs = path.basename(real);
    if (RESTRICTED.has(name) && runs !== name) {
      throw denied(
        `command: ${describe(command)} runs as \`${runs}\`: \`${name}\` is restricted only when it runs under its own name, so its real path would run without the restrictions; allow it only inside the sandbox`,
        { field: 'command', reason: 'unknown-program', word: command.word, program: real, runsAs: runs },
      );
    }
    const runsGrammar = runs === name ? grammar : grammarOf(runs);
    // A plain program's arguments cannot make it run anything: under whatever name it was checked, it may run.
    if (runsGrammar === 'plain') grammar = runsGrammar;
    if (runsGrammar !== null && runsGrammar !== grammar) {
      throw denied(
        `command: ${describe(command)} runs as \`${runs}\`, which reads its arguments differently from \`${name}\` as they were checked; name the program by its real path, or allow it only inside the sandbox`,
        { field: 'command', reason: 'unknown-program', word: command.word, program: real, runsAs: runs },
      );
    }
    // What runs is the real path: understood only when that name is too (`npm` whose real path is npm-cli.js is not).
    if (runsGrammar === null) grammar = null;
  }
  if (grammar !== null || matching.some((r) => r.exact)) return;
  throw denied(
    `command: ${describe(command)} is allowed only by the broad rule ${matching[0]!.label}, and this client's command policy does not know what \`${name}\` may run (it is not among the programs whose options the analysis reads); allow it by naming it exactly (${JSON.stringify(real ?? command.word)}) if it may run anything its arguments say`,
    { field: 'command', reason: 'unknown-program', word: command.word, program: command.path, rule: matching[0]!.label },
  );
}

/**
 * Under an allow list, what runs is rebuilt from what was checked: the shell never receives the agent's text,
 * and each program runs by the real path that was checked (so no `cd`, relative word or symlink retargeted
 * between the check and the exec changes what runs). A program that was not found cannot be pinned: refused.
 */
function rebuilt(analysis: ShellAnalysis, commands: readonly PolicyCommand[], check: CommandCheck): Pick<CommandCheckResult, 'program' | 'line' | 'argv'> {
  const refuse = (message: string, details: Record<string, unknown>): never => {
    throw denied(`command: ${message}`, { field: 'command', ...details });
  };
  const pieces = analysis.rebuild ?? refuse('the line cannot be rebuilt from what was checked', { reason: 'shell-construct' });
  for (const p of pieces) {
    if (p.kind !== 'program') continue;
    const command = commands[p.program];
    const top = !check.shellLine && p === pieces[0];
    if (command !== undefined && (top || !command.builtin) && (command.realPath ?? command.path) === undefined) {
      refuse(`\`${command.word}\` was not found when the request was checked, so what would run cannot be pinned`, {
        reason: 'not-found',
        word: command.word,
      });
    }
  }
  const written = writeRebuild(pieces, commands, !check.shellLine);
  if (check.shellLine) return { line: written[0] };
  return { program: written[0], argv: written };
}

/**
 * Under an allow list, the host's own shell may not be one that runs start-up files before each line
 * (`['bash', '-l', '-c']`, `-i`, `--login`, `sh -l`, `--rcfile`: what the analysis refuses in a line's
 * `bash -lc`): an allowed command can write `~/.profile` or `~/.bashrc` (`echo ... >> ~/.profile`), and
 * the next request's shell would run it unchecked. Accepted only when a sandbox keeps the commands' `HOME`
 * read-only (no writable root is `HOME` or above it) and the request may not choose `HOME`; never when it
 * changes a shell option off the analysis' list (`['bash', '-O', 'cdable_vars', '-c']`). Throws
 * `ERR_INVALID_ARG` naming `options.shell`.
 */
export function refuseStartupShell(
  policy: CompiledCommandPolicy | undefined,
  argv: readonly string[],
  home: string | undefined,
  sandbox: { writableRoots: readonly string[] } | undefined,
  env: CompiledEnvPolicy | undefined,
): void {
  if (policy?.allow === undefined) return;
  const analysis = argvCommandWords([...argv, 'true']);
  // A shell option off the analysis' list (`-O cdable_vars`, `-o keyword`, `-k`) changes how every line is
  // read, whatever a sandbox keeps read-only.
  const option = analysis.refusals.find((r) => r.construct.includes('shell option change'));
  if (option !== undefined) {
    throw invalidArg('options.shell', `${JSON.stringify(argv)} changes a shell option the command policy's analysis does not model (${option.construct}), so the allow list would not hold`);
  }
  const startup = analysis.refusals[0];
  if (startup === undefined && !analysis.incomplete) return;
  const realHome = home === undefined ? undefined : realPathOf(home);
  const inside = (root: string): boolean => realHome !== undefined && (realHome === root || realHome.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
  const homeReadOnly = sandbox !== undefined && realHome !== undefined && !sandbox.writableRoots.some(inside) && env?.denies('HOME', undefined) !== false;
  if (homeReadOnly) return;
  const what = startup?.construct ?? 'a shell whose arguments the analysis cannot read';
  throw invalidArg(
    'options.shell',
    `${JSON.stringify(argv)} runs start-up files before each line (${what}), which an allowed command can write (\`echo ... >> ~/.profile\`) and which no check of a request sees, so the command policy's allow list would not hold; use a shell without a login or interactive start (\`['bash', '--noprofile', '--norc', '-c']\`, or set the environment the profile sets in \`env\`), or a sandbox whose writable roots leave HOME (${JSON.stringify(home ?? '')}) read-only`,
  );
}

/**
 * The shell for shell lines as an absolute path: a bare name (`bash`) is found through the host's PATH
 * (`hostPath`) and a relative path against the host's cwd, never through a request's PATH or cwd (the
 * core would look it up through the command's environment). An unknown shell is `ERR_INVALID_ARG`
 * naming `options.shell`.
 */
export function resolveHostShell(shell: string, hostPath: string | undefined, cwd: string | undefined, resolve: ResolveProgramFn): string {
  if (shell.length === 0 || shell.includes('\0')) throw invalidArg('options.shell', 'must be false or a non-empty path');
  if (path.isAbsolute(shell)) return shell;
  try {
    return resolve(shell, { ...(cwd !== undefined ? { cwd } : {}), ...(hostPath !== undefined ? { path: hostPath } : {}) });
  } catch (error) {
    throw invalidArg('options.shell', `${JSON.stringify(shell)} cannot be found through the host's PATH (${errorMessage(error)})`);
  }
}
