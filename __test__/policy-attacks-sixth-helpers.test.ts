// The sixth independent attack on the allow list, classes A and E: an allowed program started a helper
// that read its commands from the line's own stdin (a here-document): git's editor (`git commit`, `tag -a`,
// `notes add`) and npm's (`npm edit`), both also named by configuration files the agent can write
// (`.git/config` core.editor, a project `.npmrc`), git's diff tool, perl's debugger (`perl -d`), GNU
// tar's multi-volume prompt (`!` starts a shell); and a login bash (`--noprofile -l`) ran `~/.bash_logout`.
// Under an allow list the host sets the editor variables to `false` ahead of every configuration file,
// the grammars refuse the modes that read commands, and a login shell is refused whatever its options.
// Each is first shown working without a policy, then held, as root and as nobody.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TerminalHost } from '../ts/host';
import type { TerminalHostOptions } from '../ts/host-types';
import { attackBench, runCasesAsNobody, terminalExecute, which, type Request } from './fixtures/policy-attack';
import { testIf } from './fixtures/require-feature';

const HIT = 'hit/HIT';

/**
 * The workspace: `evil` (the payload, appends its arguments to HIT), a git repository `ed` whose
 * `.git/config` names `evil` as its editor and diff tool (what `printf >> .git/config` writes), a git
 * repository `vi` without (git starts its default editor, vi), an npm project whose `.npmrc` names
 * `evil` as the editor, a perl script, a 20 KiB file for tar, and `home/.bash_logout` running `evil`.
 */
function workspace(dir: string): void {
  const cp = require('node:child_process') as typeof import('node:child_process'); // required here: this source also runs as nobody
  const w = (f: string, text: string, mode = 0o644): void => fs.writeFileSync(path.join(dir, f), text, { mode });
  const git = (repo: string, ...args: string[]): void => void cp.execFileSync('git', ['-C', `${dir}/${repo}`, ...args], { stdio: 'ignore', env: { ...process.env, HOME: dir } });
  w('evil', `#!/bin/sh\necho "$*" >> "${dir}/hit/HIT"\n`, 0o755);
  fs.mkdirSync(`${dir}/hit`, { mode: 0o777 });
  fs.chmodSync(`${dir}/hit`, 0o777);
  for (const repo of ['ed', 'vi']) {
    cp.execFileSync('git', ['init', '-q', `${dir}/${repo}`]);
    git(repo, 'config', 'user.email', 'a@b');
    git(repo, 'config', 'user.name', 'a');
    w(`${repo}/a`, 'a\n');
    git(repo, 'add', 'a');
    git(repo, 'commit', '-qm', 'a');
    w(`${repo}/a`, 'b\n');
  }
  git('ed', 'config', 'core.editor', `${dir}/evil editor`);
  git('ed', 'config', 'diff.tool', 'x');
  git('ed', 'config', 'difftool.x.cmd', `${dir}/evil difftool`);
  w('package.json', '{"name":"ws","version":"1.0.0"}\n');
  fs.mkdirSync(`${dir}/node_modules/dep`, { recursive: true });
  w('node_modules/dep/package.json', '{"name":"dep","version":"1.0.0"}\n');
  w('.npmrc', `editor=${dir}/evil npm-edit\n`);
  w('s.pl', 'print "ok\\n";\n');
  w('big.bin', 'x'.repeat(20 * 1024));
  fs.mkdirSync(`${dir}/home`);
  w('home/.bash_logout', `${dir}/evil logout\n`);
}

const bench = attackBench('sixth-helpers', HIT, workspace, 0o755);
const which_ = (p: string): string => which(p) ?? p;
/** Keeps npm and git off the network and off the caller's configuration. */
const QUIET = { HOME: 'home', npm_config_registry: 'http://127.0.0.1:9/', npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_cache: '.npm-cache' };
const allowed = (...programs: string[]): { env: Record<string, string>; commandPolicy: { allow: string[] } } => ({ env: QUIET, commandPolicy: { allow: programs.map(which_) } });
const heredoc = (line: string, input: string): string => `${line} <<'EOF'\n${input}\nEOF`;

