'use strict';
/**
 * The `agent-report` scenario of `npm run bench`: what `agentTerminals()` costs on a 20 MB flood.
 * In a fresh process (`node bench/agent-report.js --json`), alternating: a bare native terminal with an
 * `onOutput` listener that only counts bytes, and the same command reported through the kit as a v2
 * display terminal by an SDK 2.x agent app over an in-memory stream (the client side is a sink). Reports the
 * CPU time per output chunk of each (their ratio is the reporting overhead) and the output update rate
 * the throttle settles at (default 50 ms interval: at most 20 updates/s). Needs lib/ (npm run build:ts).
 */
const path = require('path');
const { spawnSync } = require('child_process');

// 20 MB of base64 text lines (15 MB of random bytes encoded): a flood that lasts long enough for the rate to settle.
const BYTES = 20 * 1000 * 1000;
const COMMAND = `head -c ${(BYTES / 4) * 3} /dev/urandom | base64 -w 100`;

function cpuMs(start) {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

async function bare(native) {
  let chunks = 0;
  let bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = Date.now();
  const t = await native.createTerminal({ command: COMMAND, outputByteLimit: 1024 * 1024 }, {
    onOutput: (chunk) => {
      chunks++;
      bytes += chunk.length;
    },
  });
  await t.waitForExit();
  while (bytes < BYTES) await new Promise((r) => setTimeout(r, 5));
  const cpu = cpuMs(c0);
  const ms = Date.now() - t0;
  await t.release();
  return { chunks, cpuMs: cpu, ms };
}

async function reported(lib) {
  const v2 = await import('@agentclientprotocol/sdk/experimental/v2');
  const kit = lib.agentTerminals();
  let handle;
  const app = v2
    .agent({ name: 'bench' })
    .onRequest('initialize', () => ({ protocolVersion: v2.PROTOCOL_VERSION, info: { name: 'bench', version: '1' } }))
    .onRequest('session/new', () => ({ sessionId: 's' }))
    .onRequest('session/prompt', async (ctx) => {
      handle = await kit.createTerminal(ctx, { sessionId: 's', command: COMMAND, outputByteLimit: 1024 * 1024 });
      return { messageId: 'm' };
    });
  // The client is three raw requests and a sink that counts output updates: only the agent side is measured.
  const requests = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: v2.PROTOCOL_VERSION, info: { name: 'bench', version: '1' } } },
    { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/tmp' } },
    { jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: 'go' }] } },
  ];
  let closeInput;
  const readable = new ReadableStream({
    start(controller) {
      for (const r of requests) controller.enqueue(r);
      closeInput = () => controller.close();
    },
  });
  let updates = 0;
  let exited;
  const exitSeen = new Promise((resolve) => (exited = resolve));
  const writable = new WritableStream({
    write(message) {
      const u = message.params && message.params.update;
      if (!u) return;
      if (u.sessionUpdate === 'terminal_output_chunk' || (u.sessionUpdate === 'terminal_update' && u.output)) updates++;
      if (u.sessionUpdate === 'terminal_update' && u.exitStatus) exited();
    },
  });
  const c0 = process.cpuUsage();
  const t0 = Date.now();
  kit.v2(app).connect({ readable, writable });
  await exitSeen;
  const cpu = cpuMs(c0);
  const ms = Date.now() - t0;
  closeInput();
  await handle.release();
  await kit.close();
  return { updates, cpuMs: cpu, ms };
}

async function worker(reps) {
  const root = path.join(__dirname, '..');
  const native = require(path.join(root, 'index.js'));
  const lib = require(path.join(root, 'lib', 'index.js'));
  const out = { bare: [], reported: [] };
  for (let i = 0; i < reps; i++) {
    out.bare.push(await bare(native));
    out.reported.push(await reported(lib));
  }
  return out;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}

/** Registers the scenario with bench/index.js. */
module.exports = ({ QUICK, REPS, row, fmt, fmtRatio }) => ({
  async 'agent-report'() {
    const reps = QUICK ? 1 : Math.max(REPS, 3);
    const r = spawnSync(process.execPath, [__filename, '--json', String(reps)], { encoding: 'utf8', cwd: path.join(__dirname, '..'), timeout: 600000 });
    const line = (r.stdout || '').split('\n').filter((l) => l.startsWith('{')).pop();
    if (!line) throw new Error(`agent-report worker failed (status ${r.status}): ${(r.stderr || '').trim().slice(0, 400)}`);
    const res = JSON.parse(line);
    // Per chunk: the bare run's listener calls; the reported run sees the same stream of chunks.
    const barePerChunk = median(res.bare.map((x) => (x.cpuMs * 1000) / x.chunks));
    const chunks = median(res.bare.map((x) => x.chunks));
    const reportedPerChunk = median(res.reported.map((x) => (x.cpuMs * 1000) / chunks));
    const rate = median(res.reported.map((x) => x.updates / (x.ms / 1000)));
    const sc = 'agent-side reporting (20 MB flood, v2 display terminal, 50 ms interval)';
    row(sc, 'CPU µs per output chunk (acp-terminal column: reported; next: bare onOutput)', fmt(reportedPerChunk, 1), fmt(barePerChunk, 1), '', fmtRatio(reportedPerChunk / barePerChunk), 'info', null, true);
    row(sc, 'output updates per second it settles at', fmt(rate, 1), '', '', '', '≤ 21', rate <= 21);
    return res;
  },
});

if (require.main === module && process.argv[2] === '--json') {
  worker(Number(process.argv[3] || 1)).then(
    (res) => {
      console.log(JSON.stringify(res));
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
