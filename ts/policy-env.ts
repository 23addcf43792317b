/**
 * The environment policy, in one place: which inherited variables a command does not get
 * (`SECRET_ENV_PATTERNS`, `filteredInheritedEnv`) and which variables an agent may set in a request's
 * `env` (and, under an allow list, assign in a shell line). Variables that change which program runs or
 * load code into it (`LD_PRELOAD`, `BASH_ENV`, `GIT_SSH_COMMAND`, `PATH`, ...) turn any allowed program
 * into an arbitrary one, so a command policy is only as good as the environment it judges.
 */

import { AcpTerminalError, invalidArg } from './errors';
import { globToRegExp, safeTest } from './glob';
import { loadNative } from './native';
import type { EnvVariable } from './types';

/**
 * Name patterns of variables that commonly hold credentials; pass them (or your own) as the host's
 * `dropInheritedEnv`. String patterns are case-insensitive globs.
 */
export const SECRET_ENV_PATTERNS: readonly string[] = Object.freeze([
  '*_TOKEN',
  '*_TOKEN_*',
  '*_SECRET',
  '*_SECRET_*',
  '*_PASSWORD',
  '*_PASSWD',
  '*_API_KEY',
  '*_APIKEY',
  '*_ACCESS_KEY',
  '*_PRIVATE_KEY',
  '*_CREDENTIALS',
  'AWS_*',
  'AZURE_*',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GH_*',
  'GITHUB_*',
  'NPM_CONFIG__AUTH*',
  'SSH_AUTH_SOCK',
]);

/** A variable-name pattern: a case-insensitive glob (`*_TOKEN`, `AWS_*`) or a RegExp tested on the name. */
export type EnvNamePattern = string | RegExp;

/** Compiles env name patterns into a predicate; invalid entries throw `ERR_INVALID_ARG` naming `field[i]`. */
export function compileEnvPatterns(patterns: unknown, field: string): ((name: string) => boolean) | undefined {
  if (patterns === undefined || patterns === null) return undefined;
  if (!Array.isArray(patterns)) throw invalidArg(field, 'must be an array of glob strings or RegExps');
  const res = patterns.map((p: unknown, i) => {
    if (typeof p === 'string' && p.length > 0) return globToRegExp(p, 'i');
    if (p instanceof RegExp) return p;
    throw invalidArg(`${field}[${i}]`, `must be a non-empty glob string or a RegExp, got ${JSON.stringify(p)}`);
  });
  if (res.length === 0) return undefined;
  return (name) => res.some((re) => safeTest(re, name));
}

const coreDefaulted = new Map<boolean, ReadonlySet<string>>();

/** The names the core gives a default value over the inherited environment (its `envDefaults(pty)`). */
function coreDefaultedNames(pty: boolean): ReadonlySet<string> {
  let names = coreDefaulted.get(pty);
  if (!names) {
    names = new Set(loadNative().envDefaults(pty).map((d) => d.name));
    coreDefaulted.set(pty, names);
  }
  return names;
}

/**
 * This process's environment minus the variables `drop` matches, as ACP env entries (used with the
 * core's `inheritEnv: false`). The variables the core defaults (`envDefaults()`: `PAGER`, `GIT_PAGER`,
 * and `TERM` for a terminal on a pty: `pty: true`) are left out so its defaults still apply as they do
 * to an inherited environment.
 */
export function filteredInheritedEnv(
  drop: (name: string) => boolean,
  env: NodeJS.ProcessEnv = process.env,
  options: { pty?: boolean } = {},
): EnvVariable[] {
  const defaulted = coreDefaultedNames(options.pty === true);
  const out: EnvVariable[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || defaulted.has(name) || drop(name)) continue;
    out.push({ name, value });
  }
  return out;
}

/**
 * Names of variables that change which program runs, or load code into a program, for the programs a
 * terminal commonly runs (the dynamic loader, shells, git, pagers and editors, interpreters). Globs,
 * case-insensitive. Not exhaustive: a tool that reads a config file named by a variable can run code
 * from it; extend the list for the tools you allow (`envPolicy: { deny: [...DANGEROUS_ENV_PATTERNS, 'MY_TOOL_HOOK'] }`).
 */
