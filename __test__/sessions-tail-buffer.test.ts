// The one tail buffer of the TS layer (ShellSessions' unreported output, the v2 bridge's stream copy).
import { cutPoint, TailBuffer } from '../ts/tail-buffer';

function lines(from: number, to: number): string {
  let s = '';
  for (let i = from; i <= to; i++) s += `line ${i}\n`;
  return s;
}

describe('TailBuffer', () => {
  test('keeps everything, in order, while under the limit', () => {
    const t = new TailBuffer(100);
    t.push(Buffer.from('abc'));
    t.push(Buffer.from(''));
    t.push(Buffer.from('def'));
    expect(t.total).toBe(6);
    expect(t.truncated).toBe(false);
    expect(t.peek().toString()).toBe('abcdef');
    expect(t.take()).toEqual({ bytes: Buffer.from('abcdef'), truncated: false });
    expect(t.take()).toEqual({ bytes: Buffer.alloc(0), truncated: false });
    expect(t.total).toBe(6);
  });

  test('over the limit: a suffix of what was pushed, at most max bytes, starting on a line', () => {
    const t = new TailBuffer(1000);
    const all = lines(1, 5000);
    for (let i = 0; i < all.length; i += 7) t.push(Buffer.from(all.slice(i, i + 7)));
    expect(t.total).toBe(all.length);
    expect(t.truncated).toBe(true);
    const kept = t.peek().toString();
    expect(kept.length).toBeLessThanOrEqual(1000);
    expect(all.endsWith(kept)).toBe(true);
    expect(kept).toMatch(/^line \d+\n/);
    expect(t.take().truncated).toBe(true);
    t.push(Buffer.from('next'));
    expect(t.take()).toEqual({ bytes: Buffer.from('next'), truncated: false });
  });

  test('pushed bytes are copied: reusing the caller buffer changes nothing', () => {
    const t = new TailBuffer(10);
    const b = Buffer.from('xy');
    t.push(b);
    b.fill(0x41);
    expect(t.peek().toString()).toBe('xy');
  });

  test('append moves bytes and truncation over, in order', () => {
    const a = new TailBuffer(1000);
    const b = new TailBuffer(10);
    a.push(Buffer.from('first '));
    b.push(Buffer.from('0123456789abcdefghijklmnop'));
    b.peek();
    expect(b.truncated).toBe(true);
    a.append(b);
    expect(a.take()).toEqual({ bytes: Buffer.from('first ghijklmnop'), truncated: true });
  });
});

describe('where a trim cuts', () => {
  test('a long last line under a small limit keeps its tail instead of being dropped whole', () => {
    const t = new TailBuffer(1000);
    t.push(Buffer.from(`first\n${'x'.repeat(5000)}END\n`));
    const kept = t.take().bytes.toString();
    expect(kept).toMatch(/^x+END\n$/);
    expect(kept.length).toBe(1000);
  });

  test('never inside a UTF-8 character', () => {
    const all = Buffer.from('é'.repeat(100)); // 2 bytes each
    expect(cutPoint(all, 51, 149)).toBe(52);
    expect(all.subarray(cutPoint(all, 51, 149)).toString()).toBe('é'.repeat(74));
  });

  test('never inside an escape sequence (CSI, OSC)', () => {
    const csi = Buffer.from(`${'a'.repeat(100)}\x1b[38;5;196mred`);
    expect(csi.subarray(cutPoint(csi, 104, 1000)).toString()).toBe('red');
    const osc = Buffer.from(`${'a'.repeat(100)}\x1b]0;title\x07rest`);
    expect(osc.subarray(cutPoint(osc, 103, 1000)).toString()).toBe('rest');
    const done = Buffer.from(`${'a'.repeat(100)}\x1b[0mbcdef`);
    expect(done.subarray(cutPoint(done, 105, 1000)).toString()).toBe('cdef');
  });

  test('a near line boundary wins', () => {
    const all = Buffer.from(`${'a'.repeat(100)}\nrest`);
    expect(all.subarray(cutPoint(all, 90, 1000)).toString()).toBe('rest');
    expect(all.subarray(cutPoint(all, 90, 40)).toString()).toBe('aaaaaaaaaa\nrest');
  });
});
