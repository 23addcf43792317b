#!/usr/bin/env node
// End-to-end release test (issue 10): a real registry (Verdaccio, 127.0.0.1, temp storage), the release
// command `npm run publish:registry -- <url>`, then a fresh project in a temp dir that installs
// `acp-terminal @agentclientprotocol/sdk` from that registry with cargo and rustc off PATH, and checks:
// CommonJS require, ES module import, a command end to end, the pure-JS parts without the native package
// (and its error), `tsc --strict` under `module: nodenext` and `moduleResolution: bundler` with and
// without the SDK (`skipLibCheck: false`), a jest + ts-jest suite with the README's minimal config
// (`--detectOpenHandles`, no "did not exit"), the code samples of README.md and docs/, and the glibc symbol versions of
// the installed binary (Linux gnu: nothing above 2.17).
//
// Usage: node scripts/test-registry-install.js [--skip-build] [--keep]
// Prints "N passed, N failed" as its last line; exits non-zero on any failure.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { spawn, spawnSync } = require('node:child_process');
const { platformId } = require('../platforms.js');
const { jestRecipe } = require('./readme-samples.js');

const root = path.resolve(__dirname, '..');
const fixture = path.join(__dirname, 'install-fixture');
const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const argv = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-terminal-registry-'));
const pathMirrors = fs.mkdtempSync(path.join('/var/tmp', 'acp-terminal-registry-path-'));
const results = [];
let verdaccio;

function log(line) {
  process.stdout.write(`${line}\n`);
}

