#!/usr/bin/env node
// Cost per shell line of the command-policy analysis (issue 9 item 6): the hand-written parser
// (lib/shellwords.js, synchronous) against sh-syntax (mvdan/sh as WASM, asynchronous), over the shared
// corpus in __test__/fixtures/shell-corpus.ts. Run `npx tsc -p tsconfig.build.json` first.
// node bench/shell-parse.js
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');
const { shellCommandWords } = require('../lib/shellwords');
const sh = require('sh-syntax');

function loadCorpus() {
  const file = path.join(__dirname, '..', '__test__', 'fixtures', 'shell-corpus.ts');
  const js = ts.transpileModule(fs.readFileSync(file, 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
  const m = new Module(file);
  m._compile(js, file);
  return m.exports.SHELL_CORPUS.filter((c) => c.line !== undefined).map((c) => c.line);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function perLine(lines, analyse, rounds) {
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (const line of lines) await analyse(line);
    runs.push(Number(process.hrtime.bigint() - t0) / 1e3 / lines.length);
  }
  return median(runs);
}

(async () => {
  const lines = loadCorpus();
  const opts = { variant: sh.LangVariant.LangBash, keepComments: false };
  const quiet = (p) => p.catch(() => undefined);
  const compiled = new WebAssembly.Module(fs.readFileSync(require.resolve('sh-syntax/main.wasm')));
  const precompiled = sh.getProcessor((imports) => WebAssembly.instantiate(compiled, imports));

  let t0 = process.hrtime.bigint();
  await quiet(sh.parse('true', opts));
  const firstCall = Number(process.hrtime.bigint() - t0) / 1e6;
  t0 = process.hrtime.bigint();
  const hand = await perLine(lines, (l) => shellCommandWords(l), 50);
  const fresh = await perLine(lines, (l) => quiet(sh.parse(l, opts)), 3);
  const pre = await perLine(lines, (l) => quiet(precompiled(l, opts)), 5);
  console.log(`${lines.length} corpus lines, median of runs, µs per line:`);
  console.log(`hand-written (sync) ${hand.toFixed(1)} | sh-syntax parse() ${fresh.toFixed(0)} | sh-syntax, module compiled once ${pre.toFixed(0)} | sh-syntax first call ${firstCall.toFixed(0)} ms`);
  console.log(`rss after: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
})();