/** Requests that ran a program the allow list does not name through the editor the allowed program starts. */
const EDITOR_ATTACKS: [string, string[], Request][] = [
  ['git commit: core.editor from .git/config', ['git'], { command: 'git -C ed commit -a' }],
  ['git tag -a: core.editor from .git/config', ['git'], { command: 'git -C ed tag -a v1' }],
  ['git notes add: core.editor from .git/config', ['git'], { command: 'git -C ed notes add' }],
];

/** Requests whose helper reads commands from the here-document: refused by the grammar. */
const GRAMMAR_ATTACKS: [string, string[], Request, Record<string, unknown>][] = [
  // npm's grammar refuses `edit` (and config writes) outright; the locked editor is the second wall.
  ['npm edit dep: editor from the project .npmrc', ['npm', 'node'], { command: 'npm edit dep' }, { reason: 'code-execution', word: 'npm' }],
  ['git difftool: the tool from .git/config', ['git'], { command: 'git -C ed difftool -y HEAD' }, { reason: 'code-execution', word: 'git' }],
  ['perl -d -w: the debugger runs `!!cmd` from stdin', ['perl'], { command: heredoc('perl -d -w s.pl', '!!./evil perl-d\nq') }, { reason: 'code-execution', word: 'perl' }],
  ['perl -dt: the debugger runs Perl statements from stdin', ['perl'], { command: heredoc('perl -dt s.pl', "system('./evil perl-dt')\nq") }, { reason: 'code-execution', word: 'perl' }],
  ['tar -cM -L 10: the volume prompt runs `!` as a shell', ['tar'], { command: heredoc('tar -cM -L 10 -f v.tar big.bin', `!\n${'\n'.repeat(4094)}./evil tar\nexit`) }, { reason: 'code-execution', word: 'tar' }],
];

/** A login bash started by a line runs `~/.bash_logout` (HOME is the workspace's `home`) at exit. */
const LOGIN_LINE: Request = { command: "bash --noprofile --norc -lc 'ls; exit'" };

describe('under an allow list an editor an allowed program starts runs nothing', () => {
  test.each(EDITOR_ATTACKS)('%s', async (label, programs, request) => {
    await bench.run(bench.host({ env: QUIET }), request);
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    const out = await bench.run(bench.host(allowed(...programs)), request);
    expect([label, bench.hit()]).toEqual([label, false]);
    expect(out).toMatch(/false|editor|Aborting/i);
  });

  testIf('vim', which('vim') !== undefined, 'vim is not installed: git has no default editor to feed')('git commit <<EOF feeds `:!cmd` to git\'s default editor (vi): held (r6-01)', async () => {
    const request = { command: heredoc('git -C vi commit -a', ':!../evil vim\n:q!') };
    await bench.run(bench.host({ env: QUIET }), request);
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    await bench.run(bench.host(allowed('git')), request);
    expect(bench.hit()).toBe(false);
  });

  test('a request cannot set the editor back, and what git and npm are for still runs', async () => {
    const h = bench.host(allowed('git', 'npm', 'node'));
    for (const name of ['GIT_EDITOR', 'EDITOR', 'VISUAL', 'npm_config_editor', 'LESSSECURE']) {
      await expect(h.createTerminal({ sessionId: 's', cwd: bench.dir, command: 'git status', env: [{ name, value: './evil' }] })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { name } });
    }
    await expect(h.createTerminal({ sessionId: 's', cwd: bench.dir, command: "GIT_EDITOR=./evil git -C ed commit -a" })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    expect(await bench.run(h, { command: 'git -C ed commit -qam msg && git -C ed log --format=%s -1' })).toBe('msg\n');
    expect(await bench.run(h, { command: 'npm pkg get name' })).toMatch(/"ws"/);
    expect(bench.hit()).toBe(false);
    fs.writeFileSync(path.join(bench.dir, 'ed', 'a'), 'c\n'); // a change again, for `git difftool HEAD`
  });

  test("MCP terminal_execute (a session's shell) under `--allow git`: git's editor is `false` too (r6-02)", async () => {
    const execute = async (options: Partial<TerminalHostOptions>): Promise<void> => {
      await terminalExecute({ cwd: bench.dir, env: QUIET, ...options }, [{ command: 'git -C ed notes add' }]);
    };
    await execute({});
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    await execute({ commandPolicy: { allow: [which_('git')] } });
    expect(bench.hit()).toBe(false);
  });

  test("the host's own env may still name an editor", async () => {
    await bench.run(bench.host({ ...allowed('git'), env: { ...QUIET, GIT_EDITOR: path.join(bench.dir, 'evil') } }), { command: 'git -C ed tag -a v2' });
    expect(bench.hit()).toBe(true);
  });
});

