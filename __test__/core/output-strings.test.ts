// currentOutput() of a large ASCII output is an external string: the retained bytes are handed to V8
// without a copy into the JS heap (issue 12). Measured in a fresh Node process with --expose-gc.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');

function probe(script: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

const SIZE = 32 * 1024 * 1024;

test('a 32 MiB ASCII output does not grow the JS heap, reads back exactly, and outlives release()', () => {
  const r = probe(`
    const v8 = require('v8');
    const { createTerminal } = require('.');
    (async () => {
      const t = await createTerminal({ command: "head -c ${SIZE} /dev/zero | tr '\\\\0' a; printf END" });
      await t.waitForExit();
      global.gc();
      const before = v8.getHeapStatistics().used_heap_size;
      const { output } = await t.currentOutput();
      const grew = v8.getHeapStatistics().used_heap_size - before;
      await t.release();
      global.gc();
      // The string stays valid (and unchanged) after the terminal and its buffers are gone.
      const ok = output.length === ${SIZE} + 3 && output.endsWith('aaaEND') && /^a+END$/.test(output);
      console.log(JSON.stringify({ grew, ok }));
    })();
  `);
  expect(r.ok).toBe(true);
  // A copy would add the whole 32 MiB to the heap; the external string adds a few bytes.
  expect(r.grew as number).toBeLessThan(4 * 1024 * 1024);
});

test('non-ASCII and small outputs are still exact (copied)', () => {
  const r = probe(`
    const { createTerminal } = require('.');
    (async () => {
      const t = await createTerminal({ command: "for i in $(seq 1 5000); do printf 'caf\\\\303\\\\251 %d\\\\n' $i; done" });
      await t.waitForExit();
      const { output } = await t.currentOutput();
      const s = await createTerminal({ command: 'printf small' });
      await s.waitForExit();
      const small = (await s.currentOutput()).output;
      await t.release(); await s.release();
      const lines = output.split('\\n');
      console.log(JSON.stringify({ first: lines[0], last: lines[4999], n: lines.length, small }));
    })();
  `);
  expect(r).toEqual({ first: 'café 1', last: 'café 5000', n: 5001, small: 'small' });
});
