#!/usr/bin/env node
// `npm run publish:registry -- <registry-url> [--skip-build]`
//
// Builds this machine's platform package (npm/<platform>/: the .node file and the static Linux servers
// built before by scripts/remote/build-server.sh musl / musl-arm64) and publishes it and the
// main package, whose optionalDependencies name it at the exact version, to the given registry. Auth is
// npm's own (a `//host/:_authToken=` line in the user's .npmrc / NPM_CONFIG_USERCONFIG).
//
// The binary is a release build. Linux gnu targets link against glibc 2.17 through `cargo zigbuild`
// (`napi build -x --target <triple>.2.17`; zig and cargo-zigbuild come from scripts/ci-install-tools.sh,
// found on PATH or in .tools/venv/bin). `--skip-build` publishes the binary the last run built
// (target/publish/), failing when there is none.
//
// The full multi-platform release is the CI workflow's publish job (`napi artifacts`, then
// `npm publish`, whose `prepublishOnly` runs `napi prepublish`, filling optionalDependencies for every target).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { platformId, platformOfTriple } = require('../platforms.js');

const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function fail(message) {
  console.error(`publish:registry: ${message}`);
  process.exit(1);
}

function run(cmd, args, options = {}) {
  console.log(`+ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args[0]} exited with ${r.status}`);
}

/** This machine's napi platform id and Rust target triple (the one the release builds). */
function platform() {
  const id = platformId();
  const target = pkg.napi.targets.find((t) => platformOfTriple(t) === id);
  if (!target) fail(`${id} is not a release target (napi.targets: ${pkg.napi.targets.join(', ')})`);
  // Linux gnu binaries are linked against glibc 2.17 (cargo zigbuild).
  return { id, triple: target.endsWith('-linux-gnu') ? `${target}.2.17` : target };
}

function withTools(env) {
  const venvBin = path.join(process.env.ACP_TOOLS_DIR ?? path.join(root, '.tools'), 'venv', 'bin');
  return fs.existsSync(venvBin) ? { ...env, PATH: `${venvBin}${path.delimiter}${env.PATH}` } : env;
}

function onPath(name, env) {
  return env.PATH.split(path.delimiter).some((dir) => fs.existsSync(path.join(dir, name)));
}

function build({ id, triple }, outDir) {
  const env = withTools(process.env);
  const args = ['build', '--platform', '--release', '--target', triple, '--output-dir', outDir, '--no-js'];
  if (triple.endsWith('.2.17')) {
    for (const tool of ['zig', 'cargo-zigbuild']) {
      if (!onPath(tool, env)) fail(`${tool} not found: run scripts/ci-install-tools.sh (glibc 2.17 builds need it)`);
    }
    args.push('--cross-compile');
  }
  fs.mkdirSync(outDir, { recursive: true });
  run(process.execPath, [path.join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js'), ...args], { env });
  const binary = path.join(outDir, `${pkg.napi.binaryName}.${id}.node`);
  if (!fs.existsSync(binary)) fail(`the build did not produce ${binary}`);
  return binary;
}

function publish(dir, registry) {
  run('npm', ['publish', dir, '--registry', registry, '--ignore-scripts', '--access', 'public']);
}

function main() {
  const argv = process.argv.slice(2);
  const registry = argv.find((a) => !a.startsWith('--'));
  if (!registry || !/^https?:\/\//.test(registry)) fail('usage: npm run publish:registry -- <registry-url> [--skip-build]');
  const target = platform();
  const outDir = path.join(root, 'target', 'publish');
  const binary = argv.includes('--skip-build') ? path.join(outDir, `${pkg.napi.binaryName}.${target.id}.node`) : build(target, outDir);
  if (!fs.existsSync(binary)) fail(`no binary at ${binary}: run without --skip-build`);
  if (!fs.existsSync(path.join(root, 'lib', 'index.js'))) run('npm', ['run', 'build:ts']);

  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-terminal-publish-'));
  try {
    // The platform package: npm/<platform>/package.json (napi create-npm-dirs) and the binary only.
    const platformDir = path.join(stage, target.id);
    fs.mkdirSync(platformDir);
    const platformPkg = JSON.parse(fs.readFileSync(path.join(root, 'npm', target.id, 'package.json'), 'utf8'));
    platformPkg.version = pkg.version;
    fs.writeFileSync(path.join(platformDir, 'package.json'), `${JSON.stringify(platformPkg, null, 2)}\n`);
    fs.copyFileSync(binary, path.join(platformDir, path.basename(binary)));
    // The static Linux servers built here (scripts/remote/build-server.sh musl, musl-arm64), as the release
    // ships both in every platform package (docs/remote.md).
    for (const [arch, triple] of [
      ['x64', 'x86_64-unknown-linux-musl'],
      ['arm64', 'aarch64-unknown-linux-musl'],
    ]) {
      const server = path.join(root, 'target', triple, 'release', 'acp-terminal-server');
      const name = `acp-terminal-server.linux-${arch}-musl`;
      if (!fs.existsSync(server)) continue;
      if (!(platformPkg.files ?? []).includes(name)) fail(`npm/${target.id}/package.json's files do not list ${name}`);
      fs.copyFileSync(server, path.join(platformDir, name));
      fs.chmodSync(path.join(platformDir, name), 0o755);
      console.log(`the platform package ships ${name}`);
    }
    fs.copyFileSync(path.join(root, 'LICENSE'), path.join(platformDir, 'LICENSE'));
    publish(platformDir, registry);

    // The main package: the files `npm pack` would take, no binary, optionalDependencies on the above.
    const mainDir = path.join(stage, 'main');
    const listed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
    if (listed.status !== 0) fail(`npm pack --dry-run failed: ${listed.stderr}`);
    for (const { path: file } of JSON.parse(listed.stdout)[0].files) {
      if (file.endsWith('.node')) continue;
      fs.mkdirSync(path.dirname(path.join(mainDir, file)), { recursive: true });
      fs.copyFileSync(path.join(root, file), path.join(mainDir, file));
    }
    const mainPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    mainPkg.optionalDependencies = { [platformPkg.name]: pkg.version };
    delete mainPkg.scripts;
    delete mainPkg.devDependencies;
    delete mainPkg.overrides;
    fs.writeFileSync(path.join(mainDir, 'package.json'), `${JSON.stringify(mainPkg, null, 2)}\n`);
    publish(mainDir, registry);
    console.log(`published ${platformPkg.name}@${pkg.version} and ${pkg.name}@${pkg.version} to ${registry}`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

main();
