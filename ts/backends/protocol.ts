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
  | { kind: 'json'; value: unknown }
  | { kind: 'output'; sub: number; dropped: number; data: Buffer }
) & {
  /** Bytes of the frame on the stream (the resume cursor counts them). */
  size: number;
};

/** A server message checked for its kind's fields and types (see {@link checkServerMessage}). */
export type CheckedMessage =
  | { kind: 'output'; sub: number; dropped: number; data: Buffer; size: number }
  | { kind: 'reply'; id: number; result: Record<string, unknown>; size: number }
  | { kind: 'refused'; id: number; error: { code: string; message: string; details: Record<string, unknown> }; size: number }
  | { kind: 'exit'; term: number; status: { exitCode: number | null; signal: string | null }; size: number }
  | { kind: 'end'; sub: number; size: number };

/** A message from the far end that breaks the protocol: the connection cannot go on. */
export class ProtocolViolation extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isU32 = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff;

function violation(what: string, value: unknown): ProtocolViolation {
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  return new ProtocolViolation(`${what} (got ${shown.length > 120 ? `${shown.slice(0, 120)}…` : shown})`);
}

/**
 * The one check of what the far end sent, before anything reads it: a JSON frame is an object that is a
 * reply (`id` a request number, then `result` an object or `error` `{code, message, details?}` with strings)
 * or an event (`exit` with `term` and `status {exitCode, signal}`, `end` with `sub`); an output frame
 * names a subscription. Throws {@link ProtocolViolation} naming the field otherwise.
 */
export function checkServerMessage(m: ServerMessage): CheckedMessage {
  if (m.kind === 'output') {
    if (!isU32(m.sub) || m.sub === 0) throw violation('an output frame names no subscription', m.sub);
    if (!Number.isSafeInteger(m.dropped)) throw violation('an output frame has a dropped count out of range', m.dropped);
    return m;
  }
  const v: unknown = m.value;
  if (!isObject(v)) throw violation('a message is not a JSON object', v);
  if ('id' in v) {
    if (!isU32(v.id)) throw violation('a reply has no valid id (a request number)', v.id);
    if (v.error !== undefined) {
      const e = v.error;
      if (!isObject(e) || typeof e.code !== 'string' || typeof e.message !== 'string' || (e.details !== undefined && !isObject(e.details))) {
        throw violation(`the error of reply ${v.id} is not {code, message, details?}`, e);
      }
      return { kind: 'refused', id: v.id, error: { code: e.code, message: e.message, details: e.details ?? {} }, size: m.size };
    }
    if (!isObject(v.result)) throw violation(`the result of reply ${v.id} is not an object`, v.result);
    return { kind: 'reply', id: v.id, result: v.result, size: m.size };
  }
  if (v.event === 'exit') {
    const s = v.status;
    if (!isU32(v.term)) throw violation('an exit event names no terminal', v.term);
    if (!isObject(s) || !(s.exitCode === null || Number.isInteger(s.exitCode)) || !(s.signal === null || typeof s.signal === 'string')) {
      throw violation(`the exit status of terminal ${v.term} is not {exitCode, signal}`, s);
    }
    return { kind: 'exit', term: v.term, status: { exitCode: s.exitCode as number | null, signal: s.signal as string | null }, size: m.size };
  }
  if (v.event === 'end') {
    if (!isU32(v.sub) || v.sub === 0) throw violation('an end event names no subscription', v.sub);
    return { kind: 'end', sub: v.sub, size: m.size };
  }
  throw violation('a message is neither a reply nor a known event', v);
}

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
      if (len < 1 || len > MAX_INCOMING_FRAME) throw new ProtocolViolation(`the server sent a frame of ${len} bytes`);
      if (this.buf.length - off - 4 < len) break;
      const kind = this.buf[off + 4];
      const body = this.buf.subarray(off + 5, off + 4 + len);
      off += 4 + len;
      if (kind === KIND_JSON) {
        let value: unknown;
        try {
          value = JSON.parse(body.toString('utf8'));
        } catch (e) {
          throw new ProtocolViolation(`the server sent a JSON frame that is not JSON: ${(e as Error).message}`);
        }
        out.push({ kind: 'json', value: value as Record<string, unknown>, size: 4 + len });
      } else if (kind === KIND_OUTPUT && body.length >= 12) {
        out.push({
          kind: 'output',
          sub: body.readUInt32BE(0),
          dropped: Number(body.readBigUInt64BE(4)),
          data: Buffer.from(body.subarray(12)),
          size: 4 + len,
        });
      } else {
        throw new ProtocolViolation(`the server sent a frame of unknown kind ${kind}`);
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
