// TerminalHost policy: which programs a request may run (commandPolicy, shell lines, the shell, program
// resolution), on the scripted fake backend with a real temporary tree (fixtures/policy-host.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TerminalHost, type TerminalHostOptions } from '../ts/host';
import { resolveProgram } from '../ts/index';
import { expectConstructorRejects } from './fixtures/host-assert';
import { backend, bin, events, failure, newHost, S, script, tmp, usePolicyFixtures } from './fixtures/policy-host';

let host: TerminalHost;

usePolicyFixtures();

beforeEach(() => {
  host = newHost();
});

describe('commandPolicy', () => {
  // Programs are found through the host's PATH (its env overlay here), never the request's.
  const withPath = (options: TerminalHostOptions): TerminalHost => newHost({ env: { PATH: `${bin}:/usr/bin:/bin` }, ...options });

  test('deny by name: argv requests are resolved through PATH and refused with ERR_POLICY_DENIED', async () => {
    host = withPath({ commandPolicy: { deny: ['deploy'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'deploy', args: ['--prod'] }));
    expect(err.code).toBe('ERR_POLICY_DENIED');
    expect(err.message).toContain(`\`deploy\` (${path.join(bin, 'deploy')}) is denied by this client's command policy (rule "deploy")`);
    expect(err.details).toMatchObject({ reason: 'deny-rule', word: 'deploy', program: path.join(bin, 'deploy') });
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED', command: 'deploy', args: ['--prod'] })]);
  });

  test('a symlink to a denied program is refused through its real path', async () => {
    host = withPath({ commandPolicy: { deny: [path.join(bin, 'deploy')] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'innocent', args: ['x'] }));
    expect(err.code).toBe('ERR_POLICY_DENIED');
    expect(err.message).toContain('-> ' + path.join(bin, 'deploy'));
  });

  test('an allowed argv request runs the resolved absolute path, reported as program', async () => {
    host = withPath({ commandPolicy: { allow: [path.join(bin, 'build')] } });
    await host.createTerminal({ sessionId: S, command: 'build', args: ['all'] });
    expect(backend.terminals[0]!.params).toMatchObject({ command: path.join(bin, 'build'), args: ['all'] });
    expect(events[0]).toMatchObject({ type: 'created', command: 'build', program: path.join(bin, 'build') });
  });

  test('a broad rule admits only programs the analysis understands: refuse what is not understood (unknown-program)', async () => {
    host = withPath({ commandPolicy: { allow: [`${bin}/*`] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'build', args: ['all'] }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'unknown-program', word: 'build', rule: `"${bin}/*"` } });
    expect(err.message).toContain(`naming it exactly ("${path.join(bin, 'build')}")`);
    expect(backend.terminals).toHaveLength(0);
    // Named exactly, the user took responsibility for it.
    host = withPath({ commandPolicy: { allow: [`${bin}/*`, path.join(bin, 'build')] } });
    await host.createTerminal({ sessionId: S, command: 'build', args: ['all'] });
    expect(backend.terminals).toHaveLength(1);
  });

  test('allow list: anything else is refused, naming the program', async () => {
    host = withPath({ commandPolicy: { allow: ['build'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'deploy', args: ['x'] }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'not-allowed', word: 'deploy' } });
    expect(err.message).toMatch(/not among the commands this client allows/);
  });

  test('an argv program that does not exist keeps the core code ENOENT (a failed event)', async () => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'no-such-program-xyz', args: ['a'] }));
    expect(err.code).toBe('ENOENT');
    expect(events[0]).toMatchObject({ type: 'failed', code: 'ENOENT' });
  });

  test.each([
    ['git status && rm -rf build', 'rm'],
    ['echo $(rm -rf build)', 'rm'],
    ['sudo rm -rf /', 'rm'],
    ['FOO=1 command rm x', 'rm'],
    ["bash -c 'rm x'", 'rm'],
    ['find . -exec rm {} +', 'rm'],
  ])('shell lines: %j is refused because of %s', async (line, word) => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    const err = await failure(host.createTerminal({ sessionId: S, command: line }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { word } });
    expect(backend.terminals).toHaveLength(0);
  });

  test('argv requests that run a shell line are checked too', async () => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    await expect(host.createTerminal({ sessionId: S, command: '/bin/bash', args: ['-c', 'ls; rm -rf x'] })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { word: 'rm' },
    });
  });

  test('with only deny rules, run-time command words pass (they cannot be checked)', async () => {
    host = withPath({ commandPolicy: { deny: ['rm'] } });
    await expect(host.createTerminal({ sessionId: S, command: '$CMD x' })).resolves.toHaveProperty('terminalId');
  });

  test('with an allow list, run-time command words and malformed lines are refused', async () => {
    host = withPath({ commandPolicy: { allow: ['ls'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'ls; $CMD' })).rejects.toMatchObject({ details: { reason: 'dynamic', word: '$CMD' } });
    await expect(host.createTerminal({ sessionId: S, command: 'ls "unterminated' })).rejects.toMatchObject({ details: { reason: 'unparsable' } });
  });

  test('with an allow list, safe builtins need no rule but eval and unknown names do', async () => {
    host = withPath({ commandPolicy: { allow: ['ls', 'grep'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'cd /tmp && ls | grep x; echo done; exit 0' })).resolves.toHaveProperty('terminalId');
    await expect(host.createTerminal({ sessionId: S, command: "eval 'ls'" })).rejects.toMatchObject({ details: { word: 'eval' } });
    await expect(host.createTerminal({ sessionId: S, command: 'myfunc' })).rejects.toMatchObject({ details: { word: 'myfunc' } });
  });

  test("shellLines: 'deny' refuses every arg-less request", async () => {
    host = withPath({ commandPolicy: { shellLines: 'deny' } });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'ls' }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { reason: 'shell-line' } });
    expect(err.message).toMatch(/args/);
    await expect(host.createTerminal({ sessionId: S, command: 'ls', args: ['-l'] })).resolves.toHaveProperty('terminalId');
  });

  test('with shell: false, an arg-less command is a program, checked as such', async () => {
    host = withPath({ shell: false, commandPolicy: { allow: ['build'] } });
    await host.createTerminal({ sessionId: S, command: 'build' });
    expect(backend.terminals[0]!.params.command).toBe(path.join(bin, 'build'));
  });

  test('RegExp and function rules; a throwing function counts as a match for deny', async () => {
    const seen: unknown[] = [];
    host = withPath({
      commandPolicy: {
        deny: [
          /\/deploy$/,
          (c) => {
            seen.push(c);
            return false;
          },
        ],
      },
    });
    await expect(host.createTerminal({ sessionId: S, command: 'deploy', args: ['x'] })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    await host.createTerminal({ sessionId: S, command: 'build', args: ['x'] });
    expect(seen).toContainEqual({ word: 'build', path: path.join(bin, 'build'), realPath: path.join(bin, 'build'), builtin: false, dynamic: false });
    const throwing = withPath({
      commandPolicy: {
        deny: [
          () => {
            throw new Error('rule bug');
          },
        ],
      },
    });
    await expect(throwing.createTerminal({ sessionId: S, command: 'ls' })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    await throwing.close();
  });

  test.each([
    ['options.commandPolicy', { commandPolicy: 'strict' }],
    ['options.commandPolicy.allow', { commandPolicy: { allow: 'ls' } }],
    ['options.commandPolicy.deny[0]', { commandPolicy: { deny: [''] } }],
    ['options.commandPolicy.deny[1]', { commandPolicy: { deny: ['rm', 7] } }],
    ['options.commandPolicy.shellLines', { commandPolicy: { shellLines: 'maybe' } }],
  ])('the constructor rejects a bad %s', expectConstructorRejects);
});

