// Release tooling: the glibc symbol-version check, the CI workflow's targets, and a source build
// without Rust (what `npm install git+...` runs) failing with a clear message.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeIf } from '../fixtures/require-feature';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { napi: { targets: string[] } };

// Only meaningful where binaries link against glibc (not on musl or macOS runners).
const glibc = typeof (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime === 'string';

describeIf('glibc', glibc, 'not a glibc system')('scripts/check-glibc.sh (on a glibc system binary)', () => {
  const check = (max: string) => spawnSync('bash', [path.join(root, 'scripts', 'check-glibc.sh'), fs.realpathSync('/bin/ls'), max], { encoding: 'utf8' });

  test('fails on a binary that needs a newer glibc than allowed, naming the symbols', () => {
    const r = check('2.2');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/needs glibc 2\.\d+ \(above 2\.2\); symbols:\n {2}\S+ \(GLIBC_2\.\d+\)/);
  });

  test('passes when every needed version is at most the maximum', () => {
    const r = check('99.0');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/needs at most glibc 2\.\d+ \(<= 99\.0\)/);
  });
});

test('the CI workflow builds exactly napi.targets, Linux gnu ones against glibc 2.17', () => {
  const workflow = fs.readFileSync(path.join(root, '.github', 'workflows', 'CI.yml'), 'utf8');
  const build = workflow.slice(workflow.indexOf('\n  build:'), workflow.indexOf('\n  test-macos:'));
  const targets = [...build.matchAll(/^\s+target: (\S+)$/gm)].map((m) => m[1]);
  expect([...targets].sort()).toEqual([...pkg.napi.targets].sort());
  for (const t of targets.filter((x) => x!.endsWith('-linux-gnu'))) expect(build).toContain(`--target ${t}.2.17 -x`);
  expect(workflow).not.toMatch(/uses: actions\/(checkout|setup-node|cache)@v[1-4]\b|upload-artifact@v[1-5]\b|download-artifact@v[1-6]\b/);
});

test('the CI workflow tests both Windows targets on Windows runners of their CPU (Node 20, 22, 24) before publishing', () => {
  const workflow = fs.readFileSync(path.join(root, '.github', 'workflows', 'CI.yml'), 'utf8');
  const start = workflow.indexOf('\n  test-windows:');
  expect(start).toBeGreaterThan(0);
  const job = workflow.slice(start, workflow.indexOf('\n  test-linux:', start));
  const runners = [...job.matchAll(/- host: (\S+)\n\s+target: (\S+)\n\s+architecture: (\S+)/g)].map((m) => m.slice(1).join(' '));
  expect(runners).toEqual(['windows-latest x86_64-pc-windows-msvc x64', 'windows-11-arm aarch64-pc-windows-msvc arm64']);
  expect(pkg.napi.targets.filter((t) => t.endsWith('-windows-msvc')).sort()).toEqual(['aarch64-pc-windows-msvc', 'x86_64-pc-windows-msvc']);
  expect(job).toMatch(/node:\n\s+- '20'\n\s+- '22'\n\s+- '24'\n/);
  expect(job).toContain('name: bindings-${{ matrix.settings.target }}');
  expect(job).toMatch(/run: cargo test\n/);
  expect(job).toMatch(/run: node --test .*__test__\/windows\/\*\.test\.mjs\n/);
  const publish = workflow.slice(workflow.indexOf('\n  publish:'));
  expect(publish).toMatch(/needs:(\n\s+- \S+)*\n\s+- test-windows\n/);
});

test('Windows msvc builds link the C runtime statically (no Visual C++ Redistributable needed to load the addon)', () => {
  const config = fs.readFileSync(path.join(root, '.cargo', 'config.toml'), 'utf8');
  expect(config).toMatch(/^\[target\.'cfg\(target_env = "msvc"\)'\]\nrustflags = \["-C", "target-feature=\+crt-static"\]$/m);
});

test('.ci/run builds the Windows addon and runs its suites under Wine after npm test, then check-targets', () => {
  const run = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
  const at = (line: string) => {
    const i = run.indexOf(`\n${line}\n`);
    expect(i).toBeGreaterThan(0);
    return i;
  };
  expect(at('npm test')).toBeLessThan(at('npm run build:windows'));
  expect(at('npm run build:windows')).toBeLessThan(at('npm run test:windows'));
  expect(at('npm run test:windows')).toBeLessThan(at('npm run test:windows:rust'));
  expect(at('npm run test:windows:rust')).toBeLessThan(at('bash scripts/check-targets.sh'));
});

test('scripts/check-targets.sh checks both Windows msvc targets by default', () => {
  const script = fs.readFileSync(path.join(root, 'scripts', 'check-targets.sh'), 'utf8');
  const defaults = /^ {2}TARGETS=\(([^)]*)\)\n/m.exec(script)?.[1]?.split(/\s+/).filter(Boolean);
  expect(defaults).toEqual(expect.arrayContaining(['x86_64-pc-windows-msvc', 'aarch64-pc-windows-msvc']));
});

test('a source build without cargo (a git install on a machine without Rust) stops with a clear message', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-terminal-nocargo-'));
  try {
    fs.mkdirSync(path.join(tmp, 'scripts'));
    fs.mkdirSync(path.join(tmp, 'src'));
    fs.copyFileSync(path.join(root, 'scripts', 'ensure-built.js'), path.join(tmp, 'scripts', 'ensure-built.js'));
    // What it reads the platform id with (a checkout has both).
    for (const f of ['platforms.js', 'package.json']) fs.copyFileSync(path.join(root, f), path.join(tmp, f));
    fs.writeFileSync(path.join(tmp, 'src', 'lib.rs'), '');
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    const r = spawnSync(process.execPath, [path.join(tmp, 'scripts', 'ensure-built.js')], { encoding: 'utf8', env: { PATH: bin } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('acp-terminal: building from source needs Rust: cargo was not found on PATH');
    expect(r.stderr).toContain('npm install acp-terminal');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
