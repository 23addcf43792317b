'use strict';
/**
 * `npm run bench`: acp-terminal (the native core) side by side with a careful child_process
 * implementation of the same API (bench/node-terminal.js) and the raw pipe bound
 * (`head -c N /dev/zero | cat > /dev/null`), against the targets of issue 4.
 *
 *   node bench/index.js [--quick] [--only=flood-zeros,spawn,...] [--reps=N] [--json=out.json]
 *                       [--native=<module path>]   (default: the package root, i.e. index.js)
 *                       [--strict]                 (exit 1 when a target is missed)
 *   node bench/index.js --report=out.json            (re-print the markdown table of a saved run)
 *
 * Every (scenario, implementation, repetition) runs in a fresh Node process (bench/worker.js);
 * repetitions alternate the order of the two implementations; figures are medians over the
 * repetitions. Progress goes to stderr, the markdown table (ready for the README) to stdout.
 * Scenarios: flood-zeros, flood-utf8, flood-listen, spawn, spawn-heap, concurrent, poll, idle, tail, policy, sandbox, mcp, pty, sessions, remote
 *            ([--node-pty=<dir>]: node-pty for the pty baseline when `require('node-pty')` fails).
 * Exit code: 0 (1 with --strict when a target is missed, 2 when the addon cannot be loaded).
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const opt = (name) => {
  const a = argv.find((x) => x === `--${name}` || x.startsWith(`--${name}=`));
  if (!a) return undefined;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : true;
};
const QUICK = !!opt('quick');
const REPS = Number(opt('reps') || (QUICK ? 1 : 3));
const ONLY = opt('only') ? String(opt('only')).split(',') : null;
const JSON_OUT = opt('json');
const NATIVE = path.resolve(opt('native') || path.join(__dirname, '..'));
const REPORT = opt('report');
const STRICT = !!opt('strict');
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(fs.readFileSync(__filename, 'utf8').split('*/')[0]);
  process.exit(0);
}

const S = QUICK
  ? {
      floodZeros: 64 * MiB,
      floodUtf8: 32 * MiB,
      spawnIters: 50,
      heapBytes: 512 * MiB,
      concurrent: 200,
      pollBytes: 16 * MiB,
      idle: 200,
      idleIntervalMs: 1000,
      tailRuns: 100,
    }
  : {
      floodZeros: 512 * MiB,
      floodUtf8: 256 * MiB,
      spawnIters: 300,
      heapBytes: 2 * GiB,
      concurrent: 1000,
      pollBytes: 64 * MiB,
      idle: 1000,
      idleIntervalMs: 2000,
      tailRuns: 1000,
    };
const LIMIT = MiB;
const TAIL_BYTES = 2000000;

const log = (...a) => process.stderr.write(a.join(' ') + '\n');

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------
function median(xs) {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** Median of every numeric field over the repetitions; ok = all ok; errors concatenated. */
function aggregate(reps) {
  const out = { reps: reps.length, ok: reps.length > 0 && reps.every((r) => r.ok), errors: [] };
  for (const r of reps) for (const e of r.errors || []) if (out.errors.length < 4) out.errors.push(e);
  const keys = new Set(reps.flatMap((r) => Object.keys(r)));
  for (const k of keys) {
    if (reps.some((r) => typeof r[k] === 'number')) out[k] = median(reps.map((r) => r[k]));
    else if (k === 'heap') out[k] = reps[0][k];
  }
  out.all = reps;
  return out;
}

function runWorker(impl, config, nodeFlags = [], script = path.join(__dirname, 'worker.js')) {
  const cfg = { ...config, impl, nativePath: NATIVE };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', ...nodeFlags, script, JSON.stringify(cfg)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), config.timeoutMs || 300000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const m = /@@RESULT@@(.*)\n/.exec(out);
      if (m) {
        const r = JSON.parse(m[1]);
        resolve(r);
      } else {
        resolve({
          ok: false,
          crashed: true,
          errors: [`worker ${impl}/${config.kind} died (code ${code}, signal ${signal}): ${(err || out).trim().slice(-600)}`],
        });
      }
    });
  });
}

