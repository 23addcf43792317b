// Best-effort command-word discovery for the host's command policy (pure function, no processes).
import { argvCommandWords, shellCommandWords } from '../ts/shellwords';

const words = (line: string): string[] => shellCommandWords(line).words.map((w) => w.word);
const dynamicWords = (line: string): string[] => shellCommandWords(line).words.filter((w) => w.dynamic).map((w) => w.word);

describe('shellCommandWords', () => {
  test.each([
    ['ls -la', ['ls']],
    ['git status && npm test', ['git', 'npm']],
    ['a; b & c || d | e |& f', ['a', 'b', 'c', 'd', 'e', 'f']],
    ['a\nb\n\nc', ['a', 'b', 'c']],
    ['(cd sub && make) | tee log', ['cd', 'make', 'tee']],
    ['{ echo a; echo b; } > out', ['echo', 'echo']],
    ['! grep -q x file', ['grep']],
    ['FOO=1 BAR="x y" env', ['env']],
    ['A=$(whoami) B=`id` true', ['whoami', 'id', 'true']],
    ['echo $(curl -s x | sh)', ['curl', 'sh', 'echo']],
    ['echo "$(rm -rf /tmp/x)"', ['rm', 'echo']],
    ['echo `uname -a`', ['uname', 'echo']],
    ['diff <(ls a) >(wc -l)', ['ls', 'wc', 'diff']],
    ['echo ${X:-$(hostname)}', ['hostname', 'echo']],
    ['echo $(( $(nproc) * 2 ))', ['nproc', 'echo']],
    ['if test -f x; then cat x; elif true; then :; else touch x; fi', ['test', 'cat', 'true', ':', 'touch']],
    ['while read l; do echo "$l"; done < f', ['read', 'echo']],
    ['until false; do sleep 1; done', ['false', 'sleep']],
    ['for f in *.ts a b; do wc -l "$f"; done', ['wc']],
    ['for ((i=0; i<3; i++)); do echo $i; done', ['echo']],
    ['case "$x" in a|b) echo ab;; (c) printf c;; *) rm -f z;; esac; ls', ['echo', 'printf', 'rm', 'ls']],
    ['f() { rm -rf build; }; f', ['rm', 'f']],
    ['function g { make; }; g', ['make', 'g']],
    ['function h() { make; }', ['make']],
    ['[[ -f a && -d b ]] && echo ok', ['echo']],
    ['(( n > 1 )) && echo big', ['echo']],
    ['cmd 2>&1 >/dev/null < in', ['cmd']],
    ['exec >&-; sleep 1', ['exec', 'sleep']],
    ['cat <<EOF\nrm -rf /\n$(reboot)\nEOF\necho done', ['reboot', 'cat', 'echo']],
    ["cat <<'EOF'\n$(reboot)\nEOF\nls", ['cat', 'ls']],
    ['cat <<-EOF\n\tx\n\tEOF\nls', ['cat', 'ls']],
    ['echo a # rm -rf /', ['echo']],
    ['"r"m x; \\rm y; r\'\'m z', ['rm', 'rm', 'rm']],
    ["$'\\x72\\x6d' x", ['rm']],
    ['echo a \\\n && ls', ['echo', 'ls']],
    ['sudo -u root rm -rf /', ['sudo', 'rm']],
    ['sudo -- VAR=1 shutdown now', ['sudo', 'shutdown']],
    ['env -i PATH=/bin FOO=1 curl x', ['env', 'curl']],
    ['env -S "wget -q x"', ['env', 'wget']],
    ['nice -n 10 ionice -c 3 make', ['nice', 'ionice', 'make']],
    ['timeout -s KILL 10 node x.js', ['timeout', 'node']],
    ['exec -a name python3 app.py', ['exec', 'python3']],
    ['command -v git', ['command']],
    ['command git push', ['command', 'git']],
    ['nohup setsid stdbuf -oL ./server &', ['nohup', 'setsid', 'stdbuf', './server']],
    ['find . -name "*.o" -exec rm {} \\; -print', ['find', 'rm']],
    ['find . -execdir sh -c "chmod +x x" +', ['find', 'sh', 'chmod']],
    ['ls | xargs -n 1 -I{} cp {} /tmp', ['ls', 'xargs', 'cp']],
    ["bash -lc 'curl x | sh'", ['bash', 'curl', 'sh']],
    ["sh -e -o pipefail -c 'make all'", ['sh', 'make']],
    ["eval 'rm -rf x'", ['eval', 'rm']],
    ['watch -n 1 "ps aux | grep x"', ['watch', 'ps', 'grep']],
    ["su - root -c 'id'", ['su', 'id']],
    ['busybox wget x', ['busybox', 'wget']],
    ['time -p make', ['time', 'make']],
    ['', []],
  ])('%j → %j', (line, expected) => {
    expect(words(line)).toEqual(expected);
    expect(shellCommandWords(line).incomplete).toBe(false);
  });

  test.each([
    ['$CMD -x', ['$CMD']],
    ['"$HOME/bin/tool" a', ['$HOME/bin/tool']],
    ['$(echo rm) -rf x', ['$(echo rm)']],
    ['~/bin/tool', ['~/bin/tool']],
    ['/usr/bin/r* x', ['/usr/bin/r*']],
    ['{rm,-rf,x}', ['{rm,-rf,x}']],
    ['sudo $CMD', ['$CMD']],
    ["eval \"$X\"", ['$X']],
  ])('run-time values are flagged dynamic: %j', (line, expected) => {
    expect(dynamicWords(line)).toEqual(expected);
  });

  test('literal words are not dynamic', () => {
    expect(shellCommandWords('git log --format="%H"').words).toEqual([{ word: 'git', dynamic: false }]);
  });

  test.each(['echo "unterminated', "echo 'x", 'echo $(ls', 'echo `ls', 'cat <<EOF\nno end', 'echo ${x'])(
    'malformed lines are flagged incomplete: %j',
    (line) => {
      expect(shellCommandWords(line).incomplete).toBe(true);
    },
  );

  test('deep nesting is bounded and flagged', () => {
    const line = '$('.repeat(100) + 'ls' + ')'.repeat(100);
    expect(shellCommandWords(line).incomplete).toBe(true);
  });

  test('large input stays linear enough', () => {
    const line = Array.from({ length: 20000 }, (_, i) => `echo ${i}`).join(' && ');
    expect(shellCommandWords(line).words).toHaveLength(20000);
  });
});

describe('argvCommandWords', () => {
  test.each([
    [['git', 'status'], ['git']],
    [['/bin/bash', '-c', 'npm test && rm -rf dist'], ['/bin/bash', 'npm', 'rm']],
    [['sudo', 'rm', '$HOME'], ['sudo', 'rm']],
    [['env', 'A=1', 'python3', '-c', 'x'], ['env', 'python3']],
    [['bash', 'script.sh', '-c', 'rm'], ['bash']],
    [['printf', '%s\n', '$(rm -rf /)'], ['printf']],
  ])('%j → %j', (argv, expected) => {
    const r = argvCommandWords(argv);
    expect(r.words.map((w) => w.word)).toEqual(expected);
    expect(r.words.every((w) => !w.dynamic)).toBe(true);
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
    expect(r.words.length).toBeGreaterThan(0);
  });

  test('random garbage never throws', () => {
    const alphabet = ['a', ' ', ';', '&', '|', '(', ')', '$', '`', '"', "'", '\\', '\n', '<', '>', '{', '}', '#', '=', '*', 'if', 'case', 'in', 'esac', '<<', 'EOF', '$(', '${', '$((', '))'];
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
