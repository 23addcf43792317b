// The marker protocol of ShellSessions as pure functions: what is written to the shell and how its
// raw output is split into output and markers. No shell, no terminal.
import { execFileSync } from 'node:child_process';

import {
  asBashC,
  COMMAND_PREFIX,
  commandInput,
  commandLine,
  commandText,
  MarkerScanner,
  markerPrefix,
  octalEscapes,
  openHereDocument,
  rcInput,
  rcText,
  removeEcho,
  removeTraces,
  type StreamPart,
  TYPED_LINE_BYTES,
  typedWord,
} from '../ts/session-protocol';

const token = '0123456789abcdef0123456789abcdef';
const marker = (seq: number | '', status: number | string): string => `\x1b]6973;${token};E;${seq};${status}\x07`;

/** Scans `chunks` in order; returns data as latin1 strings and markers as `<seq:status>`. */
function scanAll(chunks: string[], scanner = new MarkerScanner(token)): string[] {
  const out: string[] = [];
  const push = (p: StreamPart): void => {
    if ('data' in p) {
      const s = p.data.toString('latin1');
      if (typeof out[out.length - 1] === 'string' && !out[out.length - 1]!.startsWith('<')) out[out.length - 1] += s;
      else out.push(s);
    } else {
      out.push(`<${p.marker.seq}:${p.marker.status}>`);
    }
  };
  for (const c of chunks) for (const p of scanner.scan(Buffer.from(c, 'latin1'))) push(p);
  const rest = scanner.flush();
  if (rest.length > 0) push({ data: rest });
  return out;
}

describe('MarkerScanner', () => {
  test('splits output and markers, in order, wherever they fall', () => {
    expect(scanAll([`a${marker(1, 0)}b${marker(2, 130)}`])).toEqual(['a', '<1:0>', 'b', '<2:130>']);
    expect(scanAll([marker('', 7)])).toEqual(['<NaN:7>']);
    expect(scanAll([`x\x1b]6973;${token};F;9\x07y`])).toEqual(['x', '<9:null>', 'y']);
  });

  test('a marker split byte by byte across chunks is found once and removed', () => {
    const bytes = [...`out\r\n${marker(12, 3)}after`];
    expect(scanAll(bytes)).toEqual(['out\r\n', '<12:3>', 'after']);
  });

  test('a held-back tail that turns out not to be a marker is output, not lost', () => {
    const scanner = new MarkerScanner(token);
    expect(scanner.scan(Buffer.from(`x\x1b]6973;${token};E;4`, 'latin1')).map((p) => ('data' in p ? p.data.toString() : 'm'))).toEqual(['x']);
    expect(scanAll([`;99999\x07y`], scanner)).toEqual([`\x1b]6973;${token};E;4;99999\x07y`]);
    expect(scanAll([`z\x1b]6973;${token.slice(0, 5)}`])).toEqual([`z\x1b]6973;${token.slice(0, 5)}`]);
  });

  test('markers of another token, a status of more than 3 digits and other escapes are output', () => {
    const other = `\x1b]6973;${'f'.repeat(32)};E;1;0\x07`;
    const long = `\x1b]6973;${token};E;1;1000\x07`;
    expect(scanAll([other, long, '\x1b[31mred\x1b[0m'])).toEqual([other + long + '\x1b[31mred\x1b[0m']);
  });
});

