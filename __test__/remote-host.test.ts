/**
 * `new TerminalHost({ backend })` over ACP (an SDK agent and client over a pair of streams, as over
 * stdio): every terminal runs at the far end, and what the policy judges comes from there. The far
 * end here is the local server started with a PATH, a cwd and an environment of its own, none of
 * which this process has, so a check made on this side shows as a wrong answer.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { TerminalHost } from '../ts/host';
import { ShellSessions } from '../ts/sessions';
import type { TerminalHostOptions } from '../ts/host-types';
import { connectOverStreams, type Wire } from './fixtures/acp-wire';
import { HOST_SERVER } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const sessionId = 'far-session';
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-remote-host-')));
const farBin = path.join(tmp, 'far', 'bin');
const farRoot = path.join(tmp, 'far', 'root');
const farHome = path.join(farRoot, 'home');
const nearBin = path.join(tmp, 'near', 'bin');
const FAR_PATH = `${farBin}:/usr/bin:/bin`;

function script(file: string, body: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

/** A far end: the server in `farHome`, with only `FAR_PATH` and two variables of its own. */
function farBackend(): backends.Backend {
  return backends.command([
    'sh',
    '-c',
    'cd "$1" && exec env -i PATH="$2" FAR_VISIBLE=seen FAR_SECRET=hidden "$3"',
    'far',
    farHome,
    FAR_PATH,
    HOST_SERVER,
  ]);
}

const built = fs.existsSync(HOST_SERVER);
describeIf('acp-terminal-server', built, `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)('TerminalHost({ backend })', () => {
  let backend: backends.Backend;
  let host: TerminalHost | undefined;
  let wire: Wire | undefined;
  const savedPath = process.env.PATH;

  beforeAll(() => {
    script(path.join(farBin, 'far-only'), 'printf "far-only ran in %s" "$PWD"; touch "$1"');
    script(path.join(nearBin, 'near-only'), 'echo near');
    fs.mkdirSync(farHome, { recursive: true });
    fs.symlinkSync('/etc', path.join(farRoot, 'escape'));
    // This side has a program the far end lacks, and a variable the far end does not have.
    process.env.PATH = `${nearBin}:${savedPath ?? ''}`;
    process.env.NEAR_ONLY = 'near';
    backend = farBackend();
  });
  afterAll(async () => {
    process.env.PATH = savedPath;
    delete process.env.NEAR_ONLY;
    await backend.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(async () => {
    wire?.agentConnection.close();
    wire?.clientConnection.close();
    await host?.close();
    host = undefined;
    wire = undefined;
  });

  function serve(options: TerminalHostOptions): Wire['agentConnection']['client'] {
    host = new TerminalHost({ backend, ...options });
    wire = connectOverStreams(host);
    return wire.agentConnection.client;
  }

  async function run(ctx: Wire['agentConnection']['client'], params: { command: string; args?: string[]; cwd?: string }) {
    const { terminalId } = await ctx.request('terminal/create', { sessionId, ...params });
    const exit = await ctx.request('terminal/wait_for_exit', { sessionId, terminalId });
    const out = await ctx.request('terminal/output', { sessionId, terminalId });
    await ctx.request('terminal/release', { sessionId, terminalId });
    return { exit, output: out.output };
  }

  test('a program found only in the far PATH passes an allow list and runs there, in the far cwd', async () => {
    const ctx = serve({ commandPolicy: { allow: ['far-only'] } });
    const marker = path.join(tmp, 'ran-1');
    const { exit, output } = await run(ctx, { command: 'far-only', args: [marker] });
    expect(exit).toEqual({ exitCode: 0, signal: null });
    expect(output).toBe(`far-only ran in ${farHome}`);
    expect(fs.existsSync(marker)).toBe(true);
  });

  test('a request the policy refuses is refused on this side: nothing starts at the far end', async () => {
    const ctx = serve({ commandPolicy: { deny: [`${farBin}/*`] } });
    const marker = path.join(tmp, 'ran-2');
    const error = await ctx.request('terminal/create', { sessionId, command: `far-only '${marker}'` }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ data: { code: 'ERR_POLICY_DENIED' } });
    expect((error as Error).message).toContain(`${farBin}/far-only`);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('a program missing at the far end is reported with the far end error (its PATH), though this side has it', async () => {
    const ctx = serve({ commandPolicy: { allow: ['near-only', 'far-only'] } });
    const error = await ctx.request('terminal/create', { sessionId, command: 'near-only', args: ['x'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ data: { code: 'ENOENT', path: FAR_PATH } });
    expect((error as Error).message).toContain('`near-only` not found in PATH');
  });

  test('allowedRoots and the cwd are resolved at the far end; a request without cwd starts in the far cwd', async () => {
    const ctx = serve({ allowedRoots: [farRoot] });
    // This process's cwd is outside the roots; the far end's is inside.
    expect(await run(ctx, { command: 'pwd' })).toMatchObject({ output: `${farHome}\n` });
    const error = await ctx.request('terminal/create', { sessionId, command: 'pwd', cwd: path.join(farRoot, 'escape') }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ data: { code: 'ERR_CWD_OUTSIDE_ROOTS', resolved: '/etc' } });
  });

  test('dropInheritedEnv filters the far end environment, never sends this one', async () => {
    const ctx = serve({ dropInheritedEnv: ['FAR_SECRET'] });
    const { output } = await run(ctx, { command: 'echo "${FAR_VISIBLE:-none} ${FAR_SECRET:-none} ${NEAR_ONLY:-none}"' });
    expect(output).toBe('seen none none\n');
  });

  test('a shell named by options.shell is looked up in the far PATH', async () => {
    script(path.join(farBin, 'far-sh'), 'echo "far-sh $*"');
    const ctx = serve({ shell: 'far-sh' });
    expect(await run(ctx, { command: 'hello' })).toMatchObject({ output: 'far-sh -c hello\n' });
  });

  test('bad combinations are refused naming the option', () => {
    expect(() => new TerminalHost({ backend, createTerminal: backend.createTerminal })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.backend') }),
    );
    expect(() => new TerminalHost({ backend, allowedRoots: ['relative'] })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.allowedRoots[0]') }),
    );
    expect(() => new TerminalHost({ backend: {} as never })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.backend') }));
  });
});

describeIf('acp-terminal-server', built, `${HOST_SERVER} is not built`)('ShellSessions and a remote backend', () => {
  test("a remote backend's createTerminal alone runs the session at the far end (its shell is looked at through the server)", async () => {
    const backend = backends.command([HOST_SERVER]);
    const shells = new ShellSessions({ createTerminal: backend.createTerminal as never });
    try {
      await expect(shells.execute({ command: 'echo hi; (exit 4)' })).resolves.toMatchObject({ status: 'completed', exitCode: 4, content: 'hi' });
    } finally {
      await shells.closeAll();
      await backend.close();
    }
  });
});
