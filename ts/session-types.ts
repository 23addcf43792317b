/**
 * The public types of `ShellSessions`: the pty backend it drives (`PtyTerminalLike`, the native
 * `TerminalHandle` of a `{ pty }` terminal, or a substitute), its options, and `execute`'s request
 * and result.
 */

import type { CreateTerminalOptions as NativeCreateTerminalOptions, PtyOptions, SandboxConfig, SandboxOptions } from '../index.js';
import type { NetworkConnectionEvent, NetworkListener } from './network-proxy';
import type { EnvNamePattern } from './policy-env';
import type { CreateTerminalParams, EnvVariable, ExitStatus, OutputSnapshot } from './types';

/** A pty terminal as `ShellSessions` drives it: the native `TerminalHandle` of a `{ pty }` terminal. */
export interface PtyTerminalLike {
  /** Pid of the shell (the session leader on the pty). */
  readonly pid: number;
  /** The directory the shell started in (where it runs), when the backend says. */
  readonly cwd?: string;
  /** Total bytes the command wrote so far (used to make sure every byte was delivered at exit). */
  readonly outputBytes?: number;
  /** Writes bytes to the pty (what a person types). */
  write(data: string | Buffer): Promise<unknown>;
  /** Sends keys by tmux name (`C-c`, `Up`, `Enter`, ...). */
  sendKeys(keys: string[]): Promise<unknown>;
  /** Changes the pty size. */
  resize?(cols: number, rows: number): Promise<unknown>;
  /**
   * The pty's foreground process group (`tcgetpgrp`), null once the shell exited. Without it, markers
   * are not confirmed from outside the shell and `interrupt()` cannot go past C-c.
   */
  foregroundProcessGroup?(): number | null;
  /** Raw output bytes as they arrive; `replay` delivers what is retained first. */
  onOutput(listener: (chunk: Buffer) => void, options?: { replay?: boolean }): () => void;
  /** Resolves once the shell exited and its output was collected. */
  waitForExit(): Promise<ExitStatus>;
  /** Retained output (unused here except as part of the handle's contract). */
  currentOutput(): Promise<OutputSnapshot>;
  /** Saves the pty's terminal modes (the native handle's `savePtyModes`; a remote one's asks its server); optional. */
  savePtyModes?(): void | Promise<unknown>;
  /** Puts the saved terminal modes back if they changed; true when they had (optional). */
  restorePtyModes?(): boolean | Promise<boolean>;
  /**
   * The session's look at its shell made where the shell runs (a remote backend's terminal asks its
   * server, `RemoteTerminal.inspectShell`). With it (and the three below) the session never inspects
   * this machine's processes for the terminal; without it, it reads them here (the core's `/proc` reads
   * of `pid`, with `foregroundProcessGroup`).
   */
  inspectShell?(): Promise<ShellInspection>;
  /** SIGCONT to the shell (it was stopped), where it runs. */
  continueShell?(): Promise<unknown>;
  /** Terminates the pty's foreground process group unless it is the shell's own (TERM, then KILL after `graceMs`), where it runs. */
  killForeground?(graceMs: number): Promise<{ pgid: number | null; signal: 'SIGTERM' | 'SIGKILL' | null }>;
  /**
   * SIGKILLs the shell's session tree (while its pid still has `startTime`, or no process) and every
   * process whose environment holds `entry` (`NAME=value`), where it runs.
   */
  sweep?(entry: string, startTime: number | null): Promise<unknown>;
  /** Kills the process group; the handle stays valid. */
  kill(): Promise<unknown>;
  /** Kills if running and frees the terminal. */
  release(): Promise<unknown>;
}

/** What a process is blocked in (the core's `processWaitState`). */
export type ProcessWaitState = 'reading-stdin' | 'waiting-for-child' | 'running' | 'elsewhere' | 'stopped' | 'unknown';