export const DANGEROUS_ENV_PATTERNS: readonly string[] = Object.freeze([
  // The dynamic loader: preload a library, or load one from elsewhere.
  'LD_*',
  'DYLD_*',
  'GCONV_PATH',
  // Program lookup, and where shells and tools read their start-up code and configuration.
  'PATH',
  // Windows: the shell cmd.exe starts for each side of a pipe, and the extensions a bare name runs by.
  'COMSPEC',
  'PATHEXT',
  'HOME',
  'XDG_CONFIG_HOME',
  'SHELL',
  // Shells: start-up files, imported functions, options, traces, prompts, word splitting.
  'BASH_ENV',
  'ENV',
  'BASH_FUNC_*',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'IFS',
  'ZDOTDIR',
  'BASH_LOADABLES_PATH',
  // git: commands it runs, configuration it reads, where it finds its programs and hooks.
  'GIT_SSH*',
  'GIT_CONFIG*',
  'GIT_EXEC_PATH',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_ASKPASS',
  'GIT_PROXY_COMMAND',
  'GIT_DIR',
  'GIT_TEMPLATE_DIR',
  'GIT_ALLOW_PROTOCOL',
  // Options read from the environment by programs an allow list may name (tar --to-command, make --eval,
  // zip -TT, man -P, rg --pre through its config file, npm's script-shell), and the remote shells they run.
  'TAR_OPTIONS',
  'TAPE',
  'MAKEFLAGS',
  'MFLAGS',
  'GNUMAKEFLAGS',
  'MAKEFILES',
  'ZIPOPT',
  'MANOPT',
  'RIPGREP_CONFIG_PATH',
  'NPM_CONFIG_*',
  'RSYNC_RSH',
  'RSYNC_CONNECT_PROG',
  'WGETRC',
  'SYSTEM_WGETRC',
  // make imports the environment as variables: its built-in rules run the programs these name
  // (GNU make manual, "Variables Used by Implicit Rules"), and the flags reach the compilers (gcc's
  // -wrapper and -fplugin, the linker's -plugin, rustc's -C linker=, go's -toolexec= run a program).
  'AR',
  'AS',
  'CC',
  'CXX',
  'CPP',
  'FC',
  'M2C',
  'PC',
  'CO',
  'GET',
  'LD',
  'LEX',
  'YACC',
  'LINT',
  'MAKEINFO',
  'TEX',
  'TEXI2DVI',
  'WEAVE',
  'CWEAVE',
  'TANGLE',
  'CTANGLE',
  'RM',
  'MAKE',
  '*FLAGS',
  'LDLIBS',
  'TARGET_ARCH',
  'OUTPUT_OPTION',
  // Version managers' shims (shell scripts in front of python, ruby, node): hook and plugin paths they source.
  'PYENV_*',
  'RBENV_*',
  'NODENV_*',
  // Programs run by name from a variable.
  'EDITOR',
  'VISUAL',
  'SUDO_EDITOR',
  'PAGER',
  'MANPAGER',
  'LESSOPEN',
  'LESSCLOSE',
  'BROWSER',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  // Interpreters: options and module paths that load code.
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONINSPECT',
  'PYTHONUSERBASE',
  'LUA_INIT*',
  'PYTHONBREAKPOINT',
  // perl: options, module paths, the debugger `perl -d` loads (PERL5DB) and its options.
  'PERL5*',
  'PERLDB_OPTS',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
]);

/** An env rule: a name pattern (case-insensitive glob or RegExp), or a function of the name and value. */
export type EnvRule = EnvNamePattern | ((name: string, value: string | undefined) => boolean);

/**
 * The default exceptions: a pager variable set to `cat` or to the empty string (what agents set to
 * keep `git log` from paging) runs nothing new.
 */
export const DEFAULT_ENV_ALLOW: readonly EnvRule[] = Object.freeze([
  function pagerOff(name: string, value: string | undefined): boolean {
    return /^(GIT_PAGER|PAGER|MANPAGER)$/.test(name) && (value === 'cat' || value === '');
  },
]);

/**
 * The variables an agent may set under a command allow list without the host opting in: names every
 * program reads as data only, never as a program, a path to code or configuration, or options.
 * - `LANG`, `LC_ALL` and the other `LC_*` categories glibc knows: a locale name, which glibc checks
 *   (`valid_locale_name`: no `..` component); message catalogs are still looked up under the system's
 *   locale directory. `LANGUAGE` is left out: gettext reads it itself, unchecked, as path components.
 * - `TERM` (a terminfo entry found by name, never a path: ncurses refuses a `/`), `COLUMNS`, `LINES`.
 * - `NO_COLOR`, `FORCE_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`: colour switches.
 * - `TZ`: a time zone rule or tzfile (data).
 * - `CI`: the "running unattended" flag tools read as a boolean.
 * Everything else is refused under an allow list (`env-not-allowed`): a program may read any name,
 * and nobody can list them (`GROFF_BIN_PATH`, `OPENSSL_CONF`, `VIMINIT`, `COMPILER_PATH`, `MAILPATH`).
 * A host allows more with `envPolicy: { allow: [...] }`.
 */
