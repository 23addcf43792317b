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

import { loadNative } from './native';

/** One program found in a line or an argv. */
export interface CommandWord {
  /** The word with quoting removed (`"r"m` → `rm`); run-time parts kept as written (`$CMD`). */
  word: string;
  /** True when the word's value is only known at run time (an expansion, a glob, a brace expansion, `~`). */
  dynamic: boolean;
  /** UTF-16 index in the line of the command it belongs to. */
  position?: number;
  /** Set when this program would run code given in its arguments or stdin (`awk` with `system()`, `python3 -c`): why. */
  runsCode?: string;
  /** True when the word was only guessed (after an unknown wrapper option, or in dash's reading of `[[`/`((`). */
  guessed?: boolean;
  /** Set when this program of the code-runner table was given an option its grammar does not list: which. */
  unknownOption?: string;
}

/**
 * A piece of a rebuild: shell text (words already quoted), the program checked for `words[program]`, or the
 * start/end of a nested `-c` line (written as one quoted word). In an argv rebuild each top-level piece (or
 * open..close group) is one argument, unquoted.
 */
export type RebuildPiece = { kind: 'text'; text: string } | { kind: 'program'; program: number } | { kind: 'open' } | { kind: 'close' };

/** Something a line redefines, so that a later command word may not run what the check resolved. */
export interface Redefinition {
  /** `alias NAME=...`, `hash -p PATH NAME`, `enable NAME`. */
  kind: 'alias' | 'hash' | 'enable';
  /** The name redefined. */
  name: string;
}

/** A part of a line that is not understood (see `ShellAnalysis.refusals`). */
export interface ShellRefusal {
  /**
   * `shell-construct` (arithmetic, substitution, loops, functions, `eval`, `[[ ]]`, ...), `shell-input` (a
   * shell reading stdin or a script), `wrapper-option` (an option of `xargs`/`env`/... this analysis does
   * not know), `redefinition` (alias, `hash -p`, `enable`).
   */
  reason: 'shell-construct' | 'shell-input' | 'wrapper-option' | 'redefinition';
  /** What it is, for a message. */
  construct: string;
  /** UTF-16 index in the line where it starts. */
  position: number;
  /** The word concerned, if any. */
  word?: string;
}

/** Result of analysing a shell line or an argv. */
export interface ShellAnalysis {
  /** Programs in the order found, including those inside refused constructs (for deny lists). */
  words: CommandWord[];
  /**
   * How many programs the line names. Above `MAX_CHECKED_PROGRAMS` (1000) only the first 1001 are in
   * `words` (and in `assignments` / `refusals`; no `rebuild`): such a line is refused before it is judged.
   */
  programCount: number;
  /** True when the line is not valid bash (unterminated quote, unclosed `if`, dangling `|`, ...). */
  incomplete: boolean;
  /** Variables the line sets (`NAME=value`, `export`, `env NAME=value`, `read NAME`); `word` is the name. */
  assignments: CommandWord[];
  /** Constructs not understood, in the order found. An allow list refuses a line with any. */
  refusals: ShellRefusal[];
  /** Aliases, `hash -p` entries and `enable` in the line (also in `refusals`). */
  redefinitions: Redefinition[];
  /** Shells started without `-c`, which read their commands from stdin or a script file (also in `refusals`). */
  uncheckedShells: string[];
  /** What the shell is given instead of the line (or the argv instead of the request's): present when every part is understood. */
  rebuild?: RebuildPiece[];
}

/**
 * Shell builtins that cannot run another program or read code from somewhere (or only run a command
 * that is itself reported and checked); a strict allow list admits them without a rule.
 */
