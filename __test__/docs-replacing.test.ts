// docs/replacing-a-terminal-manager.md (issue 22): its samples, the hand-written manager ("before") and
// the TerminalHost wiring that replaces it ("after"), are type-checked with `tsc --strict` (module
// nodenext, skipLibCheck false, as scripts/readme-samples.js does for a registry install) and run with
// node against this checkout's built package (lib/); each must exit 0 by itself and print what the page
// says it prints.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const { samples, tsconfig } = require('../scripts/readme-samples.js') as {
  samples: (doc: string) => { lang: string; info: string; code: string }[];
  tsconfig: (dir: string, files: string[]) => void;
};

const repo = path.resolve(__dirname, '..');
let dir: string;
let tsc: { status: number | null; out: string };

/** The page's ```ts blocks, in order (found as scripts/readme-samples.js finds them). */
function blocks(): string[] {
  return samples('docs/replacing-a-terminal-manager.md')
    .filter((s) => (s.lang === 'ts' || s.lang === 'typescript') && s.info === '')
    .map((s) => s.code);
}

function run(args: string[], cwd: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 180_000 }); // tsc is slow on a busy machine
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

beforeAll(() => {
  if (!fs.existsSync(path.join(repo, 'lib', 'index.js'))) throw new Error('lib/ is not built: run node scripts/build-ts.js');
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-docs-replacing-')));
  const nm = path.join(dir, 'node_modules');
  fs.mkdirSync(nm);
  fs.symlinkSync(repo, path.join(nm, 'acp-terminal'));
  for (const dep of ['@agentclientprotocol', '@types']) fs.symlinkSync(path.join(repo, 'node_modules', dep), path.join(nm, dep));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'docs-sample', version: '1.0.0', private: true }));
  const files = blocks().map((code, i) => {
    fs.writeFileSync(path.join(dir, `sample-${i}.mts`), code);
    return `sample-${i}.mts`;
  });
  tsconfig(dir, files);
  tsc = run([path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.readme.json'], dir);
}, 240_000);

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the page has its two samples, and they pass tsc --strict', () => {
  expect(blocks()).toHaveLength(2);
  expect(tsc.out).toBe('');
  expect(tsc.status).toBe(0);
});

test('before: the hand-written manager runs', () => {
  const r = run([path.join('readme-out', 'sample-0.mjs')], dir);
  expect(r.out).toBe('before\n');
  expect(r.status).toBe(0);
});

test('after: the wiring runs, streams output to the UI, keeps the decisions, and exits by itself', () => {
  const r = run([path.join('readme-out', 'sample-1.mjs')], dir);
  expect(r).toMatchObject({ status: 0 });
  // The UI's line comes from the live stream, so it may come before or after the exit status.
  const lines = r.out.trim().split('\n');
  expect(lines).toHaveLength(4);
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^\[term-[0-9a-f]+-1\] after$/),
      '{ exitCode: 0, signal: null }',
      '-32602 ERR_NOT_APPROVED',
      '-32603',
    ]),
  );
});
