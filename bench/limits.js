#!/usr/bin/env node
// Spawn cost with and without resource limits and timeoutMs (issue: applying limits must not
// slow spawning: the launcher sets them in the vfork child, no fork of Node). node bench/limits.js
'use strict';
const { createTerminal } = require('..');
async function med(opts, n = 300) {
  const xs = [];
  for (let i = 0; i < 20; i++) await (await createTerminal({ command: 'true' }, opts)).release();
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const t = await createTerminal({ command: 'true' }, opts);
    await t.waitForExit(); await t.release();
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  xs.sort((a, b) => a - b); return xs[n >> 1];
}
(async () => {
  const rows = [];
  for (let r = 0; r < 3; r++) {
    rows.push([
      await med({}),
      await med({ limits: { cpuSeconds: 60, addressSpaceBytes: 8 * 2 ** 30, openFiles: 1024, fileSizeBytes: 2 ** 30 } }),
      await med({ limits: { processes: 512 } }),
      await med({ timeoutMs: 60000 }),
    ]);
  }
  const m = (i) => rows.map((x) => x[i]).sort((a, b) => a - b)[1].toFixed(3);
  console.log(`median ms per create→wait→release of true (median of 3 runs of 300):`);
  console.log(`no limits ${m(0)} | rlimits (cpu, as, nofile, fsize) ${m(1)} | processes (rlimit + pids cgroup) ${m(2)} | timeoutMs ${m(3)}`);
})();
