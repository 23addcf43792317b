/**
 * The guards of `acp-terminal mcp` against its own clients: the persistent shell runs the line the host
 * checked (rebuilt under an allow list), text typed into a running command is refused under a policy and put
 * to the user as typed input under --ask, sessions honour --limit and --timeout, --http needs a bearer
 * token, and a 2026-07-28 client cannot forge or move an approval through `requestState`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { createMcpServer } from '../ts/mcp';
import { loadNative } from '../ts/native';
import { ShellSessions } from '../ts/sessions';
import type { ExecuteRequest, ExecuteResult } from '../ts/session-types';
import { alive, CLI, connect, ERAS, structured, textOf, until } from './fixtures/mcp-client';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-guards-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('terminal_execute runs what the host checked', () => {
  test('under an allow list the shell gets the line rebuilt from the check: a symlink retargeted after the check changes nothing', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'rebuilt-'));
    fs.mkdirSync(path.join(dir, 'bin'));
    const echo = fs.realpathSync(loadNative().resolveProgram('echo', { path: process.env.PATH ?? null }));
    const link = path.join(dir, 'bin', 'tool');
    fs.symlinkSync(echo, link);
    const evil = path.join(dir, 'evil.sh');
    fs.writeFileSync(evil, `#!/bin/sh\ntouch ${dir}/pwned\n`, { mode: 0o755 });
    // Stands for an earlier command still running in the background that retargets the link between the
    // host's check and the shell's exec (here: deterministically, right after the check).
    let retarget = true;
    class Racing extends ShellSessions {
      override execute(request: ExecuteRequest): Promise<ExecuteResult> {
        if (retarget && request.command !== '') {
          retarget = false;
          fs.unlinkSync(link);
          fs.symlinkSync(evil, link);
        }
        return super.execute(request);
      }
    }
    const mcp = createMcpServer({ cwd: dir, commandPolicy: { allow: ['echo'] } }, { sessions: new Racing({ cwd: dir }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.factory().connect(serverSide);
    const client = new Client({ name: 'rebuilt', version: '1' });
    await client.connect(clientSide);
    try {
      const ran = await client.callTool({ name: 'terminal_execute', arguments: { command: 'bin/tool checked', timeout: 10 } });
      expect(fs.readlinkSync(link)).toBe(evil); // the retarget happened
      expect(structured(ran)).toMatchObject({ status: 'completed', exit_code: 0, content: 'checked' });
      expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
      // What is not allowed is still refused, and the session's state persists between rebuilt lines.
      const refused = await client.callTool({ name: 'terminal_execute', arguments: { command: 'touch x' } });
      expect(textOf(refused)).toMatch(/^ERR_POLICY_DENIED: .*touch/);
      await client.callTool({ name: 'terminal_execute', arguments: { command: 'cd bin' } });
      const there = await client.callTool({ name: 'terminal_execute', arguments: { command: 'echo "$PWD"' } });
      expect(structured(there).content).toBe(path.join(dir, 'bin'));
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});

describe.each(ERAS)('typed input under a policy, %s era', (era) => {
  test('under an allow list, typed text is refused: a program that reads part of it cannot leave the rest to the shell', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, `typeahead-${era}-`));
    const server = await connect(era, ['--cwd', dir, '--allow', 'sleep', '--allow', 'echo', '--allow', 'cat', '--allow', 'dd']);
    try {
      const call = (args: Record<string, unknown>) => server.client.callTool({ name: 'terminal_execute', arguments: args });
      // The attack (fifth attack, x3): `dd bs=5 count=1` reads 5 bytes; `echo touch pwned` would be judged as `echo`,
      // dd eats "echo " and the shell runs `touch pwned`.
      expect(structured(await call({ command: 'dd bs=5 count=1 status=none', timeout: 0.3 }))).toMatchObject({ status: 'running' });
      const typed = await call({ command: 'echo touch pwned', is_input: true, timeout: 2 });
      expect(textOf(typed)).toMatch(/^ERR_POLICY_DENIED: is_input: typed text is refused .*whatever reads the terminal.*C-c/);
      // Keys that type, recall or edit text are refused too (Escape: vi's commands; Up: history; Tab: completion).
      for (const key of ['Escape', 'Up', 'Tab', 'BSpace', 'M-x']) {
        expect(textOf(await call({ command: key, is_input: true }))).toMatch(new RegExp(`^ERR_POLICY_DENIED: .*key "${key}"`));
      }
      expect(textOf(await call({ command: 'C-d', is_input: true, timeout: 5 }))).not.toMatch(/^ERR_/);
      expect(structured(await call({ command: '', timeout: 10 }))).toMatchObject({ status: 'completed' });
      await sleep(500);
      expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
      // Plain text into a program that reads it all is refused the same way; C-c still interrupts.
      expect(structured(await call({ command: 'cat', timeout: 0.3 }))).toMatchObject({ status: 'running' });
      expect(textOf(await call({ command: 'hello', is_input: true, timeout: 2 }))).toMatch(/^ERR_POLICY_DENIED: is_input: /);
      expect(structured(await call({ command: 'C-c', is_input: true, timeout: 5 }))).toMatchObject({ status: 'completed' });
      expect(structured(await call({ command: 'echo after' }))).toMatchObject({ status: 'completed', content: 'after', exit_code: 0 });
    } finally {
      await server.close();
    }
  });

  test('under --ask, typed text is put to the user as typed input into the foreground program, not as a command line', async () => {
    const asked: string[] = [];
    let answer = true;
    const server = await connect(era, ['--ask', '--cwd', tmp], {
      elicit: (message) => {
        asked.push(message);
        return { action: 'accept', content: { approve: answer } };
      },
    });
    try {
      const call = (args: Record<string, unknown>) => server.client.callTool({ name: 'terminal_execute', arguments: args });
      expect(structured(await call({ command: 'head -c 5', timeout: 0.5 }))).toMatchObject({ status: 'running' });
      answer = false;
      const marker = path.join(tmp, `asked-${era}`);
      expect(textOf(await call({ command: `echo touch ${marker}`, is_input: true }))).toMatch(/^ERR_NOT_APPROVED: /);
      answer = true;
      const typed = await call({ command: 'hello', is_input: true, timeout: 5 });
      expect(structured(typed).content).toContain('hello');
      const head = fs.realpathSync(loadNative().resolveProgram('head', { path: process.env.PATH ?? null }));
      const question = (text: string) =>
        new RegExp(
          `^Type this text into ${head.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(pid \\d+\\) in terminal "default"\\?\\n\\n` +
            `${JSON.stringify(text).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\n\\nThis is not a command the policy checked: .*read by the shell as a command line`,
          's',
        );
      expect(asked).toEqual([expect.stringContaining('head -c 5'), expect.stringMatching(question(`echo touch ${marker}`)), expect.stringMatching(question('hello'))]);
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('sessions honour --limit and --timeout', () => {
  test('the session shell runs under the limits, and a command past --timeout is stopped whether or not a call waits', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'limits-'));
    const server = await connect('legacy', ['--cwd', dir, '--limit', 'processes=300', '--limit', 'openFiles=77', '--timeout', '1.5']);
    try {
      const call = (args: Record<string, unknown>) => server.client.callTool({ name: 'terminal_execute', arguments: args });
      const limits = structured(await call({ command: 'cat /proc/$$/limits' })).content as string;
      expect(limits).toMatch(/^Max processes +300 +300 /m);
      expect(limits).toMatch(/^Max open files +77 +77 /m);
      // A call waiting on the command: it is stopped at 1.5 s, and the call says so.
      const started = Date.now();
      const waited = await call({ command: `sh -c 'echo $$ > waited.pid; exec sleep 60'`, timeout: 30 });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(structured(waited)).toMatchObject({ status: 'completed', timed_out: 'this' });
      expect(textOf(waited)).toMatch(/the command was stopped: it ran longer than the server's limit of 1\.5 s/);
      expect(alive(Number(fs.readFileSync(path.join(dir, 'waited.pid'), 'utf8')))).toBe(false);
      // No call waiting: stopped all the same, and the next call reports it.
      expect(structured(await call({ command: `sh -c 'echo $$ > left.pid; exec sleep 60'`, timeout: 0.3 }))).toMatchObject({ status: 'running' });
      await until(() => fs.existsSync(path.join(dir, 'left.pid')), 'the command to start');
      const pid = Number(fs.readFileSync(path.join(dir, 'left.pid'), 'utf8'));
      await until(() => !alive(pid), `pid ${pid} to be stopped at --timeout`, 15_000);
      const next = await call({ command: 'echo next' });
      expect(structured(next)).toMatchObject({ status: 'completed', exit_code: 0, timed_out: 'previous' });
      expect(structured(next).content).toMatch(/next$/);
      // A command within the limit is not touched.
      expect(structured(await call({ command: 'sleep 0.5; echo fine', timeout: 10 }))).toMatchObject({ status: 'completed', content: 'fine', exit_code: 0 });
    } finally {
      await server.close();
    }
  });
});

/** Starts `acp-terminal mcp --http 0 ...flags`; resolves with its URL and the stderr lines so far. */
async function httpServer(flags: string[] = []): Promise<{ child: ChildProcess; url: string; lines: string[]; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'mcp', '--http', '0', '--cwd', tmp, ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    let found: string | undefined;
    readline.createInterface({ input: child.stderr! }).on('line', (text) => {
      lines.push(text);
      const m = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
      if (m) found = m[1]!;
      if (found && /Authorization: Bearer/.test(text)) resolve(found);
    });
    child.once('exit', () => reject(new Error(`server exited: ${lines.join('\n')}`)));
  });
  return { child, url, lines, exited };
}

