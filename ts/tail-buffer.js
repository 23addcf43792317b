"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.TailBuffer = void 0;
exports.cutPoint = cutPoint;
/**
 * The newest bytes of a byte stream, bounded: the one tail buffer of the TS layer. `ShellSessions`
 * keeps a session's unreported output in it, the v2 bridge the bytes it streamed (to check them
 * against the terminal's final snapshot).
 *
 * Invariants: the bytes kept are always a suffix of the bytes pushed (since the last `take()`), in
 * order; once trimmed, at most `max` bytes are kept. Trimming is lazy (when more than twice `max` is
 * held, or when the bytes are read), so a flood of small chunks is not copied once per chunk. A trim
 * starts the kept bytes on a line boundary when one is near, else after any character or escape
 * sequence the cut would split (see `cutPoint`).
 */
class TailBuffer {
    max;
    chunks = [];
    held = 0;
    dropped = false;
    pushed = 0;
    /** Keeps at most `max` bytes (at least 1). */
    constructor(max) {
        this.max = max;
    }
    /** Bytes pushed since the buffer was created, kept or not. */
    get total() {
        return this.pushed;
    }
    /** True when bytes pushed since the last `take()` were (or are about to be) dropped. */
    get truncated() {
        return this.dropped || this.held > this.max;
    }
    /** Appends a copy of `chunk` (the caller may reuse its buffer). */
    push(chunk) {
        if (chunk.length === 0)
            return;
        this.chunks.push(Buffer.from(chunk));
        this.held += chunk.length;
        this.pushed += chunk.length;
        if (this.held > 2 * this.max)
            this.trim();
    }
    /** Appends everything `other` holds (and its truncation), in order. */
    append(other) {
        for (const c of other.chunks)
            this.push(c);
        this.dropped ||= other.dropped;
    }
    /** The kept bytes (at most `max`), without taking them. */
    peek() {
        if (this.held > this.max)
            this.trim();
        if (this.chunks.length > 1)
            this.chunks = [Buffer.concat(this.chunks)];
        return this.chunks[0] ?? Buffer.alloc(0);
    }
    /** Takes the kept bytes and whether any were dropped; the buffer is then empty and not truncated. */
    take() {
        if (this.held > this.max)
            this.trim();
        const result = { bytes: Buffer.concat(this.chunks), truncated: this.dropped };
        this.chunks = [];
        this.held = 0;
        this.dropped = false;
        return result;
    }
    trim() {
        const all = Buffer.concat(this.chunks);
        const kept = Buffer.from(all.subarray(cutPoint(all, all.length - this.max, this.max)));
        this.chunks = [kept];
        this.held = kept.length;
        this.dropped = true;
    }
}
exports.TailBuffer = TailBuffer;
/**
 * Where to start keeping `all` when at most `max` bytes from `start` on fit: at a line boundary when one
 * is near (within a quarter of `max`, at most 4 KiB, so a long last line keeps its tail instead of
 * being dropped whole), else at the next character that does not continue a UTF-8 sequence or an
 * escape sequence cut in half.
 */
function cutPoint(all, start, max) {
    const nl = all.indexOf(0x0a, start);
    if (nl !== -1 && nl - start < Math.min(4096, Math.floor(max / 4)))
        return nl + 1;
    let at = start;
    // An escape sequence begun just before the cut: skip to its end (CSI: final byte; OSC: BEL or ST).
    const esc = all.lastIndexOf(0x1b, at - 1);
    if (esc !== -1 && at - esc <= 64) {
        const end = escapeEnd(all, esc);
        if (end > at)
            at = end;
    }
    while (at < all.length && (all[at] & 0xc0) === 0x80)
        at++;
    return Math.min(at, all.length);
}
/** Index just after the escape sequence starting at `esc` (or `esc + 1` when it is not one this knows). */
function escapeEnd(all, esc) {
    const kind = all[esc + 1];
    const limit = Math.min(all.length, esc + 4096);
    if (kind === 0x5b) {
        for (let i = esc + 2; i < limit; i++)
            if (all[i] >= 0x40 && all[i] <= 0x7e)
                return i + 1;
        return limit;
    }
    if (kind === 0x5d) {
        for (let i = esc + 2; i < limit; i++) {
            if (all[i] === 0x07)
                return i + 1;
            if (all[i] === 0x1b && all[i + 1] === 0x5c)
                return i + 2;
        }
        return limit;
    }
    return esc + 2;
}