describe('program resolution', () => {
  // One owner: the host resolves programs with the core's own resolveProgram (what createTerminal executes).
  test('resolveProgram follows execvp: PATH order, relative paths against cwd, ENOENT / EACCES', () => {
    const other = path.join(tmp, 'bin2');
    fs.mkdirSync(other, { recursive: true });
    script(other, 'build');
    fs.writeFileSync(path.join(other, 'not-exec'), 'x', { mode: 0o644 });
    expect(resolveProgram('build', { path: `${bin}:${other}` })).toBe(path.join(bin, 'build'));
    expect(resolveProgram('build', { path: `/nonexistent:${other}:${bin}` })).toBe(path.join(other, 'build'));
    expect(resolveProgram('./build', { cwd: bin })).toBe(path.join(bin, 'build'));
    expect(resolveProgram('build', { cwd: bin, path: '' })).toBe(path.join(bin, 'build'));
    expect(() => resolveProgram('not-exec', { path: other })).toThrow(expect.objectContaining({ code: 'EACCES' }));
    expect(() => resolveProgram('nothing-here', { path: other })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => resolveProgram('./nothing', { cwd: other })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});

describe('shell lines under an allow list: what the checked words will run', () => {
  const allow = (options: Partial<TerminalHostOptions> = {}): TerminalHost =>
    newHost({ commandPolicy: { allow: ['ls', 'grep', 'bash', 'sh', 'myhelper'] }, ...options });

  test.each([
    ['PATH=/tmp/x ls f', { reason: 'env', name: 'PATH' }],
    ['export PATH=/tmp/x; ls f', { reason: 'env', name: 'PATH' }],
    ['LD_PRELOAD=/tmp/e.so ls', { reason: 'env', name: 'LD_PRELOAD' }],
    ['declare -x BASH_ENV=/tmp/rc; bash -c ls', { reason: 'env', name: 'BASH_ENV' }],
    ['printf -v PATH /tmp/x; ls', { reason: 'env', name: 'PATH' }],
    // Constructs outside plain commands are refused as such (before, some were judged by
    // what they assigned or defined).
    [': ${PATH:=/tmp/x}; ls', { reason: 'env', name: 'PATH' }],
    ['for PATH in /tmp/x; do ls; done', { reason: 'env', name: 'PATH' }],
    ['env GIT_SSH_COMMAND=x ls', { reason: 'env', name: 'GIT_SSH_COMMAND' }],
    // Every assignment is judged by the data-only rule first: `r` is not a name the host allowed.
    ['declare -n r=PATH; r=/tmp/x; ls', { reason: 'env-not-allowed', name: 'r' }],
    ['x=1; ls $x', { reason: 'env-not-allowed', name: 'x' }],
    ['export "$X"; ls', { reason: 'env', name: '$X' }],
    ['while IFS= read -r l; do echo "$l"; done < f', { reason: 'env', name: 'IFS' }],
    ['hash -p /tmp/x/rm ls; ls', { reason: 'redefinition', word: 'ls', kind: 'hash' }],
    ["alias ls='rm -rf'\nls x", { reason: 'redefinition', word: 'ls', kind: 'alias' }],
    ['enable -n echo; echo hi', { reason: 'redefinition', word: 'echo', kind: 'enable' }],
    ['ls() { grep x f; }; ls', { reason: 'shell-construct', construct: 'a function definition' }],
    ['builtin() { ls; }; builtin cd /', { reason: 'shell-construct', construct: 'a function definition' }],
    ['function grep { ls; }', { reason: 'shell-construct', construct: 'a function definition' }],
    ['f() { ls; }', { reason: 'shell-construct', construct: 'a function definition' }],
    ['echo rm f | sh', { reason: 'shell-input', word: 'sh' }],
    ['sh <<EOF\nrm f\nEOF', { reason: 'shell-input', word: 'sh' }],
    ['bash <<< "rm f"', { reason: 'shell-construct', position: 5 }],
    ['bash -s < script', { reason: 'shell-input', word: 'bash' }],
    ['bash script.sh', { reason: 'shell-input', word: 'bash' }],
  ])('%j is refused', async (line, details) => {
    host = allow();
    const err = await failure(host.createTerminal({ sessionId: S, command: line }));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { field: 'command', ...details } });
    expect(backend.terminals).toHaveLength(0);
  });

  test.each([
    "bash -c 'ls | grep x'",
    'LC_ALL=C ls; TZ=UTC ls',
    'ls | grep -c x; echo "$?"',
    'cd /tmp && ls',
  ])('%j passes', async (line) => {
    host = allow();
    await expect(host.createTerminal({ sessionId: S, command: line })).resolves.toHaveProperty('terminalId');
  });

  test('IFS and x assignments pass once the host allows them; deny-only policies do not look at assignments', async () => {
    host = allow({ envPolicy: { allow: ['IFS', 'x'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'IFS=, ls f; echo "$a"' })).resolves.toHaveProperty('terminalId');
    await expect(host.createTerminal({ sessionId: S, command: 'x=1; ls $x' })).resolves.toHaveProperty('terminalId');
    const denyOnly = newHost({ commandPolicy: { deny: ['rm'] } });
    await expect(denyOnly.createTerminal({ sessionId: S, command: 'PATH=/tmp/x ls; alias x=y; echo a | sh' })).resolves.toHaveProperty('terminalId');
    await denyOnly.close();
  });
});

describe('the shell used for shell lines', () => {
  test("a bare name is resolved once through the host's PATH; an unknown one is ERR_INVALID_ARG", async () => {
    host = newHost({ shell: 'sh' });
    await host.createTerminal({ sessionId: S, command: 'ls', env: [{ name: 'PATH', value: bin }] });
    expect(backend.terminals[0]!.options!.shell).toBe(resolveProgram('sh'));
    expect(path.isAbsolute(backend.terminals[0]!.options!.shell as string)).toBe(true);
    expect(() => new TerminalHost({ shell: 'no-such-shell-xyz' })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^options\.shell:/) }));
    const relative = newHost({ shell: './build', cwd: bin });
    await relative.createTerminal({ sessionId: S, command: 'x' });
    expect(backend.terminals[1]!.options!.shell).toBe(path.join(bin, 'build'));
    await relative.close();
  });
});