function post(url: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'token', version: '1' } },
  });
  return new Promise<number>((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('--http needs a bearer token', () => {
  test('without the token (any local user) 401, with it served; the token is printed on stderr', async () => {
    const { child, url, lines, exited } = await httpServer();
    try {
      const token = /Authorization: Bearer (\S+)$/.exec(lines.find((l) => /Bearer/.test(l))!)![1]!;
      expect(token.length).toBeGreaterThanOrEqual(40);
      expect(await post(url, {})).toBe(401);
      expect(await post(url, { authorization: `Bearer ${token.slice(0, -1)}x` })).toBe(401);
      expect(await post(url, { authorization: token })).toBe(401);
      expect(await post(url, { authorization: `Bearer ${token}` })).toBe(200);
      // The DNS-rebinding check still holds with the token.
      expect(await post(url, { authorization: `Bearer ${token}`, origin: 'http://evil.example' })).toBe(403);
      const client = new Client({ name: 'token', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      expect(structured(await client.callTool({ name: 'run', arguments: { command: 'printf ok' } }))).toMatchObject({ output: 'ok' });
      await client.close();
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  test('--http-token-file: created 0600 with a new token when absent, read when present, refused when others can read it', async () => {
    const file = path.join(fs.mkdtempSync(path.join(tmp, 'token-')), 'token');
    const first = await httpServer(['--http-token-file', file]);
    let token: string;
    try {
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      token = fs.readFileSync(file, 'utf8').trim();
      expect(first.lines.join('\n')).not.toContain(token);
      expect(await post(first.url, {})).toBe(401);
      expect(await post(first.url, { authorization: `Bearer ${token}` })).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    fs.writeFileSync(file, 'a-token-of-my-own-choosing-1234\n', { mode: 0o600 });
    const second = await httpServer(['--http-token-file', file]);
    try {
      expect(await post(second.url, { authorization: `Bearer ${token}` })).toBe(401);
      expect(await post(second.url, { authorization: 'Bearer a-token-of-my-own-choosing-1234' })).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    fs.chmodSync(file, 0o644);
    const open = spawnSync(process.execPath, [CLI, 'mcp', '--http', '0', '--http-token-file', file], { encoding: 'utf8', timeout: 20_000 });
    expect([open.status, open.stderr]).toEqual([2, expect.stringMatching(/--http-token-file: .* readable or writable by others .*chmod 600/)]);
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, 'short\n');
    const weak = spawnSync(process.execPath, [CLI, 'mcp', '--http', '0', '--http-token-file', file], { encoding: 'utf8', timeout: 20_000 });
    expect([weak.status, weak.stderr]).toEqual([2, expect.stringMatching(/--http-token-file: .* at least 16 characters/)]);
    const stdio = spawnSync(process.execPath, [CLI, 'mcp', '--http-token-file', file], { encoding: 'utf8', timeout: 20_000 });
    expect([stdio.status, stdio.stderr]).toEqual([2, expect.stringMatching(/--http-token-file: only means something with --http/)]);
  });
});

describe('2026-07-28: a client cannot forge or move an approval through requestState', () => {
  test('forged state, a genuine state moved to another request, and a genuine retry, over stdio', async () => {
    const asked: string[] = [];
    const server = await connect('modern', ['--ask', '--cwd', tmp], {
      elicit: (message) => {
        asked.push(message);
        return { action: 'accept', content: { approve: true } };
      },
    });
    const accept = { approval: { action: 'accept', content: { approve: true } } };
    const marker = path.join(tmp, 'forged');
    const raw = (params: Record<string, unknown>, allowInputRequired = false) =>
      server.client.request({ method: 'tools/call', params } as never, allowInputRequired ? ({ allowInputRequired: true } as never) : undefined) as Promise<
        Record<string, unknown>
      >;
    try {
      // An answer with no state, and one with state the server never issued: nothing runs.
      const touch = { name: 'run', arguments: { command: `touch ${marker}` } };
      expect(textOf(await raw({ ...touch, inputResponses: accept }))).toMatch(/^ERR_NOT_APPROVED: /);
      expect(textOf(await raw({ ...touch, inputResponses: accept, requestState: 'approved' }))).toMatch(/^ERR_NOT_APPROVED: /);
      // The state the server issued for one request, moved to another (another command, another tool).
      const question = await raw({ name: 'run', arguments: { command: 'echo A' } }, true);
      expect(question).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
      const state = question.requestState as string;
      expect(textOf(await raw({ ...touch, inputResponses: accept, requestState: state }))).toMatch(/^ERR_NOT_APPROVED: /);
      const session = { name: 'terminal_execute', arguments: { command: 'echo A' }, inputResponses: accept, requestState: state };
      expect(textOf(await raw(session))).toMatch(/^ERR_NOT_APPROVED: /);
      expect(fs.existsSync(marker)).toBe(false);
      // The genuine retry of the request it was issued for runs.
      expect(structured(await raw({ name: 'run', arguments: { command: 'echo A' }, inputResponses: accept, requestState: state }))).toMatchObject({
        output: 'A\n',
        exit_code: 0,
      });
      expect(asked).toEqual([]); // every answer above came from the raw requests, none from the client's handler
    } finally {
      await server.close();
    }
  });
});
