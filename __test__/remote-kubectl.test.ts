/**
 * Terminals through the real `kubectl exec -i` against the stand-in API server
 * (scripts/remote/fake-kube-apiserver.py: no cluster can run here, so its exec runs on this
 * machine). The server is installed through kubectl's stdin, then the core acceptance behaviour runs
 * over the one multiplexed `kubectl exec` connection.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { acceptance } from './fixtures/remote-acceptance';
import { HOST_SERVER, hasKubectl, startFakeKube, type FakeKube } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-remote-kubectl-')));

describeIf(
  'kubectl',
  hasKubectl && fs.existsSync(HOST_SERVER),
  'needs kubectl >= 1.30 (WebSocket exec), python3 and the host server build',
)('kubectl exec -i', () => {
  let kube: FakeKube;
  let backend: backends.Backend;
  // A path of this run's own: the first connection finds no server there and installs it.
  const serverPath = path.join(tmp, 'installed', 'acp-terminal-server');

  beforeAll(async () => {
    kube = await startFakeKube();
    backend = backends.kubectl('agent-pod', {
      namespace: 'agents',
      container: 'main',
      extraArgs: kube.kubectlArgs,
      serverBinary: HOST_SERVER,
      serverPath,
    });
  });
  afterAll(async () => {
    await backend?.close();
    await kube?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the server is installed through kubectl exec and every terminal shares one exec', async () => {
    const t = await backend.createTerminal({ command: 'echo hi' });
    await t.waitForExit();
    expect((await t.currentOutput()).output).toBe('hi\n');
    await t.release();
    // Buffer#equals: jest's toEqual walks a 1.5 MB buffer byte by byte for tens of seconds.
    expect(fs.readFileSync(serverPath).equals(fs.readFileSync(HOST_SERVER))).toBe(true);
    // The pod, namespace and container reached the API server as kubectl sends them.
    const execs = kube.log().split('\n').filter((l) => l.includes('exec ns=agents pod=agent-pod'));
    expect(execs.length).toBeGreaterThanOrEqual(2); // the launch that found nothing, the install, the launch
    expect(execs.every((l) => l.includes("container=['main']") && l.includes('v5.channel.k8s.io'))).toBe(true);
    const before = execs.length;
    for (let i = 0; i < 3; i++) {
      const u = await backend.createTerminal({ command: 'true' });
      await u.waitForExit();
      await u.release();
    }
    expect(kube.log().split('\n').filter((l) => l.includes('exec ns=agents')).length).toBe(before);
  });

  describe('acceptance', () => {
    acceptance(() => backend, tmp);
  });

  test('the exec killed with no reconnect grace: pending calls reject with ERR_BACKEND_LOST and the far end kills what it ran', async () => {
    const b = backends.kubectl('agent-pod', { namespace: 'agents', extraArgs: kube.kubectlArgs, serverBinary: HOST_SERVER, serverPath, reconnectGraceMs: 0 });
    const t = await b.createTerminal({ command: "trap '' TERM; sleep 1000 & echo $!; wait" }, { killGraceMs: 200 });
    let out = '';
    for (let k = 0; k < 250 && !out.endsWith('\n'); k++) {
      out = (await t.currentOutput()).output;
      await new Promise((r) => setTimeout(r, 20));
    }
    const sleeper = Number(out.trim());
    const wait = t.waitForExit();
    process.kill((await b.transportPid())!, 'SIGKILL');
    await expect(wait).rejects.toMatchObject({ code: 'ERR_BACKEND_LOST' });
    const gone = async (): Promise<boolean> => {
      for (let i = 0; i < 500; i++) {
        try {
          process.kill(sleeper, 0);
          if (/^\S+ \(.*\) Z/.test(fs.readFileSync(`/proc/${sleeper}/stat`, 'utf8'))) return true;
        } catch {
          return true;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return false;
    };
    expect(await gone()).toBe(true);
    await b.close();
  });
});
