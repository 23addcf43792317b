/**
 * How a `ShellSessions` session sees and acts on its shell from outside: the one place that reads the
 * shell's process (its wait state, cwd, start time, exec stamp), the pty's foreground process group,
 * and signals or sweeps the shell's processes. Two implementations of one interface:
 * - on this machine (a native terminal, or a substitute without `inspectShell`): the core's `/proc`
 *   reads of the terminal's `pid` and the handle's `foregroundProcessGroup`;
 * - where the shell runs (a terminal with `inspectShell`, e.g. a remote backend's `RemoteTerminal`):
 *   each look and action is one request to its server (src/server/inspect.rs), so a far pid is never
 *   read or signalled on this machine.
 *
 * Invariant: the session never names a pid to the far end; the server acts on the terminal's own.
 */

import { loadNative } from './native';
import type { PtyTerminalLike, ShellInspection } from './session-types';

/** The session's view of its shell. */
export interface ShellWatch {
  /** The pty's foreground process group can be seen: markers are confirmed from outside the shell. */
  readonly canTell: boolean;
  /** One look; rejects once the terminal is released (or its backend lost). */
  look(): Promise<ShellInspection>;
  /** The shell's working directory, null when it cannot be read. */
  cwd(): Promise<string | null>;
  /** SIGCONT to the shell. */
  continueShell(): Promise<void>;
  /** Terminates foreground group `group` (seen in a look; not the shell's own): TERM, then KILL after `graceMs`. */
  killForeground(group: number, graceMs: number): Promise<{ pgid: number | null; signal: 'SIGTERM' | 'SIGKILL' | null }>;
  /**
   * SIGKILLs the shell's session tree (unless its pid now has another start time than `startTime`) and
   * every process whose environment holds `entry`, again while any is left.
   */
  sweep(entry: string, startTime: number | null): Promise<void>;
}

/** The watch of `terminal`: at its far end when it can inspect itself, else on this machine. */
export function shellWatch(terminal: PtyTerminalLike): ShellWatch {
  return typeof terminal.inspectShell === 'function' ? farWatch(terminal) : localWatch(terminal);
}

function farWatch(terminal: PtyTerminalLike): ShellWatch {
  return {
    canTell: true,
    look: () => terminal.inspectShell!(),
    cwd: () => terminal.inspectShell!().then((l) => l.cwd),
    continueShell: async () => {
      await terminal.continueShell?.();
    },
    killForeground: async (_group, graceMs) =>
      terminal.killForeground ? terminal.killForeground(graceMs) : { pgid: null, signal: null },
    sweep: async (entry, startTime) => {
      await terminal.sweep?.(entry, startTime);
    },
  };
}

/** One look at the shell of a terminal on this machine (the core's `/proc` reads); throws once it is released. */
export function localLook(terminal: PtyTerminalLike): ShellInspection {
  const native = loadNative();
  const pid = terminal.pid;
  const group = typeof terminal.foregroundProcessGroup === 'function' ? terminal.foregroundProcessGroup() : null;
  return {
    foregroundProcessGroup: group,
    shellWait: native.processWaitState(pid),
    foregroundWait: group !== null && group !== pid ? native.processWaitState(group) : null,
    cwd: native.processCwd(pid),
    startTime: native.processStartTime(pid),
    execStamp: native.processExecStamp(pid),
    shellSite: native.processBlockSite(pid),
  };
}

function localWatch(terminal: PtyTerminalLike): ShellWatch {
  const native = loadNative();
  const pid = terminal.pid;
  const canTell = typeof terminal.foregroundProcessGroup === 'function';
  return {
    canTell,
    look: async () => localLook(terminal),
    cwd: async () => native.processCwd(pid),
    continueShell: async () => {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone: its exit is reported
      }
    },
    killForeground: async (group, graceMs) => {
      const { signal } = await native.killProcessGroup(group, graceMs);
      return { pgid: group, signal };
    },
    sweep: async (entry, startTime) => {
      // The shell's pid now belongs to another process (reused after the shell was reaped): its tree is
      // not swept; the native release still kills what the terminal contains.
      const now = native.processStartTime(pid);
      const sweepTree = now === null || now === startTime;
      // The shell's session tree, and what carries the session's tag (a `setsid` child orphaned outside
      // the tree, out of the terminal's cgroup), again while anything is left: they may fork meanwhile.
      for (let round = 0; round < 10; round++) {
        if (sweepTree) killSessionTree(native, pid);
        const tagged = native.processesWithEnvironment(entry);
        if (tagged.length === 0) break;
        for (const p of tagged) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
        }
      }
    },
  };
}

/**
 * SIGKILLs the shell's session tree. Windows has no sessions (`ENOTSUP`): there the terminal's Job
 * Object holds the whole tree, and the release that follows ends it.
 */
function killSessionTree(native: ReturnType<typeof loadNative>, shellPid: number): void {
  try {
    native.killSessionTree(shellPid);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOTSUP') throw error;
  }
}

/**
 * Where a pty's shell is, from one look: `'prompt'` (the foreground process group is the shell's own
 * and the shell is blocked reading its terminal, at `site` when it is known: where it blocked at its
 * first prompt), `'busy'` (another group is in the foreground, the shell waits for a child, or it reads
 * at another site: a `read` of the command's), `'unknown'` (it is running or blocked elsewhere, or its
 * site could not be read: ask again).
 *
 * Where the core cannot tell the shell's blocking call (`'unknown'`: every platform but Linux, or a
 * shell this process may not inspect), the foreground process group alone decides. That is weaker: it
 * still refuses a marker printed by a job in another process group, but not one printed by the shell
 * itself (a builtin or a function) just before it goes on running, whose forged exit code is then reported.
 */
export function promptStateOf(
  look: ShellInspection | null,
  shellPid: number,
  site: string | null = null,
): 'prompt' | 'busy' | 'unknown' {
  if (look === null || look.foregroundProcessGroup !== shellPid) return 'busy'; // null: released, its exit completes the command
  switch (look.shellWait) {
    case 'reading-stdin':
      if (site === null) return 'prompt'; // the prompt's site was not seen: the weaker check (see above)
      if (look.shellSite === null) return 'unknown'; // it moved meanwhile: ask again
      return look.shellSite === site ? 'prompt' : 'busy'; // a read of the command's, not the prompt's
    case 'waiting-for-child':
      return 'busy';
    case 'running':
    case 'elsewhere':
    case 'stopped':
      return 'unknown';
    case 'unknown':
      return 'prompt'; // the core cannot tell: the foreground process group decides (see above)
  }
}