function sh(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  return { status: r.error ? -1 : r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}` };
}

/** Runs one named check; a failure is recorded with its output, and the run goes on. */
function check(name, fn) {
  const started = Date.now();
  try {
    fn();
    results.push({ name, ok: true });
    log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    results.push({ name, ok: false });
    log(`FAIL ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)\n${String(error.message ?? error).replace(/^/gm, '     ')}`);
  }
}

function expectOk(r, what) {
  if (r.status !== 0) throw new Error(`${what} exited with ${r.status}\n${r.out.slice(-6000)}`);
  return r.out;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function request(method, url, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(url, { method, headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function startVerdaccio() {
  const port = await freePort();
  const uplink = spawnSync('npm', ['config', 'get', 'registry'], { cwd: tmp, encoding: 'utf8' }).stdout.trim() || 'https://registry.npmjs.org/';
  const config = path.join(tmp, 'verdaccio.yaml');
  fs.writeFileSync(
    config,
    [
      `storage: ${path.join(tmp, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${path.join(tmp, 'htpasswd')}`,
      '    max_users: 10',
      // JWT tokens: the default legacy tokens run bcrypt on every request (slow on a busy machine).
      'security:',
      '  api:',
      '    jwt:',
      '      sign:',
      '        expiresIn: 1d',
      'uplinks:',
      '  upstream:',
      `    url: ${uplink}`,
      '    timeout: 120s',
      'packages:',
      // Ours come only from this registry (never from the uplink).
      "  'acp-terminal':",
      '    access: $all',
      '    publish: $authenticated',
      "  'acp-terminal-*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: upstream',
      'log: { type: stdout, format: pretty, level: warn }',
      `listen: 127.0.0.1:${port}`,
      '',
    ].join('\n'),
  );
  const bin = path.join(root, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  verdaccio = spawn(process.execPath, [bin, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  verdaccio.stdout.on('data', (c) => (output += c));
  verdaccio.stderr.on('data', (c) => (output += c));
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 300; i++) {
    if (verdaccio.exitCode !== null) throw new Error(`verdaccio exited: ${output}`);
    try {
      const r = await request('GET', `${url}-/ping`);
      if (r.status === 200) return url;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`verdaccio did not start: ${output}`);
}

async function addUser(url) {
  const name = 'ci';
  const r = await request('PUT', `${url}-/user/org.couchdb.user:${name}`, { name, password: 'ci-password-1', type: 'user', roles: [] });
  const token = JSON.parse(r.text).token;
  if (!token) throw new Error(`verdaccio did not issue a token: ${r.status} ${r.text}`);
  const npmrc = path.join(tmp, 'npmrc');
  const hostPart = url.replace(/^https?:/, '');
  fs.writeFileSync(npmrc, `registry=${url}\n${hostPart}:_authToken=${token}\n`);
  return npmrc;
}

/**
 * PATH with cargo and rustc removed (the consumer has no Rust). A directory that holds them besides
 * other tools (/usr/bin with Debian's rustc) is replaced by a directory of links to everything else.
 */
function pathWithoutRust() {
  const rust = /^(cargo|rustc|rustup|rustdoc|cargo-.*)$/;
  return process.env.PATH.split(path.delimiter)
    .map((dir, i) => {
      if (!['cargo', 'rustc'].some((tool) => fs.existsSync(path.join(dir, tool)))) return dir;
      // Outside /tmp: a sandboxed command (docs/sandbox.md's sample) must find its programs, and the
      // sandbox hides the host's /tmp.
      const mirror = path.join(pathMirrors, `path-${i}`);
      fs.mkdirSync(mirror, { recursive: true });
      for (const name of fs.readdirSync(dir)) {
        if (!rust.test(name)) fs.symlinkSync(path.join(dir, name), path.join(mirror, name));
      }
      return mirror;
    })
    .join(path.delimiter);
}

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function tsconfig(app, name, compilerOptions, files) {
  writeJson(path.join(app, name), {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022', 'ESNext.Disposable'],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
      ...compilerOptions,
    },
    files,
  });
}

async function main() {
  const started = Date.now();
  const url = await startVerdaccio();
  log(`verdaccio on ${url} (storage ${tmp})`);
  const npmrc = await addUser(url);
  const npmEnv = { ...process.env, NPM_CONFIG_USERCONFIG: npmrc, npm_config_userconfig: npmrc };

  check('npm run publish:registry publishes the platform package and the main package', () => {
    const args = ['run', 'publish:registry', '--', url, ...(argv.includes('--skip-build') ? ['--skip-build'] : [])];
    expectOk(sh('npm', args, { cwd: root, env: npmEnv, stdio: ['ignore', 'pipe', 'pipe'] }), 'npm run publish:registry');
    const view = expectOk(sh('npm', ['view', 'acp-terminal', 'optionalDependencies', '--json', '--registry', url], { env: npmEnv }), 'npm view');
    const deps = JSON.parse(view.slice(view.indexOf('{')));
    if (deps[`acp-terminal-${platformId()}`] !== rootPkg.version) throw new Error(`optionalDependencies: ${view}`);
  });

  const app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  for (const file of fs.readdirSync(fixture)) fs.copyFileSync(path.join(fixture, file), path.join(app, file));
  writeJson(path.join(app, 'package.json'), { name: 'fresh-app', version: '1.0.0', private: true });
  fs.writeFileSync(path.join(app, '.npmrc'), `registry=${url}\n`);
  const env = { ...process.env, PATH: pathWithoutRust(), NPM_CONFIG_USERCONFIG: path.join(app, '.npmrc'), npm_config_userconfig: path.join(app, '.npmrc') };
  const run = (cmd, args, what = `${cmd} ${args.join(' ')}`) => expectOk(sh(cmd, args, { cwd: app, env }), what);
  // The README's jest recipe, as a user pastes it: its install line (not pinned to our devDependencies).
  const recipe = jestRecipe();

  check('npm install acp-terminal @agentclientprotocol/sdk with no cargo/rustc on PATH', () => {
    for (const tool of ['cargo', 'rustc']) {
      if (sh('sh', ['-c', `command -v ${tool}`], { env }).status === 0) throw new Error(`${tool} is still on PATH`);
    }
    run('npm', ['install', '--no-audit', '--no-fund', 'acp-terminal', '@agentclientprotocol/sdk']);
    run('npm', [...recipe.npmArgs, '--no-audit', '--no-fund'], `the README's jest recipe: npm ${recipe.npmArgs.join(' ')}`);
    const versions = ['jest', 'ts-jest', 'typescript'].map((n) => `${n} ${JSON.parse(fs.readFileSync(path.join(app, 'node_modules', n, 'package.json'), 'utf8')).version}`);
    log(`     the recipe installed ${versions.join(', ')}`);
    const installed = path.join(app, 'node_modules', `acp-terminal-${platformId()}`);
    if (!fs.existsSync(installed)) throw new Error(`the platform package ${installed} was not installed`);
  });

  check('CommonJS require() and a command end to end', () => run('node', ['cjs.cjs']));
  check('ES module import and a command through TerminalHost', () => run('node', ['esm.mjs']));

  const platformDir = path.join(app, 'node_modules', `acp-terminal-${platformId()}`);
  check('binary needs glibc <= 2.17 (Linux gnu)', () => {
    if (!platformId().endsWith('-gnu')) return;
    const binary = fs.readdirSync(platformDir).find((f) => f.endsWith('.node'));
    expectOk(sh(path.join(root, 'scripts', 'check-glibc.sh'), [path.join(platformDir, binary), '2.17']), 'check-glibc.sh');
  });

  check('the platform package ships the static Linux servers built here, and a backend finds each there', () => {
    const built = [
      ['x64', 'x86_64-unknown-linux-musl'],
      ['arm64', 'aarch64-unknown-linux-musl'],
    ].filter(([, triple]) => fs.existsSync(path.join(root, 'target', triple, 'release', 'acp-terminal-server')));
    if (built.length === 0) throw new Error('no static server is built (bash scripts/remote/build-server.sh musl / musl-arm64)');
    const code = `const { backends } = require('acp-terminal');
      const fs = require('fs');
      for (const arch of ${JSON.stringify(built.map(([arch]) => arch))}) {
        const found = backends.findServerBinary(arch);
        const want = require('path').join(${JSON.stringify(platformDir)}, backends.serverFileName(arch));
        if (found !== want) throw new Error(arch + ': found ' + found + ', not ' + want);
        if (backends.elfArchOf(found) !== arch) throw new Error(found + ' is not a linux-' + arch + ' executable');
        if ((fs.statSync(found).mode & 0o111) === 0) throw new Error(found + ' is not executable');
      }`;
    const envNoOverride = { ...env };
    delete envNoOverride.ACP_TERMINAL_SERVER_BINARY;
    expectOk(sh('node', ['-e', code], { cwd: app, env: envNoOverride }), 'findServerBinary in the installed package');
    log(`     linux-${built.map(([arch]) => arch).join(', linux-')} found in the installed platform package`);
  });

  check('without the platform package: pure-JS parts load, the core says what to do', () => {
    const aside = `${platformDir}.aside`;
    fs.renameSync(platformDir, aside);
    try {
      run('node', ['no-native.cjs', platformId()]);
    } finally {
      fs.renameSync(aside, platformDir);
    }
  });

  const nodenext = { module: 'nodenext', moduleResolution: 'nodenext' };
  const bundler = { module: 'esnext', moduleResolution: 'bundler' };
  tsconfig(app, 'tsconfig.nodenext.json', nodenext, ['with-sdk.ts']);
  tsconfig(app, 'tsconfig.bundler.json', bundler, ['with-sdk.ts']);
  tsconfig(app, 'tsconfig.nodenext-nosdk.json', nodenext, ['without-sdk.ts']);
  tsconfig(app, 'tsconfig.bundler-nosdk.json', bundler, ['without-sdk.ts']);
  const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  check('tsc --strict, module nodenext, with the SDK', () => run('node', [tsc, '-p', 'tsconfig.nodenext.json']));
  check('tsc --strict, moduleResolution bundler, with the SDK', () => run('node', [tsc, '-p', 'tsconfig.bundler.json']));

  // jest's config and tsconfig: the README recipe's, as pasted.
  fs.writeFileSync(path.join(app, 'tsconfig.json'), recipe.tsconfig);
  fs.writeFileSync(path.join(app, 'jest.config.js'), recipe.jestConfig);
  check("tsc --noEmit on the recipe's tsconfig (the jest suite imports acp-terminal and the SDK)", () => run('node', [tsc, '--noEmit', '-p', 'tsconfig.json']));
  check("tsc of the newest TypeScript (what editors run, unpinned) on the recipe's tsconfig", () => {
    const latest = path.join(tmp, 'typescript-latest');
    fs.mkdirSync(latest);
    fs.writeFileSync(path.join(latest, 'package.json'), '{"private":true}\n');
    fs.copyFileSync(path.join(app, '.npmrc'), path.join(latest, '.npmrc'));
    expectOk(sh('npm', ['install', '--no-audit', '--no-fund', 'typescript@latest'], { cwd: latest, env }), 'npm install typescript@latest');
    const bin = path.join(latest, 'node_modules', 'typescript', 'bin', 'tsc');
    log(`     ${expectOk(sh(bin, ['--version'], { cwd: app, env }), 'tsc --version').trim()}`);
    run(bin, ['--noEmit', '-p', 'tsconfig.json']);
  });
  check('jest + ts-jest with the recipe, --detectOpenHandles, no "did not exit", no warning', () => {
    const out = run('node', [path.join(app, 'node_modules', 'jest', 'bin', 'jest.js'), '--detectOpenHandles', '--ci']);
    if (/did not exit|open handle/i.test(out)) throw new Error(`jest reported a leak:\n${out}`);
    if (/\bWARN\b|esModuleInterop|TS151002/.test(out)) throw new Error(`the recipe makes ts-jest warn:\n${out}`);
    if (!/Tests:\s+1 passed, 1 total/.test(out)) throw new Error(`unexpected jest summary:\n${out}`);
  });

  check('README.md and docs/ samples run in the fresh project', () => {
    run('node', [path.join(root, 'scripts', 'readme-samples.js'), '--run', app]);
  });

  const sdkDir = path.join(app, 'node_modules', '@agentclientprotocol');
  fs.renameSync(sdkDir, `${sdkDir}.aside`);
  try {
    check('tsc --strict, module nodenext, without the SDK (no TS2307)', () => run('node', [tsc, '-p', 'tsconfig.nodenext-nosdk.json']));
    check('tsc --strict, moduleResolution bundler, without the SDK (no TS2307)', () => run('node', [tsc, '-p', 'tsconfig.bundler-nosdk.json']));
    check('without the SDK, createTestClient fails with ERR_SDK_NOT_FOUND', () =>
      run('node', ['-e', "require('acp-terminal').createTestClient().then(() => process.exit(1), (e) => { if (e.code !== 'ERR_SDK_NOT_FOUND') { console.error(e); process.exit(1); } })"]),
    );
  } finally {
    fs.renameSync(`${sdkDir}.aside`, sdkDir);
  }
  log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main()
  .catch((error) => {
    results.push({ name: 'setup', ok: false });
    log(`FAIL setup\n${error.stack ?? error}`);
  })
  .finally(() => {
    if (verdaccio && verdaccio.exitCode === null) verdaccio.kill('SIGTERM');
    if (!argv.includes('--keep')) {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(pathMirrors, { recursive: true, force: true });
    } else log(`kept ${tmp} and ${pathMirrors}`);
    const passed = results.filter((r) => r.ok).length;
    log(`${passed} passed, ${results.length - passed} failed`);
    process.exitCode = results.length > 0 && passed === results.length ? 0 : 1;
  });
