// The shared shell-line corpus (issue 9 item 6): the kept parser must be right on every case, and the
// comparison with sh-syntax (mvdan/sh as WASM) is recomputed on every run, so the numbers in
// ARCHITECTURE.md (design notes) can be checked. Pure functions; nothing is executed.
import { argvCommandWords, shellCommandWords, type ShellAnalysis } from '../ts/shellwords';
import { SHELL_CORPUS, type CorpusCase } from './fixtures/shell-corpus';
import { shSyntaxCommandWords } from './fixtures/sh-syntax-analysis';

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

/** Why `analysis` is wrong for `c`, or undefined when it is right. */
export function judge(c: CorpusCase, analysis: ShellAnalysis): string | undefined {
  const incomplete = c.incomplete === true;
  if (analysis.incomplete !== incomplete) return `incomplete: ${analysis.incomplete}, expected ${incomplete}`;
  if (incomplete) return undefined;
  const words = sorted(analysis.words.map((w) => w.word));
  const dynamic = sorted(analysis.words.filter((w) => w.dynamic).map((w) => w.word));
  if (JSON.stringify(words) !== JSON.stringify(sorted(c.words))) return `words ${JSON.stringify(words)}, expected ${JSON.stringify(sorted(c.words))}`;
  if (JSON.stringify(dynamic) !== JSON.stringify(sorted(c.dynamic ?? []))) return `dynamic ${JSON.stringify(dynamic)}, expected ${JSON.stringify(sorted(c.dynamic ?? []))}`;
  return undefined;
}

const name = (c: CorpusCase): string => JSON.stringify(c.line ?? c.argv);
const handWritten = (c: CorpusCase): ShellAnalysis => (c.argv ? argvCommandWords(c.argv) : shellCommandWords(c.line!));

describe('shell corpus', () => {
  test.each(SHELL_CORPUS.map((c) => [name(c), c] as const))('hand-written parser: %s', (_n, c) => {
    const analysis = handWritten(c);
    expect(judge(c, analysis)).toBeUndefined();
    if (c.assigns) expect(sorted(analysis.assignments.map((a) => a.word))).toEqual(sorted(c.assigns));
    if (c.redefines) expect(sorted(analysis.redefinitions.map((r) => `${r.kind}:${r.name}`))).toEqual(sorted(c.redefines));
    if (c.unchecked) expect(analysis.uncheckedShells).toEqual(c.unchecked);
  });

  test('comparison with sh-syntax on the shell lines', async () => {
    const lines = SHELL_CORPUS.filter((c) => c.line !== undefined);
    const malformed = lines.filter((c) => c.incomplete).length;
    let hand = 0;
    let shs = 0;
    let shsMalformed = 0;
    const shsWrong: string[] = [];
    for (const c of lines) {
      if (judge(c, handWritten(c)) === undefined) hand++;
      const why = judge(c, await shSyntaxCommandWords(c.line!));
      if (why === undefined) {
        shs++;
        if (c.incomplete) shsMalformed++;
      } else shsWrong.push(`${name(c)}: ${why}`);
    }
    console.log(
      `corpus: ${SHELL_CORPUS.length} cases, ${lines.length} shell lines (${malformed} malformed); right: hand-written ${hand}, ` +
        `sh-syntax ${shs} (${shsMalformed} of the malformed)\nsh-syntax wrong on:\n` + shsWrong.join('\n'),
    );
    expect(hand).toBe(lines.length);
    expect(shs).toBeLessThan(hand);
  });
});
