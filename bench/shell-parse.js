#!/usr/bin/env node
// Cost of the command policy's shell-line analysis (issue 19): the native tree-sitter-bash analysis
// per line over the shared corpus (__test__/fixtures/shell-corpus.ts), and the whole policy check
// (analysis, PATH lookups, rule matching) of a typical agent line under an allow list, whose median
// must stay under 0.1 ms. Needs lib/ (node scripts/build-ts.js) and the addon.
//   node bench/shell-parse.js           (also the `policy` scenario of `npm run bench`)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const TYPICAL = 'cd x && npm test 2>&1 | tail -50';

function loadCorpus() {
  const ts = require('typescript');
  const file = path.join(__dirname, '..', '__test__', 'fixtures', 'shell-corpus.ts');
  const js = ts.transpileModule(fs.readFileSync(file, 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
  const m = new Module(file);
  m._compile(js, file);
  return m.exports.SHELL_CORPUS.filter((c) => c.line !== undefined).map((c) => c.line);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Median over `rounds` runs of the mean µs per call of `fn` over `items`. */
function perCall(items, fn, rounds) {
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (const item of items) fn(item);
    runs.push(Number(process.hrtime.bigint() - t0) / 1e3 / items.length);
  }
  return median(runs);
}

/** Median over `rounds` runs of the mean µs per awaited call of `fn` over `items` (one after the other). */
async function perCallAsync(items, fn, rounds) {
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (const item of items) await fn(item);
    runs.push(Number(process.hrtime.bigint() - t0) / 1e3 / items.length);
  }
  return median(runs);
}

/**
 * Measures; `root` is the package root (lib/ and the addon). `policyMs` is the synchronous check (`checkCommand`,
 * the rebuild included); `policyAsyncMs` the host's (`checkCommandAsync`: the analysis on a libuv worker thread).
 */
async function measure(root = path.join(__dirname, '..')) {
  const { compileCommandPolicy, checkCommand, checkCommandAsync } = require(path.join(root, 'lib', 'policy'));
  const { shellCommandWords } = require(path.join(root, 'lib', 'shell-analysis'));
  const { loadNativeResolveProgram } = require(path.join(root, 'lib', 'native'));
  const policy = compileCommandPolicy({ allow: ['cd', 'npm', 'tail'] }, 'commandPolicy');
  const check = { command: TYPICAL, args: [], shellLine: true, cwd: undefined, path: process.env.PATH, resolve: loadNativeResolveProgram() };
  checkCommand(policy, check); // must pass (and warms up)
  const typical = Array(2000).fill(check);
  const policyUs = perCall(typical, (c) => checkCommand(policy, c), 31);
  if (checkCommand(policy, check).line === undefined) throw new Error('the check did not rebuild the line');
  const policyAsyncUs = await perCallAsync(Array(500).fill(check), (c) => checkCommandAsync(policy, c), 15);
  const analysisUs = perCall(Array(2000).fill(TYPICAL), (l) => shellCommandWords(l), 31);
  const lines = loadCorpus();
  const corpusUs = perCall(lines, (l) => shellCommandWords(l), 51);
  return { policyMs: policyUs / 1000, policyAsyncMs: policyAsyncUs / 1000, analysisUs, corpusUs, corpusLines: lines.length };
}

module.exports = { measure, TYPICAL };

if (require.main === module) {
  void measure().then((r) => {
  console.log(`policy check of \`${TYPICAL}\` (allow list, rebuild included, median): ${r.policyMs.toFixed(4)} ms; off the JS thread (the host's): ${r.policyAsyncMs.toFixed(4)} ms`);
  console.log(`analysis alone of that line: ${r.analysisUs.toFixed(1)} µs; ${r.corpusLines} corpus lines: ${r.corpusUs.toFixed(1)} µs per line`);
  console.log(`rss after: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
  });
}
