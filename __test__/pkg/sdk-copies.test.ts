// JSON-RPC error codes survive two copies of the SDK (issue 22, item 2). The SDK keeps a handler's error
// code only when the error is `instanceof` its own RequestError; with two copies loaded, an error made
// with the other copy's class reached the agent as -32603. Two ways clients get there, run here as real
// processes on the built package (lib/): an `npm install <path>` install (node_modules/acp-terminal is a
// symlink, so this package resolves the SDK from its own node_modules while the app has its own copy),
// and tsx with one copy on disk (tsx serves the SDK file to the app's `import` and to this package's
// `require()` as two instances).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const repo = path.resolve(__dirname, '..', '..');
const tsx = path.join(repo, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const sdkDir = path.join(repo, 'node_modules', '@agentclientprotocol', 'sdk');
let tmp: string;

/**
 * The app: a ClientApp served by a TerminalHost, asked by an agent of the same SDK copy for two refusals;
 * and a v2 AgentApp with the v2 bridge's terminal/cancel, asked to cancel an unknown terminal.
 */
const app = (imports: string): string => `${imports}
const host = new TerminalHost({ commandPolicy: { deny: ['rm'] } });
const conn = agent({ name: 'agent' }).connect(registerTerminalHandlers(client({ name: 'client' }), host));
const codeOf = (work: Promise<unknown>) => work.then(() => 'resolved', (e: { code: unknown }) => e.code);
const notFound = await codeOf(conn.client.request('terminal/output', { sessionId: 's', terminalId: 'nope' }));
const denied = await codeOf(conn.client.request('terminal/create', { sessionId: 's', command: 'rm', args: ['x'] }));
// The v2 bridge's terminal/cancel on a v2 AgentApp: -32602 for an unknown id.
const v2App = new V2TerminalRegistry().register(
  agentV2({ name: 'agent' }).onRequest('initialize', (ctx) => ({ protocolVersion: ctx.params.protocolVersion, info: { name: 'agent', version: '0' } })),
);
const v2 = clientV2({ name: 'client' }).connect(v2App);
await v2.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, info: { name: 'client', version: '0' } });
const v2Cancel = await codeOf(v2.agent.request('terminal/cancel', { sessionId: 's', terminalId: 'nope' }));
console.log(JSON.stringify({ notFound, denied, v2Cancel }));
conn.close();
v2.close();
await host.close();
`;
const esm = app(
  "import { agent, client } from '@agentclientprotocol/sdk';\n" +
    "import { agent as agentV2, client as clientV2, PROTOCOL_VERSION } from '@agentclientprotocol/sdk/experimental/v2';\n" +
    "import { registerTerminalHandlers, TerminalHost, V2TerminalRegistry } from 'acp-terminal';",
);
// A CommonJS module (tsx compiles a .ts file of a package without "type": "module" to CommonJS).
const cjs = `const { agent, client } = require('@agentclientprotocol/sdk');
const { agent: agentV2, client: clientV2, PROTOCOL_VERSION } = require('@agentclientprotocol/sdk/experimental/v2');
const { registerTerminalHandlers, TerminalHost, V2TerminalRegistry } = require('acp-terminal');
(async () => {${app('')}})();
`;

/** A project dir with `acp-terminal` linked to this checkout and the SDK either copied or linked. */
function project(name: string, sdk: 'own copy' | 'linked'): string {
  const dir = path.join(tmp, name);
  const scope = path.join(dir, 'node_modules', '@agentclientprotocol');
  fs.mkdirSync(scope, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }));
  fs.symlinkSync(repo, path.join(dir, 'node_modules', 'acp-terminal'));
  if (sdk === 'own copy') {
    fs.cpSync(sdkDir, path.join(scope, 'sdk'), { recursive: true });
    fs.symlinkSync(path.join(repo, 'node_modules', 'zod'), path.join(dir, 'node_modules', 'zod'));
  } else {
    fs.symlinkSync(sdkDir, path.join(scope, 'sdk'));
  }
  fs.writeFileSync(path.join(dir, 'app.mts'), esm);
  fs.writeFileSync(path.join(dir, 'app.mjs'), esm.replace(/\(e: \{ code: unknown \}\)/, '(e)').replace('(work: Promise<unknown>)', '(work)'));
  fs.writeFileSync(path.join(dir, 'app.ts'), cjs);
  return dir;
}

function run(dir: string, args: string[]): unknown {
  const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !line.startsWith('{')) throw new Error(`${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(line);
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-sdk-copies-')));
  if (!fs.existsSync(path.join(repo, 'lib', 'index.js'))) throw new Error('lib/ is not built: run node scripts/build-ts.js');
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const expected = { notFound: -32002, denied: -32602, v2Cancel: -32602 };

describe('npm install <path> (the app has its own copy of the SDK)', () => {
  let dir: string;
  beforeAll(() => {
    dir = project('linked-install', 'own copy');
    // The situation itself: two SDK copies on disk, this package resolving the other one.
    expect(fs.realpathSync(path.join(dir, 'node_modules', '@agentclientprotocol', 'sdk'))).not.toBe(fs.realpathSync(sdkDir));
  });

  test('node, ES module app', () => {
    expect(run(dir, ['app.mjs'])).toEqual(expected);
  });

  test('tsx, ES module app', () => {
    expect(run(dir, [tsx, 'app.mts'])).toEqual(expected);
  });

  test('tsx, CommonJS app', () => {
    expect(run(dir, [tsx, 'app.ts'])).toEqual(expected);
  });
});

test('tsx with one copy on disk, loaded twice (import by the app, require() by this package)', () => {
  const dir = project('one-copy', 'linked');
  expect(run(dir, [tsx, 'app.mts'])).toEqual(expected);
});
