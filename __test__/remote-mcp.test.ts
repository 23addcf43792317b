/**
 * `acp-terminal mcp --backend SPEC`, driven by the MCP SDK's client over stdio: every command runs at
 * the far end (here through the real `kubectl exec -i` against the stand-in API server), judged by
 * the flags' policy on this side; a bad SPEC is a usage error naming the flag.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

import { CLI, connect, structured, textOf, type Connected } from './fixtures/mcp-client';
import { HOST_SERVER, hasKubectl, startFakeKube, type FakeKube } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

test.each([
  ['podman:', 'not a container name'],
  ['podman:-rm', 'not a container name'],
  ['ssh:-oProxyCommand=x', 'not an ssh destination'],
  ['kubectl:Bad_Pod', 'not a pod name'],
  ['kubectl:p/c@ns/x', 'POD[/CONTAINER][@NAMESPACE]'],
  ['lxc:box', 'unknown kind "lxc"'],
  ['box', 'no kind'],
])('--backend %s is a usage error naming the flag (exit 2)', (spec, why) => {
  const r = spawnSync(process.execPath, [CLI, 'mcp', '--backend', spec], { encoding: 'utf8', input: '' });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('--backend');
  expect(r.stderr).toContain(why);
});

describeIf(
  'kubectl',
  hasKubectl && fs.existsSync(HOST_SERVER),
  'needs kubectl >= 1.30 (WebSocket exec), python3 and the host server build',
)('acp-terminal mcp --backend kubectl:POD/CONTAINER@NS', () => {
  let kube: FakeKube;
  let server: Connected;
  beforeAll(async () => {
    kube = await startFakeKube();
    server = await connect('modern', ['--backend', 'kubectl:mcp-pod/main@agents', '--deny', 'rm', '--cwd', '/tmp'], {
      env: { ...kube.env, ACP_TERMINAL_SERVER_BINARY: HOST_SERVER } as Record<string, string>,
    });
  });
  afterAll(async () => {
    await server?.close();
    await kube?.stop();
  });

  test('run executes at the far end, in the far cwd, through kubectl exec', async () => {
    const done = await server.client.callTool({ name: 'run', arguments: { command: 'echo "$ACP_FAR_END"; pwd; exit 3' } });
    expect(structured(done)).toMatchObject({ status: 'exited', output: 'kube\n/tmp\n', exit_code: 3 });
    expect(kube.log()).toMatch(/exec ns=agents pod=mcp-pod container=\['main'\]/);
  });

  test('the flags policy judges on this side: a denied program never reaches the far end', async () => {
    const execs = kube.log().split('\n').filter((l) => l.includes('exec ns=')).length;
    const denied = await server.client.callTool({ name: 'run', arguments: { command: 'true && rm -f nothing' } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/^ERR_POLICY_DENIED: .*`rm`/);
    expect(kube.log().split('\n').filter((l) => l.includes('exec ns=')).length).toBe(execs);
  });

  test('terminal_execute runs its session at the far end, in the far cwd, judged by the flags here', async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['kill', 'list', 'output', 'release', 'run', 'terminal_execute', 'wait']);
    const r1 = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'echo "$ACP_FAR_END"; pwd; cd / && export ACP_S=1' } });
    expect(structured(r1)).toMatchObject({ status: 'completed', exit_code: 0, content: 'kube\n/tmp', working_dir: '/' });
    const r2 = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'echo "$ACP_S"; pwd' } });
    expect(structured(r2)).toMatchObject({ status: 'completed', exit_code: 0, content: '1\n/' });
    const denied = await server.client.callTool({ name: 'terminal_execute', arguments: { command: 'rm -f nothing' } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/ERR_POLICY_DENIED/);
  });
});