export const DATA_ONLY_ENV_NAMES: readonly string[] = Object.freeze([
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LC_COLLATE',
  'LC_MESSAGES',
  'LC_NUMERIC',
  'LC_TIME',
  'LC_MONETARY',
  'LC_PAPER',
  'LC_NAME',
  'LC_ADDRESS',
  'LC_TELEPHONE',
  'LC_MEASUREMENT',
  'LC_IDENTIFICATION',
  'TERM',
  'COLUMNS',
  'LINES',
  'NO_COLOR',
  'FORCE_COLOR',
  'CLICOLOR',
  'CLICOLOR_FORCE',
  'TZ',
  'CI',
]);

const DATA_ONLY = new Set(DATA_ONLY_ENV_NAMES);

/**
 * Which variables a request may set. The host refuses a request whose `env` sets a name matching `deny`
 * and no `allow` rule (`ERR_POLICY_DENIED`, reason `env`); under a command allow list, a shell line
 * that assigns or exports such a name is refused too. Active when the host has a `commandPolicy` or an
 * `envPolicy`; `{ deny: [] }` turns it off.
 */
export interface EnvPolicy {
  /** Names refused (default `DANGEROUS_ENV_PATTERNS`). */
  deny?: readonly EnvRule[];
  /** Exceptions to `deny` (default `DEFAULT_ENV_ALLOW`; giving `allow` replaces it). */
  allow?: readonly EnvRule[];
}

/** A validated `EnvPolicy`. */
export interface CompiledEnvPolicy {
  /** True when `name` (with `value`, when known) may not be set by the agent. */
  denies(name: string, value: string | undefined): boolean;
  /**
   * True under a command allow list: a name is refused unless it is in `DATA_ONLY_ENV_NAMES` or an
   * `allow` rule matches it (reason `env-not-allowed`).
   */
  readonly allowOnly: boolean;
  /** True when `deny` names `name` (a variable known to change what runs): reason `env`. */
  listed(name: string, value: string | undefined): boolean;
}

function compileRules(rules: unknown, field: string): ((name: string, value: string | undefined) => boolean) | undefined {
  if (rules === undefined) return undefined;
  if (!Array.isArray(rules)) throw invalidArg(field, 'must be an array of glob strings, RegExps or functions');
  const fns = rules.filter((r): r is (name: string, value: string | undefined) => boolean => typeof r === 'function');
  // Patterns keep their index in the message of compileEnvPatterns: functions are validated there as bad entries otherwise.
  const patterns = compileEnvPatterns(
    rules.map((r: unknown) => (typeof r === 'function' ? /(?!)/ : r)),
    field,
  );
  return (name, value) =>
    (patterns?.(name) ?? false) ||
    fns.some((fn) => {
      try {
        return fn(name, value) === true;
      } catch {
        return false;
      }
    });
}

/**
 * Validates an `EnvPolicy` (`ERR_INVALID_ARG` naming the field). `active`: whether the default applies
 * when `policy` is undefined (the host has a command policy). `allowOnly`: the host's command policy is
 * an allow list, so a name is refused unless it is data only (`DATA_ONLY_ENV_NAMES`) or `allow` names
 * it; `deny` still refuses what it matches and `allow` does not except.
 */
export function compileEnvPolicy(policy: unknown, field: string, active: boolean, allowOnly = false): CompiledEnvPolicy | undefined {
  if (policy === undefined || policy === null) {
    if (!active) return undefined;
    policy = {};
  }
  if (typeof policy !== 'object') throw invalidArg(field, 'must be an object { deny?, allow? }');
  const p = policy as EnvPolicy;
  for (const key of Object.keys(p)) {
    if (key !== 'deny' && key !== 'allow') throw invalidArg(`${field}.${key}`, 'unknown key (known: deny, allow)');
  }
  const deny = compileRules(p.deny ?? DANGEROUS_ENV_PATTERNS, `${field}.deny`) ?? (() => false);
  const allow = compileRules(p.allow ?? DEFAULT_ENV_ALLOW, `${field}.allow`) ?? (() => false);
  if (allowOnly) {
    return { allowOnly, listed: deny, denies: (name, value) => !allow(name, value) && (deny(name, value) || !DATA_ONLY.has(name)) };
  }
  return { allowOnly, listed: deny, denies: (name, value) => deny(name, value) && !allow(name, value) };
}

