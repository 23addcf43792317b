// The one tail buffer of the TS layer (ShellSessions' unreported output, the v2 bridge's stream copy).
import { TailBuffer } from '../ts/tail-buffer';

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
