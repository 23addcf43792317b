#!/usr/bin/env node
// Runs every TypeScript code block of README.md and docs/*.md as a user would paste it into a fresh
// project (issue 10, item 8; issue 18). Usage: node scripts/readme-samples.js --run <project-dir>
// (without --run: lists the samples).
//
// The project must have acp-terminal, @agentclientprotocol/sdk 2.x, typescript, jest, ts-jest,
// @types/node and @types/jest installed (scripts/test-registry-install.js makes one from a registry).
// - A block fenced as ```js jest.config.js becomes the project's jest.config.js.
// - A block with `expect(` is a jest test: written as <doc>-<line>.test.ts and run with jest
//   (--detectOpenHandles; "did not exit" fails it). Files are named after the doc and line
//   (README.md:12 -> README-12, docs/api.md:80 -> docs-api-80).
// - A block fenced as ```ts sdk-1 is for the legacy SDK 0.x/1.x API: it runs in <project>/sdk-1, a
//   second project with acp-terminal and @agentclientprotocol/sdk@1 (installed here from the same
//   registry: the peer range must accept it).
// - Any other block is an ES module: written as <doc>-<line>.mts, type-checked with `tsc --strict`
//   (module nodenext, skipLibCheck false), compiled and run with node; it must exit 0 by itself (no
//   lingering timer or handle) within 60 s.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');
/** The documents whose samples run: README.md, then every page of docs/. */
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The fenced ts/js blocks of one document: `{ doc, line, name, lang, info, code }`. */
function samples(doc) {
  const text = fs.readFileSync(path.join(root, doc), 'utf8');
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript|js|javascript)\b(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith('```')) end++;
    const name = `${doc.replace(/\.md$/, '').replace(/\//g, '-')}-${start}`;
    out.push({ doc, line: start, name, lang: open[1], info: open[2].trim(), code: lines.slice(start, end).join('\n') + '\n' });
    i = end;
  }
  return out;
}

function run(cmd, args, cwd, timeout = 120_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.error) return { ok: false, out: `${out}\n${r.error.message}` };
  return { ok: r.status === 0, out };
}

function tsconfig(dir, files) {
  fs.writeFileSync(
    path.join(dir, 'tsconfig.readme.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'ESNext.Disposable', 'DOM'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'readme-out',
      },
      files,
    }),
  );
}

/** Type-checks, compiles and runs module samples in `dir`; returns failures. */
function runModules(dir, blocks) {
  const failures = [];
  const files = blocks.map((b) => `${b.name}.mts`);
  blocks.forEach((b, i) => fs.writeFileSync(path.join(dir, files[i]), b.code));
  tsconfig(dir, files);
  const tsc = run(process.execPath, [path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.readme.json'], dir);
  if (!tsc.ok) return [`tsc --strict on the samples (${blocks.map((b) => `${b.doc}:${b.line}`).join(', ')}):\n${tsc.out}`];
  for (const b of blocks) {
    const r = run(process.execPath, [path.join('readme-out', `${b.name}.mjs`)], dir, 60_000);
    if (!r.ok) failures.push(`${b.doc}:${b.line} failed (or did not exit within 60 s):\n${r.out}`);
    else process.stdout.write(`${b.doc}:${b.line} ok\n`);
  }
  return failures;
}

function main() {
  const i = process.argv.indexOf('--run');
  const dir = i > 0 ? path.resolve(process.argv[i + 1]) : undefined;
  const all = DOCS.flatMap(samples);
  if (!dir) {
    for (const s of all) process.stdout.write(`${s.doc}:${s.line} ${s.info || '(module)'}\n`);
    return;
  }
  const failures = [];
  // A block fenced as ```js jest.config.js is the jest config the test samples run with; README.md
  // and docs/acp-host.md show the same one.
  const configs = all.filter((s) => s.info === 'jest.config.js');
  if (configs.length === 0 || configs.some((c) => c.code !== configs[0].code)) {
    failures.push(`the \`\`\`js jest.config.js blocks must exist and be identical: ${configs.map((c) => `${c.doc}:${c.line}`).join(', ')}`);
  }
  for (const c of configs) fs.writeFileSync(path.join(dir, 'jest.config.js'), c.code);
  const tests = all.filter((s) => s.code.includes('expect('));
  const legacy = all.filter((s) => s.info === 'sdk-1');
  const modules = all.filter((s) => !tests.includes(s) && !legacy.includes(s) && !configs.includes(s));
  failures.push(...runModules(dir, modules));

  for (const t of tests) {
    const file = `${t.name}.test.ts`;
    fs.writeFileSync(path.join(dir, file), t.code);
    const r = run(process.execPath, [path.join(dir, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci', '--detectOpenHandles', file], dir);
    if (!r.ok || /did not exit|open handle/i.test(r.out)) failures.push(`${t.doc}:${t.line} (jest):\n${r.out}`);
    else process.stdout.write(`${t.doc}:${t.line} ok (jest)\n`);
  }

  if (legacy.length > 0) {
    const legacyDir = path.join(dir, 'sdk-1');
    fs.mkdirSync(legacyDir, { recursive: true });
    fs.writeFileSync(path.join(legacyDir, 'package.json'), JSON.stringify({ name: 'legacy-app', version: '1.0.0', private: true }));
    fs.copyFileSync(path.join(dir, '.npmrc'), path.join(legacyDir, '.npmrc'));
    const devDeps = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).devDependencies ?? {};
    const tools = ['typescript', '@types/node'].map((n) => `${n}@${devDeps[n] ?? 'latest'}`);
    const install = run('npm', ['install', '--no-audit', '--no-fund', 'acp-terminal', '@agentclientprotocol/sdk@1', ...tools], legacyDir, 300_000);
    if (!install.ok) failures.push(`npm install acp-terminal @agentclientprotocol/sdk@1 failed:\n${install.out}`);
    else failures.push(...runModules(legacyDir, legacy));
  }

  if (failures.length > 0) {
    process.stderr.write(`${failures.join('\n\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`${all.length} samples of ${DOCS.join(', ')} ran\n`);
}

// Also a module: __test__/docs-replacing.test.ts type-checks one page's samples the same way.
module.exports = { samples, tsconfig };
if (require.main === module) main();