/** The message and reason for a variable `policy` refuses. */
export function envRefusal(policy: CompiledEnvPolicy, name: string, value: string | undefined): { reason: 'env' | 'env-not-allowed'; why: string } {
  if (policy.allowOnly && !DATA_ONLY.has(name) && !policy.listed(name, value)) {
    return {
      reason: 'env-not-allowed',
      why:
        'under an allow list only variables known to be data are accepted (locale, TERM, COLUMNS, LINES, colour switches, TZ, CI); ' +
        `a host that knows \`${name}\` is safe for the programs it allows adds it to \`envPolicy.allow\``,
    };
  }
  return { reason: 'env', why: 'it can change which program runs or load code into it' };
}

/** Throws `ERR_POLICY_DENIED` (reason `env`, naming the variable) for the first variable `policy` refuses. */
export function checkRequestEnv(policy: CompiledEnvPolicy, env: readonly EnvVariable[]): void {
  for (const { name, value } of env) {
    if (policy.denies(name, value)) {
      const { reason, why } = envRefusal(policy, name, value);
      throw new AcpTerminalError('ERR_POLICY_DENIED', `env: \`${name}\` is not allowed by this client: ${why}`, { field: 'env', reason, name });
    }
  }
}

/**
 * The variables naming the editor (and the pager's command escapes) of the programs an allow list may
 * name, each read ahead of the configuration files an allowed command can write: git's `GIT_EDITOR` and
 * `GIT_SEQUENCE_EDITOR` beat `core.editor` / `sequence.editor` in `.git/config`, npm's environment config
 * beats a project or user `.npmrc`, `VISUAL` / `EDITOR` are what crontab, sudoedit, less's `v` and most
 * others start. An editor started by an allowed program (`git commit`, `git tag -a`, `npm edit`,
 * `npm config edit`) reads its commands from the line's stdin, i.e. from a here-document of the agent's:
 * vi's `:!cmd` runs any program. Under an allow list the host sets each of them to a program that refuses
 * (`false`), and `LESSSECURE=1` turns off less's `!cmd`, `|cmd` and `v` (editor) commands. A request may
 * not set them back (`envPolicy` refuses every name but data-only ones); a host's own `env` option wins.
 */
export const EDITOR_ENV_NAMES: readonly string[] = Object.freeze([
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'VISUAL',
  'EDITOR',
  'SUDO_EDITOR',
  'npm_config_editor',
  'NPM_CONFIG_EDITOR',
]);

/**
 * The variables a shell reads its options and `cd`'s search path from when it starts: an inherited
 * `BASHOPTS=cdable_vars` sends `cd NAME` to `$NAME`, `SHELLOPTS=keyword` makes operands environment,
 * `CDPATH=/` sends `cd dev` to `/dev`. The analysis judges a line as the shell runs it with its default
 * options and no `CDPATH`, so under an allow list the host empties them (an empty value is what unset
 * is to bash and dash), whatever the host's own env says. A request may not set them (`envPolicy`).
 */
export const SHELL_OPTION_ENV_NAMES: readonly string[] = Object.freeze(['CDPATH', 'BASHOPTS', 'SHELLOPTS']);

/**
 * The host's env overlay under an allow list: `overlay` plus every `EDITOR_ENV_NAMES` variable set to
 * `refuser` (an absolute `false` when the host has one) and `LESSSECURE=1`, unless `overlay` sets the
 * name itself; and every `SHELL_OPTION_ENV_NAMES` variable empty, even when `overlay` sets it.
 */
export function lockedEditorEnv(overlay: readonly EnvVariable[], refuser: string): EnvVariable[] {
  const given = new Set(overlay.map((e) => e.name));
  const locked = [...EDITOR_ENV_NAMES.map((name) => ({ name, value: refuser })), { name: 'LESSSECURE', value: '1' }];
  const emptied = SHELL_OPTION_ENV_NAMES.map((name) => ({ name, value: '' }));
  return [...locked.filter((e) => !given.has(e.name)), ...overlay.filter((e) => !SHELL_OPTION_ENV_NAMES.includes(e.name)), ...emptied];
}
