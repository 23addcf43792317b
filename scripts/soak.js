#!/usr/bin/env node
// Opt-in soak (`npm run soak [-- N]`, default 10,000): creates and releases N terminals in a loop
// and checks for leaked fds, zombies, thread growth and RSS growth. CI runs a 2,000 version.
'use strict';
const fs = require('node:fs');
const { createTerminal } = require('..');

const N = Number(process.argv[2] ?? 10000);
const fds = () => fs.readdirSync('/proc/self/fd').length;
const threads = () => fs.readdirSync('/proc/self/task').length;
const zombies = () =>
  fs.readdirSync('/proc').filter((e) => {
    if (!/^\d+$/.test(e)) return false;
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      return f[0] === 'Z' && Number(f[1]) === process.pid;
    } catch {
      return false;
    }
  }).length;

(async () => {
  console.log(`soak: ${N} terminals created and released`); // opens stdout's handle first
  // Warm up (runtime threads, launcher, guardian, lazily opened fds), then measure.
  for (let i = 0; i < 500; i++) {
    const t = await createTerminal({ command: i % 4 === 0 ? 'sleep 5' : 'echo x' });
    if (i % 4) await t.waitForExit();
    await t.release();
  }
  const base = { fds: fds(), threads: threads(), rss: process.memoryUsage().rss };
  const t0 = Date.now();
  for (let i = 1; i <= N; i++) {
    const t = await createTerminal({ command: i % 4 === 0 ? 'sleep 5' : 'echo x' });
    if (i % 4) await t.waitForExit();
    await t.release();
    if (i % 1000 === 0) {
      console.log(`${i}: fds ${fds()} (${base.fds}), threads ${threads()} (${base.threads}), zombies ${zombies()}, rss +${((process.memoryUsage().rss - base.rss) / 1048576).toFixed(1)} MiB`);
    }
  }
  const ok = fds() <= base.fds && threads() <= base.threads + 2 && zombies() === 0 && process.memoryUsage().rss - base.rss < 64 * 1048576;
  console.log(`${N} terminals in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${ok ? 'no leaks' : 'LEAK'}`);
  process.exit(ok ? 0 : 1);
})();
