// The fifth independent attack on the allow list: variables nobody had listed (git's GIT_TEST_FSMONITOR,
// groff's GROFF_BIN_PATH, gcc's COMPILER_PATH, vim's VIMINIT, OpenSSL's OPENSSL_CONF, Info-ZIP's ZIP, man's
// MANROFFOPT) made an allowed program run the agent's file; bash's MAILPATH ran a command substitution
// before a session's next prompt; typed lines got history expansion. The class is closed by construction:
// under an allow list a variable is refused unless it is data only (DATA_ONLY_ENV_NAMES) or the host
// allows it (`envPolicy.allow`). Each attack is first shown working through a host that allows the
// variable, then refused by default with nothing run; the same as nobody.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import type { TerminalHost } from '../ts/host';
import { createMcpServer } from '../ts/mcp';
import { DATA_ONLY_ENV_NAMES } from '../ts/policy-env';
import { attackBench, runCasesAsNobody, which, type Request } from './fixtures/policy-attack';
import { textOf } from './fixtures/mcp-client';
import { testIf } from './fixtures/require-feature';

const S = 'fifth';
const HIT = 'hit/HIT';

/** [label, programs the allow list names, the request (files relative to the workspace), the variable] */
type Attack = [string, string[], Request, string];
const ATTACKS: Attack[] = [
  ['x30 GIT_TEST_FSMONITOR with git status', ['git'], { command: 'git', args: ['status'], env: [{ name: 'GIT_TEST_FSMONITOR', value: './evil' }] }, 'GIT_TEST_FSMONITOR'],
  ['x30 GIT_TEST_FSMONITOR assigned in a line', ['git'], { command: 'GIT_TEST_FSMONITOR=./evil git status' }, 'GIT_TEST_FSMONITOR'],
  ['x30 GIT_TEST_FSMONITOR exported in a line', ['git'], { command: 'export GIT_TEST_FSMONITOR=./evil; git diff' }, 'GIT_TEST_FSMONITOR'],
  ['x30 GIT_TEST_FSMONITOR through env NAME=value', ['git', 'env'], { command: 'env GIT_TEST_FSMONITOR=./evil git add .' }, 'GIT_TEST_FSMONITOR'],
];

function workspace(dir: string): void {
  fs.mkdirSync(path.join(dir, 'hit'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'evil'), `#!/bin/sh\necho "$0" >> "${path.join(dir, 'hit/HIT')}"\n`, { mode: 0o755 });
  require('node:child_process').execFileSync('git', ['init', '-q', dir]);
}

const bench = attackBench(S, HIT, workspace);
const { run, hit, clearHit } = bench;
const host = (allow?: string[], envAllow?: string[]): TerminalHost =>
  bench.host({
    ...(allow ? { commandPolicy: { allow: allow.map((p) => which(p) ?? p) } } : {}),
    ...(envAllow ? { envPolicy: { allow: envAllow } } : {}),
  });

describe('under an allow list, a variable is refused unless it is data only or the host allows it', () => {
  test.each(ATTACKS)('%s', async (label, programs, request, name) => {
    // The attack works under the same allow list once the host allows the variable (what a deny list did).
    await run(host(programs, [name]), request);
    expect([label, hit()]).toEqual([label, true]);
    clearHit();
    const h = host(programs);
    await expect(h.createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'env-not-allowed', name },
      message: expect.stringContaining(`\`${name}\``) as unknown,
    });
    expect(hit()).toBe(false);
    expect(h.liveTerminals).toBe(0);
  });

  test.each([
    ['x1 GROFF_BIN_PATH', 'GROFF_BIN_PATH'],
    ['x1 GROFF_COMMAND_PREFIX', 'GROFF_COMMAND_PREFIX'],
    ['x2 MANROFFOPT', 'MANROFFOPT'],
    ['x5 ZIP', 'ZIP'],
    ['x24 OPENSSL_CONF', 'OPENSSL_CONF'],
    ['x25 VIMINIT', 'VIMINIT'],
    ['x25 EXINIT', 'EXINIT'],
    ['x29 COMPILER_PATH', 'COMPILER_PATH'],
    ['x29 GCC_EXEC_PREFIX', 'GCC_EXEC_PREFIX'],
  ])('%s: refused in the request env and in a line, allowed once the host names it', async (_label, name) => {
    const h = host(['ls']);
    const request: Request = { command: 'ls', args: ['-d', '.'], env: [{ name, value: './x' }] };
    await expect(h.createTerminal({ sessionId: S, cwd: bench.dir, ...request })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { field: 'env', reason: 'env-not-allowed', name },
    });
    await expect(h.createTerminal({ sessionId: S, cwd: bench.dir, command: `${name}=./x ls -d .` })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { field: 'command', reason: 'env-not-allowed', name },
    });
    await expect(host(['ls'], [name]).createTerminal({ sessionId: S, cwd: bench.dir, ...request })).resolves.toHaveProperty('terminalId');
  });

  test('data-only names pass without the host opting in; a deny-only policy changes nothing', async () => {
    const env = DATA_ONLY_ENV_NAMES.map((name) => ({ name, value: name === 'COLUMNS' || name === 'LINES' ? '80' : 'C' }));
    await expect(host(['ls']).createTerminal({ sessionId: S, cwd: bench.dir, command: 'ls', args: ['-d', '.'], env })).resolves.toHaveProperty('terminalId');
    await expect(host(['ls']).createTerminal({ sessionId: S, cwd: bench.dir, command: 'LC_ALL=C TERM=dumb NO_COLOR=1 ls -d .' })).resolves.toHaveProperty('terminalId');
    const denyOnly = bench.host({ commandPolicy: { deny: ['rm'] } });
    await expect(denyOnly.createTerminal({ sessionId: S, cwd: bench.dir, command: 'ls', args: ['-d', '.'], env: [{ name: 'GIT_TEST_FSMONITOR', value: 'x' }] })).resolves.toHaveProperty('terminalId');
  });

  test.each([
    // x6 and every builtin that assigns a named variable: bash's own variables are not data only.
    ["export MAILCHECK=0 MAILPATH='f?$(touch X)'", 'MAILCHECK'],
    ['declare -x MAILPATH=f', 'MAILPATH'],
    ['readonly HISTFILE=f', 'HISTFILE'],
    ['typeset TEXTDOMAINDIR=.', 'TEXTDOMAINDIR'],
    ['PROMPT_COMMAND=x; ls', 'PROMPT_COMMAND'],
    ['CDPATH=/tmp; ls', 'CDPATH'],
  ])('%j (a variable bash acts on) is refused', async (line, name) => {
    await expect(host(['ls']).createTerminal({ sessionId: S, cwd: bench.dir, command: line })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { field: 'command', name },
    });
  });

  test.each(['read MAILPATH', 'printf -v MAILPATH x', 'mapfile MAILPATH', 'getopts a MAILPATH', 'set -H', 'set -o histexpand'])(
    '%j is refused',
    async (line) => {
      await expect(host(['ls', 'printf']).createTerminal({ sessionId: S, cwd: bench.dir, command: line })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    },
  );
});

