#!/usr/bin/env node
// Builds the native addon when it is missing or older than its Rust sources.
// Runs as `prepare` (so `npm install` on a fresh clone builds it) and as `pretest`.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { platformId } = require('../platforms.js');

const root = path.resolve(__dirname, '..');
const binary = path.join(root, `acp-terminal.${platformId()}.node`);

function newestSource() {
  let newest = 0;
  const visit = (p) => {
    const st = fs.statSync(p);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) visit(path.join(p, e));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['src', 'Cargo.toml', 'Cargo.lock', 'build.rs']) {
    const full = path.join(root, p);
    if (fs.existsSync(full)) visit(full);
  }
  return newest;
}

const stale = !fs.existsSync(binary) || fs.statSync(binary).mtimeMs < newestSource();
if (!stale && !process.argv.includes('--force')) process.exit(0);
const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' });
if (cargo.error || cargo.status !== 0) {
  console.error(
    `acp-terminal: building from source needs Rust: cargo was not found on PATH, so ${path.basename(binary)} cannot be built.\n` +
      'This happens when installing from a git URL or a source checkout. Install the published package instead\n' +
      '(`npm install acp-terminal`: prebuilt binaries, no Rust), or install Rust (https://rustup.rs) and retry.',
  );
  process.exit(1);
}
console.log(`acp-terminal: building the native addon (${path.basename(binary)})`);
const napi = path.join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js');
const r = spawnSync(process.execPath, [napi, 'build', '--platform', '--release', '--no-js'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
