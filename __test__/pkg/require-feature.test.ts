// Strict mode: a feature listed in ACP_TERMINAL_REQUIRE turns "not available here, skip" into a failure.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hasFeature, missingMessage, requiredFeatures } from '../fixtures/require-feature';

const root = path.resolve(__dirname, '..', '..');

test('ACP_TERMINAL_REQUIRE is a comma-separated list', () => {
  expect([...requiredFeatures({ ACP_TERMINAL_REQUIRE: 'cgroups, userns,,landlock' })]).toEqual(['cgroups', 'userns', 'landlock']);
  expect(requiredFeatures({}).size).toBe(0);
});

test('hasFeature: true when available; throws when required and missing', () => {
  expect(hasFeature('x-present', true, 'n/a')).toBe(true);
  const saved = process.env.ACP_TERMINAL_REQUIRE;
  process.env.ACP_TERMINAL_REQUIRE = 'x-missing';
  try {
    expect(() => hasFeature('x-missing', false, 'none here')).toThrow(missingMessage('x-missing', 'none here'));
  } finally {
    if (saved === undefined) delete process.env.ACP_TERMINAL_REQUIRE;
    else process.env.ACP_TERMINAL_REQUIRE = saved;
  }
});

test('testIf / describeIf in a real jest run: skipped with the reason printed, or failed when required', () => {
  const dir = fs.mkdtempSync(path.join(root, '__test__', 'pkg', '.strict-'));
  try {
    const file = path.join(dir, 'probe.test.ts');
    fs.writeFileSync(
      file,
      `import { describeIf, testIf } from '../../fixtures/require-feature';\n` +
        `testIf('x-gone', false, 'the probe has none')('a test', () => undefined);\n` +
        `describeIf('x-gone', false, 'the probe has none')('a block', () => { test('inner', () => undefined); });\n` +
        `test('runs', () => undefined);\n`,
    );
    const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
    const run = (require: string) =>
      spawnSync(process.execPath, [jest, '--rootDir', root, '--roots', dir, '--testMatch', '**/probe.test.ts', '--ci'], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, ACP_TERMINAL_REQUIRE: require },
      });
    const lax = run('');
    expect(lax.status).toBe(0);
    expect(lax.stderr).toContain('skipped (x-gone not available: the probe has none)');
    expect(lax.stderr).toMatch(/2 skipped, 1 passed/);
    const strict = run('x-gone');
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain('ACP_TERMINAL_REQUIRE lists `x-gone` but it is not available here: the probe has none');
    expect(strict.stderr).toMatch(/2 failed, 1 passed/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('.ci/run sets ACP_TERMINAL_REQUIRE before the tests', () => {
  const ci = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
  expect(ci.indexOf('export ACP_TERMINAL_REQUIRE')).toBeGreaterThan(-1);
  expect(ci.indexOf('export ACP_TERMINAL_REQUIRE')).toBeLessThan(ci.indexOf('npm test'));
});

test('every conditional skip in __test__ goes through the helper (so it prints its reason and strict mode sees it)', () => {
  // shell-corpus.test.ts is being replaced with the shell parser rewrite (issue 19).
  const exempt = new Set(['fixtures/require-feature.ts', 'shell-corpus.test.ts']);
  const files = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      return e.isDirectory() ? files(p) : /\.(ts|js)$/.test(e.name) ? [p] : [];
    });
  const offenders = files(path.join(root, '__test__'))
    .map((f) => path.relative(path.join(root, '__test__'), f))
    .filter((f) => !exempt.has(f) && f !== path.join('pkg', 'require-feature.test.ts'))
    .filter((f) => /\b(test|it|describe)\.skip\b|\bxit\(|\bxdescribe\(|\bxtest\(/.test(fs.readFileSync(path.join(root, '__test__', f), 'utf8')));
  expect(offenders).toEqual([]);
});
