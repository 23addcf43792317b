/**
 * One bash of `ShellSessions` on a pty: it feeds the raw output through the marker protocol
 * (`session-protocol.ts`), keeps the unreported output, knows what it waits for (the marker of
 * command `seq`, or any prompt) and turns a completion into the text of one result.
 *
 * Invariants: output before the first prompt (seq 0) is startup noise and dropped; output of the
 * running command goes to `out`; once its completion arrived and until it is collected, later
 * output (background jobs) goes to `after`, which becomes `out` when the completion is taken. A
 * completion is set at most once per wait, and only by the awaited marker confirmed from outside the
 * shell (`promptState`: the pty's foreground process group is the shell's and the shell reads its
 * terminal) or by the shell's exit. After a marker that could not be confirmed, the completion's
 * exit code is null.
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { renderTerminalOutputAsync } from './screen-text';
import { loadNative } from './native';
import { asBashC, MarkerScanner, type Marker, rcInput, removeEcho, removeTraces } from './session-protocol';
import type { ExecuteResult, InterruptReport, PreviousCommand, PtyTerminalLike } from './session-types';
import { TailBuffer } from './tail-buffer';
import type { ExitStatus } from './types';

/** How the awaited command ended, not reported yet. */
export interface Completion {
  /** `$?` from the marker, or the shell's own exit code when it ended; null when unknown. */
  exitCode: number | null;
  /** The shell itself ended. */
  ended: boolean;
}

/** Why a wait for a command ended before its completion and its timeout (`ExecuteResult.early`). */
export type Early = 'input' | 'quiet';

/** How `settle` may end early: on a program waiting for input, after `quietMs` without output. */
export interface EarlyReturn {
  inputWait: boolean;
  quietMs: number | undefined;
}

/**
 * A result's unreported output: the newest bytes (`TailBuffer`) and, when a head+tail cut is asked
 * for, the first `headMax` bytes kept apart, so the head survives a trim of the tail.
 */
class Output {
  private tail: TailBuffer;
  private head: Buffer[] = [];
  private headBytes = 0;
  private pushed = 0;

  constructor(
    private readonly max: number,
    private readonly headMax: number,
  ) {
    this.tail = new TailBuffer(max);
  }

  push(bytes: Buffer): void {
    if (this.headBytes < this.headMax) {
      const part = Buffer.from(bytes.subarray(0, this.headMax - this.headBytes));
      this.head.push(part);
      this.headBytes += part.length;
    }
    this.pushed += bytes.length;
    this.tail.push(bytes);
  }

  /**
   * Takes the kept bytes; `head` (with how many bytes between it and the tail were dropped) only
   * when the tail was trimmed and a head is kept.
   */
  take(): { bytes: Buffer; truncated: boolean; head: { bytes: Buffer; dropped: number } | null } {
    const { bytes, truncated } = this.tail.take();
    const head = truncated && this.headBytes > 0 ? Buffer.concat(this.head) : null;
    const dropped = Math.max(0, this.pushed - bytes.length - (head?.length ?? 0));
    this.head = [];
    this.headBytes = 0;
    this.pushed = 0;
    return { bytes, truncated, head: head && { bytes: head, dropped } };
  }

  /** An empty output of the same bounds. */
  fresh(): Output {
    return new Output(this.max, this.headMax);
  }
}

