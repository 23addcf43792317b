'use strict';
/**
 * The interactive scenarios of `npm run bench` (issue 12), registered by bench/index.js:
 * - `pty`: throughput of a pseudo-terminal: acp-terminal's text mode (`output: 'text'`, the vt100
 *   emulator fed as output arrives) against its raw pty mode on the same command, and node-pty as an
 *   optional baseline (used when `require('node-pty')` resolves, or with `--node-pty=<dir>`).
 * - `sessions`: the median round trip of `ShellSessions.execute({ command: 'echo hi' })` beside a
 *   tmux-driven session of the OpenHands/Strix design (send-keys, then capture-pane every 10 ms);
 *   skipped with a note when tmux is absent.
 * Each run is a fresh Node process (bench/interactive-worker.js); implementations alternate.
 */
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const MiB = 1024 * 1024;

/** A file of `size` bytes of distinct ASCII lines (`line 0000001 abc...`), and its line count. */
function asciiLines(dir, size) {
  const file = path.join(dir, `ascii-lines-${size}.txt`);
  const line = (i) => `line ${String(i).padStart(8, '0')} the quick brown fox jumps over the lazy dog 0123456789\n`;
  if (!fs.existsSync(file) || fs.statSync(file).size !== size) {
    const parts = [];
    let n = 0;
    for (let i = 0; n < size; i++) {
      const l = line(i);
      parts.push(l);
      n += l.length;
    }
    let s = parts.join('');
    s = s.slice(0, size);
    if (!s.endsWith('\n')) s = s.slice(0, s.lastIndexOf('\n') + 1).padEnd(size - 1, 'x') + '\n';
    fs.writeFileSync(file, s);
  }
  const text = fs.readFileSync(file, 'latin1');
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return { file, lines };
}

function findNodePty(flag) {
  const candidates = [flag, 'node-pty'].filter(Boolean);
  for (const c of candidates) {
    try {
      const resolved = require.resolve(c, { paths: [path.join(__dirname, '..')] });
      const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(resolved)})`], { encoding: 'utf8' });
      if (probe.status === 0) return { path: resolved };
      return { error: `node-pty at ${resolved} does not load: ${probe.stderr.trim().split('\n')[0]}` };
    } catch {}
  }
  return { error: 'node-pty is not installed (optional: `npm install --no-save node-pty`, or --node-pty=<dir>)' };
}

/** `h`: the helpers of bench/index.js (S, QUICK, REPS, opt, row, notes, log, fmt, fmtRatio, okCell, aggregate, runWorker, benchDir). */
module.exports = function interactiveScenarios(h) {
  const WORKER = path.join(__dirname, 'interactive-worker.js');
  async function alternate(impls, config, reps) {
    const res = Object.fromEntries(impls.map((i) => [i, []]));
    for (let r = 0; r < reps; r++) {
      const order = impls.slice(r % impls.length).concat(impls.slice(0, r % impls.length));
      for (const impl of order) {
        const out = await h.runWorker(impl, config, [], WORKER);
        res[impl].push(out);
        if (out.errors && out.errors.length) h.log(`    ${impl} rep ${r + 1}: ${out.errors.join('; ')}`);
      }
    }
    return Object.fromEntries(impls.map((i) => [i, h.aggregate(res[i])]));
  }

  return {
    async pty() {
      const bytes = h.QUICK ? 8 * MiB : 32 * MiB;
      const { file, lines } = asciiLines(h.benchDir(), bytes);
      const nodePty = findNodePty(h.opt('node-pty'));
      const impls = ['raw', 'text', ...(nodePty.path ? ['nodepty'] : [])];
      const cfg = { kind: 'pty', bytes, lines, file, nodePty: nodePty.path, timeoutMs: 300000 };
      const r = await alternate(impls, cfg, h.QUICK ? h.REPS : Math.max(h.REPS, 5));
      const sc = `pty (${bytes / MiB} MiB of ASCII lines, \`head -c\`; columns: text mode, node-pty, raw pty mode)`;
      const ratio = r.text.throughputMiBs / r.raw.throughputMiBs;
      const np = r.nodepty;
      h.row(sc, 'throughput (MiB/s): text mode, node-pty, raw pty', h.fmt(r.text.throughputMiBs, 1), np ? h.fmt(np.throughputMiBs, 1) : 'n/a', h.fmt(r.raw.throughputMiBs, 1), `${h.fmtRatio(ratio)} of raw`, '≥ 0.5× raw', ratio >= 0.5);
      h.row(sc, 'lost bytes per run (median)', h.fmt(r.text.lostBytes, 0), np ? h.fmt(np.lostBytes, 0) : 'n/a', h.fmt(r.raw.lostBytes, 0), '', '0', r.text.lostBytes === 0 && r.raw.lostBytes === 0);
      h.row(sc, 'results correct (exit 0, last line, every byte)', h.okCell(r.text), np ? (np.lostBytes ? 'bytes lost' : h.okCell(np)) : 'n/a', h.okCell(r.raw), '', 'all', r.text.ok && r.raw.ok);
      if (!nodePty.path) h.notes.push(`pty: no node-pty baseline: ${nodePty.error}.`);
      return r;
    },
    async sessions() {
      const iterations = h.QUICK ? 20 : 100;
      const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
      const impls = ['acp', ...(hasTmux ? ['tmux'] : [])];
      const cfg = { kind: 'sessions', iterations, timeoutMs: 300000 };
      const r = await alternate(impls, cfg, h.QUICK ? h.REPS : Math.max(h.REPS, 3));
      const sc = `sessions (${iterations} × \`echo hi\` per run; columns: ShellSessions, tmux send-keys + capture-pane every 10 ms)`;
      const t = r.tmux;
      h.row(sc, 'median execute() round trip (ms)', h.fmt(r.acp.medianMs, 2), t ? h.fmt(t.medianMs, 1) : 'n/a', '', t ? h.fmtRatio(r.acp.medianMs / t.medianMs) : '', 'info', null, true);
      h.row(sc, 'results correct', h.okCell(r.acp), t ? h.okCell(t) : 'n/a', '', '', 'all', r.acp.ok);
      if (!hasTmux) h.notes.push('sessions: tmux is not installed, the tmux column is skipped (Debian: `apt-get install tmux`).');
      return r;
    },
  };
};
