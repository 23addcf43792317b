'use strict';
/**
 * The `remote` scenario of `npm run bench` (issue 31), registered by bench/index.js: terminals through
 * `acp-terminal-server` against the local core, in this process (needs lib/: `node scripts/build-ts.js`):
 * - create→exit→release of `true` (median ms), local core vs the server over a pipe, podman exec
 *   (a busybox container started here) and ssh (an sshd started here on 127.0.0.1), with ratios;
 * - a flood (`head -c N /dev/zero`, every byte through `onOutput`): delivered MiB/s and ratios, and the share
 *   the server dropped (counted) because this side read slower than the command wrote;
 * - memory per remote terminal: the server's RSS growth per live `sleep` terminal, and the Node heap
 *   per `RemoteTerminal`.
 * Podman and ssh are measured when this machine has them (root, `bash scripts/remote/setup.sh`);
 * otherwise their rows say why. Everything started here is stopped here.
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const net = require('net');
const { spawn, spawnSync, execFileSync } = require('child_process');

const MiB = 1024 * 1024;
const ROOT = path.join(__dirname, '..');
const HOST_SERVER = path.join(ROOT, 'target', 'release', 'acp-terminal-server');
const STATIC_SERVER = path.join(ROOT, 'target', 'x86_64-unknown-linux-musl', 'release', 'acp-terminal-server');
const IMAGE = 'localhost/acp-rt-bb';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd} || test -x /usr/sbin/${cmd}`], { stdio: 'ignore' }).status === 0;

function podmanEnv() {
  const conf = path.join(os.tmpdir(), 'acp-remote-containers.conf');
  fs.writeFileSync(
    conf,
    '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\nnetns = "none"\n' +
      '[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nexit_command_delay = 2\n',
  );
  return { ...process.env, CONTAINERS_CONF: conf };
}

function startContainer(name) {
  const env = podmanEnv();
  if (spawnSync('podman', ['image', 'exists', IMAGE], { env }).status !== 0) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-rt-root-'));
    fs.mkdirSync(path.join(root, 'bin'));
    fs.mkdirSync(path.join(root, 'tmp'));
    fs.chmodSync(path.join(root, 'tmp'), 0o1777);
    fs.copyFileSync('/bin/busybox', path.join(root, 'bin', 'busybox'));
    fs.chmodSync(path.join(root, 'bin', 'busybox'), 0o755);
    for (const a of execFileSync('/bin/busybox', ['--list']).toString().split('\n')) {
      if (a && a !== 'busybox') fs.symlinkSync('busybox', path.join(root, 'bin', a));
    }
    const importIt = `tar -C "$1" -c . | podman import --change 'CMD ["/bin/sleep","infinity"]' --change 'ENV PATH=/usr/local/bin:/bin' - "$2"`;
    execFileSync('sh', ['-c', importIt, 'sh', root, IMAGE], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    fs.rmSync(root, { recursive: true, force: true });
  }
  spawnSync('podman', ['rm', '-f', '-t', '0', name], { env });
  execFileSync('podman', ['run', '-d', '--name', name, '--network', 'none', IMAGE], { env });
  return () => spawnSync('podman', ['rm', '-f', '-t', '0', name], { env });
}

async function startSshd() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sshd-'));
  fs.mkdirSync('/run/sshd', { recursive: true });
  for (const k of ['host', 'key']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, k)]);
  fs.copyFileSync(path.join(dir, 'key.pub'), path.join(dir, 'authorized_keys'));
  const port = await new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  fs.writeFileSync(
    path.join(dir, 'sshd_config'),
    `Port ${port}\nListenAddress 127.0.0.1\nHostKey ${dir}/host\nPidFile ${dir}/pid\nAuthorizedKeysFile ${dir}/authorized_keys\n` +
      'StrictModes no\nUsePAM no\nPasswordAuthentication no\nPermitRootLogin prohibit-password\n',
  );
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: 'ignore' });
  fs.writeFileSync(path.join(dir, 'kh'), `[127.0.0.1]:${port} ${fs.readFileSync(path.join(dir, 'host.pub'), 'utf8')}`);
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    key: path.join(dir, 'key'),
    kh: path.join(dir, 'kh'),
    dir,
    stop: async () => {
      const closed = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      await closed;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function cycleMs(createTerminal, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const t = await createTerminal({ command: 'true', args: [] });
    await t.waitForExit();
    await t.currentOutput();
    await t.release();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

async function floodMiBs(createTerminal, bytes) {
  const t0 = process.hrtime.bigint();
  let got = 0;
  let lost = 0;
  const t = await createTerminal({ command: `head -c ${bytes} /dev/zero`, outputByteLimit: MiB }, {
    onOutput: (c, info) => {
      got += c.length;
      lost += info ? info.dropped : 0;
    },
  });
  await t.waitForExit();
  for (let i = 0; i < 2000 && got + lost < bytes; i++) await new Promise((r) => setTimeout(r, 5));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  await t.release();
  // Delivered bytes only: a transport slower than the command makes the server drop (counted), which is not throughput.
  return { mibs: got / MiB / s, lost, complete: got + lost === bytes };
}

module.exports = ({ QUICK, REPS, row, notes, log, fmt, fmtRatio }) => ({
  async remote() {
    const lib = require(path.join(ROOT, 'lib'));
    const { backends } = lib;
    const n = QUICK ? 10 : 30;
    const floodBytes = (QUICK ? 64 : 256) * MiB;
    const targets = [['local core', lib.createTerminal, null]];
    const cleanup = [];
    if (!fs.existsSync(HOST_SERVER)) {
      notes.push(`remote: ${HOST_SERVER} is missing (bash scripts/remote/build-server.sh)`);
      return {};
    }
    const pipe = backends.command([HOST_SERVER]);
    cleanup.push(() => pipe.close());
    targets.push(['server over a pipe', pipe.createTerminal, pipe]);
    if (process.getuid() === 0 && has('podman') && has('runc') && has('busybox') && fs.existsSync(STATIC_SERVER)) {
      const name = `acp-bench-${process.pid}`;
      cleanup.push(startContainer(name));
      const b = backends.podman(name, { serverBinary: STATIC_SERVER, env: podmanEnv() });
      cleanup.unshift(() => b.close());
      targets.push(['podman exec', b.createTerminal, b]);
    } else notes.push('remote: podman not measured (needs root, podman, runc, busybox and the musl server: bash scripts/remote/setup.sh)');
    if (process.getuid() === 0 && has('sshd') && has('ssh')) {
      const sshd = await startSshd();
      cleanup.push(() => sshd.stop());
      const b = backends.ssh('root@127.0.0.1', {
        port: sshd.port,
        identity: sshd.key,
        extraArgs: ['-F', '/dev/null'],
        sshOptions: { UserKnownHostsFile: sshd.kh, BatchMode: 'yes' },
        serverBinary: HOST_SERVER,
        serverPath: path.join(sshd.dir, 'server'),
      });
      cleanup.unshift(() => b.close());
      targets.push(['ssh', b.createTerminal, b]);
    } else notes.push('remote: ssh not measured (needs root and openssh-server)');
    const out = {};
    try {
      for (const [name, create] of targets) {
        log(`  remote: ${name}`);
        await cycleMs(create, 2); // connect (and install) outside the measure
        const cycles = [];
        const floods = [];
        for (let r = 0; r < REPS; r++) {
          cycles.push(await cycleMs(create, n));
          floods.push(await floodMiBs(create, floodBytes));
        }
        out[name] = {
          cycleMs: median(cycles),
          floodMiBs: median(floods.map((f) => f.mibs)),
          droppedPct: median(floods.map((f) => (100 * f.lost) / floodBytes)),
          complete: floods.every((f) => f.complete),
        };
      }
      const base = out['local core'];
      for (const [name] of targets) {
        const r = out[name];
        const sc = `remote: ${name}`;
        row(sc, `median create→exit→release of \`true\` (ms), × local`, fmt(r.cycleMs, 2), '', '', fmtRatio(r.cycleMs / base.cycleMs), 'info', null, true);
        row(sc, `flood ${floodBytes / MiB} MiB through onOutput, delivered (MiB/s), × local`, fmt(r.floodMiBs), '', '', fmtRatio(r.floodMiBs / base.floodMiBs), 'info', null, true);
        row(sc, 'flood bytes dropped for a slow reader (%, counted in info.dropped)', fmt(r.droppedPct), '', '', '', 'info', null, true);
        row(sc, 'every flood byte delivered or counted as dropped', r.complete ? 'ok' : 'FAIL', '', '', '', 'all', r.complete);
      }
      // Memory per remote terminal: the server's RSS and this process's heap per live `sleep`.
      const count = QUICK ? 50 : 200;
      const mem = backends.command([HOST_SERVER]);
      cleanup.push(() => mem.close());
      await (await mem.createTerminal({ command: 'true' })).release();
      const pid = await mem.transportPid();
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
      global.gc?.();
      const rss0 = rss();
      const heap0 = process.memoryUsage().heapUsed;
      const ts = [];
      for (let i = 0; i < count; i++) ts.push(await mem.createTerminal({ command: 'sleep 600' }));
      global.gc?.();
      const perServer = (rss() - rss0) / count;
      const perHeap = (process.memoryUsage().heapUsed - heap0) / count;
      await Promise.all(ts.map((t) => t.release()));
      row(`remote: memory per terminal (${count} live \`sleep\`)`, 'server RSS / Node heap per terminal (KiB)', `${fmt(perServer / 1024)} / ${fmt(perHeap / 1024)}`, '', '', '', 'info', null, true);
      out.memory = { perServerBytes: perServer, perHeapBytes: perHeap };
    } finally {
      for (const c of cleanup) await c();
    }
    return out;
  },
});
