#!/usr/bin/env node
// Runs every TypeScript code block of README.md and docs/*.md as a user would paste it into a fresh
// project (issue 10, item 8; issue 18). Usage: node scripts/readme-samples.js --run <project-dir>
// (without --run: lists the samples).
//
// The project must have acp-terminal, @agentclientprotocol/sdk 2.x, typescript, jest, ts-jest,
// @types/node and @types/jest installed (scripts/test-registry-install.js makes one from a registry).
// - A block fenced as ```js jest.config.js becomes the project's jest.config.js, one fenced as
//   ```json tsconfig.json its tsconfig.json (the jest recipe's; README.md and docs/acp-host.md show the
//   same ones). The recipe's ```sh jest-install line is run by scripts/test-registry-install.js.
// - A block with `expect(` is a jest test: written as <doc>-<line>.test.ts and run with jest
//   (--detectOpenHandles; "did not exit" fails it). Files are named after the doc and line
//   (README.md:12 -> README-12, docs/api.md:80 -> docs-api-80).
// - A block fenced as ```ts sdk-1 is for the legacy SDK 0.x/1.x API: it runs in <project>/sdk-1, a
//   second project for each legacy SDK line the peer range declares (LEGACY_SDKS: 1.x and 0.14.x),
//   with acp-terminal and that SDK installed here from the same registry (the peer range must accept it).
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

/**
 * The legacy SDK versions the ```ts sdk-1 samples run against (the peer range must accept each), and
 * whether tsc checks the SDK's own declarations: 0.14's do not compile under `module: nodenext`
 * (`./types.gen` without an extension, TS2307), so there `skipLibCheck` is on (the samples' use of both packages is still checked).
 *
 */
const LEGACY_SDKS = [
  { version: '1', skipLibCheck: false },
  { version: '0.14', skipLibCheck: true },
];

/** The body of every block fenced exactly as ```<lang> <info> in the documents (e.g. `sh`, `jest-install`). */
function fenced(lang, info) {
  const out = [];
  for (const doc of DOCS) {
    const lines = fs.readFileSync(path.join(root, doc), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() !== `\`\`\`${lang} ${info}`) continue;
      let end = i + 1;
      while (end < lines.length && !lines[end].startsWith('```')) end++;
      out.push({ doc, line: i + 2, code: lines.slice(i + 1, end).join('\n') + '\n' });
      i = end;
    }
  }
  return out;
}

/**
 * The jest recipe of README.md (and docs/acp-host.md, which must show the same): its install command's
 * arguments after `npm`, and its tsconfig.json. Throws when the blocks are missing or differ.
 */
function jestRecipe() {
  const one = (lang, info) => {
    const blocks = fenced(lang, info);
    if (blocks.length === 0 || blocks.some((b) => b.code !== blocks[0].code)) {
      throw new Error(`the \`\`\`${lang} ${info} blocks must exist and be identical: ${blocks.map((b) => `${b.doc}:${b.line}`).join(', ')}`);
    }
    return blocks[0].code;
  };
  const install = one('sh', 'jest-install').trim();
  if (!/^npm install /.test(install) || /[;&|`$]/.test(install)) throw new Error(`the jest-install block must be one npm install line: ${install}`);
  return { npmArgs: install.split(/\s+/).slice(1), tsconfig: one('json', 'tsconfig.json'), jestConfig: one('js', 'jest.config.js') };
}

function run(cmd, args, cwd, timeout = 120_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.error) return { ok: false, out: `${out}\n${r.error.message}` };
  return { ok: r.status === 0, out };
}

function tsconfig(dir, files, skipLibCheck = false) {
  fs.writeFileSync(
    path.join(dir, 'tsconfig.readme.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'ESNext.Disposable', 'DOM'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck,
        types: ['node'],
        outDir: 'readme-out',
      },
      files,
    }),
  );
}

/** Type-checks, compiles and runs module samples in `dir`; returns failures. */
function runModules(dir, blocks, skipLibCheck = false) {
  const failures = [];
  const files = blocks.map((b) => `${b.name}.mts`);
  blocks.forEach((b, i) => fs.writeFileSync(path.join(dir, files[i]), b.code));
  tsconfig(dir, files, skipLibCheck);
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
  try {
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), jestRecipe().tsconfig);
  } catch (error) {
    failures.push(error.message);
  }
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

  for (const { version, skipLibCheck } of legacy.length > 0 ? LEGACY_SDKS : []) {
    const legacyDir = path.join(dir, `sdk-${version}`);
    fs.mkdirSync(legacyDir, { recursive: true });
    fs.writeFileSync(path.join(legacyDir, 'package.json'), JSON.stringify({ name: 'legacy-app', version: '1.0.0', private: true }));
    fs.copyFileSync(path.join(dir, '.npmrc'), path.join(legacyDir, '.npmrc'));
    const devDeps = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).devDependencies ?? {};
    const tools = ['typescript', '@types/node'].map((n) => `${n}@${devDeps[n] ?? 'latest'}`);
    // A plain install: npm refuses (ERESOLVE) when the peer range does not accept this SDK.
    const install = run('npm', ['install', '--no-audit', '--no-fund', 'acp-terminal', `@agentclientprotocol/sdk@${version}`, ...tools], legacyDir, 300_000);
    if (!install.ok) failures.push(`npm install acp-terminal @agentclientprotocol/sdk@${version} failed:\n${install.out}`);
    else failures.push(...runModules(legacyDir, legacy, skipLibCheck));
  }

  if (failures.length > 0) {
    process.stderr.write(`${failures.join('\n\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`${all.length} samples of ${DOCS.join(', ')} ran\n`);
}

// Also a module: __test__/docs-replacing.test.ts type-checks one page's samples the same way.
module.exports = { samples, tsconfig, jestRecipe, LEGACY_SDKS };
if (require.main === module) main();
