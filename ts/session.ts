/**
 * One bash of `ShellSessions` on a pty: it feeds the raw output through the marker protocol
 * (`session-protocol.ts`), keeps the unreported output, knows what it waits for (the marker of
 * command `seq`, or any prompt) and turns a completion into the text of one result.
 *
 * Invariants: output before the first prompt (seq 0) is startup noise and dropped; output of the
 * running command goes to `out`; once its completion arrived and until it is collected, later
 * output (background jobs) goes to `after`, which becomes `out` when the completion is taken. A
 * completion is set at most once per wait, and only by the awaited marker or the shell's exit.
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { renderTerminalOutputAsync } from './screen-text';
import { asBashC, MarkerScanner, type Marker, rcText, removeEcho, removeTraces } from './session-protocol';
import type { PtyTerminalLike } from './session-types';
import { TailBuffer } from './tail-buffer';
import type { ExitStatus } from './types';

/** How the awaited command ended, not reported yet. */
export interface Completion {
  /** `$?` from the marker, or the shell's own exit code when it ended; null when unknown. */
  exitCode: number | null;
  /** The shell itself ended. */
  ended: boolean;
}

/** What the session waits for: the marker of command `seq`, or any prompt (`'any'`); null when idle. */
export type Waiting = { seq: number | 'any' } | null;

/** One bash on a pty, with the marker protocol and the unreported output. */
export class Session {
  readonly token = randomBytes(16).toString('hex');
  seq = 0;
  lastUsed = 0;
  waiting: Waiting = null;
  /** Set when the awaited marker (or the shell's exit) arrived and was not reported yet. */
  completion: Completion | null = null;
  exit: ExitStatus | null = null;
  ready = false;
  closed = false;
  lastCwd: string;
  /** Start time of the shell (clock ticks since boot, /proc stat field 22), to detect pid reuse. */
  shellStart: string | undefined;
  /** The pty's size, which the output is rendered for (where lines wrap, how far cursor moves redraw). */
  size = { cols: 80, rows: 24 };
  /** Remembers the exact line typed to run a command, to drop its echo if a program turned echo back on. */
  typedLine: string | undefined;
  terminal: PtyTerminalLike | undefined;
  private readonly scanner: MarkerScanner;
  /** Unreported output: of the running command, or of the completed one not collected yet. */
  private out: TailBuffer;
  /** Output that arrived after an uncollected completion (background jobs): reported next time. */
  private after: TailBuffer;
  private receivedBytes = 0;
  private lastActivity = Date.now();
  private readonly decoder = new StringDecoder('utf8');
  private readonly waiters = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  /** The terminal is on the alternate screen as of the output taken so far. */
  private alternate = false;

  constructor(
    readonly id: string,
    readonly dir: string,
    private readonly maxBytes: number,
    cwd: string,
  ) {
    this.lastCwd = cwd;
    this.out = new TailBuffer(maxBytes);
    this.after = new TailBuffer(maxBytes);
    this.scanner = new MarkerScanner(this.token);
  }

  /** The private file each command is written to and sourced from. */
  get commandFile(): string {
    return path.join(this.dir, 'command.sh');
  }

  /** The rc file: private settings, read-only PROMPT_COMMAND printing the marker, then deletes itself. */
  rcText(rcPath: string): string {
    return rcText(this.token, rcPath);
  }

  /** Starts reading the terminal's output (retained output first) and watching for the shell's exit. */
  attach(terminal: PtyTerminalLike): void {
    this.terminal = terminal;
    this.shellStart = procStartTime(terminal.pid);
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
    (this.completion ? this.after : this.out).push(bytes);
  }

  private marker({ seq, status }: Marker): void {
    if (!this.ready) {
      if (seq === 0) this.ready = true;
      return;
    }
    const w = this.waiting;
    if (!w || this.completion) return; // a prompt redrawn while idle
    if (w.seq !== 'any' && w.seq !== seq) return; // a stale prompt
    this.completion = { exitCode: status, ended: false };
    this.waiting = null;
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
    if (!this.completion) {
      this.completion = { exitCode: status.exitCode, ended: true };
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
   * Before something new is sent: a completion nobody collected yet is folded into the unreported
   * output (its output and what followed it stay, in order, for the next result).
   */
  absorbCompletion(): void {
    if (!this.completion) return;
    this.out.append(this.after);
    this.after = new TailBuffer(this.maxBytes);
    this.completion = null;
  }

  /**
   * Takes the unreported output (up to the completion, if any) as rendered text. The rendering runs
   * off the JS thread. While a full-screen program is still showing at the end, `screen` (the
   * terminal's own screen) is asked for and appended: that is what a person sees.
   */
  async take(screen?: () => Promise<string | undefined>): Promise<{ content: string; truncated: boolean; completion: Completion | null }> {
    const { bytes, truncated } = this.out.take();
    const completion = this.completion;
    if (completion) {
      this.out = this.after;
      this.after = new TailBuffer(this.maxBytes);
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
      rendered = removeTraces(await render(removeEcho(text, this.typedLine)), this.commandFile);
      if (completion) this.typedLine = undefined;
    } else {
      rendered = await render(text);
    }
    rendered = asBashC(rendered, this.commandFile).replace(/\s+$/, '');
    // A full-screen program still showing: what a person sees is its screen (from the emulator).
    const current = this.alternate && screen ? await screen() : undefined;
    if (current !== undefined) {
      const shown = current.replace(/\s+$/, '');
      rendered = rendered && shown ? `${rendered}\n${shown}` : rendered || shown;
    }
    return { content: rendered, truncated, completion };
  }

  /** The shell's working directory (from /proc), or the last one read once the shell is gone. */
  cwd(): string {
    if (!this.terminal) return this.lastCwd;
    try {
      this.lastCwd = fs.readlinkSync(`/proc/${this.terminal.pid}/cwd`);
    } catch {
      // the shell is gone: keep the last directory read from it
    }
    return this.lastCwd;
  }

  /** Stops reading the terminal's output. */
  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}

/** Start time of process `pid` (/proc stat field 22), or undefined when it is gone. */
export function procStartTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
