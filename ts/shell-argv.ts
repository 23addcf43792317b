/**
 * The argv side of the command analysis (see ts/shellwords.ts): the programs behind wrappers (`sudo`,
 * `env`, `xargs`, `find -exec`, `sh -c`, ...), and what builtins change for the commands after them
 * (assignments, exports, aliases, `hash -p`, `enable`). The wrapper table is ours: it is the part of
 * the analysis no shell parser provides.
 */

import type { CommandWord, ShellAnalysis } from './shellwords';

/** Analyses a nested shell line (`sh -c LINE`, `eval LINE`) into the same result, one level deeper. */
export type LineAnalyser = (line: string, out: ShellAnalysis, depth: number) => void;

/** Deepest nesting of wrappers and lines analysed; deeper requests are flagged incomplete. */
const MAX_ARGV_DEPTH = 16;

/** Shells whose `-c` argument is analysed as a shell line. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish']);

interface WrapperSpec {
  /** Options that take the next word as their value. */
  valueOptions?: readonly string[];
  /** Options whose value is a shell line (`su -c 'line'`, `env -S 'cmd args'`). */
  lineOptions?: readonly string[];
  /** Positional words before the wrapped command (`timeout 10 cmd`, `chroot /dir cmd`). */
  positional?: number;
  /** Skip `NAME=value` words before the command (`env A=1 cmd`). */
  assignments?: boolean;
  /** Options that mean no command is run (`command -v name`). */
  noRunOptions?: readonly string[];
  /** The remaining words are joined and run by a shell (`watch`, `eval`). */
  joinAsLine?: boolean;
  /** The first remaining word is a shell line, the rest are not commands (`trap 'line' EXIT`). */
  firstIsLine?: boolean;
}

