// The documentation stays true to the tree (issue 18): every file README.md, ARCHITECTURE.md and
// docs/ name exists, every relative link resolves, and every source file (src/, ts/, scripts/,
// bench/, examples/) has a row in ARCHITECTURE.md's file table. Reads files only.
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const SOURCE_DIRS = ['src', 'ts', 'scripts', 'bench', 'examples'];
/** Top-level directories a backticked path in the docs may start with. */
const TREE_DIRS = [...SOURCE_DIRS, '__test__', 'docs', 'npm', '.ci', '.github'];
/** Extensions a bare file name (`pump.rs`) must be found with somewhere in the tree. */
const SOURCE_EXT = /\.(rs|ts|mts|js|mjs|cjs|sh|md|json|toml)$/;

function walk(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? walk(rel) : [rel];
  });
}

/** The docs that describe the tree as it is (CHANGELOG.md is history: it names removed files). */
function docFiles(): string[] {
  return ['README.md', 'ARCHITECTURE.md', ...walk('docs').filter((f) => f.endsWith('.md'))];
}

/** Inline code spans outside fenced blocks (code samples name users' files, not ours). */
function codeSpans(text: string): string[] {
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
}

/** The paths a doc names: backticked tokens that look like a file of this tree. */
export function namedPaths(text: string): { tree: string[]; bare: string[] } {
  const tree: string[] = [];
  const bare: string[] = [];
  for (const span of codeSpans(text)) {
    // `a.rs, b.rs` in one span: each name; a span with a space is a command line (`bash x.sh`),
    // which names a user's file, not ours; placeholders and globs are skipped.
    for (const word of span.split(/,\s*/)) {
      if (/\s|[<>*$~{}()|]/.test(word)) continue;
      const w = word.replace(/[:;.]+$/, '');
      if (TREE_DIRS.some((d) => w.startsWith(`${d}/`))) tree.push(w.replace(/\/$/, ''));
      else if (!w.includes('/') && SOURCE_EXT.test(w)) bare.push(w);
    }
  }
  return { tree, bare };
}

/** Relative markdown link targets: `[x](docs/api.md#anchor)` -> `docs/api.md`. */
function links(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/i.test(t) && !t.startsWith('#'))
    .map((t) => t.replace(/#.*$/, ''));
}

/** The first column of ARCHITECTURE.md's file table (the one headed `| file | job |`). */
function fileTable(text: string): string[] {
  const start = text.indexOf('| file | job |');
  expect(start).toBeGreaterThanOrEqual(0);
  const rows: string[] = [];
  for (const line of text.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const m = /^\| `([^`]+)` \|/.exec(line);
    if (m) rows.push(m[1]!);
  }
  return rows;
}

const allFiles = new Set(walk('src').concat(...TREE_DIRS.filter((d) => d !== 'src').map(walk)));
const basenames = new Set([...allFiles].map((f) => path.basename(f)));
for (const f of fs.readdirSync(root)) basenames.add(f);

describe('docs name only files that exist', () => {
  for (const doc of docFiles()) {
    test(doc, () => {
      const text = fs.readFileSync(path.join(root, doc), 'utf8');
      const { tree, bare } = namedPaths(text);
      const missing = tree.filter((p) => !fs.existsSync(path.join(root, p)));
      const missingBare = bare.filter((b) => !basenames.has(b));
      const dir = path.dirname(path.join(root, doc));
      const broken = links(text).filter((l) => !fs.existsSync(path.resolve(dir, l)));
      expect({ missing, missingBare, broken }).toEqual({ missing: [], missingBare: [], broken: [] });
    });
  }
});

test("every source file has a row in ARCHITECTURE.md's file table, and every row is a file", () => {
  const rows = fileTable(fs.readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8'));
  const sources = SOURCE_DIRS.flatMap(walk).sort();
  expect(sources.length).toBeGreaterThan(100);
  const listed = new Set(rows);
  expect(sources.filter((f) => !listed.has(f))).toEqual([]);
  expect(rows.filter((r) => !fs.existsSync(path.join(root, r)))).toEqual([]);
  expect(rows.length).toBe(listed.size); // one row per file
});

test('the checks catch what they are for', () => {
  // The names the old README got wrong are found as missing.
  const { tree, bare } = namedPaths('| `spawn.rs` | x |\n`ts/session-native.ts` and `src/sys/<concern>/`, `bash x.sh`\n```ts\n`x/y.ts`\n```\n');
  expect(bare).toEqual(['spawn.rs']);
  expect(basenames.has('spawn.rs')).toBe(false);
  expect(tree).toEqual(['ts/session-native.ts']);
  expect(fs.existsSync(path.join(root, 'ts/session-native.ts'))).toBe(false);
  expect(links('[a](docs/nope.md#x) [b](https://x.y) [c](#local)')).toEqual(['docs/nope.md']);
});
