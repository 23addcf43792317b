#!/usr/bin/env node
// Spawn cost with and without resource limits, timeoutMs and the OS sandbox (issues: applying
// limits must not slow spawning: the launcher sets them in the vfork child, no fork of Node;
// a sandboxed create→exit→release costs at most 2x a plain one). node bench/limits.js
// With --sandbox-json: only the sandbox's cost, as one JSON line (what `npm run bench` runs, as
// the current user and, when root, as nobody).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createTerminal, containmentInfo } = require('..');
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
/** Medians of `n` create→wait→release of each option set, taken in turn (so that a change of
 * load on the machine weighs on all of them alike: their ratio is what matters). */
async function interleaved(optsList, n = 300) {
  const xs = optsList.map(() => []);
  for (let i = 0; i < n + 20; i++) {
    for (let c = 0; c < optsList.length; c++) {
      const t0 = process.hrtime.bigint();
      const t = await createTerminal({ command: 'true' }, optsList[c]);
      await t.waitForExit();
      await t.release();
      if (i >= 20) xs[c].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return xs.map((x) => x.sort((a, b) => a - b)[n >> 1]);
}
/** The sandbox's cost: medians of 300 interleaved plain, sandboxed (`network: false`: its own network
 * namespace), proxied (`network: { allow }`: the namespace's listener and the host's proxy, unused) and
 * `network: true` (every layer but the network namespace, which shows that namespace's share) creates,
 * 3 runs; the run with the median ratio. */
async function sandboxCost() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-bench-'));
  const runs = [];
  for (let r = 0; r < 3; r++) {
    const [plain, sandboxed, proxied, hostNetwork] = await interleaved([
      {},
      { sandbox: { writableRoots: [root] } },
      { sandbox: { writableRoots: [root], network: { allow: ['registry.npmjs.org'] } } },
      { sandbox: { writableRoots: [root], network: true } },
    ]);
    runs.push({
      plain, sandboxed, ratio: sandboxed / plain, proxied, proxyRatio: proxied / plain,
      hostNetwork, hostNetworkRatio: hostNetwork / plain,
    });
  }
  fs.rmSync(root, { recursive: true, force: true });
  return runs.sort((a, b) => a.ratio - b.ratio)[1];
}
(async () => {
  const sandbox = containmentInfo().sandbox;
  if (process.argv.includes('--sandbox-json')) {
    const out = sandbox.available ? await sandboxCost() : { unavailable: sandbox.reasons.join('; ') };
    console.log(JSON.stringify({ uid: process.getuid(), isolation: sandbox.processIsolation, ...out }));
    return;
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-bench-'));
  const rows = [];
  for (let r = 0; r < 3; r++) {
    rows.push([
      await med({}),
      await med({ limits: { cpuSeconds: 60, addressSpaceBytes: 8 * 2 ** 30, openFiles: 1024, fileSizeBytes: 2 ** 30 } }),
      await med({ limits: { processes: 512 } }),
      await med({ timeoutMs: 60000 }),
      ...(sandbox.available
        ? await interleaved([{}, { sandbox: { writableRoots: [root] } }])
        : []),
    ]);
  }
  fs.rmSync(root, { recursive: true, force: true });
  const m = (i) => rows.map((x) => x[i]).sort((a, b) => a - b)[1];
  const f = (i) => m(i).toFixed(3);
  console.log(`median ms per create→wait→release of true (median of 3 runs of 300):`);
  console.log(`no limits ${f(0)} | rlimits (cpu, as, nofile, fsize) ${f(1)} | processes (rlimit + pids cgroup) ${f(2)} | timeoutMs ${f(3)}`);
  if (sandbox.available) {
    const x = (i) => (m(i) / m(4)).toFixed(2);
    console.log(`sandbox (${sandbox.processIsolation}), interleaved with plain creates (${f(4)}): ${f(5)} (${x(5)}x)`);
  } else {
    console.log(`sandbox: unavailable here (${sandbox.reasons.join('; ')})`);
  }
})();