/** Programs that run another program given as their arguments. */
const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  exec: { valueOptions: ['-a'] },
  command: { noRunOptions: ['-v', '-V'] },
  builtin: {},
  nohup: {},
  setsid: {},
  time: { valueOptions: ['-f', '-o', '--format', '--output'] },
  env: {
    assignments: true,
    valueOptions: ['-u', '--unset', '-C', '--chdir', '-P'],
    lineOptions: ['-S', '--split-string'],
  },
  sudo: {
    valueOptions: ['-u', '-g', '-C', '-h', '-p', '-r', '-t', '-U', '-D', '-T', '--user', '--group', '--host',
      '--prompt', '--role', '--type', '--other-user', '--chdir', '--close-from', '--command-timeout'],
    assignments: true,
  },
  doas: { valueOptions: ['-u', '-C'] },
  nice: { valueOptions: ['-n', '--adjustment'] },
  ionice: { valueOptions: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'] },
  stdbuf: { valueOptions: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  timeout: { valueOptions: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  chrt: { positional: 1 },
  taskset: { positional: 1 },
  chroot: { valueOptions: ['--userspec', '--groups'], positional: 1 },
  flock: { valueOptions: ['-w', '--timeout', '-E', '--conflict-exit-code'], lineOptions: ['-c', '--command'], positional: 1 },
  runuser: { valueOptions: ['-u', '-g', '-G', '--user', '--group', '--supp-group', '-s', '--shell'], lineOptions: ['-c', '--command'] },
  su: { valueOptions: ['-g', '-G', '--group', '--supp-group', '-s', '--shell'], lineOptions: ['-c', '--command'], positional: 1 },
  xargs: {
    valueOptions: ['-a', '-d', '-E', '-e', '-I', '-i', '-L', '-l', '-n', '-P', '-s', '--arg-file', '--delimiter',
      '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
  },
  watch: { valueOptions: ['-n', '--interval', '-d', '--differences', '-q', '--equexit'], joinAsLine: true },
  eval: { joinAsLine: true },
  trap: { noRunOptions: ['-p', '-l', '-P'], firstIsLine: true },
  unbuffer: {},
  caffeinate: {},
  strace: { valueOptions: ['-e', '-o', '-p', '-s', '-u', '-E', '-a', '-b', '-I', '-O', '-P', '-S', '-X'] },
  ltrace: { valueOptions: ['-e', '-o', '-p', '-s', '-u', '-a', '-A', '-D', '-n'] },
  valgrind: {},
};

function basename(word: string): string {
  const i = word.lastIndexOf('/');
  return i < 0 ? word : word.slice(i + 1);
}

/** `NAME=`, `NAME+=`, `NAME[i]=` at the start of a word. */
export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The variable an assignment word (`NAME=v`, `NAME[i]+=v`) sets. */
export function assignedName(word: string): string {
  return IDENTIFIER.exec(word)![0];
}

/** What the argv analysis reports to: the result, and the analyser for nested shell lines. */
export interface ArgvContext {
  /** The result being filled. */
  readonly out: ShellAnalysis;
  /** Analyses a nested shell line. */
  readonly line: LineAnalyser;
}

/**
 * Analyses one simple command (`[program, ...args]`): reports the program, what a builtin changes
 * (assignments, aliases, `hash -p`, `enable`), shells that read commands from elsewhere than `-c`,
 * and recurses into wrapped programs and nested lines.
 */
export function analyseArgv(words: readonly CommandWord[], cx: ArgvContext, depth: number): void {
  if (words.length === 0) return;
  if (depth > MAX_ARGV_DEPTH) {
    cx.out.incomplete = true;
    return;
  }
  const first = words[0]!;
  cx.out.words.push(first);
  if (first.dynamic) return;
  const name = basename(first.word);
  const rest = words.slice(1);

  if (name === 'busybox') {
    // busybox APPLET args: the applet is the program.
    analyseArgv(rest, cx, depth + 1);
    return;
  }
  if (SHELLS.has(name)) {
    shellInvocation(name, rest, cx, depth);
    return;
  }
  if (name === 'find') {
    findExec(rest, cx, depth);
    return;
  }
  if (first.word === name) builtinEffects(name, rest, cx.out);
  const spec = WRAPPERS[name];
  if (!spec) return;
  wrapped(spec, rest, cx, depth);
}

/** Builtins that declare or export variables: every NAME or NAME=value argument is an assignment. */
const DECLARING = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);
/** Builtins that read into variables: every identifier argument may be a target (options' values too: harmless). */
const READING = new Set(['read', 'mapfile', 'readarray', 'getopts']);

/** Records what a builtin (`export PATH=x`, `read PATH`, `alias ls=..`, `hash -p`, `enable`) changes. */
function builtinEffects(name: string, args: readonly CommandWord[], out: ShellAnalysis): void {
  if (DECLARING.has(name) || READING.has(name)) {
    // `declare -n ref=PATH` makes `ref` a reference: what a later assignment to it changes is unknown.
    const nameref = name !== 'export' && DECLARING.has(name) && args.some((a) => !a.dynamic && /^-[A-Za-z]*n/.test(a.word));
    for (const a of args) {
      if (a.dynamic && !ASSIGNMENT.test(a.word)) out.assignments.push(a); // `export "$X"`: the name is unknown
      else if (a.word.startsWith('-') || a.word.startsWith('+')) continue;
      else if (IDENTIFIER.test(a.word)) out.assignments.push({ word: assignedName(a.word), dynamic: nameref });
    }
    return;
  }
  if (name === 'printf') {
    // printf -v NAME / -vNAME
    args.forEach((a, i) => {
      if (a.dynamic) return;
      const target = a.word === '-v' ? args[i + 1] : a.word.startsWith('-v') ? { word: a.word.slice(2), dynamic: false } : undefined;
      if (!target) return;
      const known = !target.dynamic && IDENTIFIER.test(target.word);
      out.assignments.push(known ? { word: assignedName(target.word), dynamic: false } : { word: target.word, dynamic: true });
    });
    return;
  }
  if (name === 'alias') {
    for (const a of args) if (a.dynamic || a.word.includes('=')) out.redefinitions.push({ kind: 'alias', name: a.dynamic ? a.word : a.word.slice(0, a.word.indexOf('=')) });
    return;
  }
  if (name === 'hash') {
    if (args.some((a) => a.dynamic || /^-[A-Za-z]*p/.test(a.word))) out.redefinitions.push({ kind: 'hash', name: args[args.length - 1]!.word });
    return;
  }
  if (name === 'enable' && args.length > 0) {
    out.redefinitions.push({ kind: 'enable', name: args.filter((a) => !a.word.startsWith('-')).map((a) => a.word).join(' ') || args[0]!.word });
  }
}

/**
 * `sh [options] -c LINE [name args...]`: analyses LINE. A shell without `-c` reads its commands from
 * stdin (`curl x | sh`, `sh <<EOF`, `bash -s`) or a script file, which cannot be checked: it is
 * reported in `uncheckedShells`.
 */
function shellInvocation(name: string, args: readonly CommandWord[], cx: ArgvContext, depth: number): void {
  let takesLine = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.dynamic) {
      if (takesLine) cx.out.words.push(a);
      else cx.out.uncheckedShells.push(name);
      return;
    }
    if (a.word === '--') continue;
    if ((a.word.startsWith('-') || a.word.startsWith('+')) && a.word.length > 1) {
      if (a.word.startsWith('--')) continue;
      if (/^[-+][a-zA-Z]*[oO]$/.test(a.word)) i++; // -o pipefail, +O extglob
      if (a.word.slice(1).includes('c')) takesLine = true;
      continue;
    }
    if (takesLine) cx.line(a.word, cx.out, depth + 1);
    else cx.out.uncheckedShells.push(name); // a script file
    return; // anything after is the script's (or the line's) arguments
  }
  if (!takesLine) cx.out.uncheckedShells.push(name); // no operand: commands come from stdin
}