/** One look at a session's shell from outside (`PtyTerminalLike.inspectShell`; the server's `inspect`). */
export interface ShellInspection {
  /** The pty's foreground process group; null once the shell exited. */
  foregroundProcessGroup: number | null;
  /** What the shell is blocked in. */
  shellWait: ProcessWaitState;
  /** What the foreground group's leader is blocked in; null when the group is the shell's own or there is none. */
  foregroundWait: ProcessWaitState | null;
  /** The shell's working directory; null when it cannot be read. */
  cwd: string | null;
  /** The shell's start time (to tell a reused pid); null when unknown. */
  startTime: number | null;
  /** A stamp of the shell's program image (it changes on `exec`); null when unknown. */
  execStamp: string | null;
  /**
   * Where the shell is blocked (call number, first three arguments, stack and instruction pointers,
   * from `/proc/<pid>/syscall`); null when it is not blocked in a call or cannot be seen.
   */
  shellSite: string | null;
}

/**
 * Backend options `ShellSessions` passes when it creates a session's terminal: the native
 * `createTerminal` options it uses (`pty` always set).
 */
export type PtyCreateTerminalOptions = Pick<
  NativeCreateTerminalOptions,
  'inheritEnv' | 'killGraceMs' | 'output' | 'scrollback' | 'sandbox'
> & {
  /** Terminal size. */
  pty: PtyOptions;
  /**
   * With `sandbox.network: { allow }`: receives every connection through the session's network proxy
   * (the native backend serves the proxy; a substitute may ignore it).
   */
  onNetwork?: NetworkListener;
};

/** What `ShellSessions` uses of a remote backend (`Backend` of `backends`). */
export interface SessionBackend {
  /** Creates a terminal at the far end. */
  createTerminal: PtyCreateTerminalFn;
  /** Asks the far end things (`env: true`: its environment), nothing started. */
  lookup(request: { env?: boolean }): Promise<{ env?: EnvVariable[] }>;
}

/** The backend entry point: the native `createTerminal` (with `pty` support) or a substitute. */
export type PtyCreateTerminalFn = (
  params: CreateTerminalParams,
  options: PtyCreateTerminalOptions,
) => Promise<PtyTerminalLike>;

/**
 * A connection through a session's network proxy (`sandbox.network: { allow }`), allowed or refused,
 * reported once it is over: the shape of `TerminalHost`'s `network` audit event, `terminalId` being the
 * session's id.
 */
export interface ShellSessionsNetworkEvent extends NetworkConnectionEvent {
  /** Discriminant, as in `TerminalHost`'s audit stream. */
  type: 'network';
  /** When it was reported (ms since the epoch). */
  time: number;
  /** The session's id (`execute`'s `terminalId`). */
  terminalId: string;
}

/** A listener for `ShellSessionsNetworkEvent`s (its throws are ignored). */
export type ShellSessionsNetworkListener = (event: ShellSessionsNetworkEvent) => void;

