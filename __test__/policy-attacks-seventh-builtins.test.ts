// The seventh independent attack on the allow list: a declaration builtin (`export`, `declare -x`,
// `typeset -x`) or `unset` reached behind a prefix (`command`, `command -p`, `command --`, `builtin`,
// `command builtin`, `!`, `time`, `time -p`) or under a quoted name (`"export"`, `\export`) was not judged
// as the builtin in first position: `TAR_OPTIONS` and `GIT_EXTERNAL_DIFF` reached the allowed tar and git
// (which ran a program the list does not name), and `unset` removed the editor variables the host locks.
// The analysis now judges every builtin word by its name wherever the walk reaches it. Each spelling is
// first shown working without a policy, then refused, as root and as nobody; through a sh and a bash
// host, an argv `bash -c` request, a session's shell (MCP terminal_execute) and a far-end backend.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import * as backends from '../ts/backends';
import { createMcpServer } from '../ts/mcp';
import type { TerminalHostOptions } from '../ts/host-types';
import { attackBench, runCasesAsNobody, terminalExecute, which, type Request } from './fixtures/policy-attack';
import { textOf } from './fixtures/mcp-client';
import { testIf } from './fixtures/require-feature';

const HIT = 'hit/HIT';

/**
 * The workspace: `evil` (the payload, appends its arguments to HIT), files for tar and `git diff`, and a
 * git repository `ed` with a change to commit whose `.git/config` names `evil` as its editor (what git
 * runs once the host's `GIT_EDITOR` is unset).
 */
function workspace(dir: string): void {
  const cp = require('node:child_process') as typeof import('node:child_process'); // required here: this source also runs as nobody
  const w = (f: string, text: string, mode = 0o644): void => fs.writeFileSync(path.join(dir, f), text, { mode });
  const git = (...args: string[]): void => void cp.execFileSync('git', ['-C', `${dir}/ed`, ...args], { stdio: 'ignore', env: { ...process.env, HOME: dir } });
  w('evil', `#!/bin/sh\necho "$*" >> "${dir}/hit/HIT"\n`, 0o755);
  fs.mkdirSync(`${dir}/hit`, { mode: 0o777 });
  fs.chmodSync(`${dir}/hit`, 0o777);
  w('f1', 'a\n');
  w('f2', 'b\n');
  cp.execFileSync('git', ['init', '-q', `${dir}/ed`]);
  git('config', 'user.email', 'a@b');
  git('config', 'user.name', 'a');
  w('ed/a', 'a\n');
  git('add', 'a');
  git('commit', '-qm', 'a');
  w('ed/a', 'b\n');
  git('config', 'core.editor', `${dir}/evil editor`);
}

