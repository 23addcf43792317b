/**
 * `acp-terminal mcp` as a process: flags checked before serving (exit 2), no orphans when the client
 * goes (SIGKILL of the client, stdin EOF, SIGTERM), streamable HTTP on 127.0.0.1, the sandbox behind
 * the tools; and `createMcpServer` embedded (in-process transport, MCP-over-ACP).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { TerminalHost } from '../ts/host';
import { containmentInfo } from '../ts/index';
import { createMcpServer } from '../ts/mcp';
import { helpText } from '../ts/mcp-cli';
import { alive, CLI, connect, ERAS, structured, textOf, until } from './fixtures/mcp-client';
import { describeIf } from './fixtures/require-feature';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-life-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
/** The bearer token of the --http servers below (`--http-token-file`). */
const TOKEN = 'lifecycle-test-token-0123456789';
const tokenFile = path.join(tmp, 'http-token');
fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input: '', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('flags', () => {
  test('--help lists every flag, with units for the numbers', () => {
    const r = cli(['mcp', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(helpText() + '\n');
    for (const flag of ['--cwd', '--allowed-root', '--allow', '--deny', '--code-runner', '--env-deny', '--drop-inherited-env', '--sandbox',
      '--writable', '--network', '--limit', '--timeout', '--max-terminals', '--output-limit', '--audit', '--shell', '--http', '--http-token-file', '--config', '--ask']) {
      expect([flag, r.stdout.includes(`  ${flag}`)]).toEqual([flag, true]);
    }
    expect(r.stdout).toMatch(/--timeout SECONDS/);
    expect(r.stdout).toMatch(/--output-limit BYTES/);
    expect(r.stdout).toMatch(/cpuSeconds=SECONDS/);
  });

  test.each([
    [['--bogus'], /unknown flag --bogus/],
    [['--cwd', path.join(os.tmpdir(), 'no-such-dir-mcp')], /--cwd: .* does not exist/],
    [['--allowed-root', '/no/such/root'], /--allowed-root: .* does not exist/],
    [['--shell', 'no-such-shell-here'], /--shell: "no-such-shell-here" is not an executable/],
    [['--limit', 'processes=lots'], /--limit processes: "lots" is not a non-negative number/],
    [['--limit', 'threads=4'], /--limit threads: unknown limit/],
    [['--timeout', '0'], /--timeout: must be more than 0 seconds/],
    [['--max-terminals', '1.5'], /--max-terminals: must be a whole number/],
    [['--output-limit', '-1'], /--output-limit needs a value|not a non-negative number/],
    [['--writable', '/tmp'], /--writable: only means something with --sandbox/],
    [['--timeout'], /--timeout needs a value/],
    [['--http', '70000'], /--http: must be a port number/],
    [['--config', '/no/such.json'], /--config \/no\/such.json: /],
    [['--code-runner', 'python3'], /--code-runner: only means something with --allow/],
    [['--sandbox', '--writable', '/no/such/dir'], /--writable: .* does not exist|--sandbox: this machine cannot sandbox/],
  ])('%j is refused with exit status 2 before serving', (args, message) => {
    const r = cli(['mcp', ...(args as string[])]);
    expect([r.status, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(message as RegExp);
  });

  test('a JSON config file maps onto the options; an unknown key is refused', async () => {
    const good = path.join(tmp, 'config.json');
    fs.writeFileSync(good, JSON.stringify({ deny: ['rm'], outputLimit: 1000, limit: { processes: 64 } }));
    const server = await connect('legacy', ['--config', good, '--cwd', tmp]);
    try {
      const denied = await server.client.callTool({ name: 'run', arguments: { command: 'rm -f x' } });
      expect(textOf(denied)).toMatch(/^ERR_POLICY_DENIED: /);
      const big = await server.client.callTool({ name: 'run', arguments: { command: 'seq 1 5000' } });
      expect(structured(big)).toMatchObject({ truncated: true });
      expect((structured(big).output as string).length).toBeLessThanOrEqual(1000);
    } finally {
      await server.close();
    }
    const bad = path.join(tmp, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ denyy: ['rm'] }));
    const r = cli(['mcp', '--config', bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown key "denyy"/);
  });
});

describe('no orphans', () => {
  test('the client SIGKILLed with commands running: the server exits and every command dies', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'doomed-'));
    const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'mcp-client-process.js'), CLI, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`client exited ${code}`)));
    });
    const { serverPid, pids } = JSON.parse(line) as { serverPid: number; pids: number[] };
    expect(pids).toHaveLength(3);
    for (const pid of [serverPid, ...pids]) expect([pid, alive(pid)]).toEqual([pid, true]);
    child.kill('SIGKILL');
    for (const pid of [serverPid, ...pids]) await until(() => !alive(pid), `pid ${pid} to die`);
  });

  /** Starts the server with raw stdio, runs `sleep 300` through it; returns the server and the command's pid. */
  async function serverWithCommand(): Promise<{ server: ChildProcess; pid: number; exited: Promise<number | null> }> {
    const server = spawn(process.execPath, [CLI, 'mcp', '--cwd', tmp], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    const lines = readline.createInterface({ input: server.stdout! });
    const responses = new Map<number, (value: unknown) => void>();
    lines.on('line', (text) => {
      const message = JSON.parse(text) as { id?: number; result?: unknown };
      if (message.id !== undefined) responses.get(message.id)?.(message.result);
    });
    const request = (id: number, method: string, params: unknown) => {
      const answered = new Promise((resolve) => responses.set(id, resolve));
      server.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return answered;
    };
    await request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    server.stdin!.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    const result = await request(2, 'tools/call', { name: 'run', arguments: { command: 'echo $$; exec sleep 300', timeout: 0.3 } });
    const pid = Number(structured(result).output);
    expect(alive(pid)).toBe(true);
    return { server, pid, exited };
  }

  test('stdin EOF: the server kills its commands and exits 0', async () => {
    const { server, pid, exited } = await serverWithCommand();
    server.stdin!.end();
    expect(await exited).toBe(0);
    await until(() => !alive(pid), `pid ${pid} to die`);
  });

  test('SIGTERM: the server kills its commands and exits 0', async () => {
    const { server, pid, exited } = await serverWithCommand();
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(alive(pid)).toBe(false);
  });
});

