/**
 * One bash of `ShellSessions` on a pty: it feeds the raw output through the marker protocol
 * (`session-protocol.ts`), keeps the unreported output, knows what it waits for (the marker of
 * command `seq`, or any prompt) and turns a completion into the text of one result.
 *
 * Invariants: output before the first prompt (seq 0) is startup noise and dropped; output of the
 * running command goes to `out`; once its completion arrived and until it is collected, later
 * output (background jobs) goes to `after`, which becomes `out` when the completion is taken. A
 * completion is set at most once per wait, and only by the awaited marker confirmed from outside the
 * shell (`promptStateOf`: the pty's foreground process group is the shell's and the shell reads its
 * terminal at the site where it blocked at its first prompt) or by the shell's exit. After a marker that could not be confirmed, the completion's
 * exit code is null.
 */

import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { renderTerminalOutputAsync } from './screen-text';
import { asBashC, MarkerScanner, type Marker, rcInput, removeEcho, removeTraces } from './session-protocol';
import type { ExecuteResult, InterruptReport, PreviousCommand, PtyTerminalLike, ShellInspection } from './session-types';
import { localLook, promptStateOf, shellWatch, type ShellWatch } from './session-watch';
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

/** Output held at most while a marker is confirmed (beyond it, it is taken as the running command's). */
const HOLD_BYTES = 256 * 1024;

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
  /** How the shell is seen from outside, where it runs (`session-watch.ts`). */
  watch: ShellWatch | undefined;
  /** The look taken at the first prompt (start time, exec stamp), once the shell is ready. */
  baseline: Promise<void> | undefined;
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
  /** Output that arrived while the awaited marker is confirmed (whose it is depends on the outcome). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** A marker of the awaited command could not be confirmed: its exit code cannot be trusted. */
  private tampered = false;
  /** The shell read the awaited command line (its start marker came). */
  private started = false;
  /** When a confirmed stale prompt followed a line the shell read (0: none since the last start). */
  private staleSince = 0;
  /**
   * When the shell was first seen back at its prompt's read after it started the awaited line, with no
   * prompt printed (0: not seen so). See `checkMarkerless`.
   */
  private markerlessSince = 0;
  /** When the awaited command line was sent (ms since the epoch). */
  private sentAt = 0;
  /** The shell's program image at its first prompt (the core's `processExecStamp`), to see an `exec`. */
  private execStamp: string | null = null;
  private lastHealthCheck = 0;
  /**
   * Where the shell blocks at its own prompt (a look's `shellSite`), taken at its first prompt, before
   * any command ran; null where it cannot be seen (then the weaker check of `promptStateOf` applies).
   */
  private promptSite: string | null = null;
  /**
   * The rendered text of a result keeps at most this many bytes (its newest part): as many as the raw
   * output kept, so no sequence (a cursor move, a tab) makes `content` larger than `maxOutputBytes`.
   */
  private readonly maxTextBytes: number;
  /** Markers of the awaited command (not stale) seen in this wait: more than one means one was forged. */
  private awaitedMarkers = 0;

  constructor(
    readonly id: string,
    maxBytes: number,
    cwd: string,
    /** `maxContentChars`: content longer than this is cut to its head and tail (undefined: never). */
    private readonly maxChars?: number,
  ) {
    this.lastCwd = cwd;
    this.maxTextBytes = maxBytes;
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
    this.watch = shellWatch(terminal);
    if (typeof terminal.cwd === 'string' && terminal.cwd !== '') this.lastCwd = terminal.cwd;
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
    this.onData?.(bytes);
    if (this.candidate !== null && !this.completion) {
      // After a marker being confirmed: the next command's output if it is confirmed, else this one's.
      if (this.heldBytes + bytes.length <= HOLD_BYTES) {
        this.held.push(bytes);
        this.heldBytes += bytes.length;
        return;
      }
      this.releaseHeld();
    }
    (this.completion ? this.after : this.out).push(bytes);
  }

  /** Output held while a marker was confirmed goes where it belongs now (after a completion, or to this command). */
  private releaseHeld(): void {
    const to = this.completion ? this.after : this.out;
    for (const bytes of this.held) to.push(bytes);
    this.held = [];
    this.heldBytes = 0;
  }

  private marker({ kind, seq, status }: Marker): void {
    if (!this.ready) {
      if (kind === 'prompt' && seq === 0 && this.baseline === undefined) this.baseline = this.becomeReady();
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
    if (!this.watch?.canTell) {
      if (!stale) this.complete(status); // a backend that cannot tell: the marker is taken as it is
      return;
    }
    // What was held came before this marker: the running command's, whatever this marker turns out to be.
    this.releaseHeld();
    this.candidate = { exitCode: status, stale };
    if (!this.confirming) void this.confirm();
  }

  /** Starts waiting for command `seq` (or any prompt). */
  waitFor(seq: number | 'any'): void {
    this.releaseHeld();
    this.waiting = { seq };
    this.candidate = null;
    this.tampered = false;
    this.awaitedMarkers = 0;
    this.started = false;
    this.staleSince = 0;
    this.markerlessSince = 0;
    this.sentAt = Date.now();
  }

  /** Before a command line is sent: terminal modes a command changed (`stty`) are put back. */
  restoreModes(): void {
    // Released meanwhile: the shell's exit is reported instead.
    ignore(() => this.terminal?.restorePtyModes?.());
  }

  /** One look at the shell from outside; null once it cannot be looked at (released, backend lost). */
  async look(): Promise<ShellInspection | null> {
    if (!this.watch) return null;
    try {
      return await this.watch.look();
    } catch {
      return null;
    }
  }

  /** Where the shell is, seen from outside now (`promptStateOf`). */
  async promptState(): Promise<'prompt' | 'busy' | 'unknown'> {
    return promptStateOf(await this.look(), this.terminal!.pid, this.promptSite);
  }

  /** The session stops answering: what is awaited ends with `why`; later calls are refused. */
  markBroken(why: string): void {
    if (this.broken !== null || this.exit) return;
    this.broken = why;
    this.releaseHeld();
    this.completion ??= { exitCode: null, ended: false };
    this.waiting = null;
    this.candidate = null;
    this.notify();
  }

  private complete(exitCode: number | null): void {
    this.completion = { exitCode: this.tampered ? null : exitCode, ended: false };
    this.waiting = null;
    this.candidate = null;
    this.releaseHeld();
  }

  /**
   * At the shell's first prompt (no command has run yet): waits until it is seen blocked at that
   * prompt and takes where it blocks (`promptSite`), its start time and program image (taken here, not
   * at the spawn: until the launch's exec of the shell is complete, /proc may still show the image
   * before it, a false "replaced" under load), then the session is ready.
   */
  private async becomeReady(): Promise<void> {
    let seen: ShellInspection | null = null;
    if (this.watch?.canTell && this.terminal) {
      const pid = this.terminal.pid;
      const deadline = Date.now() + CONFIRM_MS;
      for (let polls = 0; !this.closed && !this.exit && Date.now() < deadline; ) {
        const look = await this.look();
        if (look === null) break; // released or lost: its exit is reported
        if (promptStateOf(look, pid) === 'prompt') {
          seen = look;
          this.promptSite = look.shellSite;
          if (look.shellSite !== null || look.shellWait === 'unknown') break;
        }
        await new Promise((r) => (polls++ < 20 ? setImmediate(r) : setTimeout(r, Math.min(polls - 20, 10))));
      }
    }
    seen ??= await this.look();
    this.execStamp = seen?.execStamp ?? null;
    this.shellStart = seen?.startTime ?? null;
    this.ready = true;
    ignore(() => this.terminal?.savePtyModes?.());
    this.notify();
  }

  /**
   * Waits until every byte the core read from the pty was delivered here (`outputBytes`), so that a
   * marker the shell printed before it was seen at its prompt has been scanned. A terminal at a far end
   * (`inspectShell`) skips it: its `outputBytes` is only as of its last `currentOutput()`, not a count
   * to wait for.
   */
  private async drained(): Promise<void> {
    if (typeof this.terminal?.inspectShell === 'function') return;
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
        const state = await this.promptState();
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
          break;
        }
        // The shell printed its prompt and is on its way to reading the terminal.
        await new Promise((r) => (polls++ < 20 ? setImmediate(r) : setTimeout(r, Math.min(polls - 20, 10))));
      }
    } finally {
      this.confirming = false;
      if (this.candidate === null || this.completion || this.closed) this.releaseHeld();
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
    this.releaseHeld();
    this.exit = status;
    this.candidate = null;
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
    let cut = false;
    const render = async (t: string): Promise<string> => {
      const r = await renderTerminalOutputAsync(t, {
        ...this.size,
        alternateScreen: alternateBefore,
        maxBytes: this.maxTextBytes,
      });
      this.alternate = r.alternateScreen;
      if (r.truncated) cut = true;
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
    if (this.maxChars !== undefined) {
      const whole = rendered;
      rendered = await this.cut(rendered, head);
      cut ||= rendered !== whole;
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
    const first = await renderTerminalOutputAsync(head.bytes.toString('utf8'), {
      ...this.size,
      alternateScreen: false,
      maxBytes: this.maxTextBytes,
    });
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
      if (this.busy && !this.completion) await this.checkHealth();
      if (this.completion) return undefined;
      if (!this.busy && mode === 'command') return undefined;
      const now = Date.now();
      if (now >= deadline) {
        if (mode === 'command') await this.checkNeverStarted();
        return undefined;
      }
      let wait = Math.min(deadline - now, HEALTH_MS);
      const quietFor = Math.min(this.idleSinceMs, now - start);
      if (mode === 'input') {
        if (quietFor >= settleMs) return early?.inputWait && this.busy && (await this.waitsForInput()) ? 'input' : undefined;
        wait = Math.min(wait, settleMs - quietFor);
      } else if (early) {
        if (early.inputWait && quietFor >= settleMs && (await this.waitsForInput())) return 'input';
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
  private async waitsForInput(): Promise<boolean> {
    const terminal = this.terminal;
    if (!terminal || !this.watch?.canTell || this.completion || this.exit) return false;
    const look = await this.look();
    const group = look?.foregroundProcessGroup ?? null;
    if (group === null || this.completion || this.exit) return false;
    if (group === terminal.pid) {
      // At its prompt's own read the shell waits for its next line, not a command for input (checkMarkerless).
      if (this.promptSite !== null && look!.shellSite === this.promptSite) return false;
      return this.started && this.candidate === null && look!.shellWait === 'reading-stdin';
    }
    return look!.foregroundWait === 'reading-stdin';
  }

  /**
   * Looks at the shell from outside while a command is awaited: a stopped shell (`kill -STOP $$`) is
   * continued; a shell whose program changed (`exec bash`) is no longer the session's: broken.
   */
  private async checkHealth(): Promise<void> {
    const terminal = this.terminal;
    if (!terminal || this.exit || this.closed || Date.now() - this.lastHealthCheck < HEALTH_MS) return;
    this.lastHealthCheck = Date.now();
    const look = await this.look();
    // Gone (its exit is reported), or what was awaited ended while looking.
    if (!look || this.exit || this.closed || !this.busy || this.completion) return;
    if (look.shellWait === 'stopped') await this.watch!.continueShell().catch(() => undefined);
    if (
      this.staleSince !== 0 &&
      Date.now() - this.staleSince >= LINE_FAILED_MS &&
      this.idleSinceMs >= LINE_FAILED_MS &&
      promptStateOf(look, terminal.pid, this.promptSite) === 'prompt'
    ) {
      this.markBroken(WHY_LINE_FAILED);
      return;
    }
    if (await this.checkMarkerless(look, terminal.pid)) return;
    const stamp = look.execStamp;
    if (this.execStamp !== null && stamp !== null && stamp !== this.execStamp) {
      this.markBroken(
        'the shell was replaced (exec): the program now on the terminal is not the session\'s shell; ' +
          'restart() gives a fresh shell',
      );
    }
  }

  /**
   * The shell read the awaited line (or, waiting for any prompt, the keys that make one) and sits at its
   * prompt's own read without having printed a prompt: bash does that once a command turned line
   * editing on (`set -o vi`, `set -o emacs`) in a shell started without it (it then runs neither PS1
   * nor `PROMPT_COMMAND`), or when every marker of the prompt was made to fail. Seen so at two looks
   * `HEALTH_MS` apart, with every byte the shell wrote read, the command is over: it completes with
   * `exitCode: null` (no prompt said its status). The next command line turns line editing off again
   * (`COMMAND_PREFIX`), so the session goes on. Needs the prompt's site (`promptSite`): without it a
   * shell reading its prompt cannot be told from a `read` of the command's. True once it completed.
   */
  private async checkMarkerless(look: ShellInspection, pid: number): Promise<boolean> {
    const w = this.waiting;
    const atPrompt =
      w !== null &&
      (w.seq === 'any' || this.started) &&
      this.candidate === null &&
      !this.confirming &&
      this.staleSince === 0 &&
      this.promptSite !== null &&
      promptStateOf(look, pid, this.promptSite) === 'prompt';
    if (!atPrompt) {
      this.markerlessSince = 0;
      return false;
    }
    if (this.markerlessSince === 0) {
      this.markerlessSince = Date.now();
      return false;
    }
    if (Date.now() - this.markerlessSince < HEALTH_MS) return false;
    // A prompt printed before that read is read by now: it completes (or not) as usual.
    await this.drained();
    if (this.waiting !== w || this.completion || this.candidate !== null || this.confirming || this.exit || this.closed) {
      return false;
    }
    if ((await this.promptState()) !== 'prompt' || this.waiting !== w || this.completion || this.candidate !== null) {
      this.markerlessSince = 0;
      return false;
    }
    this.tampered = true;
    this.complete(null);
    this.notify();
    return true;
  }

  /**
   * At the end of a call that waited for a command: the shell sits idle at its prompt, it never
   * started the command line sent a while ago, and nothing was printed lately: it does not answer.
   */
  private async checkNeverStarted(): Promise<void> {
    const w = this.waiting;
    if (!w || w.seq === 'any' || this.started || this.completion || !this.terminal) return;
    if (Date.now() - this.sentAt < NEVER_STARTED_MS || this.idleSinceMs < HEALTH_MS) return;
    if (!this.watch?.canTell || (await this.promptState()) !== 'prompt') return;
    if (this.started || this.completion || this.waiting !== w) return;
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
      workingDir: await this.cwd(),
      command,
      terminalId: this.id,
      truncated,
      sessionEnded: completion?.ended === true,
      ...(interrupt ? { interrupt } : {}),
    };
  }

  /** The shell's working directory (read where it runs), or the last one read once the shell is gone. */
  async cwd(): Promise<string> {
    if (!this.watch) return this.lastCwd;
    // null: the shell is gone (or cannot be inspected): keep the last directory read from it
    this.lastCwd = (await this.watch.cwd().catch(() => null)) ?? this.lastCwd;
    return this.lastCwd;
  }

  /** Kills what the session started where it runs: the shell's session tree and its tagged processes. */
  async sweep(): Promise<void> {
    await this.watch?.sweep(`${SESSION_TAG_VAR}=${this.tag}`, this.shellStart);
  }

  /** Stops reading the terminal's output. */
  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}

/** Runs `op`, ignoring its failure, thrown or as a rejected promise. */
function ignore(op: () => unknown): void {
  try {
    const r = op();
    if (r instanceof Promise) r.catch(() => undefined);
  } catch {
    // ignored
  }
}

/**
 * Where the shell of a terminal on this machine is, seen from outside now (`promptStateOf` of one
 * `localLook`, with the prompt's `site` when known): `'busy'` once the terminal is released.
 */
export function promptState(terminal: PtyTerminalLike, site: string | null = null): 'prompt' | 'busy' | 'unknown' {
  let look: ShellInspection;
  try {
    look = localLook(terminal);
  } catch {
    return 'busy'; // released: the shell's exit completes the command
  }
  return promptStateOf(look, terminal.pid, site);
}
