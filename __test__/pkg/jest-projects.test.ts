// jest.config.js splits the suites into the projects `fast` (`npm run test:fast`) and `full`: every
// suite runs in exactly one of them, so `npm test` (both) still runs everything once.
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

interface Project {
  displayName: string;
  roots: string[];
  testPathIgnorePatterns: string[];
}

function suites(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : suites(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The suites a project selects, by its roots and ignore patterns (testMatch is `**\/*.test.ts` in both). */
function selected(project: Project, files: string[]): string[] {
  const roots = project.roots.map((r) => r.replace('<rootDir>', root) + path.sep);
  const ignored = project.testPathIgnorePatterns.map((p) => new RegExp(p));
  return files.filter((f) => roots.some((r) => f.startsWith(r)) && !ignored.some((re) => re.test(f)));
}

test('every suite is in exactly one project; fast holds core and pkg suites only', () => {
  const config = jest.requireActual<{ projects: Project[] }>('../../jest.config.js');
  expect(config.projects.map((p) => p.displayName)).toEqual(['fast', 'full']);
  const files = suites(path.join(root, '__test__'));
  expect(files.length).toBeGreaterThan(50);
  const [fast, full] = config.projects.map((p) => selected(p, files)) as [string[], string[]];
  const rel = (f: string): string => path.relative(root, f);
  expect(files.filter((f) => fast.includes(f) === full.includes(f)).map(rel)).toEqual([]);
  expect(fast.map(rel).filter((f) => !/^__test__\/(core|pkg)\//.test(f))).toEqual([]);
  // The split is by suite: the core's load suites are in `full`, its behaviour suites in `fast`.
  expect(full.map(rel)).toEqual(expect.arrayContaining(['__test__/core/output-load.test.ts', '__test__/core/sandbox.test.ts']));
  expect(fast.map(rel)).toEqual(expect.arrayContaining(['__test__/core/output.test.ts', '__test__/pkg/jest-projects.test.ts']));
});