describe('under an allow list a helper that reads commands from stdin is refused', () => {
  test.each(GRAMMAR_ATTACKS)('%s', async (label, programs, request, refusal) => {
    await bench.ranThenRefused(label, request, bench.host(allowed(...programs)), refusal);
  });
});

describe('a login shell is refused whatever its options (r6-08)', () => {
  test("host shell ['bash', '--noprofile', '-l', '-c'] ran ~/.bash_logout at exit; refused under an allow list", async () => {
    const shell = ['bash', '--noprofile', '-l', '-c'];
    const open = bench.host({ env: { HOME: path.join(bench.dir, 'home') }, shell });
    await bench.run(open, { command: 'ls; exit' });
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    for (const s of [shell, ['bash', '--login', '--noprofile', '-c'], ['bash', '-cl'], ['bash', '--norc', '--noprofile', '-xlc']]) {
      expect(() => new TerminalHost({ cwd: bench.dir, env: { HOME: path.join(bench.dir, 'home') }, shell: s, commandPolicy: { allow: [which_('ls')] } })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^options\.shell: .*login shell/) }),
      );
    }
    // A shell that starts no login is still accepted.
    const strict = bench.host({ env: { HOME: path.join(bench.dir, 'home') }, shell: ['bash', '--noprofile', '--norc', '-c'], commandPolicy: { allow: [which_('ls')] } });
    expect(await bench.run(strict, { command: 'ls s.pl; exit' })).toBe('s.pl\n');
    expect(bench.hit()).toBe(false);
  });

  test("a line's `bash --noprofile --norc -lc 'ls; exit'` ran ~/.bash_logout; refused under an allow list", async () => {
    await bench.run(bench.host({ env: QUIET }), LOGIN_LINE);
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    await expect(bench.host(allowed('bash', 'ls')).createTerminal({ sessionId: 's', cwd: bench.dir, ...LOGIN_LINE })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'shell-construct', construct: expect.stringMatching(/login shell/) },
    });
    expect(bench.hit()).toBe(false);
  });
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: the same attacks work without a policy and are held by the allow list', () => {
  const cases = [
    ...EDITOR_ATTACKS.map(([label, programs, request]) => ({ label, request, hosts: { open: { env: QUIET }, allow: allowed(...programs) } })),
    ...GRAMMAR_ATTACKS.map(([label, programs, request]) => ({ label, request, hosts: { open: { env: QUIET }, allow: allowed(...programs) } })),
    { label: 'login', request: LOGIN_LINE, hosts: { open: { env: QUIET }, allow: allowed('bash', 'ls') } },
  ];
  const results = runCasesAsNobody(workspace.toString(), HIT, cases, true);
  for (const [label] of EDITOR_ATTACKS) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: 'held' }]);
  for (const [label, , , refusal] of GRAMMAR_ATTACKS) expect([label, results[label]]).toEqual([label, { open: 'ran', allow: `${refusal.reason as string} held` }]);
  expect(results.login).toEqual({ open: 'ran', allow: 'shell-construct held' });
});
