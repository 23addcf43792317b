/**
 * The bounded output state of one reported terminal: the exact newest bytes (at most `limit`, cut at
 * any byte) and how many bytes the command wrote in all, so a reporter can tell what it has not sent
 * yet and whether that is still held (a chunk) or was skipped (a snapshot, or a marker in text forms).
 *
 * Invariants: `held` bytes are exactly the last `held` bytes of the output when `contiguous`; a gap
 * (bytes dropped upstream) empties the held bytes so they never straddle it; memory stays below
 * three times `limit` whatever the chunk sizes (a chunk of at least `limit` bytes is cut before the copy).
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  /** Bytes held in `chunks`. */
  held = 0;
  /** Bytes the command wrote so far (held or not). */
  total = 0;
  /** Most bytes ever held at once (diagnostics: always below `3 * limit`). */
  peakHeld = 0;
  /** Largest chunk pushed. */
  maxChunk = 0;

  /** Keeps at most `limit` bytes (at least 1). */
  constructor(readonly limit: number) {}

  /** Appends a copy of `chunk`. */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    if (chunk.length > this.maxChunk) this.maxChunk = chunk.length;
    if (chunk.length >= this.limit) {
      // The core delivers floods in large chunks (megabytes): copy only the bytes the tail keeps.
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.limit))];
      this.held = this.limit;
      if (this.held > this.peakHeld) this.peakHeld = this.held;
      return;
    }
    this.chunks.push(Buffer.from(chunk));
    this.held += chunk.length;
    if (this.held > this.peakHeld) this.peakHeld = this.held;
    if (this.held > 2 * this.limit) this.trim();
  }

  /** Records `n` bytes that never arrived (dropped upstream): the held bytes are no longer adjacent to what follows. */
  gap(n: number): void {
    if (n <= 0) return;
    this.total += n;
    this.chunks = [];
    this.held = 0;
  }

  /** The last `n` bytes (`n` at most `held` after a trim). */
  last(n: number): Buffer {
    this.trim();
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = all.length > 0 ? [all] : [];
    return all.subarray(Math.max(0, all.length - n));
  }

  /** Every held byte (the output's exact tail, at most `limit` bytes). */
  all(): Buffer {
    return this.last(this.limit);
  }

  /** Drops the oldest bytes beyond `limit`. */
  private trim(): void {
    while (this.chunks.length > 1 && this.held - this.chunks[0]!.length >= this.limit) {
      this.held -= this.chunks.shift()!.length;
    }
    if (this.held > this.limit) {
      const first = this.chunks[0]!;
      const cut = this.held - this.limit;
      this.chunks[0] = Buffer.from(first.subarray(cut));
      this.held -= cut;
    }
  }
}

/**
 * Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence: the last up to 3
 * bytes of an incomplete (but so far well-formed) sequence are held back until the rest arrives.
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = bytes[n - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back for the lead
    const need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** Index of the first byte of `bytes` that does not continue a character (the cut for a text tail). */
export function utf8Start(bytes: Uint8Array): number {
  let i = 0;
  while (i < Math.min(3, bytes.length) && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}
