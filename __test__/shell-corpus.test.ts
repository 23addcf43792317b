// The shared shell-line corpus (regression cases): the native
// tree-sitter-bash analysis must find the command words of every case. The cases where the old
// hand-written parser's answer was a bypass (a construct it approved that an allow list must refuse)
// are listed in NOTES-policy.md; lines the grammar reads differently from bash carry `treeSitter` (why)
// and must then be refused under an allow list. Function definitions are refused as constructs now,
// so the corpus no longer lists them as redefinitions.
// Pure functions; nothing is executed.
import { argvCommandWords, shellCommandWords, type ShellAnalysis } from '../ts/shell-analysis';
import { SHELL_CORPUS, type CorpusCase } from './fixtures/shell-corpus';

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

/** Why `analysis` is wrong for `c`, or undefined when it is right. */
export function judge(c: CorpusCase, analysis: ShellAnalysis): string | undefined {
  const incomplete = c.incomplete === true;
  if (analysis.incomplete !== incomplete) return `incomplete: ${analysis.incomplete}, expected ${incomplete}`;
  if (incomplete) return undefined;
  const found = analysis.words.filter((w) => !w.guessed);
  const words = sorted(found.map((w) => w.word));
  const dynamic = sorted(found.filter((w) => w.dynamic).map((w) => w.word));
  if (JSON.stringify(words) !== JSON.stringify(sorted(c.words))) return `words ${JSON.stringify(words)}, expected ${JSON.stringify(sorted(c.words))}`;
  if (JSON.stringify(dynamic) !== JSON.stringify(sorted(c.dynamic ?? []))) return `dynamic ${JSON.stringify(dynamic)}, expected ${JSON.stringify(sorted(c.dynamic ?? []))}`;
  return undefined;
}

const name = (c: CorpusCase): string => JSON.stringify(c.line ?? c.argv);
const analyse = (c: CorpusCase): ShellAnalysis => (c.argv ? argvCommandWords(c.argv) : shellCommandWords(c.line!));

describe('shell corpus', () => {
  test.each(SHELL_CORPUS.map((c) => [name(c), c] as const))('tree-sitter-bash analysis: %s', (_n, c) => {
    const analysis = analyse(c);
    if (c.treeSitter !== undefined) {
      // Read differently by the grammar: an allow list must refuse it.
      expect(analysis.refusals.length > 0 || analysis.incomplete).toBe(true);
      return;
    }
    expect(judge(c, analysis)).toBeUndefined();
    if (c.assigns) expect(sorted(analysis.assignments.map((a) => a.word))).toEqual(sorted(c.assigns));
    if (c.redefines) expect(sorted(analysis.redefinitions.map((r) => `${r.kind}:${r.name}`))).toEqual(sorted(c.redefines));
    if (c.unchecked) expect(analysis.uncheckedShells).toEqual(c.unchecked);
  });
});
