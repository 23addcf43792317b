// End to end over stdio, two processes: this jest process is the ACP client (SDK ClientApp +
// registerTerminalHandlers + TerminalHost on the native core); the agent is a separate Node process that
// uses the SDK's own ctx.createTerminal() / TerminalHandle. The SDK validates every response on the way.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { client, PROTOCOL_VERSION, type ClientConnection } from '@agentclientprotocol/sdk';
import { registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { spawnAgent, type AgentProcess } from './fixtures/agent-process';
import { compileAgent } from './fixtures/compile-agent';

type Code = { ok: true } | { code: number; message: string };
interface Snapshot { output: string; truncated: boolean; exitStatus?: { exitCode: number | null; signal: string | null } }
interface Report {
  shell: { exit: unknown; output: Snapshot };
  argv: { exit: unknown; output: Snapshot };
  failing: { exit: unknown; output: Snapshot };
  timeout: { timedOut: boolean; exitStatus: unknown; output: string; truncated: boolean };
  streaming: { seen: Snapshot[]; gateExists: boolean };
  truncation: Snapshot;
  afterRelease: Code;
  releaseTwice: Code;
  unknownId: Code;
  relativeCwd: Code;
  missingCwd: Code;
  nulByte: Code;
  enoent: Code;
}

let agentProcess: AgentProcess;
let connection: ClientConnection;
let host: TerminalHost;
let dir: string;
let report: Report;
const streamed = new Map<string, Buffer[]>();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-e2e-'));
  host = new TerminalHost({ killGraceMs: 5000 });
  host.onCreate(({ terminalId, terminal }) => {
    const chunks: Buffer[] = [];
    streamed.set(terminalId, chunks);
    terminal.onOutput((chunk) => chunks.push(chunk), { replay: true });
  });
  agentProcess = spawnAgent(compileAgent(path.join(__dirname, 'fixtures', 'e2e-agent.ts')));
  connection = registerTerminalHandlers(client({ name: 'e2e-client' }), host).connect(agentProcess.stream);
  await connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
  const session = await connection.agent.buildSession(dir).start();
  const response = await session.prompt('run the scenarios');
  report = (response._meta as { report: Report }).report;
}, 120_000);

afterAll(async () => {
  connection?.close();
  await agentProcess?.stop();
  await host?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a shell line runs through /bin/sh with stdout and stderr merged in order', () => {
  expect(report.shell.exit).toEqual({ exitCode: 0, signal: null });
  expect(report.shell.output).toEqual({ output: 'hello\nworld\ncafé\n', truncated: false, exitStatus: { exitCode: 0, signal: null } });
});

test("an argv command (the SDK test agent's sequence: kill after exit, then release) works", () => {
  expect(report.argv.exit).toEqual({ exitCode: 0, signal: null });
  expect(report.argv.output).toMatchObject({ output: 'testy terminal\n', truncated: false });
});

test('a failing command reports its exit code', () => {
  expect(report.failing.exit).toEqual({ exitCode: 3, signal: null });
  expect(report.failing.output.output).toBe('failing\n');
});

test('the spec timeout recipe (race, kill, output, release) stops a long command', () => {
  expect(report.timeout).toEqual({ timedOut: true, exitStatus: { exitCode: null, signal: 'SIGTERM' }, output: 'started\n', truncated: false });
});

test('polling sees output while the command still runs, then the exit', () => {
  const [during, after] = report.streaming.seen;
  expect(during!.output).toBe('first\n');
  expect(during!.exitStatus ?? null).toBeNull();
  expect(after).toEqual({ output: 'first\nsecond\n', truncated: false, exitStatus: { exitCode: 0, signal: null } });
});

test('outputByteLimit keeps the newest bytes and flags truncation', () => {
  expect(report.truncation.truncated).toBe(true);
  expect(report.truncation.output).toBe('a'.repeat(97) + 'END');
});

test('a released terminal answers -32002; a second release succeeds', () => {
  expect(report.afterRelease).toMatchObject({ code: -32002 });
  expect(report.releaseTwice).toEqual({ ok: true });
});

test('an unknown id answers -32002 (resource not found)', () => {
  expect(report.unknownId).toMatchObject({ code: -32002, message: expect.stringContaining('no-such-terminal') });
});

test.each([
  ['relativeCwd', /cwd/],
  ['missingCwd', /cwd/],
  ['nulByte', /command/],
  ['enoent', /no-such-binary-acp-terminal/],
] as const)('%s answers -32602 (invalid params) with a message naming the problem', (key, message) => {
  expect(report[key]).toMatchObject({ code: -32602, message: expect.stringMatching(message) });
});

// Streamed chunks (subscribed with replay, so nothing is missed) must be exactly the final output.
test('the agent released everything; the client streamed output live and kept final snapshots', () => {
  expect(host.liveTerminals).toBe(0);
  expect(streamed.size).toBe(6);
  for (const [terminalId, chunks] of streamed) {
    const final = host.finalOutput(terminalId);
    expect(final).toBeDefined();
    if (!final!.truncated) expect(Buffer.concat(chunks).toString('utf8')).toBe(final!.output);
  }
});