/** `text` cut to `max` characters: its head and tail, the middle replaced by a marker line. */
export function headAndTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${cutHead(text, half)}\n[... ${text.length - max} characters elided ...]\n${cutTail(text, max - half)}`;
}

/** The first `n` UTF-16 units of `text`, not ending in half a surrogate pair. */
function cutHead(text: string, n: number): string {
  const head = text.slice(0, n);
  return /[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head;
}

/** The last `n` UTF-16 units of `text`, not starting with half a surrogate pair. */
function cutTail(text: string, n: number): string {
  const tail = n > 0 ? text.slice(text.length - n) : '';
  return /^[\udc00-\udfff]/.test(tail) ? tail.slice(1) : tail;
}

/** What the session waits for: the marker of command `seq`, or any prompt (`'any'`); null when idle. */
export type Waiting = { seq: number | 'any' } | null;

/** How long a marker may wait for the shell to be seen at its prompt before it counts as forged. */
const CONFIRM_MS = 5000;

/** While a command is awaited, how often the shell is looked at from outside (stopped? replaced?). */
const HEALTH_MS = 250;

/**
 * How long after its command line was sent a shell idle at its prompt, which never started the
 * command (no start marker), counts as broken at the end of a call.
 */
const NEVER_STARTED_MS = 2000;

/**
 * How long the shell must sit idle at its prompt, after a stale prompt that followed a command line it
 * read, before the awaited line counts as failed. Unread input that the shell read as a line of its own
 * (a terminal's late answers) ends the same way, but the awaited line follows it at once.
 */
const LINE_FAILED_MS = 1000;

/** Why a session is broken when its command line ran but the awaited prompt never came. */
export const WHY_LINE_FAILED =
  "the shell came back to its prompt but did not run the command: the session's own state was changed " +
  '(a read-only session variable, a DEBUG trap under extdebug, ...); restart() gives a fresh shell';

/** The environment variable every process of a session inherits: `close()` finds them by it. */
export const SESSION_TAG_VAR = 'ACP_SHELL_SESSION';

/** One bash on a pty, with the marker protocol and the unreported output. */
export class Session {
  readonly token = randomBytes(16).toString('hex');
  /** The value of {@link SESSION_TAG_VAR} in this session's environment. */
  readonly tag = randomBytes(12).toString('hex');
  /** Why the session stopped answering; null while it answers. */
  broken: string | null = null;
  seq = 0;
  lastUsed = 0;
  waiting: Waiting = null;
  /** Set when the awaited marker (or the shell's exit) arrived and was not reported yet. */
  completion: Completion | null = null;
  exit: ExitStatus | null = null;
  ready = false;
  closed = false;
  lastCwd: string;
  /** Start time of the shell (the core's `processStartTime`), to detect pid reuse; null when unknown. */
  shellStart: number | null = null;
  /** The pty's size, which the output is rendered for (where lines wrap, how far cursor moves redraw). */
  size = { cols: 80, rows: 24 };
  /** Remembers the exact line typed to run a command, to drop its echo if a program turned echo back on. */
  typedLine: string | undefined;
  /** The `command` of the call that started what is awaited (or last completed). */
  command = '';
  terminal: PtyTerminalLike | undefined;
  /** Receives the session's output bytes after its first prompt, markers removed, as they arrive. */
  onData: ((bytes: Buffer) => void) | undefined;
  private readonly scanner: MarkerScanner;
  /** Unreported output: of the running command, or of the completed one not collected yet. */
  private out: Output;
  /** Output that arrived after an uncollected completion (background jobs): reported next time. */
  private after: Output;
  private receivedBytes = 0;
  private lastActivity = Date.now();
  private readonly decoder = new StringDecoder('utf8');
  private readonly waiters = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  /** The terminal is on the alternate screen as of the output taken so far. */
  private alternate = false;
  /** The awaited marker, while it is being confirmed from outside the shell. */
  private candidate: { exitCode: number | null; stale: boolean } | null = null;
  private confirming = false;
  /** A marker of the awaited command could not be confirmed: its exit code cannot be trusted. */
  private tampered = false;
  /** The shell read the awaited command line (its start marker came). */
  private started = false;
  /** When a confirmed stale prompt followed a line the shell read (0: none since the last start). */
  private staleSince = 0;
  /** When the awaited command line was sent (ms since the epoch). */
  private sentAt = 0;
  /** The shell's program image at its first prompt (the core's `processExecStamp`), to see an `exec`. */
  private execStamp: string | null = null;
  private lastHealthCheck = 0;
  /**
   * Where the shell blocks at its own prompt (`readSite`), taken at its first prompt, before any
   * command ran; null where it cannot be seen (then the weaker check of `promptState` applies).
   */
  private promptSite: string | null = null;
  /** Markers of the awaited command (not stale) seen in this wait: more than one means one was forged. */
  private awaitedMarkers = 0;
  /**
   * Output after the awaited marker while it is being confirmed: the shell's own (a prompt of its
   * own, see `after`) once the marker completes the command, the command's when it does not.
   */
  private pending: Buffer[] = [];

  constructor(
    readonly id: string,
    maxBytes: number,
    cwd: string,
    /** `maxContentChars`: content longer than this is cut to its head and tail (undefined: never). */
    private readonly maxChars?: number,
  ) {
    this.lastCwd = cwd;
    // The head kept apart: enough raw bytes for half the characters, escapes and wide characters included.
    this.out = new Output(maxBytes, maxChars === undefined ? 0 : Math.ceil(maxChars / 2) * 4);
    this.after = this.out.fresh();
    this.scanner = new MarkerScanner(this.token);
  }

  /** What is typed to run the rc: private settings, a read-only PROMPT_COMMAND printing the marker. */
  rcInput(): string {
    return rcInput(this.token);
  }

  /** Starts reading the terminal's output (retained output first) and watching for the shell's exit. */
  attach(terminal: PtyTerminalLike): void {
    this.terminal = terminal;
    this.shellStart = loadNative().processStartTime(terminal.pid);
    this.unsubscribe = terminal.onOutput((chunk) => this.onChunk(chunk), { replay: true });
    terminal.waitForExit().then(
      (status) => void this.onExit(status),
      () => void this.onExit({ exitCode: null, signal: null }),
    );
  }

  private onChunk(chunk: Buffer): void {
    this.receivedBytes += chunk.length;
    this.lastActivity = Date.now();
    for (const part of this.scanner.scan(chunk)) {
      if ('data' in part) this.data(part.data);
      else this.marker(part.marker);
    }
    this.notify();
  }

  private data(bytes: Buffer): void {
    if (bytes.length === 0 || !this.ready) return; // startup noise (before the first prompt) is dropped
    if (this.candidate && !this.candidate.stale && !this.completion) this.pending.push(bytes);
    else (this.completion ? this.after : this.out).push(bytes);
    this.onData?.(bytes);
  }

  private marker({ kind, seq, status }: Marker): void {
    if (!this.ready) {
      if (kind === 'prompt' && seq === 0 && !this.confirming) void this.becomeReady();
      return;
    }
    const w = this.waiting;
    if (!w || this.completion) return; // a prompt redrawn while idle
    if (kind === 'start') {
      if (w.seq !== 'any') this.started = true;
      this.staleSince = 0;
      return;
    }
    // A stale prompt: before the command line was read, a prompt of an earlier command; after it
    // (a prompt the shell prints once the line ran), the line failed before it set the number.
    const stale = w.seq !== 'any' && w.seq !== seq;
    if (stale && !this.started) return;
    if (!stale) this.awaitedMarkers++;
    if (typeof this.terminal?.foregroundProcessGroup !== 'function') {
      if (!stale) this.complete(status); // a backend that cannot tell: the marker is taken as it is
      return;
    }
    this.settlePending(); // output between two markers of the command is the command's
    this.candidate = { exitCode: status, stale };
    if (!this.confirming) void this.confirm();
  }

  /** Starts waiting for command `seq` (or any prompt). */
  waitFor(seq: number | 'any'): void {
    this.waiting = { seq };
    this.candidate = null;
    this.settlePending();
    this.tampered = false;
    this.awaitedMarkers = 0;
    this.started = false;
    this.staleSince = 0;
    this.sentAt = Date.now();
  }

  /** Before a command line is sent: terminal modes a command changed (`stty`) are put back. */
  restoreModes(): void {
    try {
      this.terminal?.restorePtyModes?.();
    } catch {
      // released meanwhile: the shell's exit is reported instead
    }
  }

  /** The session stops answering: what is awaited ends with `why`; later calls are refused. */
  markBroken(why: string): void {
    if (this.broken !== null || this.exit) return;
    this.broken = why;
    this.settlePending();
    this.completion ??= { exitCode: null, ended: false };
    this.waiting = null;
    this.candidate = null;
    this.notify();
  }

  private complete(exitCode: number | null): void {
    this.completion = { exitCode: this.tampered ? null : exitCode, ended: false };
    this.waiting = null;
    this.candidate = null;
    this.settlePending();
  }

  /** Output held after a marker being confirmed goes where it belongs now (see `pending`). */
  private settlePending(): void {
    for (const bytes of this.pending.splice(0)) (this.completion ? this.after : this.out).push(bytes);
  }

  /**
   * At the shell's first prompt (no command has run yet): waits until it is seen blocked at that
   * prompt and takes where it blocks (`promptSite`), then the session is ready.
   */
  private async becomeReady(): Promise<void> {
    this.confirming = true;
    const terminal = this.terminal;
    try {
      if (terminal && typeof terminal.foregroundProcessGroup === 'function') {
        const deadline = Date.now() + CONFIRM_MS;
        for (let polls = 0; !this.closed && !this.exit && Date.now() < deadline; ) {
          if (promptState(terminal) === 'prompt') {
            this.promptSite = readSite(terminal.pid);
            if (this.promptSite !== null || loadNative().processWaitState(terminal.pid) === 'unknown') break;
          }
          await new Promise((r) => (polls++ < 20 ? setImmediate(r) : setTimeout(r, Math.min(polls - 20, 10))));
        }
      }
    } finally {
      this.confirming = false;
    }
    this.ready = true;
    this.terminal?.savePtyModes?.();
    // Taken at the first prompt, not at the spawn: until the launch's exec of the shell is
    // complete, /proc may still show the image before it (a false "replaced" under load).
    if (this.terminal) this.execStamp = loadNative().processExecStamp(this.terminal.pid);
    this.notify();
  }

  /**
   * Waits until every byte the core read from the pty was delivered here (`outputBytes`), so that a
   * marker the shell printed before it was seen at its prompt has been scanned.
   */
  private async drained(): Promise<void> {
    const deadline = Date.now() + 1000;
    for (let polls = 0; !this.closed && Date.now() < deadline; polls++) {
      let total: number | undefined;
      try {
        total = this.terminal?.outputBytes;
      } catch {
        return;
      }
      if (typeof total !== 'number' || (this.receivedBytes >= total && polls >= 2)) return;
      await new Promise((r) => (polls < 20 ? setImmediate(r) : setTimeout(r, 1)));
    }
  }

  /**
   * Confirms the awaited marker from outside the shell before it completes the command: the pty's
   * foreground process group must be the shell's own and the shell must be blocked reading its
   * terminal at the very call where it blocked at its first prompt (`promptSite`: not a `read` of the
   * command's). A marker printed by a command that goes on running fails that (something else is in
   * the foreground, the shell waits for a child, or reads elsewhere): it completes nothing, and the
   * command's completion, when it comes, reports `exitCode: null`. Once confirmed, the output is
   * drained first: the completion is the last awaited marker, and null when there was more than one
   * (a command printed one and ended before it was looked at).
   */
  private async confirm(): Promise<void> {
    this.confirming = true;
    const deadline = Date.now() + CONFIRM_MS;
    let polls = 0;
    try {
      while (this.candidate && !this.completion && !this.closed) {
        const state = promptState(this.terminal!, this.promptSite);
        if (state === 'prompt') {
          if (this.candidate.stale) {
            // The line the shell read ran and left it at its prompt without the awaited number: a line
            // of unread input (the awaited one then follows), or the awaited line failed (checkHealth).
            this.started = false;
            this.staleSince = Date.now();
            this.candidate = null;
          } else {
            await this.drained();
            if (!this.candidate || this.completion || this.closed) break;
            if (this.awaitedMarkers > 1) this.tampered = true;
            this.complete(this.candidate.exitCode);
          }
          break;
        }
        if (state === 'busy' || Date.now() > deadline) {
          if (!this.candidate.stale) this.tampered = true;
          this.candidate = null;
          this.settlePending();
          break;
        }
        // The shell printed its prompt and is on its way to reading the terminal.
        await new Promise((r) => (polls++ < 20 ? setImmediate(r) : setTimeout(r, Math.min(polls - 20, 10))));
      }
    } finally {
      this.confirming = false;
    }
    this.notify();
  }

  private async onExit(status: ExitStatus): Promise<void> {
    // Make sure every byte the shell wrote was delivered to onChunk before finishing.
    const deadline = Date.now() + 2000;
    while (!this.closed && typeof this.terminal?.outputBytes === 'number' && Date.now() < deadline) {
      let total: number;
      try {
        total = this.terminal.outputBytes;
      } catch {
        break;
      }
      if (this.receivedBytes >= total) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    this.data(this.scanner.flush());
    this.exit = status;
    this.candidate = null;
    this.settlePending();
    if (!this.completion) {
      this.completion = { exitCode: status.exitCode ?? null, ended: true };
      this.waiting = null;
    } else {
      this.completion.ended = true;
    }
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves on the next output, marker or exit, or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(Math.max(0, ms), 2 ** 31 - 1));
      this.waiters.add(done);
    });
  }

  /** Milliseconds since the last output arrived. */
  get idleSinceMs(): number {
    return Date.now() - this.lastActivity;
  }

  /** True while a command (or typed input) is awaited. */
  get busy(): boolean {
    return this.waiting !== null;
  }

  /**
   * Before something new is sent: a completion nobody collected yet (a command that returned
   * `running` and ended since) is taken as that command's own report, so its output and exit code
   * are not mixed into what comes next. Undefined when there is none.
   */
  async takePrevious(): Promise<PreviousCommand | undefined> {
    if (this.busy || !this.completion) return undefined;
    const command = this.command;
    const broken = this.broken !== null;
    const { content, truncated, completion } = await this.take();
    return { command, exitCode: broken ? null : completion!.exitCode, content, truncated };
  }

  /**
   * Takes the unreported output (up to the completion, if any) as rendered text. The rendering runs
   * off the JS thread. While a full-screen program is still showing at the end, `screen` (the
   * terminal's own screen) is asked for and appended: that is what a person sees.
   */
  async take(
    screen?: () => Promise<string | undefined>,
  ): Promise<{ content: string; truncated: boolean; completion: Completion | null; busy: boolean }> {
    const { bytes, truncated, head } = this.out.take();
    const completion = this.completion;
    // Whether a command was still awaited, at the same instant as the output and the completion were
    // taken: a completion that arrives while the text renders belongs to the next call, so this one
    // must say `running` (not `completed` without an exit code).
    const busy = this.busy;
    if (completion) {
      this.out = this.after;
      this.after = this.out.fresh();
      this.completion = null;
    }
    let text = this.decoder.write(bytes);
    if (completion?.ended) text += this.decoder.end();
    const alternateBefore = this.alternate;
    const render = async (t: string): Promise<string> => {
      const r = await renderTerminalOutputAsync(t, { ...this.size, alternateScreen: alternateBefore });
      this.alternate = r.alternateScreen;
      return r.text;
    };
    let rendered: string;
    if (this.typedLine !== undefined) {
      rendered = removeTraces(await render(removeEcho(text, this.typedLine)));
      if (completion) this.typedLine = undefined;
    } else {
      rendered = await render(text);
    }
    rendered = asBashC(rendered).replace(/\s+$/, '');
    // A full-screen program still showing: what a person sees is its screen (from the emulator).
    const current = this.alternate && screen ? await screen() : undefined;
    if (current !== undefined) {
      const shown = current.replace(/\s+$/, '');
      rendered = rendered && shown ? `${rendered}\n${shown}` : rendered || shown;
    }
    let cut = false;
    if (this.maxChars !== undefined) {
      const whole = rendered;
      rendered = await this.cut(rendered, head);
      cut = rendered !== whole;
    }
    return { content: rendered, truncated: truncated || cut, completion, busy };
  }

  /**
   * `maxContentChars`: the head and tail of `rendered`; when the tail was trimmed, the head is the
   * output's own (kept apart, rendered on its own) and the marker counts the bytes dropped between.
   */
  private async cut(rendered: string, head: { bytes: Buffer; dropped: number } | null): Promise<string> {
    const max = this.maxChars!;
    if (!head) return headAndTail(rendered, max);
    const first = await renderTerminalOutputAsync(head.bytes.toString('utf8'), { ...this.size, alternateScreen: false });
    const half = Math.floor(max / 2);
    return `${cutHead(first.text, half)}\n[... ${head.dropped} bytes elided ...]\n${cutTail(rendered, max - half)}`;
  }

  /**
   * Waits until the awaited command completes (`'command'`), or (`'input'`) until it completes or no
   * output came for `settleMs`; at most `timeoutMs` either way.
   */
  async settle(mode: 'command' | 'input', timeoutMs: number, settleMs: number, early?: EarlyReturn): Promise<Early | undefined> {
    const deadline = Date.now() + timeoutMs;
    const start = Date.now();
    // Let output callbacks already queued run first (and never starve them, even with timeoutMs 0).
    await new Promise((resolve) => setImmediate(resolve));
    for (;;) {
      if (this.busy && !this.completion) this.checkHealth();
      if (this.completion) return undefined;
      if (!this.busy && mode === 'command') return undefined;
      const now = Date.now();
      if (now >= deadline) {
        if (mode === 'command') this.checkNeverStarted();
        return undefined;
      }
      let wait = Math.min(deadline - now, HEALTH_MS);
      const quietFor = Math.min(this.idleSinceMs, now - start);
      if (mode === 'input') {
        if (quietFor >= settleMs) return early?.inputWait && this.busy && this.waitsForInput() ? 'input' : undefined;
        wait = Math.min(wait, settleMs - quietFor);
      } else if (early) {
        if (early.inputWait && quietFor >= settleMs && this.waitsForInput()) return 'input';
        if (early.quietMs !== undefined) {
          if (quietFor >= early.quietMs) return 'quiet';
          wait = Math.min(wait, early.quietMs - quietFor);
        }
      }
      await this.changed(wait);
    }
  }

  /**
   * The running command waits for input on the terminal, seen from outside: the pty's foreground
   * process group's leader is blocked reading its stdin, or (a `read` builtin) the shell itself is,
   * after it started the command line and with no marker of its prompt to confirm. False where the
   * core cannot tell (`processWaitState` answers something else).
   */
  private waitsForInput(): boolean {
    const terminal = this.terminal;
    if (!terminal || typeof terminal.foregroundProcessGroup !== 'function' || this.completion || this.exit) return false;
    let group: number | null;
    try {
      group = terminal.foregroundProcessGroup();
    } catch {
      return false;
    }
    if (group === null) return false;
    if (group === terminal.pid && (!this.started || this.candidate !== null)) return false;
    return loadNative().processWaitState(group) === 'reading-stdin';
  }

  /**
   * Looks at the shell from outside while a command is awaited: a stopped shell (`kill -STOP $$`) is
   * continued; a shell whose program changed (`exec bash`) is no longer the session's: broken.
   */
  private checkHealth(): void {
    const terminal = this.terminal;
    if (!terminal || this.exit || this.closed || Date.now() - this.lastHealthCheck < HEALTH_MS) return;
    this.lastHealthCheck = Date.now();
    const native = loadNative();
    if (native.processWaitState(terminal.pid) === 'stopped') {
      try {
        process.kill(terminal.pid, 'SIGCONT');
      } catch {
        // gone: its exit is reported
      }
    }
    if (
      this.staleSince !== 0 &&
      Date.now() - this.staleSince >= LINE_FAILED_MS &&
      this.idleSinceMs >= LINE_FAILED_MS &&
      promptState(terminal, this.promptSite) === 'prompt'
    ) {
      this.markBroken(WHY_LINE_FAILED);
      return;
    }
    const stamp = native.processExecStamp(terminal.pid);
    if (this.execStamp !== null && stamp !== null && stamp !== this.execStamp) {
      this.markBroken(
        'the shell was replaced (exec): the program now on the terminal is not the session\'s shell; ' +
          'restart() gives a fresh shell',
      );
    }
  }

  /**
   * At the end of a call that waited for a command: the shell sits idle at its prompt, it never
   * started the command line sent a while ago, and nothing was printed lately: it does not answer.
   */
  private checkNeverStarted(): void {
    const w = this.waiting;
    if (!w || w.seq === 'any' || this.started || this.completion || !this.terminal) return;
    if (Date.now() - this.sentAt < NEVER_STARTED_MS || this.idleSinceMs < HEALTH_MS) return;
    if (typeof this.terminal.foregroundProcessGroup !== 'function' || promptState(this.terminal, this.promptSite) !== 'prompt') return;
    this.markBroken(
      "the shell is at its prompt but never started the command: the session's prompts were changed; " +
        'restart() gives a fresh shell',
    );
  }

  /**
   * The result of a call: the unreported output (with the terminal's screen while a full-screen
   * program shows, when `screen`), and the completion if it came.
   */
  async result(
    command: string,
    screen: boolean,
    interrupt?: InterruptReport,
    extra: { early?: Early | undefined; previous?: PreviousCommand | undefined } = {},
  ): Promise<ExecuteResult> {
    const terminal = this.terminal!;
    const current = screen
      ? () =>
          terminal.currentOutput().then(
            (o) => o.output,
            () => undefined,
          )
      : undefined;
    const { content, truncated, completion, busy } = await this.take(current);
    const broken = this.broken !== null && !completion?.ended;
    const status = broken ? 'broken' : completion || !busy ? 'completed' : 'running';
    return {
      content,
      exitCode: completion && !broken ? completion.exitCode : null,
      status,
      ...(broken ? { why: this.broken! } : {}),
      ...(status === 'running' && extra.early ? { early: extra.early } : {}),
      ...(extra.previous ? { previous: extra.previous } : {}),
      workingDir: this.cwd(),
      command,
      terminalId: this.id,
      truncated,
      sessionEnded: completion?.ended === true,
      ...(interrupt ? { interrupt } : {}),
    };
  }

  /** The shell's working directory (the core's `processCwd`), or the last one read once the shell is gone. */
  cwd(): string {
    if (!this.terminal) return this.lastCwd;
    // null: the shell is gone (or cannot be inspected): keep the last directory read from it
    this.lastCwd = loadNative().processCwd(this.terminal.pid) ?? this.lastCwd;
    return this.lastCwd;
  }

  /** Stops reading the terminal's output. */
  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}

/**
 * Where a pty's shell is, seen from outside: `'prompt'` (the foreground process group is the shell's
 * own and the shell is blocked reading its terminal), `'busy'` (another group is in the foreground, or
 * the shell waits for a child), `'unknown'` (it is running or blocked elsewhere: ask again).
 *
 * The shell's blocking call comes from the core (`processWaitState`: `/proc/<pid>/syscall` on Linux).
 * Where the core cannot tell (`'unknown'`: every platform but Linux, or a shell this process may not
 * inspect), the foreground process group alone decides. That is weaker: it still refuses a marker
 * printed by a job in another process group, but not one printed by the shell itself (a builtin or a
 * function) just before it goes on running, whose forged exit code is then reported.
 */
export function promptState(terminal: PtyTerminalLike, site: string | null = null): 'prompt' | 'busy' | 'unknown' {
  let group: number | null;
  try {
    group = terminal.foregroundProcessGroup!();
  } catch {
    return 'busy'; // released: the shell's exit completes the command
  }
  if (group !== terminal.pid) return 'busy';
  switch (loadNative().processWaitState(terminal.pid)) {
    case 'reading-stdin': {
      if (site === null) return 'prompt';
      const now = readSite(terminal.pid);
      if (now === null) return 'unknown'; // it moved meanwhile: ask again
      return now === site ? 'prompt' : 'busy'; // a read of the command's, not the prompt's
    }
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

/**
 * Where a process is blocked, from `/proc/<pid>/syscall`: the call's number, its first three arguments
 * (descriptor, buffer, count for a read) and the user stack and instruction pointers. The shell at its
 * prompt reads its terminal into its own input buffer from its main loop; a `read` builtin, a
 * function or anything else a command runs reads from deeper in the stack, into another buffer: the
 * same descriptor, a different site. Null when it is not blocked (`running`) or cannot be read.
 */
export function readSite(pid: number): string | null {
  let line: string;
  try {
    line = fs.readFileSync(`/proc/${pid}/syscall`, 'latin1').trim();
  } catch {
    return null;
  }
  const f = line.split(' ');
  if (f.length !== 9) return null;
  return [f[0], f[1], f[2], f[3], f[7], f[8]].join(' ');
}
