// Bounds and robustness of the shell-line analysis (the native core's tree-sitter-bash walk; no
// processes). What it finds on each line is pinned by the shared corpus:
// __test__/fixtures/shell-corpus.ts, run by shell-corpus.test.ts.
import { argvCommandWords, shellCommandWords } from '../ts/shell-analysis';

describe('shellCommandWords', () => {
  test('deep nesting is bounded, flagged and refused', () => {
    const line = '$('.repeat(100) + 'ls' + ')'.repeat(100);
    const r = shellCommandWords(line);
    expect(r.refusals.length).toBeGreaterThan(0);
  });

  test('large input stays linear enough', () => {
    const line = Array.from({ length: 20000 }, (_, i) => `echo ${i}`).join(' && ');
    const a = shellCommandWords(line);
    expect(a.programCount).toBe(20000);
    // Beyond the 1000 programs a policy judges, only the first 1001 cross into JS (and no rebuild).
    expect([a.words.length, a.words[1000]?.word, a.rebuild]).toEqual([1001, 'echo', undefined]);
    expect(shellCommandWords('ls;'.repeat(1000)).words).toHaveLength(1000);
  });

  test('a refusal names the construct and its position as a JS string index', () => {
    const line = 'ls; echo "é😀" $((1+2))';
    const r = shellCommandWords(line).refusals[0]!;
    expect(r).toMatchObject({ reason: 'shell-construct' });
    expect(r.construct).toMatch(/arithmetic/);
    expect(line.slice(r.position)).toBe('$((1+2))');
  });
});

describe('robustness', () => {
  test.each([
    ['ANSI-C escapes', "echo $'" + '\\x41'.repeat(200_000) + "'"],
    ['quotes', 'echo ' + '"a"'.repeat(300_000)],
    ['substitutions', 'echo ' + '$(true)'.repeat(50_000)],
    ['operators', 'true' + ' && true'.repeat(200_000)],
    ['parentheses', '( '.repeat(100_000) + 'ls' + ' )'.repeat(100_000)],
    ['a 3 MiB word', 'echo ' + 'z'.repeat(3 * 1024 * 1024)],
  ])('large inputs (%s) are analysed without blowing up', (_what, line) => {
    const r = shellCommandWords(line);
    expect(r.words.length + r.refusals.length).toBeGreaterThan(0);
  });

  test('random garbage never throws', () => {
    const alphabet = ['a', ' ', ';', '&', '|', '(', ')', '$', '`', '"', "'", '\\', '\n', '<', '>', '{', '}', '#', '=', '*', 'if', 'case', 'in', 'esac', '<<', 'EOF', '$(', '${', '$((', '))', '[[', ']]', 'é', '\0'];
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 3000; i++) {
      const line = Array.from({ length: 1 + rand(40) }, () => alphabet[rand(alphabet.length)]).join('');
      expect(() => shellCommandWords(line)).not.toThrow();
      expect(() => argvCommandWords(line.split(' '))).not.toThrow();
    }
  });
});
