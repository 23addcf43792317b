/**
 * The newest bytes of a byte stream, bounded: the one tail buffer of the TS layer. `ShellSessions`
 * keeps a session's unreported output in it, the v2 bridge the bytes it streamed (to check them
 * against the terminal's final snapshot).
 *
 * Invariants: the bytes kept are always a suffix of the bytes pushed (since the last `take()`), in
 * order; once trimmed, at most `max` bytes are kept. Trimming is lazy (when more than twice `max` is
 * held, or when the bytes are read), so a flood of small chunks is not copied once per chunk. A trim
 * starts the kept bytes on a line boundary when one is near, so no escape sequence or character is
 * cut in half.
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private held = 0;
  private dropped = false;
  private pushed = 0;

  /** Keeps at most `max` bytes (at least 1). */
  constructor(readonly max: number) {}

  /** Bytes pushed since the buffer was created, kept or not. */
  get total(): number {
    return this.pushed;
  }

  /** True when bytes pushed since the last `take()` were (or are about to be) dropped. */
  get truncated(): boolean {
    return this.dropped || this.held > this.max;
  }

  /** Appends a copy of `chunk` (the caller may reuse its buffer). */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(Buffer.from(chunk));
    this.held += chunk.length;
    this.pushed += chunk.length;
    if (this.held > 2 * this.max) this.trim();
  }

  /** Appends everything `other` holds (and its truncation), in order. */
  append(other: TailBuffer): void {
    for (const c of other.chunks) this.push(c);
    this.dropped ||= other.dropped;
  }

  /** The kept bytes (at most `max`), without taking them. */
  peek(): Buffer {
    if (this.held > this.max) this.trim();
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Takes the kept bytes and whether any were dropped; the buffer is then empty and not truncated. */
  take(): { bytes: Buffer; truncated: boolean } {
    if (this.held > this.max) this.trim();
    const result = { bytes: Buffer.concat(this.chunks), truncated: this.dropped };
    this.chunks = [];
    this.held = 0;
    this.dropped = false;
    return result;
  }

  private trim(): void {
    const all = Buffer.concat(this.chunks);
    let start = all.length - this.max;
    // Start on a line boundary when one is near, so no escape sequence or character is cut in half.
    const nl = all.indexOf(0x0a, start);
    if (nl !== -1 && nl - start < 4096) start = nl + 1;
    const kept = Buffer.from(all.subarray(start));
    this.chunks = [kept];
    this.held = kept.length;
    this.dropped = true;
  }
}