describe.each(ERAS)('streamable HTTP on 127.0.0.1, %s era', (era) => {
  test('serves the tools; SIGTERM stops the server and its commands', async () => {
    const server = spawn(process.execPath, [CLI, 'mcp', '--http', '0', '--http-token-file', tokenFile, '--cwd', tmp], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: server.stderr! }).on('line', (text) => {
        const m = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
        if (m) resolve(m[1]!);
      });
      server.once('exit', () => reject(new Error('server exited')));
    });
    const client = new Client({ name: 'http-test', version: '1' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const done = await client.callTool({ name: 'run', arguments: { command: 'printf over-http' } });
    expect(structured(done)).toMatchObject({ output: 'over-http', exit_code: 0 });
    const running = await client.callTool({ name: 'run', arguments: { command: 'echo $$; exec sleep 300', timeout: 0.3 } });
    const pid = Number(structured(running).output);
    expect(alive(pid)).toBe(true);
    await client.close().catch(() => undefined);
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(alive(pid)).toBe(false);
  });
});

describe('streamable HTTP refuses requests addressed to another origin (DNS rebinding)', () => {
  test('a Host or Origin other than this loopback server is 403; its own is served', async () => {
    const server = spawn(process.execPath, [CLI, 'mcp', '--http', '0', '--http-token-file', tokenFile, '--cwd', tmp], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: server.stderr! }).on('line', (text) => {
          const m = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
          if (m) resolve(m[1]!);
        });
        server.once('exit', () => reject(new Error('server exited')));
      });
      const port = Number(new URL(url).port);
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rebind', version: '1' } },
      });
      const post = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port,
              path: '/mcp',
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`, ...headers },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end(init);
        });
      expect(await post({ host: 'evil.example' })).toBe(403);
      expect(await post({ host: `evil.example:${port}` })).toBe(403);
      expect(await post({ host: `127.0.0.1:${port}`, origin: 'http://evil.example' })).toBe(403);
      expect(await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
      expect(await post({ host: `127.0.0.1:${port}` })).toBe(200);
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  });
});

const sandbox = containmentInfo().sandbox;
describeIf('sandbox', sandbox.available, 'no OS sandbox on this machine')('--sandbox behind the tools', () => {
  test('a write outside --writable works without the sandbox and is refused with it', async () => {
    // Not under /tmp: the sandbox gives commands a private /tmp, where these would not even exist.
    const base = fs.mkdtempSync('/var/tmp/mcp-sandbox-');
    const work = fs.mkdtempSync(path.join(base, 'work-'));
    const outside = fs.mkdtempSync(path.join(base, 'outside-'));
    const attack = `echo pwned > ${outside}/file; echo ok > ${work}/file`;
    const open = await connect('legacy', ['--cwd', work]);
    try {
      expect(structured(await open.client.callTool({ name: 'run', arguments: { command: attack } }))).toMatchObject({ exit_code: 0 });
      expect(fs.readFileSync(path.join(outside, 'file'), 'utf8')).toBe('pwned\n');
    } finally {
      await open.close();
    }
    fs.rmSync(path.join(outside, 'file'));
    fs.rmSync(path.join(work, 'file'));
    const boxed = await connect('modern', ['--cwd', work, '--sandbox', '--writable', work]);
    try {
      const r = await boxed.client.callTool({ name: 'run', arguments: { command: attack } });
      expect(structured(r).output).toMatch(/Read-only file system/);
      expect(fs.existsSync(path.join(outside, 'file'))).toBe(false);
      expect(fs.readFileSync(path.join(work, 'file'), 'utf8')).toBe('ok\n');
      const session = await boxed.client.callTool({ name: 'terminal_execute', arguments: { command: `echo pwned > ${outside}/session` } });
      expect(structured(session).content).toMatch(/Read-only file system/);
      expect(fs.existsSync(path.join(outside, 'session'))).toBe(false);
    } finally {
      await boxed.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

const root = process.getuid?.() === 0;
describeIf('root', root && sandbox.available, root ? 'no OS sandbox on this machine' : 'not root: cannot drop to nobody with setpriv')(
  'as an unprivileged user (nobody)',
  () => {
    test('the sandboxed server runs commands and sessions as nobody, and a write outside --writable is refused', async () => {
      const base = fs.mkdtempSync('/var/tmp/mcp-nobody-');
      const work = path.join(base, 'work');
      const outside = path.join(base, 'outside');
      for (const dir of [work, outside]) fs.mkdirSync(dir, { mode: 0o777 });
      for (const dir of [base, work, outside]) fs.chmodSync(dir, 0o777); // nobody could write there without the sandbox
      const server = await connect('modern', ['--cwd', work, '--sandbox', '--writable', work], {
        prefix: ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'],
      });
      try {
        const r = await server.client.callTool({ name: 'run', arguments: { command: `id -un; echo ok > mine; echo no > ${outside}/escaped` } });
        expect(structured(r).output).toMatch(/^nobody\n.*Read-only file system/s);
        expect(fs.readFileSync(path.join(work, 'mine'), 'utf8')).toBe('ok\n');
        const session = await server.client.callTool({ name: 'terminal_execute', arguments: { command: `id -un; echo no > ${outside}/session` } });
        expect(structured(session).content).toMatch(/^nobody\n.*Read-only file system/s);
        expect(fs.readdirSync(outside)).toEqual([]);
      } finally {
        await server.close();
        fs.rmSync(base, { recursive: true, force: true });
      }
    });
  },
);

describe('createMcpServer embedded', () => {
  test('over the in-process transport, on a given TerminalHost, which close() closes', async () => {
    const host = new TerminalHost({ cwd: tmp, allowedRoots: [tmp] });
    const server = createMcpServer(host, { sessions: false });
    expect(server.host).toBe(host);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.factory().connect(serverSide);
    const client = new Client({ name: 'embedded', version: '1' });
    await client.connect(clientSide);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('terminal_execute');
    expect(structured(await client.callTool({ name: 'run', arguments: { command: 'pwd' } }))).toMatchObject({ output: `${fs.realpathSync(tmp)}\n` });
    const outside = await client.callTool({ name: 'run', arguments: { command: 'pwd', cwd: '/' } });
    expect(textOf(outside)).toMatch(/^ERR_CWD_OUTSIDE_ROOTS: /);
    await client.close();
    await server.close();
    expect(host.isClosed).toBe(true);
  });

  test('TerminalHost.authorize: the checks of a create, without the approval, starting nothing', async () => {
    const events: string[] = [];
    let asked = 0;
    const host = new TerminalHost({
      cwd: tmp,
      allowedRoots: [tmp],
      commandPolicy: { deny: ['rm'] },
      approve: () => ++asked > 0,
      onEvent: (e) => void events.push(e.type),
    });
    const approval = await host.authorize({ sessionId: 's', command: 'echo hi | cat' });
    expect(approval).toMatchObject({ sessionId: 's', command: 'echo hi | cat', cwd: fs.realpathSync(tmp) });
    expect(approval.commands.map((c) => c.word)).toEqual(['echo', 'cat']);
    await expect(host.authorize({ sessionId: 's', command: 'rm -f x' })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    await expect(host.authorize({ sessionId: 's', command: 'true', cwd: '/' })).rejects.toMatchObject({ code: 'ERR_CWD_OUTSIDE_ROOTS' });
    expect([asked, host.liveTerminals, events]).toEqual([0, 0, ['denied', 'denied']]);
    await host.close();
  });

  test('experimental: MCP-over-ACP through the ACP SDK\'s McpOverAcpProvider (plain Node ESM, progress included)', () => {
    const r = spawnSync(process.execPath, [path.join(__dirname, 'fixtures', 'mcp-over-acp.mjs'), tmp], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    const { declaration, outcome, progress } = JSON.parse(r.stdout) as { declaration: unknown; outcome: { result?: unknown }; progress: string[] };
    expect(declaration).toMatchObject({ type: 'acp', name: 'terminal' });
    expect(structured(outcome.result)).toMatchObject({ output: 'via-acp', exit_code: 4 });
    expect(progress).toContain('notifications/progress');
  });
});