export const SAFE_SHELL_BUILTINS: ReadonlySet<string> = new Set([
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
export const SHELL_BUILTINS: ReadonlySet<string> = new Set([
  ...SAFE_SHELL_BUILTINS,
  'eval', 'source', '.', 'exec', 'trap', 'alias', 'unalias', 'kill', 'ulimit', 'fg', 'bg', 'disown', 'enable',
  'history', 'fc', 'mapfile', 'readarray', 'compgen', 'complete', 'bind', 'caller', 'suspend', 'logout',
  'read', 'let', 'hash', 'getopts',
]);

/** A program as the core sends it (src/binding/shell.rs): `[word, dynamic, position]`, then the rarer fields when one is set. */
type WireWord = [string, boolean, number] | [string, boolean, number, string | null, boolean, string | null];

/** The analysis as the core sends it: `ShellAnalysis` with its frequent parts as arrays (see src/binding/shell.rs). */
interface WireAnalysis extends Omit<ShellAnalysis, 'words' | 'assignments' | 'rebuild'> {
  words: WireWord[];
  assignments: [string, boolean][];
  /** A string is text, a number `n >= 0` the program `words[n]`, -1 and -2 the start and end of a nested line. */
  rebuild?: (string | number)[];
}

/**
 * The native analysis arrives as JSON text (src/binding/shell.rs): one `JSON.parse` instead of a Node-API call per
 * object and property, its frequent parts as arrays (half the parse of the same objects), made into
 * `ShellAnalysis`'s objects here.
 */
function fromNative(json: string): ShellAnalysis {
  const wire = JSON.parse(json) as WireAnalysis;
  const words: CommandWord[] = new Array<CommandWord>(wire.words.length);
  for (let i = 0; i < wire.words.length; i++) {
    const w = wire.words[i]!;
    const word: CommandWord = { word: w[0], dynamic: w[1], position: w[2] };
    if (w.length > 3) {
      if (w[3] !== null) word.runsCode = w[3];
      if (w[4]) word.guessed = true;
      if (w[5] !== null) word.unknownOption = w[5];
    }
    words[i] = word;
  }
  const analysis: ShellAnalysis = {
    words,
    programCount: wire.programCount,
    incomplete: wire.incomplete,
    assignments: wire.assignments.map(([word, dynamic]) => ({ word, dynamic })),
    refusals: wire.refusals,
    redefinitions: wire.redefinitions,
    uncheckedShells: wire.uncheckedShells,
  };
  if (wire.rebuild !== undefined) {
    analysis.rebuild = wire.rebuild.map(
      (p): RebuildPiece => (typeof p === 'string' ? { kind: 'text', text: p } : p >= 0 ? { kind: 'program', program: p } : p === -1 ? { kind: 'open' } : { kind: 'close' }),
    );
  }
  return analysis;
}

/**
 * Where relative path operands are judged when a caller gives no directory: this process's cwd (where a
 * command it spawns without one starts); `undefined` when it was removed, and then they are refused.
 */
function defaultCwd(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/**
 * Analyses a shell line (parsed by the native core with tree-sitter-bash). `cwd`: the absolute directory the
 * line starts in (default: this process's); a relative script, makefile or preload path is judged as the
 * absolute path it names there (`perl dev/stdin` started in `/` reads stdin), and refused when it is not known.
 */
export function shellCommandWords(line: string, cwd: string | undefined = defaultCwd()): ShellAnalysis {
  return fromNative(loadNative().analyseShellLine(line, cwd));
}

/** Analyses an argv (`[program, ...args]`): the program, the programs behind wrappers, `sh -c` lines. `cwd` as `shellCommandWords`. */
export function argvCommandWords(argv: readonly string[], cwd: string | undefined = defaultCwd()): ShellAnalysis {
  return fromNative(loadNative().analyseShellArgv([...argv], cwd));
}

/** `shellCommandWords` off the JS thread (a libuv worker): a long line does not block the event loop. */
export async function shellCommandWordsAsync(line: string, cwd: string | undefined = defaultCwd()): Promise<ShellAnalysis> {
  return fromNative(await loadNative().analyseShellLineAsync(line, cwd));
}

/** `argvCommandWords` off the JS thread. */
export async function argvCommandWordsAsync(argv: readonly string[], cwd: string | undefined = defaultCwd()): Promise<ShellAnalysis> {
  return fromNative(await loadNative().analyseShellArgvAsync([...argv], cwd));
}
