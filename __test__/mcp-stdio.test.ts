/**
 * `acp-terminal mcp` over stdio, driven by the MCP SDK's own client in both protocol eras: every tool,
 * the schemas, the host's policy and output bound behind them, progress, cancel, approval through the
 * client, the audit file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { alive, connect, ERAS, structured, textOf, until, type Connected } from './fixtures/mcp-client';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-stdio-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe.each(ERAS)('acp-terminal mcp over stdio, %s era', (era) => {
  let server: Connected;
  const audit = path.join(tmp, `audit-${era}.jsonl`);
  beforeAll(async () => {
    server = await connect(era, ['--cwd', tmp, '--deny', 'rm', '--output-limit', '4096', '--audit', audit]);
  });
  afterAll(() => server.close());

  test('lists every tool, each with a valid JSON Schema whose parameters are all described', async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['kill', 'list', 'output', 'release', 'run', 'terminal_execute', 'wait']);
    const ajv = new AjvJsonSchemaValidator();
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      ajv.getValidator(tool.inputSchema as Parameters<typeof ajv.getValidator>[0]); // throws on an invalid schema
      for (const [name, prop] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect([tool.name, name, typeof (prop as { description?: unknown }).description]).toEqual([tool.name, name, 'string']);
      }
    }
    const run = tools.find((t) => t.name === 'run')!;
    expect(JSON.stringify(run.inputSchema.properties?.timeout)).toMatch(/[Ss]econds/);
    expect(run.inputSchema.required).toEqual(['command']);
  });

  test('run: output, exit code, and the output bounded to its end', async () => {
    const done = await server.client.callTool({ name: 'run', arguments: { command: 'printf hi; exit 3' } });
    expect(done.isError).toBeFalsy();
    expect(structured(done)).toMatchObject({ status: 'exited', output: 'hi', exit_code: 3, truncated: false });
    expect(textOf(done)).toBe('hi\n[exit code 3]');
    const big = await server.client.callTool({ name: 'run', arguments: { command: 'seq 1 20000' } });
    const out = structured(big);
    expect(out).toMatchObject({ status: 'exited', exit_code: 0, truncated: true });
    expect(Buffer.byteLength(out.output as string)).toBeLessThanOrEqual(4096);
    expect((out.output as string).endsWith('19999\n20000\n')).toBe(true);
    const argv = await server.client.callTool({ name: 'run', arguments: { command: 'printf', args: ['%s|', 'a b', '$HOME'], env: { GREETING: 'x' } } });
    expect(structured(argv).output).toBe('a b|$HOME|');
  });

  test('a policy refusal is an isError result with the ACP code, naming the program and the rule', async () => {
    const denied = await server.client.callTool({ name: 'run', arguments: { command: 'true && rm -f nothing' } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/^ERR_POLICY_DENIED: .*`rm`.*rule "rm"/);
    expect(structured(denied)).toMatchObject({ error: { code: 'ERR_POLICY_DENIED' } });
    const env = await server.client.callTool({ name: 'run', arguments: { command: 'true', env: { LD_PRELOAD: '/x.so' } } });
    expect(textOf(env)).toMatch(/^ERR_POLICY_DENIED: .*LD_PRELOAD/);
    const session = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'echo ok; rm -f nothing' } });
    expect(textOf(session)).toMatch(/^ERR_POLICY_DENIED: .*rm/);
  });

  test('run past its timeout returns the terminal id; output, wait, list, kill, release work on it', async () => {
    const started = await server.client.callTool({ name: 'run', arguments: { command: 'echo first; sleep 0.7; echo second; sleep 30', timeout: 0.3 } });
    const id = structured(started).terminal_id as string;
    expect(structured(started)).toMatchObject({ status: 'running', exit_code: null });
    expect(textOf(started)).toContain(`still running as terminal_id ${id}`);
    const listed = structured(await server.client.callTool({ name: 'list', arguments: {} })).terminals as Array<Record<string, unknown>>;
    expect(listed).toEqual([expect.objectContaining({ terminal_id: id, status: 'running', command: expect.stringContaining('sleep 30') })]);
    const waited = await server.client.callTool({ name: 'wait', arguments: { terminal_id: id, timeout: 1.5 } });
    expect(structured(waited)).toMatchObject({ status: 'running', output: 'first\nsecond\n' });
    expect(structured(await server.client.callTool({ name: 'output', arguments: { terminal_id: id } }))).toMatchObject({ status: 'running' });
    const killed = await server.client.callTool({ name: 'kill', arguments: { terminal_id: id } });
    expect(structured(killed)).toMatchObject({ status: 'exited', signal: 'SIGTERM', output: 'first\nsecond\n' });
    // Freed once its exit was reported: the list is empty, the final output still readable, release idempotent.
    expect(structured(await server.client.callTool({ name: 'list', arguments: {} })).terminals).toEqual([]);
    expect(structured(await server.client.callTool({ name: 'output', arguments: { terminal_id: id } }))).toMatchObject({ output: 'first\nsecond\n' });
    expect(textOf(await server.client.callTool({ name: 'release', arguments: { terminal_id: id } }))).toContain('already released');
    const other = await server.client.callTool({ name: 'run', arguments: { command: 'sleep 30', timeout: 0.1 } });
    const otherId = structured(other).terminal_id as string;
    expect(textOf(await server.client.callTool({ name: 'release', arguments: { terminal_id: otherId } }))).toBe(`released ${otherId}`);
    const unknown = await server.client.callTool({ name: 'wait', arguments: { terminal_id: 'nope' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^ERR_TERMINAL_NOT_FOUND: /);
  });

  test('a bad argument is refused by the schema', async () => {
    const bad = await server.client.callTool({ name: 'run', arguments: { command: 'true', timeout: -1 } }).catch((e: Error) => e);
    const text = bad instanceof Error ? bad.message : textOf(bad);
    expect(text).toMatch(/timeout/);
  });

  test('long calls send progress notifications with the newest output', async () => {
    const messages: string[] = [];
    const result = await server.client.callTool(
      { name: 'run', arguments: { command: 'for i in 1 2 3; do echo line$i; sleep 0.5; done', timeout: 10 } },
      { onprogress: (p) => messages.push(p.message ?? '') },
    );
    expect(structured(result)).toMatchObject({ exit_code: 0, output: 'line1\nline2\nline3\n' });
    expect(messages.length).toBeGreaterThanOrEqual(1);
    expect(messages[0]).toMatch(/^line1\n/);
    const sessionMessages: string[] = [];
    const session = await server.client.callTool(
      { name: 'terminal_execute', arguments: { command: 'for i in 1 2 3; do echo s$i; sleep 0.5; done', timeout: 10 } },
      { onprogress: (p) => sessionMessages.push(p.message ?? '') },
    );
    expect(structured(session)).toMatchObject({ status: 'completed', exit_code: 0, content: 's1\ns2\ns3' });
    expect(sessionMessages[0]).toMatch(/^s1/);
  });

  test('a cancelled call kills its command (run and terminal_execute)', async () => {
    const pidFile = path.join(tmp, `pid-${era}`);
    const controller = new AbortController();
    const call = server.client
      .callTool({ name: 'run', arguments: { command: `echo $$ > ${pidFile}; exec sleep 60`, timeout: 30 } }, { signal: controller.signal })
      .catch((e: Error) => e);
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n'), 'the command to start');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    controller.abort();
    expect(await call).toBeInstanceOf(Error);
    await until(() => !alive(pid), `pid ${pid} to die`);
    const sessionPidFile = `${pidFile}-session`;
    const sessionAbort = new AbortController();
    const sessionCall = server.client
      .callTool(
        { name: 'terminal_execute', arguments: { terminal_id: 'cancel', command: `sh -c 'echo $$ > ${sessionPidFile}; exec sleep 60'`, timeout: 30 } },
        { signal: sessionAbort.signal },
      )
      .catch((e: Error) => e);
    await until(() => fs.existsSync(sessionPidFile) && fs.readFileSync(sessionPidFile, 'utf8').endsWith('\n'), 'the session command');
    const sessionPid = Number(fs.readFileSync(sessionPidFile, 'utf8'));
    sessionAbort.abort();
    await sessionCall;
    await until(() => !alive(sessionPid), `session pid ${sessionPid} to die`);
    // The session still answers.
    const after = await server.client.callTool({ name: 'terminal_execute', arguments: { terminal_id: 'cancel', command: 'echo back' } });
    expect(structured(after)).toMatchObject({ status: 'completed', content: 'back' });
  });

  test('terminal_execute keeps a persistent shell per terminal_id, with is_input and keys', async () => {
    const cd = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'mkdir -p sub && cd sub && export V=42' } });
    expect(structured(cd)).toMatchObject({ status: 'completed', exit_code: 0, working_dir: fs.realpathSync(path.join(tmp, 'sub')) });
    const v = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'echo $V; pwd' } });
    expect(structured(v).content).toBe(`42\n${fs.realpathSync(path.join(tmp, 'sub'))}`);
    const other = await server.client.callTool({ name: 'terminal_execute', arguments: { terminal_id: 'second', command: 'echo "[$V]"' } });
    expect(structured(other)).toMatchObject({ content: '[]', terminal_id: 'second' });
    const reading = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'read -r x; echo "got $x"', timeout: 0.5 } });
    expect(structured(reading)).toMatchObject({ status: 'running', exit_code: null });
    // This server has a command policy (--deny rm): typed text is refused (it goes to whatever reads the
    // terminal, which no check can judge); keys are sent.
    const typed = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'hello', is_input: true, timeout: 5 } });
    expect(textOf(typed)).toMatch(/^ERR_POLICY_DENIED: is_input: typed text is refused/);
    const ended = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'C-d', is_input: true, timeout: 5 } });
    expect(structured(ended)).toMatchObject({ status: 'completed' });
    expect(structured(ended).content).toMatch(/^got$/m);
    await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'sleep 30', timeout: 0.3 } });
    const interrupted = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'C-c', is_input: true, timeout: 5 } });
    expect(structured(interrupted)).toMatchObject({ status: 'completed' });
  });

  test('the audit file gets every host event and session command as JSON lines', async () => {
    const events = fs
      .readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; code?: string; command?: string });
    const types = new Set(events.map((e) => e.type));
    for (const type of ['created', 'exited', 'killed', 'released', 'denied', 'session']) expect([type, types.has(type)]).toEqual([type, true]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED', command: 'true && rm -f nothing' }));
  });
});

describe.each(ERAS)('--ask, %s era', (era) => {
  test('the user is asked through the client: approved runs, declined is ERR_NOT_APPROVED', async () => {
    const asked: string[] = [];
    let answer = true;
    const server = await connect(era, ['--ask', '--cwd', tmp], {
      elicit: (message) => {
        asked.push(message);
        return { action: 'accept', content: { approve: answer } };
      },
    });
    try {
      const ok = await server.client.callTool({ name: 'run', arguments: { command: 'echo approved' } });
      expect(structured(ok)).toMatchObject({ output: 'approved\n', exit_code: 0 });
      expect(asked).toEqual([expect.stringContaining('echo approved')]);
      answer = false;
      const marker = path.join(tmp, `declined-${era}`);
      const no = await server.client.callTool({ name: 'run', arguments: { command: `touch ${marker}` } });
      expect(no.isError).toBe(true);
      expect(textOf(no)).toMatch(/^ERR_NOT_APPROVED: /);
      const noSession = await server.client.callTool({ name: 'terminal_execute', arguments: { command: `touch ${marker}` } });
      expect(textOf(noSession)).toMatch(/^ERR_NOT_APPROVED: /);
      expect(fs.existsSync(marker)).toBe(false);
      expect(asked).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  test('a client that cannot ask gets a clear refusal and nothing runs', async () => {
    const server = await connect(era, ['--ask', '--cwd', tmp]);
    try {
      const marker = path.join(tmp, `unasked-${era}`);
      const refused = await server.client.callTool({ name: 'run', arguments: { command: `touch ${marker}` } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^ERR_NOT_APPROVED: .*cannot ask/);
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
