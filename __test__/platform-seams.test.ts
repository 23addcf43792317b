// Platform code lives behind the seams of src/sys/ (ARCHITECTURE.md, "one job per module"):
// outside it, a `cfg` on the operating system (`unix`, `windows`, `target_os`, `target_family`,
// `target_env`) may only select a module (`mod linux;`, `use linux as imp;`, a Unix-only test
// module), and the few other places are listed below, each with its reason. A new one fails
// here: put it behind a seam of src/sys/ (one file per platform), or select a module. Reads
// files only.
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..');

/** An operating-system predicate inside a cfg. */
const PLATFORM = /\b(unix|windows|target_os|target_family|target_env)\b/;

/**
 * The places outside src/sys/ allowed a platform cfg on something other than a module: the file
 * and the first line of the item the cfg applies to, with why.
 */
const ALLOWED_ITEMS: { file: string; item: string; why: string }[] = [
  ...['fn a_symlink_to_a_forbidden_place_is_refused() {', 'fn run_sandboxed(spec: &SandboxSpec, cwd: &std::path::Path, script: &str) -> (i32, String) {', 'fn namespaces_or_skip() -> bool {', 'fn outside_the_roots_everything_is_read_only_inside_writable_tmp_private() {'].map((item) => ({
    file: 'src/sandbox/tests.rs',
    item,
    why: "the Linux sandbox's tests, beside the roots' validation that every Unix runs",
  })),
  {
    file: 'src/test_util.rs',
    item: 'pub fn require(feature: &str, available: bool, reason: &str) -> bool {',
    why: "strict mode, shared by Linux's and Windows' tests (macOS's need no feature it may lack)",
  },
];

interface Found {
  file: string;
  line: number;
  cfg: string;
  /** The first line of what the cfg applies to (the file's first line for an inner `#![...]`). */
  item: string;
}

function walk(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? walk(rel) : rel.endsWith('.rs') ? [rel] : [];
  });
}

/** Every `cfg(...)`, `cfg!(...)` and `cfg_attr(...)` of `text` on an operating system. */
export function platformCfgs(file: string, text: string): Found[] {
  const found: Found[] = [];
  const lines = text.split('\n');
  for (const m of text.matchAll(/\bcfg(?:_attr)?!?\(/g)) {
    // The balanced predicate after the opening parenthesis.
    let depth = 1;
    let i = m.index! + m[0].length;
    const start = i;
    while (i < text.length && depth > 0) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')') depth--;
      i++;
    }
    const cfg = text.slice(start, i - 1).replace(/\s+/g, ' ');
    // A cfg_attr on a platform only matters for its predicate, not for the attribute it adds.
    const predicate = m[0].startsWith('cfg_attr') ? cfg.split(',')[0]! : cfg;
    if (!PLATFORM.test(predicate)) continue;
    const line = text.slice(0, m.index!).split('\n').length;
    const inner = /#!\[\s*$/.test(text.slice(0, m.index!).split('\n').pop()!);
    // The item: the next line after the attribute that is no attribute or comment.
    let item = inner ? lines[0]!.trim() : '';
    const endLine = text.slice(0, i).split('\n').length;
    for (let l = endLine; !inner && l < lines.length; l++) {
      const t = lines[l]!.trim();
      if (t === '' || t.startsWith('#[') || t.startsWith('//') || /^\)?\]$/.test(t)) continue;
      item = t;
      break;
    }
    // `cfg!(...)` is an expression: the item is its own line.
    if (m[0] === 'cfg!(') item = lines[line - 1]!.trim();
    found.push({ file, line, cfg, item });
  }
  return found;
}

/** A cfg that selects a module: it applies to a `mod` or to `use <module> as imp`. */
function selectsModule(item: string): boolean {
  return /^(pub(\([a-z]+\))? )?mod [a-z_0-9]+( \{|;)$/.test(item) || /^use [a-z_0-9]+ as imp;$/.test(item);
}

function outsideSys(): Found[] {
  return walk('src')
    .filter((f) => !f.startsWith('src/sys/'))
    .flatMap((f) => platformCfgs(f, fs.readFileSync(path.join(root, f), 'utf8')));
}

describe('platform code stays behind the seams of src/sys/', () => {
  it('outside src/sys/, an operating-system cfg only selects a module, or is one of the listed places', () => {
    const stray = outsideSys().filter(
      (f) => !selectsModule(f.item) && !ALLOWED_ITEMS.some((a) => a.file === f.file && a.item === f.item),
    );
    expect(stray.map((f) => `${f.file}:${f.line}: cfg(${f.cfg}) on \`${f.item}\``)).toEqual([]);
  });

  it('every listed place still has its cfg (the list does not outlive the code)', () => {
    const found = outsideSys();
    const stale = ALLOWED_ITEMS.filter((a) => !found.some((f) => f.file === a.file && f.item === a.item));
    expect(stale).toEqual([]);
  });

  it('the scan sees cfg, cfg_attr and cfg! on every platform predicate, over several lines too', () => {
    const text = [
      '#[cfg(unix)]',
      'fn a() {}',
      '#[cfg_attr(windows, allow(dead_code))]',
      'struct B;',
      'let c = cfg!(target_os = "linux");',
      '#[cfg(all(',
      '    test,',
      '    target_env = "gnu"',
      '))]',
      'mod tests;',
      '#[cfg(test)]',
      'mod only_tests;',
      '#[cfg_attr(test, allow(windows_only_lint))]',
      'fn d() {}',
    ].join('\n');
    const found = platformCfgs('x.rs', text);
    expect(found.map((f) => [f.line, f.item])).toEqual([
      [1, 'fn a() {}'],
      [3, 'struct B;'],
      [5, 'let c = cfg!(target_os = "linux");'],
      [6, 'mod tests;'],
    ]);
    expect(found.map((f) => selectsModule(f.item))).toEqual([false, false, false, true]);
  });
});