/** Options of `new ShellSessions()`. */
export interface ShellSessionsOptions {
  /** Live sessions allowed; opening one more closes the least recently used (default 16). */
  maxSessions?: number;
  /** Absolute directory new sessions start in (default: this process's cwd). */
  cwd?: string;
  /** Variables set in every session, over the inherited environment. */
  env?: Readonly<Record<string, string>> | readonly EnvVariable[];
  /** Whether sessions inherit this process's environment (default true). */
  inheritEnv?: boolean;
  /**
   * Inherited variables to drop, by name pattern (case-insensitive globs such as `*_TOKEN`, or
   * RegExps), as `TerminalHost`'s option of that name: the shell starts from this process's
   * environment minus those, then `env` (never filtered) is applied. `SECRET_ENV_PATTERNS` is a
   * ready-made list. Ignored when `inheritEnv` is false.
   */
  dropInheritedEnv?: readonly EnvNamePattern[];
  /**
   * The bash executable (default `bash`, looked up in PATH; on Windows Git for Windows' `bash.exe`,
   * found through PATH or in Git's install directories: without one, sessions fail to start with
   * `ERR_BASH_NOT_FOUND`).
   */
  shell?: string;
  /** Pty width in columns (default 160). */
  cols?: number;
  /** Pty height in rows (default 40). */
  rows?: number;
  /** Default `timeoutMs` of `execute` (default 30 000). */
  timeoutMs?: number;
  /**
   * After input or keys (and for `""` on an idle session), return once no output arrived for this
   * long, if the command did not finish first (default 500).
   */
  inputSettleMs?: number;
  /** Unreported output kept per session; older bytes are dropped and the result says `truncated` (default 1 MiB). */
  maxOutputBytes?: number;
  /** How long a new shell may take to show its first prompt (default 30 000). */
  startTimeoutMs?: number;
  /**
   * Run sessions in the native text mode (default true): its terminal emulator answers terminal
   * queries (cursor position, device attributes, colours), so programs that ask do not hang, and the
   * screen of a full-screen program that is still running (`less`, `vim`, `top`) is the content.
   */
  screen?: boolean;
  /**
   * Terminal backend (default: the native `createTerminal`, or `backend.createTerminal`). With `backend`,
   * it must create its terminals there (a wrapper of `backend.createTerminal`).
   */
  createTerminal?: PtyCreateTerminalFn;
  /**
   * Run every session's shell at the far end of a remote backend (`backends.podman(...)`, docs/remote.md):
   * the shell, its cwd, its environment (`inheritEnv`, `dropInheritedEnv`: the far end's), `shell` (looked
   * up in the far `PATH`, default `bash`) and the checks on it (prompt, input waits, cwd, the close) are
   * all the far end's. `cwd` names a far directory (default: the server's working directory).
   */
  backend?: SessionBackend;
  /**
   * Run every session's shell in the OS sandbox (see `SandboxOptions`). With the native backend it is
   * configured once, at construction (as `sandboxConfig()` does): its writable roots are resolved, checked
   * and opened then, and every session binds those very directories, whatever later happens to their
   * paths. A `SandboxConfig` is used as it is.
   */
  sandbox?: SandboxOptions | SandboxConfig;
  /**
   * With `sandbox.network: { allow }`: receives every connection through a session's network proxy,
   * allowed or refused, once it is over, as `TerminalHost`'s `network` audit events (same as calling
   * `onNetwork(listener)` right after construction).
   */
  onNetwork?: ShellSessionsNetworkListener;
  /**
   * Return `running` (with `early: 'input'`) before `timeoutMs` when the command waits for input: the
   * pty's foreground program (its process group's leader, or the shell itself in a `read`) is blocked
   * reading the terminal and printed nothing for `inputSettleMs` (default true; Linux, where the core
   * sees what a process is blocked in).
   */
  returnOnInputWait?: boolean;
  /**
   * Default `quietMs` of `execute`: return `running` (with `early: 'quiet'`) once a command printed
   * nothing for this long (default: none, wait up to `timeoutMs`).
   */
  quietMs?: number;
  /**
   * Cut `content` longer than this many characters to its head and tail (half each), the middle
   * replaced by a line `[... N characters elided ...]` (`bytes` when output beyond `maxOutputBytes`
   * was dropped too: the head is then the output's real head, kept apart). Default: no cut (the newest
   * `maxOutputBytes` only). OpenHands' terminal tool keeps about 30 000.
   */
  maxContentChars?: number;
}

/** Parameters of {@link ShellSessions.execute}. */
export interface ExecuteRequest {
  /** Session id (default `"default"`); a new id opens a new session. */
  terminalId?: string;
  /**
   * A bash command (may span lines, heredocs included); `""` collects more output: of the running
   * command (waiting up to `timeoutMs` for it to finish), or on an idle session what background jobs
   * printed (once output was quiet for `inputSettleMs`); a key name or space-separated key names
   * (`C-c`, `Up Enter`) send those keys. A here-document left open is refused (`ERR_INVALID_ARG`,
   * `details.incomplete: 'here-document'`) before anything runs.
   */
  command: string;
  /**
   * Send `command` as text to the running program, followed by Enter unless `noEnter` (one trailing
   * line end of the text is that Enter, not a second one). A lone key name (`C-c`) is sent as the key.
   */
  isInput?: boolean;
  /**
   * With `isInput`: do not press Enter after the text (the running program gets it as typed so far).
   * With nothing running it is refused (`ERR_NO_RUNNING_COMMAND`, `details.field: 'noEnter'`) and
   * nothing is typed: the prompt has no line editor, so typed text could be neither seen nor completed.
   */
  noEnter?: boolean;
  /** How long to wait for the command to finish before returning `status: 'running'` (default 30 000). */
  timeoutMs?: number;
  /** Return `running` once the command printed nothing for this long (default: the option `quietMs`). */
  quietMs?: number;
}

