#!/usr/bin/env node
// `npm run demo`: this process is the ACP client; it starts examples/demo-agent.mjs as a second process and
// talks ACP to it over stdio. The agent's terminal/* requests are served by acp-terminal's TerminalHost;
// the client prints each command's output live as it streams, then a summary.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import acpTerminal from '../lib/index.js';

const { TerminalHost, registerTerminalHandlers, createDisplayFilter } = acpTerminal;
const color = process.stdout.isTTY ? (code, s) => `\x1b[${code}m${s}\x1b[0m` : (_code, s) => s;

const host = new TerminalHost({ cwd: process.cwd(), env: { PAGER: 'cat', GIT_PAGER: 'cat' } });
const runs = [];
// `--json <file>`: also write down what happened (each run's exit status and output, the tool calls'
// statuses, the host's audit events) for the end-to-end test to check.
const jsonFile = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : undefined;
const audit = [];
const toolCalls = [];
host.onEvent((event) => audit.push(event));
host.onCreate(({ terminalId, terminal, request }) => {
  runs.push({ terminalId, command: request.command });
  console.log(color('1;36', `\n$ ${request.command}`));
  // Shown on this terminal: through a display filter (no clipboard, title or query sequences).
  const display = createDisplayFilter();
  terminal.onOutput((chunk) => process.stdout.write(color('2', display.write(chunk).toString('utf8'))), { replay: true });
});

const titles = new Map();
const app = registerTerminalHandlers(client({ name: 'acp-terminal-demo-client' }), host)
  .onNotification('session/update', ({ params: { update } }) => {
    if (update.sessionUpdate === 'tool_call') {
      titles.set(update.toolCallId, update.title);
      console.log(color('1', `▶ ${update.title}`));
    } else if (update.sessionUpdate === 'tool_call_update' && update.status) {
      toolCalls.push({ title: titles.get(update.toolCallId), status: update.status });
      console.log(color(update.status === 'completed' ? '32' : '31', `■ ${titles.get(update.toolCallId)}: ${update.status}`));
    }
  });

const agentPath = fileURLToPath(new URL('./demo-agent.mjs', import.meta.url));
const agentProcess = spawn(process.execPath, [agentPath], { stdio: ['pipe', 'pipe', 'inherit'] });
const connection = app.connect(ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout)));

try {
  await connection.agent.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { terminal: true },
    clientInfo: { name: 'acp-terminal-demo-client', version: '0.1.0' },
  });
  const session = await connection.agent.buildSession(process.cwd()).start();
  await session.prompt('Run the demo commands');

  console.log(color('1', '\nSummary'));
  for (const { terminalId, command } of runs) {
    const final = host.finalOutput(terminalId);
    const status = final?.exitStatus;
    const how = !status ? 'unknown' : status.signal ? `killed by ${status.signal}` : `exit code ${status.exitCode}`;
    const lines = final ? final.output.split('\n').filter(Boolean).length : 0;
    console.log(`  ${how.padEnd(18)} ${String(lines).padStart(3)} lines  ${command.length > 60 ? `${command.slice(0, 57)}...` : command}`);
  }
} finally {
  connection.close();
  agentProcess.kill();
  await host.close();
}
if (jsonFile) {
  const finals = runs.map(({ terminalId, command }) => ({ terminalId, command, ...host.finalOutput(terminalId) }));
  writeFileSync(jsonFile, JSON.stringify({ runs: finals, toolCalls, audit, liveTerminals: host.liveTerminals }, null, 2));
}