/** `find ... -exec CMD args ;` (also -execdir, -ok, -okdir). */
function findExec(args: readonly CommandWord[], cx: ArgvContext, depth: number): void {
  for (let i = 0; i < args.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(args[i]!.word)) continue;
    let end = i + 1;
    while (end < args.length && args[end]!.word !== ';' && args[end]!.word !== '+') end++;
    analyseArgv(args.slice(i + 1, end), cx, depth + 1);
    i = end;
  }
}

function wrapped(spec: WrapperSpec, args: readonly CommandWord[], cx: ArgvContext, depth: number): void {
  const out = cx.out;
  let i = 0;
  let positional = spec.positional ?? 0;
  const assignment = (a: CommandWord): boolean => {
    if (!spec.assignments || a.dynamic || !ASSIGNMENT.test(a.word)) return false;
    out.assignments.push({ word: assignedName(a.word), dynamic: false });
    return true;
  };
  while (i < args.length) {
    const a = args[i]!;
    const w = a.word;
    if (!a.dynamic && w === '--') {
      i++;
      break;
    }
    if (!a.dynamic && w.startsWith('-')) {
      if (spec.noRunOptions?.includes(w)) return;
      let opt = w;
      let value: CommandWord | undefined;
      let consumed = 1;
      const eq = w.startsWith('--') ? w.indexOf('=') : -1;
      if (eq > 0) {
        opt = w.slice(0, eq);
        value = { word: w.slice(eq + 1), dynamic: false };
      } else if (!w.startsWith('--') && w.length > 2 && takesValue(spec, w.slice(0, 2))) {
        opt = w.slice(0, 2);
        value = { word: w.slice(2), dynamic: false };
      }
      const isLine = spec.lineOptions?.includes(opt) ?? false;
      if ((isLine || takesValue(spec, opt)) && value === undefined) {
        value = args[i + 1];
        consumed = 2;
      }
      if (isLine && value) {
        if (value.dynamic) out.words.push(value);
        else cx.line(value.word, out, depth + 1);
      }
      i += consumed;
      continue;
    }
    if (assignment(a)) {
      i++;
      continue;
    }
    if (positional > 0) {
      positional--;
      i++;
      continue;
    }
    break;
  }
  while (i < args.length && assignment(args[i]!)) i++;
  const rest = args.slice(i);
  if (rest.length === 0) return;
  if (spec.firstIsLine) {
    const line = rest[0]!;
    if (line.dynamic) out.words.push(line);
    else if (line.word !== '-') cx.line(line.word, out, depth + 1);
    return;
  }
  if (spec.joinAsLine) {
    const dyn = rest.find((r) => r.dynamic);
    if (dyn) out.words.push(dyn);
    else cx.line(rest.map((r) => r.word).join(' '), out, depth + 1);
    return;
  }
  analyseArgv(rest, cx, depth + 1);
}

function takesValue(spec: WrapperSpec, opt: string): boolean {
  return (spec.valueOptions?.includes(opt) ?? false) || (spec.lineOptions?.includes(opt) ?? false);
}