/** Result of {@link ShellSessions.execute}. */
export interface ExecuteResult {
  /** Output since the previous result of this session, as text (echo, markers and escape sequences removed). */
  content: string;
  /**
   * Exit code of the finished command; null while running or when unknown: the shell died by a
   * signal, its stderr was not the terminal, or a marker of the command could not be confirmed
   * from outside the shell (forged). Never made up.
   */
  exitCode: number | null;
  /**
   * `completed`: the shell is back at its prompt (or ended); `running`: the command still runs;
   * `broken`: the session no longer answers (`why` says how: its command line was made to fail, the
   * shell was replaced by `exec`, or it ignores C-c in a loop of its own); later calls on it reject
   * with `ERR_SESSION_BROKEN` until `restart()` gives a fresh shell in the same directory.
   */
  status: 'completed' | 'running' | 'broken';
  /** Present when `status` is `broken`: why the session stopped answering. */
  why?: string;
  /** The shell's current working directory (the core's `processCwd`). */
  workingDir: string;
  /** The `command` of this call. */
  command: string;
  /** The session id. */
  terminalId: string;
  /** True when older output was dropped to respect `maxOutputBytes`, or the middle elided (`maxContentChars`). */
  truncated: boolean;
  /** Present on results of `interrupt()`: what it took to get the prompt back. */
  interrupt?: InterruptReport;
  /**
   * Present on a `running` result returned before `timeoutMs`: `'input'`, the foreground program waits
   * for input on the terminal (answer with `isInput`); `'quiet'`, it printed nothing for `quietMs`.
   */
  early?: 'input' | 'quiet';
  /**
   * Present when the command before this call's had returned `running` and ended since, uncollected:
   * its own end (exit code, its output not reported yet), so that output is not mixed into this
   * call's `content`.
   */
  previous?: PreviousCommand;
  /**
   * True when the shell itself ended during this call (`exit`, `set -e` and a failing command, a
   * fatal signal): the session is gone and the next call with this id starts a fresh shell.
   */
  sessionEnded: boolean;
}

/** The end of a command that had returned `running`, reported with the next call's result. */
export interface PreviousCommand {
  /** The `command` that started it. */
  command: string;
  /** Its exit code, as `ExecuteResult.exitCode` says it (null when unknown). */
  exitCode: number | null;
  /** Its output not reported before. */
  content: string;
  /** True when some of that output was dropped (`maxOutputBytes`). */
  truncated: boolean;
}

/** Options of {@link ShellSessions.interrupt}. */
export interface InterruptOptions {
  /**
   * Milliseconds to wait for the prompt after C-c before the foreground process group gets SIGTERM,
   * and again before SIGKILL (default 1000; at most 600000).
   */
  graceMs?: number;
}

/** What `interrupt()` did, in its result's `interrupt` field. */
export interface InterruptReport {
  /**
   * The last signal it took: `'SIGINT'` (C-c was sent; the prompt came back, or the shell itself is
   * what runs and no process group could be terminated without ending the session, then the status is
   * still `running`), `'SIGTERM'` (the foreground process group ended on SIGTERM), `'SIGKILL'` (it
   * outlived the grace and was killed); null when nothing was running (nothing was sent).
   */
  signal: 'SIGINT' | 'SIGTERM' | 'SIGKILL' | null;
  /** The foreground process group that was terminated, or null when it did not come to that. */
  processGroup: number | null;
}

/** Result of {@link ShellSessions.restart}. */
export interface RestartResult {
  /** The session id. */
  terminalId: string;
  /** Where the fresh shell starts: the old shell's working directory. */
  workingDir: string;
  /** Why the old session was broken, if it was (else null: a restart on request). */
  previous: string | null;
}
