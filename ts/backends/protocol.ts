/**
 * The wire format of `acp-terminal-server` (see `src/server/frame.rs`): the banner line the server
 * prints first, found past any noise a login shell printed before it, then length-prefixed frames.
 * A frame is a 4-byte big-endian length, a kind byte and its body: JSON (kind 1), output of a
 * subscription (kind 2: sub u32, bytes dropped before u64, data) or input for a terminal (kind 3: request
 * id u32, terminal u32, data).
 */

/** The protocol version this client speaks (2: `hello {graceMs}`, reattach and `resume`, `shutdown`). */
export const PROTOCOL = 2;
/** What the server's banner line starts with. */
export const BANNER_PREFIX = '\x1eACP-TERMINAL-SERVER/';
/** What the launcher prints when the server binary is not at its path, then ` MACHINE\n` (the far end's `uname -m`). */
export const MISSING_MARKER = '\x1eACP-TERMINAL-SERVER-MISSING';
/** What `acp-terminal-server --attach` prints when no server listens at its path (retrying is vain). */
export const GONE_MARKER = '\x1eACP-TERMINAL-SERVER-GONE';
/** Kinds of frames. */
export const KIND_JSON = 1;
export const KIND_OUTPUT = 2;
export const KIND_INPUT = 3;
/** Longest frame the server accepts (its `MAX_FRAME`). */
export const MAX_FRAME = 16 << 20;
/** Longest frame this client accepts from the server (output frames hold at most the server's 8 MiB mark). */
export const MAX_INCOMING_FRAME = 64 << 20;
/** Noise tolerated before the banner (a login shell's rc output). */
export const MAX_NOISE = 1 << 20;

/** A message from the server. */
export type ServerMessage = (
  | { kind: 'json'; value: Record<string, unknown> }
  | { kind: 'output'; sub: number; dropped: number; data: Buffer }
) & {
  /** Bytes of the frame on the stream (the resume cursor counts them). */
  size: number;
};

/** The banner: protocol and server version. */
export interface Banner {
  protocol: number;
  version: string;
}

/** Encodes a JSON frame. */
export function jsonFrame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length + 1, 0);
  head[4] = KIND_JSON;
  return Buffer.concat([head, body]);
}

/** Encodes an input frame. */
export function inputFrame(id: number, term: number, data: Buffer): Buffer {
  const head = Buffer.alloc(13);
  head.writeUInt32BE(data.length + 9, 0);
  head[4] = KIND_INPUT;
  head.writeUInt32BE(id, 5);
  head.writeUInt32BE(term, 9);
  return Buffer.concat([head, data]);
}

/**
 * Incremental reader of the server's stream: first the banner (or the launcher's missing marker),
 * then frames. `push` returns what the new bytes completed.
 */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Set once the banner was read. */
  banner: Banner | undefined;
  /** Set when the launcher said the server binary is missing. */
  missing = false;
  /** The far end's machine (`uname -m`) the launcher named with `missing`. */
  machine = '';
  /** Set when `--attach` said no server listens (it is gone). */
  gone = false;
  /** What preceded the banner (noise), kept for error messages. */
  noise = '';

  /**
   * Chunks received after `buf` and not yet joined to it, and their total length: a frame arriving in many
   * chunks is joined once, when it is complete (or its header readable), never once per chunk (which made
   * a 64 MiB frame quadratic: seconds of a blocked event loop).
   */
  private parts: Buffer[] = [];
  private partsLength = 0;
  /** Bytes `buf` plus `parts` must hold before parsing can make progress (a frame's header, then the frame). */
  private need = 0;

  /** Feeds bytes; returns the complete messages. Throws on a frame the client cannot use. */
  push(chunk: Buffer): ServerMessage[] {
    if (this.banner !== undefined && this.buf.length + this.partsLength + chunk.length < this.need) {
      this.parts.push(chunk);
      this.partsLength += chunk.length;
      return [];
    }
    this.buf = this.buf.length === 0 && this.parts.length === 0 ? chunk : Buffer.concat([this.buf, ...this.parts, chunk]);
    this.parts = [];
    this.partsLength = 0;
    if (this.banner === undefined) {
      if (!this.findBanner()) return [];
    }
    const out: ServerMessage[] = [];
    let off = 0;
    while (this.buf.length - off >= 4) {
      const len = this.buf.readUInt32BE(off);
      if (len < 1 || len > MAX_INCOMING_FRAME) throw new Error(`the server sent a frame of ${len} bytes`);
      if (this.buf.length - off - 4 < len) break;
      const kind = this.buf[off + 4];
      const body = this.buf.subarray(off + 5, off + 4 + len);
      off += 4 + len;
      if (kind === KIND_JSON) {
        out.push({ kind: 'json', value: JSON.parse(body.toString('utf8')) as Record<string, unknown>, size: 4 + len });
      } else if (kind === KIND_OUTPUT && body.length >= 12) {
        out.push({
          kind: 'output',
          sub: body.readUInt32BE(0),
          dropped: Number(body.readBigUInt64BE(4)),
          data: Buffer.from(body.subarray(12)),
          size: 4 + len,
        });
      } else {
        throw new Error(`the server sent a frame of unknown kind ${kind}`);
      }
    }
    this.buf = off === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
    // What the next step needs: the header, or (header read, bounded above) the whole frame.
    this.need = this.buf.length >= 4 ? 4 + this.buf.readUInt32BE(0) : 4;
    return out;
  }

  private findBanner(): boolean {
    const text = this.buf.toString('latin1');
    const goneAt = text.indexOf(GONE_MARKER);
    if (goneAt >= 0 && !text.slice(0, goneAt).includes(BANNER_PREFIX)) {
      this.gone = true;
      this.noise = text.slice(0, goneAt);
      this.buf = Buffer.alloc(0);
      return false;
    }
    const missingAt = text.indexOf(MISSING_MARKER);
    const at = text.indexOf(BANNER_PREFIX);
    if (missingAt >= 0 && (at < 0 || missingAt < at)) {
      const eol = text.indexOf('\n', missingAt);
      if (eol < 0) {
        if (this.buf.length > MAX_NOISE) throw new Error(`no end to the launcher's missing marker in the first ${MAX_NOISE} bytes`);
        return false;
      }
      this.missing = true;
      this.machine = text.slice(missingAt + MISSING_MARKER.length, eol).trim();
      this.noise = text.slice(0, missingAt);
      this.buf = Buffer.alloc(0);
      return false;
    }
    const eol = at >= 0 ? text.indexOf('\n', at) : -1;
    if (at < 0 || eol < 0) {
      if (this.buf.length > MAX_NOISE) throw new Error(`no acp-terminal-server banner in the first ${MAX_NOISE} bytes`);
      return false;
    }
    const [protocol, version] = text.slice(at + BANNER_PREFIX.length, eol).split(' ');
    this.banner = { protocol: Number(protocol), version: version ?? '' };
    this.noise = text.slice(0, at);
    this.buf = this.buf.subarray(eol + 1);
    return true;
  }
}