const bench = attackBench('seventh-builtins', HIT, workspace, 0o755);
const which_ = (p: string): string => which(p) ?? p;
/** Keeps git off the caller's configuration (HOME may be unreadable to nobody). */
const QUIET = { HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' };
const TAR = "TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=./evil'";
const TAR_RUN = 'tar cf out.tar f1';
const GIT_DIFF = "GIT_EXTERNAL_DIFF='./evil diff'";
const GIT_DIFF_RUN = 'git diff --no-index f1 f2';
const UNSET = 'unset -v GIT_EDITOR EDITOR VISUAL LESSSECURE';
const UNSET_RUN = 'git -C ed commit -a';

type Shell = 'sh' | 'bash';
/** [label, shell, line, the variable the refusal names]: each line ran `evil` through an allowed tar or git. */
const LINES: [string, Shell, string, string][] = [
  ...(['sh', 'bash'] as const).flatMap((shell): [string, Shell, string, string][] => [
    [`${shell}: command export`, shell, `command export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
    [`${shell}: command -p export`, shell, `command -p export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
    [`${shell}: command -- export`, shell, `command -- export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
    [`${shell}: ! export`, shell, `! export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
    [`${shell}: "export" (a quoted name)`, shell, `"export" ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
    [`${shell}: \\export (an escaped name)`, shell, `\\export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
    [`${shell}: command export GIT_EXTERNAL_DIFF`, shell, `command export ${GIT_DIFF}; ${GIT_DIFF_RUN}`, 'GIT_EXTERNAL_DIFF'],
    [`${shell}: command unset of the locked editor variables`, shell, `command ${UNSET}; ${UNSET_RUN}`, 'GIT_EDITOR'],
  ]),
  ['bash: builtin export', 'bash', `builtin export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
  ['bash: builtin typeset -x', 'bash', `builtin typeset -x ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
  ['bash: command declare -x', 'bash', `command declare -x ${GIT_DIFF}; ${GIT_DIFF_RUN}`, 'GIT_EXTERNAL_DIFF'],
  ['bash: command builtin export', 'bash', `command builtin export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
  ['bash: time export', 'bash', `time export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
  ['bash: time -p export', 'bash', `time -p export ${TAR}; ${TAR_RUN}`, 'TAR_OPTIONS'],
  ['bash: builtin unset', 'bash', `builtin ${UNSET}; ${UNSET_RUN}`, 'GIT_EDITOR'],
  ['bash: ! unset', 'bash', `! ${UNSET}; ${UNSET_RUN}`, 'GIT_EDITOR'],
];

const strictOptions = (shell: Shell): Partial<TerminalHostOptions> => ({
  env: QUIET,
  ...(shell === 'bash' ? { shell: 'bash' } : {}),
  commandPolicy: { allow: [which_('tar'), which_('git')] },
});
const openOptions = (shell: Shell): Partial<TerminalHostOptions> => ({ env: QUIET, ...(shell === 'bash' ? { shell: 'bash' } : {}) });

describe('a builtin behind a prefix is judged as the builtin in first position', () => {
  test('control: the builtin in first position is refused', async () => {
    await expect(bench.host(strictOptions('sh')).createTerminal({ sessionId: 's', cwd: bench.dir, command: `export ${TAR}; ${TAR_RUN}` })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { name: 'TAR_OPTIONS' },
    });
  });

  test.each(LINES)('%s: ran without a policy, refused under an allow list', async (label, shell, command, name) => {
    await bench.run(bench.host(openOptions(shell)), { command });
    expect([label, bench.hit()]).toEqual([label, true]);
    bench.clearHit();
    const strict = bench.host(strictOptions(shell));
    await expect(strict.createTerminal({ sessionId: 's', cwd: bench.dir, command })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { name } });
    expect(bench.hit()).toBe(false);
    expect(strict.liveTerminals).toBe(0);
  });

  test('in the -c script of an argv request', async () => {
    for (const script of [`command export ${TAR}; ${TAR_RUN}`, `builtin export ${TAR}; ${TAR_RUN}`, `command ${UNSET}; ${UNSET_RUN}`]) {
      const request: Request = { command: 'bash', args: ['-c', script] };
      const strict = bench.host({ ...strictOptions('bash'), commandPolicy: { allow: [which_('tar'), which_('git'), which_('bash')] } });
      await bench.ranThenRefused(script, request, strict, { field: 'command' });
    }
  });

  test("through a session's shell (MCP terminal_execute)", async () => {
    const command = `command export ${TAR}; ${TAR_RUN}`;
    const [open] = await terminalExecute({ cwd: bench.dir, env: QUIET }, [{ command }]);
    expect([open, bench.hit()]).toEqual([open, true]);
    bench.clearHit();
    const [strict] = await terminalExecute({ cwd: bench.dir, env: QUIET, commandPolicy: { allow: [which_('tar')] } }, [{ command }]);
    expect(strict).toMatch(/TAR_OPTIONS/);
    expect(bench.hit()).toBe(false);
  });

  test('through MCP `run`', async () => {
    const run = async (options: TerminalHostOptions, command: string): Promise<string> => {
      const mcp = createMcpServer(options);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await mcp.factory().connect(serverSide);
      const client = new Client({ name: 'seventh-builtins', version: '1' });
      await client.connect(clientSide);
      try {
        return textOf(await client.callTool({ name: 'run', arguments: { command } }));
      } finally {
        await client.close();
        await mcp.close();
      }
    };
    const command = `builtin export ${TAR}; ${TAR_RUN}`;
    await run({ cwd: bench.dir, env: QUIET, shell: 'bash' }, command);
    expect(bench.hit()).toBe(true);
    bench.clearHit();
    expect(await run({ cwd: bench.dir, env: QUIET, shell: 'bash', commandPolicy: { allow: [which_('tar')] } }, command)).toMatch(/TAR_OPTIONS/);
    expect(bench.hit()).toBe(false);
  });

  test('through a far-end backend (backends.local())', async () => {
    const backend = backends.local();
    try {
      const command = `command export ${TAR}; ${TAR_RUN}`;
      await bench.run(bench.host({ backend, env: QUIET, allowedRoots: [bench.dir] }), { command });
      expect(bench.hit()).toBe(true);
      bench.clearHit();
      const host = bench.host({ backend, env: QUIET, allowedRoots: [bench.dir], commandPolicy: { allow: [which_('tar')] } });
      await expect(host.createTerminal({ sessionId: 's', cwd: bench.dir, command })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: { name: 'TAR_OPTIONS' } });
      expect(bench.hit()).toBe(false);
      await host.close();
    } finally {
      await backend.close();
    }
  });

  test('what these builtins are for still runs under an allow list', async () => {
    const h = bench.host(strictOptions('bash'));
    expect(await bench.run(h, { command: 'command export LANG=C; builtin export TZ=UTC; command -v tar >/dev/null && tar --version' })).toMatch(/tar/);
    expect(bench.hit()).toBe(false);
  });
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: every spelling works without a policy and is refused by the allow list', () => {
  const cases = LINES.map(([label, shell, command]) => ({ label, request: { command }, hosts: { open: openOptions(shell), allow: strictOptions(shell) } }));
  const results = runCasesAsNobody(workspace.toString(), HIT, cases, true);
  for (const [label] of LINES) {
    const refused = results[label]?.allow;
    expect([label, results[label]?.open, refused]).toEqual([label, 'ran', expect.stringMatching(/^env(-not-allowed)? held$/)]);
  }
});