function timeShell(cmd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/bin/sh', ['-c', cmd], { stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`raw bound command failed: ${cmd}`);
  return ms;
}

function benchDir() {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const dir = path.join(base, `acp-terminal-bench-${process.getuid ? process.getuid() : 'u'}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A file of exactly `size` bytes of mixed 1-4 byte UTF-8 text, built from 1 MiB blocks. */
function utf8File(size) {
  const file = path.join(benchDir(), `utf8-${size}.txt`);
  if (fs.existsSync(file) && fs.statSync(file).size === size) return file;
  const words = ['héllo', 'wörld', '—', '✓', '日本語', '🎉', 'naïve', 'Ελληνικά', 'кириллица', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'ascii', '½'];
  const fd = fs.openSync(file, 'w');
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % words.length;
  for (let off = 0; off < size; off += MiB) {
    const blockSize = Math.min(MiB, size - off);
    const parts = [Buffer.from(`[block ${String(off / MiB).padStart(6, '0')}] `)];
    let n = parts[0].length;
    for (;;) {
      const w = Buffer.from(words[rnd()] + (rnd() % 7 === 0 ? '\n' : ' '));
      if (n + w.length > blockSize - 1) break;
      parts.push(w);
      n += w.length;
    }
    parts.push(Buffer.alloc(blockSize - n, 0x2e)); // ASCII padding: the block ends on a boundary
    fs.writeSync(fd, Buffer.concat(parts, blockSize));
  }
  fs.closeSync(fd);
  return file;
}

function tailFile() {
  const file = path.join(benchDir(), `tail-${TAIL_BYTES}.txt`);
  if (fs.existsSync(file) && fs.statSync(file).size === TAIL_BYTES) return file;
  let s = '';
  for (let i = 0; s.length < TAIL_BYTES; i++) s += `line ${String(i).padStart(7, '0')} abcdefghijklmnopqrstuvwxyz\n`;
  fs.writeFileSync(file, s.slice(0, TAIL_BYTES));
  return file;
}

/**
 * Runs the scenario for both implementations (and the raw pipe command, if given) `reps` times,
 * rotating the order in every repetition so that drift on a noisy machine hits all alike.
 */
async function pair(config, nodeFlags, { reps = REPS, raw = null } = {}) {
  const res = { native: [], node: [], raw: [] };
  const kinds = raw ? ['raw', 'native', 'node'] : ['native', 'node'];
  for (let r = 0; r < reps; r++) {
    const order = kinds.slice(r % kinds.length).concat(kinds.slice(0, r % kinds.length));
    if (!raw && r % 2) order.reverse();
    for (const impl of order) {
      if (impl === 'raw') {
        const ms = timeShell(`${raw.producer} | cat > /dev/null`);
        res.raw.push({ ok: true, wallMs: ms, throughputMiBs: raw.bytes / MiB / (ms / 1000) });
        continue;
      }
      const out = await runWorker(impl, config, nodeFlags);
      if (Array.isArray(out)) res[impl].push(...out);
      else res[impl].push(out);
      if (out.crashed || (out.errors && out.errors.length)) log(`    ${impl} rep ${r + 1}: ${(out.errors || []).join('; ')}`);
    }
  }
  return { native: aggregate(res.native), node: aggregate(res.node), raw: raw ? aggregate(res.raw) : null };
}

// ---------------------------------------------------------------------------------------------
// Scenarios: each returns rows { scenario, metric, a, b, raw, ratio, target, pass }
// ---------------------------------------------------------------------------------------------
const fmt = (x, d = 1) =>
  typeof x !== 'number' || !Number.isFinite(x) ? '–' : x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(d > 0 ? d - 1 || 0 : 0) : x.toFixed(d);
// Two decimals, four when two would round onto a target boundary (1.4996 is not "1.50×").
const fmtRatio = (x) => {
  if (!Number.isFinite(x)) return '–';
  const two = x.toFixed(2);
  return ['0.50', '0.80', '0.90', '1.00', '1.50'].includes(two) && x !== Number(two) ? `${x.toFixed(4)}×` : `${two}×`;
};
const okCell = (agg) => (agg.ok ? `ok (${agg.reps}/${agg.reps})` : `FAIL`);

const rows = [];
const notes = [];
function row(scenario, metric, a, b, raw, ratio, target, pass, info = false) {
  rows.push({ scenario, metric, a, b, raw, ratio, target, pass: info ? null : !!pass });
}

const SCENARIOS = {
  async 'flood-zeros'() {
    return flood('flood-zeros', `${S.floodZeros / MiB} MiB of zeros`, { kind: 'flood', bytes: S.floodZeros, limit: LIMIT }, `head -c ${S.floodZeros} /dev/zero`);
  },
  async 'flood-utf8'() {
    log('  generating the UTF-8 text file...');
    const file = utf8File(S.floodUtf8);
    return flood('flood-utf8', `${S.floodUtf8 / MiB} MiB of UTF-8 text`, { kind: 'flood', bytes: S.floodUtf8, limit: LIMIT, file }, `cat ${file}`);
  },
  async 'flood-listen'() {
    const bytes = S.floodZeros / 2;
    const r = await flood('flood-listen', `${bytes / MiB} MiB of zeros to an onOutput listener that decodes each chunk`, { kind: 'flood', bytes, limit: LIMIT, listen: true }, `head -c ${bytes} /dev/zero`, { throughputInfo: true });
    const sc = rows[rows.length - 1].scenario;
    const { native: a, node: b } = r;
    row(sc, 'listener: longest call (ms)', fmt(a.heardLongestMs, 2), fmt(b.heardLongestMs, 2), '', '', 'info', null, true);
    row(sc, 'listener: largest chunk (KiB)', fmt(a.heardLargest / 1024, 0), fmt(b.heardLargest / 1024, 0), '', '', 'info', null, true);
    row(sc, 'listener: bytes heard before the exit', `${fmt((100 * a.heardBytes) / bytes, 1)}%`, `${fmt((100 * b.heardBytes) / bytes, 1)}%`, '', '', '100%', a.heardBytes === bytes);
    return r;
  },
  async spawn() {
    const cfg = { kind: 'spawn', iterations: S.spawnIters, timeoutMs: 300000 };
    const r = await pair(cfg);
    const sc = `spawn (${S.spawnIters}× \`true\`)`;
    const ratio = r.native.medianMs / r.node.medianMs;
    row(sc, 'median create→wait→output→release (ms)', fmt(r.native.medianMs, 2), fmt(r.node.medianMs, 2), '', fmtRatio(ratio), '≤ 0.9×', ratio <= 0.9);
    row(sc, 'p90 (ms)', fmt(r.native.p90Ms, 2), fmt(r.node.p90Ms, 2), '', fmtRatio(r.native.p90Ms / r.node.p90Ms), 'info', null, true);
    row(sc, 'event-loop delay max (ms)', fmt(r.native.eldMaxMs), fmt(r.node.eldMaxMs), '', '', 'info', null, true);
    row(sc, 'results correct', okCell(r.native), okCell(r.node), '', '', 'all', r.native.ok);
    return r;
  },
  async 'spawn-heap'() {
    const cfg = { kind: 'spawn', iterations: S.spawnIters, heapBytes: S.heapBytes, inProcessReps: REPS, timeoutMs: 600000 };
    const flags = [`--max-old-space-size=${Math.ceil((S.heapBytes * 2.5) / MiB)}`];
    // The heap takes seconds to build: one process per implementation, REPS repetitions inside.
    const res = {};
    for (const impl of ['native', 'node']) {
      const out = await runWorker(impl, cfg, flags);
      res[impl] = aggregate(Array.isArray(out) ? out : [out]);
      if (!Array.isArray(out)) log(`    ${impl}: ${(out.errors || []).join('; ')}`);
    }
    const heap = res.native.heap || res.node.heap;
    const heapTxt = heap ? `${(heap.heapUsedMiB / 1024).toFixed(2)} GiB live heap` : `${S.heapBytes / GiB} GiB heap`;
    const sc = `spawn with ${heapTxt} (${S.spawnIters}×)`;
    const ratio = res.native.medianMs / res.node.medianMs;
    row(sc, 'median create→wait→output→release (ms)', fmt(res.native.medianMs, 2), fmt(res.node.medianMs, 2), '', fmtRatio(ratio), '≤ 0.5×', ratio <= 0.5);
    row(sc, 'event-loop delay max (ms)', fmt(res.native.eldMaxMs), fmt(res.node.eldMaxMs), '', '', 'info', null, true);
    row(sc, 'results correct', okCell(res.native), okCell(res.node), '', '', 'all', res.native.ok);
    if (heap) notes.push(`spawn-heap: ${heap.objects.toLocaleString('en')} live objects, heapUsed ${heap.heapUsedMiB.toFixed(0)} MiB, RSS ${heap.rssMiB.toFixed(0)} MiB, built in ${(heap.allocMs / 1000).toFixed(1)} s.`);
    return res;
  },
  async concurrent() {
    const cfg = { kind: 'concurrent', count: S.concurrent };
    const r = await pair(cfg);
    const sc = `concurrent (${S.concurrent} × \`echo start; sleep 0.2; echo end\`)`;
    row(sc, 'all outputs correct', `${fmt(r.native.correct, 0)}/${S.concurrent} ${okCell(r.native)}`, `${fmt(r.node.correct, 0)}/${S.concurrent} ${okCell(r.node)}`, '', '', 'all', r.native.ok);
    row(sc, 'event-loop delay max (ms)', fmt(r.native.eldMaxMs), fmt(r.node.eldMaxMs), '', '', '≤ 20 ms', r.native.eldMaxMs <= 20);
    const w = r.native.wallMs / r.node.wallMs;
    row(sc, 'wall (ms)', fmt(r.native.wallMs, 0), fmt(r.node.wallMs, 0), '', fmtRatio(w), '≤ 0.8×', w <= 0.8);
    const m = r.native.rssGrowthMiB / r.node.rssGrowthMiB;
    row(sc, 'peak RSS growth (MiB)', fmt(r.native.rssGrowthMiB), fmt(r.node.rssGrowthMiB), '', fmtRatio(m), '≤ 1.0×', m <= 1.0);
    row(sc, 'time until all created (ms)', fmt(r.native.createAllMs, 0), fmt(r.node.createAllMs, 0), '', '', 'info', null, true);
    row(sc, 'synchronous part of the create loop (ms)', fmt(r.native.createLoopMs, 1), fmt(r.node.createLoopMs, 1), '', '', 'info', null, true);
    return r;
  },
  async poll() {
    const cfg = { kind: 'poll', bytes: S.pollBytes, limit: LIMIT };
    // Short (about 60 ms) and bimodal on a shared 2-core machine (the producer, the reader and the
    // JS thread compete for two cores): at least 9 repetitions in a full run, and the spread shown.
    const r = await pair(cfg, [], { reps: QUICK ? REPS : Math.max(REPS, 9), raw: { producer: `head -c ${S.pollBytes} /dev/zero`, bytes: S.pollBytes } });
    const raw = r.raw;
    const sc = `poll (${S.pollBytes / MiB} MiB, limit 1 MiB)`;
    const p = r.native.pollsPerSec / r.node.pollsPerSec;
    row(sc, 'currentOutput() polls/s', fmt(r.native.pollsPerSec, 0), fmt(r.node.pollsPerSec, 0), '', fmtRatio(p), '≥ 1.5×', p >= 1.5);
    const spread = (impl) => {
      const v = r[impl].all.map((x) => x.pollsPerSec);
      return `${fmt(Math.min(...v), 0)}–${fmt(Math.max(...v), 0)}`;
    };
    row(sc, 'polls/s, slowest–fastest repetition', spread('native'), spread('node'), '', '', 'info', null, true);
    row(sc, 'producer slowdown (poll wall / no-poll wall)', fmtRatio(r.native.slowdown), fmtRatio(r.node.slowdown), '', '', '≤ 1.5×', r.native.slowdown <= 1.5);
    row(sc, 'wall with polling (ms)', fmt(r.native.wallMs, 0), fmt(r.node.wallMs, 0), fmt(raw.wallMs, 0), fmtRatio(r.native.wallMs / raw.wallMs) + ' of raw', 'info', null, true);
    row(sc, 'median poll while running / after exit (ms)', `${fmt(r.native.pollMedianMs, 3)} / ${fmt(r.native.pollAfterExitMs, 3)}`, `${fmt(r.node.pollMedianMs, 3)} / ${fmt(r.node.pollAfterExitMs, 3)}`, '', '', 'info', null, true);
    row(sc, 'results correct', okCell(r.native), okCell(r.node), '', '', 'all', r.native.ok);
    return r;
  },
  async idle() {
    const cfg = { kind: 'idle', count: S.idle, settleMs: 500, intervalMs: S.idleIntervalMs, timeoutMs: 120000 };
    const r = await pair(cfg);
    const sc = `idle (${S.idle} × \`sleep 30\`)`;
    row(sc, 'RSS per live terminal (KiB)', fmt(r.native.rssPerTermKiB), fmt(r.node.rssPerTermKiB), '', fmtRatio(r.native.rssPerTermKiB / r.node.rssPerTermKiB), '≤ 64 KiB', r.native.rssPerTermKiB <= 64);
    row(sc, 'CPU while idle (ms per s)', fmt(r.native.cpuMsPerSec, 2), fmt(r.node.cpuMsPerSec, 2), '', '', '≈ 0 (≤ 1 ms/s)', r.native.cpuMsPerSec <= 1);
    row(sc, 'same, before any terminal existed (ms per s)', fmt(r.native.baselineCpuMsPerSec, 2), fmt(r.node.baselineCpuMsPerSec, 2), '', '', 'info', null, true);
    row(sc, 'thread wakeups while idle (per s)', fmt(r.native.wakeupsPerSec), fmt(r.node.wakeupsPerSec), '', '', 'info', null, true);
    row(sc, 'threads (process total)', fmt(r.native.threads, 0), fmt(r.node.threads, 0), '', '', 'info', null, true);
    row(sc, 'fds per terminal', fmt(r.native.fdsPerTerminal, 2), fmt(r.node.fdsPerTerminal, 2), '', '', 'info', null, true);
    row(sc, 'all running, all ended by SIGTERM', okCell(r.native), okCell(r.node), '', '', 'all', r.native.ok);
    return r;
  },
  async tail() {
    const file = tailFile();
    const cfg = { kind: 'tail', runs: S.tailRuns, file, concurrency: 2, timeoutMs: 300000 };
    // One repetition of N runs: the N runs are the repetitions of this correctness check.
    const res = {};
    for (const impl of ['native', 'node']) res[impl] = aggregate([await runWorker(impl, cfg)]);
    const sc = `tail (${S.tailRuns} × write 2 MB then exit)`;
    row(sc, 'lost bytes (bad runs)', `${fmt(res.native.lostBytes, 0)} (${fmt(res.native.badRuns, 0)})`, `${fmt(res.node.lostBytes, 0)} (${fmt(res.node.badRuns, 0)})`, '', '', '0', res.native.ok);
    row(sc, 'median run (ms)', fmt(res.native.medianMs, 2), fmt(res.node.medianMs, 2), '', fmtRatio(res.native.medianMs / res.node.medianMs), 'info', null, true);
    return res;
  },
  async policy() {
    // In this process: the check has no child_process counterpart. Needs lib/.
    const { measure, TYPICAL } = require('./shell-parse');
    const r = await measure(NATIVE);
    const sc = `command policy (\`${TYPICAL}\`, allow list)`;
    row(sc, 'median policy check, rebuild included (ms)', fmt(r.policyMs, 4), '', '', '', '≤ 0.1 ms', r.policyMs <= 0.1);
    row(sc, "the host's check, analysed off the JS thread (ms)", fmt(r.policyAsyncMs, 4), '', '', '', 'info', null, true);
    row(sc, 'tree-sitter analysis: that line / per corpus line (µs)', `${fmt(r.analysisUs, 1)} / ${fmt(r.corpusUs, 1)}`, '', '', '', 'info', null, true);
    return r;
  },
  async sandbox() {
    // A sandboxed create→exit→release of `true` against a plain one, interleaved in one process
    // (bench/limits.js --sandbox-json), as the current user and, when root, as nobody (a user
    // namespace): target at most 2x each.
    const who = [['current user', []]];
    if (process.getuid && process.getuid() === 0) who.push(['nobody', ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']]);
    const out = {};
    for (const [name, prefix] of who) {
      const argv = [...prefix, process.execPath, path.join(__dirname, 'limits.js'), '--sandbox-json'];
      const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', cwd: path.join(__dirname, '..'), timeout: 600000 });
      const line = (r.stdout || '').split('\n').filter((l) => l.startsWith('{')).pop();
      const res = line ? JSON.parse(line) : { unavailable: `no result (status ${r.status}): ${(r.stderr || '').trim().slice(0, 200)}` };
      out[name] = res;
      const sc = `sandbox cost (create→exit→release of \`true\`, ${name}${res.isolation ? `, ${res.isolation}` : ''})`;
      if (res.unavailable) {
        row(sc, 'sandboxed / plain', '–', '–', '', '–', '≤ 2×', false);
        notes.push(`sandbox (${name}): unavailable: ${res.unavailable}`);
        continue;
      }
      row(sc, 'median ms: sandboxed (network: false, own network namespace) | plain', fmt(res.sandboxed, 3), fmt(res.plain, 3), '', fmtRatio(res.ratio), '≤ 2×', res.ratio <= 2);
      if (res.proxied !== undefined) {
        row(`${sc}, network: { allow } (the host's proxy)`, 'median ms: proxied | plain', fmt(res.proxied, 3), fmt(res.plain, 3), '', fmtRatio(res.proxyRatio), 'info', null, true);
      }
      if (res.hostNetwork !== undefined) {
        // Every layer but the network namespace: the difference to the first row is that namespace's cost.
        row(`${sc}, network: true (no network namespace)`, 'median ms: sandboxed | plain', fmt(res.hostNetwork, 3), fmt(res.plain, 3), '', fmtRatio(res.hostNetworkRatio), 'info', null, true);
      }
    }
    return out;
  },
  async mcp() {
    // bench/mcp.js in a fresh process: a `run` of `true` through the MCP client and `acp-terminal mcp`
    // over stdio against the same on a TerminalHost directly, and calls per second with 10 clients.
    const r = spawnSync(process.execPath, [path.join(__dirname, 'mcp.js'), ...(QUICK ? ['--quick'] : [])], { encoding: 'utf8', timeout: 600000 });
    const line = (r.stdout || '').split('\n').filter((l) => l.startsWith('{')).pop();
    if (!line) throw new Error(`bench/mcp.js: no result (status ${r.status}): ${(r.stderr || '').trim().slice(0, 300)}`);
    const res = JSON.parse(line);
    const sc = `MCP \`run\` of \`true\` (${res.calls} calls, stdio)`;
    row(sc, 'median ms: via MCP, TerminalHost directly (ratio)', fmt(res.mcpMs, 2), fmt(res.hostMs, 2), '', fmtRatio(res.ratio), 'info', null, true);
    row(`MCP, ${res.clients} clients at once (${res.concurrentCalls} \`run\` calls)`, 'tool calls per second', fmt(res.callsPerSecond, 0), '', '', '', 'info', null, true);
    return res;
  },
};
// pty (text mode vs raw pty vs node-pty) and sessions (ShellSessions vs tmux): bench/interactive.js.
// agent-report (agentTerminals() on a 20 MB flood vs a bare onOutput listener): bench/agent-report.js.
Object.assign(SCENARIOS, require('./agent-report')({ QUICK, REPS, row, fmt, fmtRatio }));
Object.assign(SCENARIOS, require('./interactive')({ S, QUICK, REPS, opt, row, notes, log, fmt, fmtRatio, okCell, aggregate, runWorker, benchDir }));
// remote (issue 31): terminals through acp-terminal-server (pipe, podman exec, ssh) vs the local core.
Object.assign(SCENARIOS, require('./remote')({ QUICK, REPS, row, notes, log, fmt, fmtRatio }));

/** `throughputInfo`: the throughput targets are the plain floods'; a listener's flood reports them as info. */
async function flood(name, label, cfg, producer, { throughputInfo = false } = {}) {
  // Floods are short and the machine is noisy: at least 5 repetitions in a full run.
  const r = await pair(cfg, [], { reps: QUICK ? REPS : Math.max(REPS, 5), raw: { producer, bytes: cfg.bytes } });
  const raw = r.raw;
  const sc = `${name} (${label}, limit 1 MiB)`;
  const vsRaw = r.native.throughputMiBs / raw.throughputMiBs;
  const vsNode = r.native.throughputMiBs / r.node.throughputMiBs;
  const i = throughputInfo;
  row(sc, 'throughput (MiB/s) vs raw pipe', fmt(r.native.throughputMiBs, 0), fmt(r.node.throughputMiBs, 0), fmt(raw.throughputMiBs, 0), fmtRatio(vsRaw), i ? 'info' : '≥ 0.8× raw', vsRaw >= 0.8, i);
  row(sc, 'throughput vs child_process', '', '', '', fmtRatio(vsNode), i ? 'info' : '≥ 1.5×', vsNode >= 1.5, i);
  row(sc, 'peak RSS growth (MiB)', fmt(r.native.rssGrowthMiB), fmt(r.node.rssGrowthMiB), '', '', '≤ 17 (16 + 1 retained)', r.native.rssGrowthMiB <= 17);
  row(sc, 'event-loop delay max until exit (ms)', fmt(r.native.eldMaxMs), fmt(r.node.eldMaxMs), '', '', '≤ 5 ms', r.native.eldMaxMs <= 5);
  row(sc, 'output = exactly the last ≤ 1 MiB', okCell(r.native), okCell(r.node), '', '', 'exact', r.native.ok);
  row(sc, 'CPU time of the Node process (ms)', fmt(r.native.cpuMs, 0), fmt(r.node.cpuMs, 0), '', '', 'info', null, true);
  row(sc, 'final currentOutput() (ms)', fmt(r.native.outputMs, 2), fmt(r.node.outputMs, 2), '', '', 'info', null, true);
  row(sc, 'read calls: average size (KiB) vs child_process', fmt(r.native.readKiB, 0), fmt(r.node.readKiB, 0), '', fmtRatio(r.native.readKiB / r.node.readKiB), 'info', null, true);
  row(sc, 'read calls: count', fmt(r.native.readCalls, 0), fmt(r.node.readCalls, 0), '', '', 'info', null, true);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------
function machine() {
  const cpuinfo = (() => {
    try {
      return fs.readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const model = (/^model name\s*:\s*(.*)$/m.exec(cpuinfo) || [])[1] || (os.cpus()[0] || {}).model || 'unknown';
  const nproc = (() => {
    const r = spawnSync('nproc', [], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : String(os.cpus().length);
  })();
  // Which build was measured: the addon file(s) next to the module and the git commit.
  let build = '';
  try {
    const dir = fs.statSync(NATIVE).isDirectory() ? NATIVE : path.dirname(NATIVE);
    const addons = fs.readdirSync(dir).filter((f) => f.endsWith('.node'));
    build = addons.map((f) => `${f} (${fs.statSync(path.join(dir, f)).mtime.toISOString().replace(/\.\d+Z$/, 'Z')})`).join(', ');
    const head = spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
    if (head.status === 0) build += `${build ? ', ' : ''}git ${head.stdout.trim()}`;
  } catch {}
  return {
    build,
    nproc,
    cpu: model.trim(),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    memGiB: (os.totalmem() / GiB).toFixed(1),
    load: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

function renderMarkdown(run) {
  const m = run.machine;
  const lines = [];
  lines.push(`### Benchmark results${run.quick ? ' (--quick: reduced sizes, not the issue targets)' : ''}`);
  lines.push('');
  lines.push(`Machine: ${m.nproc} CPUs (${m.cpu}), ${m.memGiB} GiB RAM, ${m.kernel}, Node ${m.node}; ${m.date}.`);
  if (m.build) lines.push(`Measured build: ${m.build}.`);
  if (m.loadBefore) lines.push(`Load average (1/5/15 min) before the run: ${m.loadBefore} (after: ${m.load}, raised by the bench's own 1,000-process scenarios).`);
  const floodReps = run.quick ? run.reps : Math.max(run.reps, 5);
  lines.push(`Medians of ${run.reps} repetition(s) (floods: ${floodReps}; poll: ${run.quick ? run.reps : Math.max(run.reps, 9)}; spawn with a big heap: ${run.reps} inside one process per implementation; tail: one run of N), each in a fresh Node process, implementations alternating. \`acp-terminal\` = the native core;`);
  lines.push('`child_process` = a careful pure-Node implementation of the same API (`bench/node-terminal.js`);');
  lines.push('raw pipe = `<producer> | cat > /dev/null`. Ratios are acp-terminal ÷ the named reference.');
  lines.push('');
  lines.push('| scenario | metric | acp-terminal | child_process | raw pipe | ratio | target | result |');
  lines.push('|---|---|---:|---:|---:|---:|---|---|');
  let last = null;
  for (const r of run.rows) {
    const sc = r.scenario === last ? '' : r.scenario;
    last = r.scenario;
    const res = r.pass === null ? '' : r.pass ? 'PASS' : '**MISS**';
    lines.push(`| ${sc} | ${r.metric} | ${r.a} | ${r.b} | ${r.raw} | ${r.ratio} | ${r.target} | ${res} |`);
  }
  const targets = run.rows.filter((r) => r.pass !== null);
  const missed = targets.filter((r) => !r.pass);
  lines.push('');
  lines.push(`Targets: ${targets.length - missed.length}/${targets.length} PASS${missed.length ? `, ${missed.length} MISS` : ''}.`);
  lines.push('Event-loop delay is `monitorEventLoopDelay({ resolution: 1 })` max, which includes the 1 ms sampling interval.');
  for (const n of run.notes) lines.push(`- ${n}`);
  if (run.errors.length) {
    lines.push('');
    lines.push('Errors:');
    for (const e of run.errors) lines.push(`- ${e}`);
  }
  return lines.join('\n');
}

async function main() {
  if (REPORT) {
    const run = JSON.parse(fs.readFileSync(REPORT, 'utf8'));
    console.log(renderMarkdown(run));
    return;
  }
  // Fail early and clearly when the addon is not there.
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(NATIVE)})`], { encoding: 'utf8' });
  if (probe.status !== 0) {
    log(`cannot load the implementation under test from ${NATIVE}:\n${probe.stderr.trim().split('\n').slice(0, 5).join('\n')}`);
    log('build it first (npm run build), or test the harness with --native=bench/node-terminal.js');
    process.exit(2);
  }
  const names = Object.keys(SCENARIOS).filter((n) => !ONLY || ONLY.includes(n));
  if (ONLY) {
    const unknown = ONLY.filter((n) => !SCENARIOS[n]);
    if (unknown.length) {
      log(`unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
      process.exit(2);
    }
  }
  log(`acp-terminal bench: ${names.join(', ')}${QUICK ? ' (quick)' : ''}, ${REPS} rep(s); implementation under test: ${NATIVE}`);
  const details = {};
  const errors = [];
  const loadBefore = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const t0 = Date.now();
  for (const name of names) {
    const s0 = Date.now();
    log(`- ${name}...`);
    try {
      details[name] = await SCENARIOS[name]();
      for (const impl of ['native', 'node']) {
        const d = details[name] && details[name][impl];
        if (d && d.errors && d.errors.length) errors.push(`${name} / ${impl === 'native' ? 'acp-terminal' : 'child_process'}: ${d.errors.join('; ')}`);
      }
    } catch (err) {
      errors.push(`${name}: ${err && err.stack ? err.stack : err}`);
      row(name, 'scenario crashed', '–', '–', '', '', 'runs', false);
    }
    log(`  done in ${((Date.now() - s0) / 1000).toFixed(1)} s`);
  }
  const run = { machine: { ...machine(), loadBefore }, quick: QUICK, reps: REPS, native: NATIVE, rows, notes, errors, details, totalSec: (Date.now() - t0) / 1000 };
  notes.push(`Total bench time ${run.totalSec.toFixed(0)} s.`);
  if (JSON_OUT) fs.writeFileSync(JSON_OUT, JSON.stringify(run, null, 2));
  console.log(renderMarkdown(run));
  // A MISS is a finding, not a crash: exit 0 unless --strict (then 1 on any MISS).
  process.exitCode = STRICT && rows.some((r) => r.pass === false) ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
