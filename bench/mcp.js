'use strict';
/**
 * The `mcp` bench scenario's measurements (node bench/mcp.js [--quick]: one JSON line on stdout):
 * - a `run` of `true` through the MCP SDK's client and `acp-terminal mcp` over stdio (the whole tool
 *   call: JSON-RPC both ways, the host's checks, create, wait, output, release), against the same
 *   create → wait → output → release on a `TerminalHost` in this process, interleaved, medians;
 * - tool calls per second with 10 clients at once, each with its own server process, each calling
 *   `run` of `true` in a loop.
 */
const path = require('path');
const { performance } = require('perf_hooks');
const { Client } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');
const { TerminalHost } = require('../lib/index.js');

const CLI = path.join(__dirname, '..', 'bin', 'acp-terminal.js');
const QUICK = process.argv.includes('--quick');
const CALLS = QUICK ? 40 : 200;
const CLIENTS = 10;
const PER_CLIENT = QUICK ? 20 : 100;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function connect() {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--no-sessions'], stderr: 'ignore' }));
  return client;
}

async function mcpRun(client) {
  const r = await client.callTool({ name: 'run', arguments: { command: 'true' } });
  if (r.isError || r.structuredContent.exit_code !== 0) throw new Error(`run true failed: ${JSON.stringify(r)}`);
}

async function hostRun(host) {
  const ids = { sessionId: 'bench', terminalId: '' };
  ids.terminalId = (await host.createTerminal({ sessionId: 'bench', command: 'true' })).terminalId;
  await host.waitForTerminalExit(ids);
  const out = await host.terminalOutput(ids);
  await host.releaseTerminal(ids);
  if (out.exitStatus?.exitCode !== 0) throw new Error('true failed');
}

async function main() {
  const client = await connect();
  const host = new TerminalHost({ defaultOutputByteLimit: 65536 });
  for (let i = 0; i < 5; i++) {
    await mcpRun(client);
    await hostRun(host);
  }
  const viaMcp = [];
  const direct = [];
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    await mcpRun(client);
    viaMcp.push(performance.now() - t);
    t = performance.now();
    await hostRun(host);
    direct.push(performance.now() - t);
  }
  await client.close();
  await host.close();

  const clients = await Promise.all(Array.from({ length: CLIENTS }, connect));
  const t0 = performance.now();
  await Promise.all(clients.map(async (c) => {
    for (let i = 0; i < PER_CLIENT; i++) await mcpRun(c);
  }));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(clients.map((c) => c.close()));
  const result = {
    calls: CALLS,
    mcpMs: median(viaMcp),
    hostMs: median(direct),
    ratio: median(viaMcp) / median(direct),
    clients: CLIENTS,
    concurrentCalls: CLIENTS * PER_CLIENT,
    callsPerSecond: (CLIENTS * PER_CLIENT) / seconds,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
