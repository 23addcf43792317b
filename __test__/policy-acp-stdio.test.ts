// The CR attack of issue 26 end to end over a real ACP stdio connection: an agent process sends
// `ls \<CR><LF>rm -f victim` to this client (SDK ClientApp + registerTerminalHandlers + TerminalHost on the
// native core) under `allow: ['/usr/bin/ls']`. tree-sitter reads backslash-CR-LF as a line continuation (one
// `ls` command); dash and bash read an escaped CR and then a new line, so `rm` runs.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { client, PROTOCOL_VERSION, type ClientConnection } from '@agentclientprotocol/sdk';
import { registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost, type TerminalHostOptions } from '../ts/host';
import { shellCommandWords } from '../ts/shell-analysis';
import { spawnAgent, type AgentProcess } from './fixtures/agent-process';
import { compileAgent } from './fixtures/compile-agent';

const LS = fs.realpathSync(spawnSync('sh', ['-c', 'command -v ls'], { encoding: 'utf8' }).stdout.trim());
const ATTACK = 'ls \\\r\nrm -f victim';
let dir: string;
let agentSource: string;
const open: Array<() => Promise<void>> = [];

beforeAll(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-cr-')));
  agentSource = compileAgent(path.join(__dirname, 'fixtures', 'one-request-agent.ts'));
});
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One agent process over stdio sends the attack to a client whose host has `options`; returns the agent's result. */
async function overAcp(options: TerminalHostOptions): Promise<{ exit?: unknown; error?: { code: number; message: string; data?: Record<string, unknown> } }> {
  const host = new TerminalHost({ cwd: dir, ...options });
  const agentProcess: AgentProcess = spawnAgent(agentSource);
  const connection: ClientConnection = registerTerminalHandlers(client({ name: 'cr-client' }), host).connect(agentProcess.stream);
  open.push(async () => {
    connection.close();
    await agentProcess.stop();
    await host.close();
  });
  await connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
  const session = await connection.agent.buildSession(dir).start();
  const response = await session.prompt(JSON.stringify({ command: ATTACK, cwd: dir }));
  return (response._meta as { result: never }).result;
}

test('`ls \\<CR><LF>rm -f victim` under allow [/usr/bin/ls] over ACP stdio: deleted by the check as the grammar read it, refused now', async () => {
  const victim = path.join(dir, 'victim');
  // The reconstruction of the check before the refusal: the programs of the grammar's reading (only `ls`;
  // `rm` is found only as a guess of the shells' reading) judged against the allow list, then the agent's
  // text handed to sh as it was.
  expect(shellCommandWords(ATTACK).words.filter((w) => !w.guessed).map((w) => w.word)).toEqual(['ls']);
  const grammarsCheck = (req: { command: string }): boolean =>
    shellCommandWords(req.command).words.filter((w) => !w.guessed).every((w) => w.word === 'ls' || w.word === LS);
  fs.writeFileSync(victim, 'x');
  const before = await overAcp({ approve: grammarsCheck });
  expect(before).toMatchObject({ exit: { exitCode: 0 } });
  expect(fs.existsSync(victim)).toBe(false);

  fs.writeFileSync(victim, 'x');
  const now = await overAcp({ commandPolicy: { allow: [LS] } });
  expect(now.error).toMatchObject({ code: -32602, data: { code: 'ERR_POLICY_DENIED', reason: 'shell-construct' } });
  expect(now.error!.message).toMatch(/control character U\+000D/);
  expect(fs.existsSync(victim)).toBe(true);
}, 60_000);
