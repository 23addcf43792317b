#!/usr/bin/env node
'use strict';
/**
 * Scale: one Node process drives N far ends × M terminals at once (issue 31: 50 containers × 10).
 *
 *   node scripts/remote/scale.js [--far podman|local] [--containers 50] [--terminals 10]
 *
 * `podman` (default; root, `bash scripts/remote/setup.sh`, the musl server built) starts N busybox
 * containers, one backend (one `podman exec` connection) per container; `local` runs N servers on this
 * machine over pipes (the generic argv backend). Every terminal of every far end is created at once and
 * runs `echo start; sleep 1; echo c-j-done` with its own expected output; all must match, each exit 0.
 * Connections are opened ten at a time first (each is an exec and an install). Prints the times
 * (containers up, connected, all created, all exited and checked, closed), this process's
 * peak RSS and heap, the servers' summed RSS, and `N×M terminals: ok` or the failures (exit 1).
 * Needs lib/ (node scripts/build-ts.js). Everything it starts it removes.
 */
const { execFile, spawn, spawnSync } = require('node:child_process');
const execFileAsync = require('node:util').promisify(execFile);
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const HOST_SERVER = path.join(ROOT, 'target', 'release', 'acp-terminal-server');
const STATIC_SERVER = path.join(ROOT, 'target', 'x86_64-unknown-linux-musl', 'release', 'acp-terminal-server');
const IMAGE = 'localhost/acp-rt-bb';

function podmanEnv() {
  const conf = path.join(require('node:os').tmpdir(), 'acp-remote-containers.conf');
  fs.writeFileSync(
    conf,
    '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\nnetns = "none"\n' +
      '[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nexit_command_delay = 2\n',
  );
  return { ...process.env, CONTAINERS_CONF: conf };
}

/** Runs the scale check; resolves with its measures (`failures` empty when every terminal was right). */
async function scale({ far = 'podman', containers = 50, terminals = 10, log = () => {} } = {}) {
  const { backends } = require(path.join(ROOT, 'lib'));
  const env = podmanEnv();
  const names = [];
  const t0 = Date.now();
  const ms = () => Date.now() - t0;
  const out = { far, containers, terminals, failures: [] };
  const list = [];
  try {
    if (far === 'podman') {
      if (!fs.existsSync(STATIC_SERVER)) throw new Error(`${STATIC_SERVER} is missing (bash scripts/remote/build-server.sh musl)`);
      if (spawnSync('podman', ['image', 'exists', IMAGE], { env }).status !== 0) {
        // The image the remote tests build (no registry): __test__/fixtures/remote-env.ts ensureImage().
        throw new Error(`${IMAGE} is missing: run a podman remote suite once (bash scripts/remote/test.sh) to build it`);
      }
      for (let i = 0; i < containers; i++) names.push(`acp-scale-${process.pid}-${i}`);
      // Started a few at a time: podman serializes on its lock anyway.
      for (let i = 0; i < names.length; i += 5) {
        await Promise.all(
          names.slice(i, i + 5).map(
            (n) =>
              new Promise((resolve, reject) => {
                const c = spawn('podman', ['run', '-d', '--name', n, '--network', 'none', IMAGE], { env, stdio: 'ignore' });
                c.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`podman run ${n} exited ${code}`))));
              }),
          ),
        );
      }
      out.containersUpMs = ms();
      log(`${containers} containers up in ${out.containersUpMs} ms`);
      for (const n of names) list.push(backends.podman(n, { serverBinary: STATIC_SERVER, env, handshakeTimeoutMs: 120000 }));
    } else {
      if (!fs.existsSync(HOST_SERVER)) throw new Error(`${HOST_SERVER} is missing (bash scripts/remote/build-server.sh)`);
      out.containersUpMs = 0;
      for (let i = 0; i < containers; i++) list.push(backends.command([HOST_SERVER]));
    }
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peakRss = rss0;
    let peakHeap = process.memoryUsage().heapUsed;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 20);
    // Connections (and installs) ten at a time: each is a `podman exec` and an upload.
    const tc = Date.now();
    for (let i = 0; i < list.length; i += 10) await Promise.all(list.slice(i, i + 10).map((b) => b.connection()));
    out.connectedMs = Date.now() - tc;
    log(`${list.length} connections (server installed) in ${out.connectedMs} ms`);
    const t1 = Date.now();
    // Every terminal of every far end at once.
    const all = await Promise.all(
      list.flatMap((b, c) =>
        Array.from({ length: terminals }, async (_, j) => {
          const t = await b.createTerminal({ command: `echo start; sleep 1; echo ${c}-${j}-done` });
          return { b, c, j, t };
        }),
      ),
    );
    out.createdMs = Date.now() - t1;
    log(`${all.length} terminals created in ${out.createdMs} ms`);
    // The checks run meanwhile: the servers' memory is read with every terminal live.
    let lastDone = t1;
    const checks = Promise.all(
      all.map(async ({ c, j, t }) => {
        const status = await t.waitForExit();
        const { output } = await t.currentOutput();
        lastDone = Math.max(lastDone, Date.now());
        await t.release();
        const want = `start\n${c}-${j}-done\n`;
        if (status.exitCode !== 0 || output !== want) out.failures.push(`${c}/${j}: ${JSON.stringify(status)} ${JSON.stringify(output)}`);
      }),
    );
    // Read without blocking the event loop (a synchronous exec each would delay the checks' clocks).
    const statuses = await Promise.all(
      list.map(async (b) => {
        const pid = (await b.connection()).serverPid;
        if (far !== 'podman') return fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        const name = b.transport.name.slice('podman:'.length);
        return (await execFileAsync('podman', ['exec', name, 'cat', `/proc/${pid}/status`], { env })).stdout;
      }),
    );
    const serverRss = statuses.reduce((sum, st) => sum + Number(/VmRSS:\s+(\d+)/.exec(st)?.[1] ?? 0) * 1024, 0);
    out.serversRssMiB = serverRss / 1048576;
    await checks;
    out.allDoneMs = lastDone - t1;
    clearInterval(sample);
    out.nodeRssGrowthMiB = (peakRss - rss0) / 1048576;
    out.nodePeakHeapMiB = peakHeap / 1048576;
    log(`all exited and checked ${out.allDoneMs} ms after the first create`);
  } finally {
    const t2 = Date.now();
    await Promise.all(list.map((b) => b.close().catch(() => {})));
    for (const n of names) spawnSync('podman', ['rm', '-f', '-t', '0', n], { env, stdio: 'ignore' });
    out.closedMs = Date.now() - t2;
  }
  return out;
}

module.exports = { scale };

if (require.main === module) {
  const arg = (k, d) => {
    const i = process.argv.indexOf(`--${k}`);
    return i > 0 ? process.argv[i + 1] : d;
  };
  scale({
    far: arg('far', 'podman'),
    containers: Number(arg('containers', 50)),
    terminals: Number(arg('terminals', 10)),
    log: (m) => console.log(m),
  }).then(
    (r) => {
      console.log(JSON.stringify(r, null, 1));
      console.log(`${r.containers}x${r.terminals} terminals: ${r.failures.length === 0 ? 'ok' : `${r.failures.length} FAILED`}`);
      process.exit(r.failures.length === 0 ? 0 : 1);
    },
    (e) => {
      console.error(`scale: ${e.message}`);
      process.exit(2);
    },
  );
}
