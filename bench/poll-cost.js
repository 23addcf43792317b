'use strict';
/**
 * The cost of one currentOutput() of a 1 MiB ASCII tail, changed since the last call (one byte
 * more) and unchanged (the same call again), isolated from the poll scenario's flood:
 *
 *   node bench/poll-cost.js [--native=<module path>] [--polls=300]
 *
 * `cat` (stdin 'pipe') holds 1 MiB of 'a' in a 1 MiB tail; each round writes one byte, waits
 * until it was read, then times currentOutput() twice. Prints medians and p90 in ms.
 */
const path = require('path');

const arg = (name, dflt) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : dflt;
};
const { createTerminal } = require(path.resolve(arg('native', path.join(__dirname, '..'))));
const POLLS = Number(arg('polls', 300));
const now = () => Number(process.hrtime.bigint()) / 1e6;
const pct = (v, p) => v[Math.min(v.length - 1, Math.floor(v.length * p))];

(async () => {
  const t = await createTerminal({ command: 'cat', outputByteLimit: 1 << 20 }, { stdin: 'pipe' });
  await t.write(Buffer.alloc(1 << 20, 'a'));
  // All of it echoed first: otherwise the first rounds would take the rest of the 'a's for their
  // 'b' (and check an output that is not complete yet).
  while (t.outputBytes < 1 << 20) await new Promise((r) => setImmediate(r));
  const changed = [];
  const unchanged = [];
  for (let i = 0; i < POLLS; i++) {
    const before = t.outputBytes;
    await t.write('b');
    while (t.outputBytes < before + 1) await new Promise((r) => setImmediate(r));
    let a = now();
    const o = await t.currentOutput();
    changed.push(now() - a);
    a = now();
    await t.currentOutput();
    unchanged.push(now() - a);
    if (o.output.length !== 1 << 20 || !o.output.endsWith('b')) throw new Error('wrong output');
  }
  await t.release();
  changed.sort((x, y) => x - y);
  unchanged.sort((x, y) => x - y);
  console.log(
    `currentOutput() of a 1 MiB ASCII tail, ${POLLS} rounds: changed median ${pct(changed, 0.5).toFixed(3)} ms (p90 ${pct(changed, 0.9).toFixed(3)}), ` +
      `unchanged median ${pct(unchanged, 0.5).toFixed(4)} ms (p90 ${pct(unchanged, 0.9).toFixed(4)})`,
  );
})();