describe('sessions (MCP) under an allow list', () => {
  async function session(envAllow?: string[]) {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(bench.dir, 'mcp-')));
    const mcp = createMcpServer({ cwd: dir, commandPolicy: { allow: ['echo', 'printf', 'sleep', 'tar'] }, ...(envAllow ? { envPolicy: { allow: envAllow } } : {}) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.factory().connect(serverSide);
    const client = new Client({ name: 'fifth', version: '1' });
    await client.connect(clientSide);
    const call = (args: Record<string, unknown>) => client.callTool({ name: 'terminal_execute', arguments: args });
    return { dir, call, close: async () => (await client.close(), await mcp.close()) };
  }

  test("x6: MAILPATH's message runs a command substitution before the next prompt; refused by default", async () => {
    const mail = async (s: Awaited<ReturnType<typeof session>>) => {
      const set = await s.call({ command: `export MAILCHECK=0 MAILPATH='${s.dir}/mb?$(printf x > ${s.dir}/PWNED)'` });
      await s.call({ command: `printf x > ${s.dir}/mb` });
      await s.call({ command: 'sleep 1.2' });
      await s.call({ command: `printf y >> ${s.dir}/mb` });
      await s.call({ command: 'echo next' });
      await s.call({ command: 'echo next2' });
      return set;
    };
    const open = await session(['MAILCHECK', 'MAILPATH']);
    try {
      await mail(open);
      expect(fs.existsSync(path.join(open.dir, 'PWNED'))).toBe(true);
    } finally {
      await open.close();
    }
    const strict = await session();
    try {
      expect(textOf(await mail(strict))).toMatch(/^ERR_POLICY_DENIED: .*`MAILCHECK`.*envPolicy\.allow/);
      expect(fs.existsSync(path.join(strict.dir, 'PWNED'))).toBe(false);
    } finally {
      await strict.close();
    }
  });

  test('x16: typed text, where history expansion turned `!!:1` into an earlier line\'s words, is refused', async () => {
    const s = await session();
    try {
      fs.writeFileSync(path.join(s.dir, 'f'), 'x');
      // Typed text (where the attack lived: the text reached the shell as a line) is refused outright.
      await s.call({ command: 'sleep 0.6', timeout: 0.2 });
      const typed = await s.call({ command: `echo --checkpoint=1 --checkpoint-action=exec=printf\\ x\\ \\>${s.dir}/PWNED`, is_input: true, timeout: 2 });
      expect(textOf(typed)).toMatch(/^ERR_POLICY_DENIED: is_input: typed text is refused/);
      await s.call({ command: '', timeout: 2 });
      expect(fs.existsSync(path.join(s.dir, 'PWNED'))).toBe(false);
    } finally {
      await s.close();
    }
  });
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: the env attacks run when the host allows the variable and are refused by default', () => {
  const cases = ATTACKS.map(([label, programs, request, name]) => {
    const commandPolicy = { allow: programs.map((p) => which(p) ?? p) };
    return { label, request, hosts: { open: { commandPolicy, envPolicy: { allow: [name] } }, strict: { commandPolicy } } };
  });
  // A workspace nobody owns (git refuses a repository in a directory another user owns).
  const results = runCasesAsNobody(workspace.toString(), HIT, cases, true);
  for (const [label] of ATTACKS) expect([label, results[label]]).toEqual([label, { open: 'ran', strict: 'env-not-allowed held' }]);
});