describe('what is written to the shell', () => {
  test('the rc holds the token only as octal escapes, makes the prompt and PROMPT_COMMAND read-only', () => {
    const text = rcText(token);
    expect(text).not.toContain(token);
    expect(text).toContain(octalEscapes(`${token};`));
    expect(text).toMatch(/^declare -r __acp_ps1=/m);
    expect(text).toMatch(/^declare -r __acp_ps0=/m);
    expect(text).toMatch(/^PS1=\$__acp_ps1 PS0=\$__acp_ps0$/m);
    expect(text).toMatch(/^declare -r PROMPT_COMMAND=/m);
    expect(text).toMatch(/^PS2=''$/m);
  });

  /** Runs `script` in a bash that ran the rc as typed (no terminal: stdin, stdout and stderr are pipes). */
  function inBash(script: string): string {
    return execFileSync('bash', ['--noprofile', '--norc', '-c', `{ ${rcInput(token)}} 2>/dev/null; ${script}`], {
      encoding: 'latin1',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  test('the prompt is exactly the marker, with $? and the sequence number; PROMPT_COMMAND restores it', () => {
    expect(scanAll([inBash(`__acp_n=5; (exit 42); printf '%s' "\${PS1@P}"`)])).toEqual(['<5:42>']);
    expect(scanAll([inBash(`__acp_n=6; PS1=x; eval "$PROMPT_COMMAND"; (exit 7); printf '%s' "\${PS1@P}"`)])).toEqual(['<6:7>']);
    expect(inBash('( __acp_ps1=x ) 2>/dev/null || echo read-only')).toBe('read-only\n');
  });

  /** Runs `lines` in a bash that ran the rc, with `command` typed as a session types it. */
  function runCommand(before: string, command: string, after: string): string {
    return execFileSync('bash', ['--noprofile', '--norc', '-c', `{ ${rcInput(token)}} 2>/dev/null\n${before}\n${commandLine(1, commandText(command))}\n${after}`], {
      encoding: 'utf8',
    });
  }

  test('a command sourced by the command line runs in normal mode, with its own line numbers, even with ., exec and source redefined', () => {
    const out = runCommand(
      '.() { echo fake; }; source() { echo fake; }; builtin() { echo fake; }; unset() { echo fake; }; exec() { echo fake; }',
      'echo "line $LINENO"; shopt -qo posix && echo posix; ls /proc/self/fd\n(exit 3)',
      'echo "status $?"',
    );
    // No descriptor of the session's is left to the command: ls sees what it sees in a plain bash.
    const fds = execFileSync('bash', ['--noprofile', '--norc', '-c', 'ls /proc/self/fd'], { encoding: 'utf8' });
    expect(out).toBe(`line 1\n${fds}status 3\n`);
  });

  test("the shell options POSIX mode touches are the command's own, before, during and after it", () => {
    const options = 'inherit_errexit shift_verbose expand_aliases interactive_comments sourcepath';
    const show = `shopt -p ${options} || :`;
    for (const before of [`shopt -u ${options}`, `shopt -s ${options}`, 'shopt -s inherit_errexit; shopt -u sourcepath']) {
      const expected = execFileSync('bash', ['--noprofile', '--norc', '-c', `${before}; ${show}`], { encoding: 'utf8' });
      expect(runCommand(before, show, show)).toBe(expected + expected);
    }
  });

  test('the command line and what is typed to run it', () => {
    expect(commandLine(3, "l's")).toBe(` __acp_o=$BASHOPTS; POSIXLY_CORRECT=1; __acp_n=3; \\exec {__acp_f}<<<$'l\\'s' && \\. "/dev/fd/$__acp_f"`);
    expect(commandText('ls')).toBe(`${COMMAND_PREFIX}ls`);
    expect(commandInput('L')).toBe('\x15\n\nL\n');
    expect(rcInput(token)).toMatch(/^ \\builtin eval \$'/);
    expect(markerPrefix(token)).toBe(`\x1b]6973;${token};`);
  });

  test('any text is typed without a control byte, in lines of bounded length, and the shell reads back exactly that text', () => {
    const all = Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const text = `${all}\n${'é€😀'.repeat(300)}\\\n'${'x'.repeat(5000)}\\`;
    const typed = typedWord(text);
    for (const line of typed.split('\n')) {
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(TYPED_LINE_BYTES);
      // eslint-disable-next-line no-control-regex -- what is checked is the absence of control bytes
      expect(line).not.toMatch(/[\x00-\x1f\x7f]/);
    }
    const back = execFileSync('bash', ['--noprofile', '--norc', '-c', `printf %s ${typed}`]);
    expect(back.equals(Buffer.from(text, 'utf8'))).toBe(true);
  });
});

describe('what is read back', () => {
  const line = commandLine(2, commandText('echo hi'));

  test('the echo of the typed line is removed once, with the empty line before it', () => {
    expect(removeEcho(`\r\n${line}\r\nout\r\n`, line)).toBe('out\r\n');
    expect(removeEcho(`${line}\r\nout ${line}\r\n`, line)).toBe(`out ${line}\r\n`);
    expect(removeEcho('out\r\n', line)).toBe('out\r\n');
    const long = commandLine(3, commandText('x'.repeat(3000)));
    expect(long).toContain('\n');
    expect(removeEcho(`${long.split('\n').join('\r\n')}\r\nout\r\n`, long)).toBe('out\r\n');
  });

  test('set -x traces of the session machinery are dropped, the command traces kept', () => {
    const traced = [
      '+ __acp_o=checkwinsize:cmdhist',
      '+ POSIXLY_CORRECT=1',
      '+ __acp_n=2',
      '+ exec',
      '+ . /dev/fd/11',
      '++ unset POSIXLY_CORRECT',
      '++ __acp_opts',
      '++ echo hi',
      'hi',
    ].join('\n');
    expect(removeTraces(traced)).toBe('++ echo hi\nhi');
    expect(removeTraces('++ exec\n+ . /dev/fd/x\nx')).toBe('++ exec\n+ . /dev/fd/x\nx');
    expect(removeTraces('plain')).toBe('plain');
  });

  test('errors naming the descriptor the command was sourced from read as bash -c reports them, without the prefix', () => {
    expect(asBashC('bash: /dev/fd/10: line 1: syntax error')).toBe('bash: line 1: syntax error');
    expect(asBashC(`bash: /dev/fd/12: line 1: \`${COMMAND_PREFIX}if then fi )'`)).toBe("bash: line 1: `if then fi )'");
  });

  test('an open here-document, as bash -n reports it in the C locale', () => {
    expect(openHereDocument("f: line 3: warning: here-document at line 2 delimited by end-of-file (wanted `EOF')")).toEqual({
      line: 2,
      delimiter: 'EOF',
    });
    expect(openHereDocument('f: line 1: syntax error')).toBeNull();
  });
});
