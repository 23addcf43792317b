'use strict';
/**
 * One interactive benchmark run in a fresh Node process (started by bench/interactive.js):
 *
 *   node bench/interactive-worker.js '<json config>'
 *
 * Kinds:
 * - `pty`: `head -c <bytes> <file>` of ASCII lines on a pseudo-terminal, until the exit, through
 *   `impl` = `raw` (acp-terminal, `pty: {}`), `text` (acp-terminal, `pty: {}, output: 'text'`, the
 *   final `currentOutput()` included, since that renders nothing new) or `nodepty` (node-pty with
 *   an `onData` listener that counts bytes; `cfg.nodePty` is where it is installed).
 * - `sessions`: `cfg.iterations` round trips of `echo hi` through `impl` = `acp`
 *   (`ShellSessions.execute`) or `tmux` (the OpenHands/Strix design: `tmux send-keys`, then
 *   `tmux capture-pane -p` every 10 ms until the new prompt shows).
 *
 * Prints `@@RESULT@@{json}` on stdout.
 */
const fs = require('fs');
const path = require('path');
const { execFile, execFileSync } = require('child_process');

const cfg = JSON.parse(process.argv[2]);
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;

function packageRoot() {
  const p = path.resolve(cfg.nativePath);
  return fs.statSync(p).isDirectory() ? p : path.dirname(p);
}

function median(xs) {
  const v = [...xs].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** The file's last line (without its newline). */
function lastLine(file) {
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(Math.min(4096, size));
  fs.readSync(fd, buf, 0, buf.length, size - buf.length);
  fs.closeSync(fd);
  const lines = buf.toString('latin1').split('\n');
  return lines[lines.length - 2];
}

async function ptyRun() {
  const { bytes, file, lines } = cfg;
  // On a pty every \n becomes \r\n (onlcr).
  const expectedBytes = bytes + lines;
  const errors = [];
  const t0 = now();
  if (cfg.impl === 'nodepty') {
    const pty = require(cfg.nodePty);
    let got = 0;
    let tail = '';
    const exit = await new Promise((resolve) => {
      const p = pty.spawn('head', ['-c', String(bytes), file], { cols: 80, rows: 24, env: process.env });
      p.onData((d) => {
        got += Buffer.byteLength(d, 'latin1');
        tail = (tail + d).slice(-256);
      });
      p.onExit(resolve);
    });
    const ms = now() - t0;
    return { ok: exit.exitCode === 0, errors, wallMs: ms, throughputMiBs: bytes / MiB / (ms / 1000), lostBytes: expectedBytes - got };
  }
  const { createTerminal } = require(path.resolve(cfg.nativePath));
  const text = cfg.impl === 'text';
  const t = await createTerminal(
    { command: 'head', args: ['-c', String(bytes), file], outputByteLimit: MiB },
    { pty: {}, ...(text ? { output: 'text' } : {}) },
  );
  const exit = await t.waitForExit();
  const out = await t.currentOutput();
  const ms = now() - t0;
  const written = t.outputBytes;
  await t.release();
  const want = lastLine(file);
  const got = text ? out.output.split('\n').filter((l) => l !== '').pop() : out.output.split('\r\n').slice(-2)[0];
  if (exit.exitCode !== 0) errors.push(`exit ${JSON.stringify(exit)}`);
  if (got !== want) errors.push(`last line ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  if (written !== expectedBytes) errors.push(`outputBytes ${written}, expected ${expectedBytes}`);
  return { ok: errors.length === 0, errors, wallMs: ms, throughputMiBs: bytes / MiB / (ms / 1000), lostBytes: expectedBytes - written };
}

/** The OpenHands/Strix design: a tmux session, send-keys, then capture-pane polled every 10 ms. */
async function tmuxSession(iterations) {
  const name = `acp-bench-${process.pid}`;
  const tmux = (...args) =>
    new Promise((resolve, reject) => execFile('tmux', args, { encoding: 'utf8' }, (err, out) => (err ? reject(err) : resolve(out))));
  const PS1 = '###PS1END###';
  execFileSync('tmux', ['-L', name, 'new-session', '-d', '-s', name, '-x', '160', '-y', '40', 'bash --norc --noprofile']);
  const t = (...args) => tmux('-L', name, ...args);
  try {
    await t('send-keys', '-t', name, `export PS1='${PS1}\\n'`, 'Enter');
    const prompts = async () => (await t('capture-pane', '-p', '-J', '-S', '-', '-t', name)).split(PS1).length - 1;
    while ((await prompts()) < 1) await sleep(10);
    const times = [];
    const errors = [];
    for (let i = 0; i < iterations; i++) {
      await t('send-keys', '-t', name, 'clear', 'Enter');
      await t('clear-history', '-t', name);
      while ((await prompts()) < 1) await sleep(10);
      const t0 = now();
      await t('send-keys', '-t', name, 'echo hi', 'Enter');
      let pane;
      for (;;) {
        pane = await t('capture-pane', '-p', '-J', '-S', '-', '-t', name);
        if (pane.split(PS1).length - 1 >= 2) break;
        await sleep(10);
      }
      times.push(now() - t0);
      if (!/\nhi\n/.test(pane)) errors.push(`pane without the output: ${JSON.stringify(pane.slice(-200))}`);
    }
    return { ok: errors.length === 0, errors: errors.slice(0, 2), medianMs: median(times) };
  } finally {
    await t('kill-server').catch(() => undefined);
  }
}

async function acpSession(iterations) {
  const { ShellSessions } = require(path.join(packageRoot(), 'lib'));
  const shells = new ShellSessions();
  try {
    await shells.execute({ command: 'true' }); // the shell's start is not a round trip
    const times = [];
    const errors = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      const r = await shells.execute({ command: 'echo hi' });
      times.push(now() - t0);
      if (r.content !== 'hi' || r.exitCode !== 0) errors.push(`result ${JSON.stringify(r)}`);
    }
    return { ok: errors.length === 0, errors: errors.slice(0, 2), medianMs: median(times) };
  } finally {
    await shells.closeAll();
  }
}

async function main() {
  let result;
  if (cfg.kind === 'pty') result = await ptyRun();
  else if (cfg.kind === 'sessions') result = cfg.impl === 'tmux' ? await tmuxSession(cfg.iterations) : await acpSession(cfg.iterations);
  else throw new Error(`unknown kind ${cfg.kind}`);
  process.stdout.write(`@@RESULT@@${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stdout.write(`@@RESULT@@${JSON.stringify({ ok: false, errors: [String(err && err.stack ? err.stack : err)] })}\n`);
    process.exit(0);
  },
);
