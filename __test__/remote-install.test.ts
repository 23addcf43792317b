/**
 * The far-end install path (issue 31, found by the fourth independent attack): a command run at the
 * far end must not be able to choose the program the next connection runs as the server. The far end
 * here is this machine, reached through the generic exec backend (`sh -c` run directly), with the
 * server file in a directory of its own. The replacement is a script that leaves a marker and then
 * runs the real server: the takeover would go unnoticed by the connection itself.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { containmentInfo } from '../lib';
import * as backends from '../ts/backends';
import { shellQuote } from '../ts/shell-quote';
import { HOST_SERVER } from './fixtures/remote-env';
import { describeIf, testIf } from './fixtures/require-feature';

const sandbox = containmentInfo().sandbox;
const built = fs.existsSync(HOST_SERVER);

describeIf('acp-terminal-server', built, `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)('the far-end server file', () => {
  let dir: string;
  let serverPath: string;
  let fake: string;
  let marker: string;
  const far = (): backends.Backend => backends.execPrefix('here', [], { serverBinary: HOST_SERVER, serverPath, reconnectGraceMs: 0 });

  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-install-')));
    serverPath = path.join(dir, 'bin', 'server');
    marker = path.join(dir, 'TAKEN-OVER');
    fake = path.join(dir, 'agent-program');
    fs.writeFileSync(fake, `#!/bin/sh\necho taken > ${marker}\nexec ${HOST_SERVER} "$@"\n`, { mode: 0o755 });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function run(b: backends.Backend, command: string, options?: Parameters<backends.Backend['createTerminal']>[1], cwd?: string): Promise<string> {
    const t = await b.createTerminal({ command, ...(cwd ? { cwd } : {}) }, options);
    await t.waitForExit();
    const out = (await t.currentOutput()).output;
    await t.release();
    return out;
  }

  test('a command that replaces the installed server (an allow-listed cp) does not run at the next connection: it is reinstalled', async () => {
    const first = far();
    expect(await run(first, 'echo installed')).toBe('installed\n');
    await first.close();
    // Unsandboxed, as an allow list admitting `cp` would run it.
    const agent = far();
    expect(await run(agent, `cp ${fake} ${serverPath}.new && mv -f ${serverPath}.new ${serverPath} && echo replaced`)).toBe('replaced\n');
    await agent.close();
    const next = far();
    try {
      expect(await run(next, 'echo ours')).toBe('ours\n');
      expect(fs.existsSync(marker)).toBe(false);
      expect(fs.readFileSync(serverPath).equals(fs.readFileSync(HOST_SERVER))).toBe(true);
    } finally {
      await next.close();
    }
  });

  // The sandboxed command writes the program itself (the sandbox's /tmp is its own: only the roots are
  // shared). The server's directory, and one above it (renamed away and made again).
  const write = (to: string): string => `printf '%s' ${shellQuote(fs.readFileSync(fake, 'utf8'))} > ${to} && chmod 755 ${to}`;
  const attacks: [string, (d: string) => string, (d: string) => string][] = [
    ['the directory of the server', (d) => path.join(d, 'bin'), () => `${write(`${serverPath}.new`)} && mv -f ${serverPath}.new ${serverPath}`],
    ['a directory above it', (d) => d, (d) => `mv ${d}/bin ${d}/old && mkdir ${d}/bin && ${write(serverPath)}`],
  ];
  for (const [what, root, script] of attacks) {
    testIf('sandbox', sandbox.available, `containmentInfo().sandbox is unavailable: ${sandbox.reasons.join('; ')}`)(
      `a sandboxed create whose writable roots hold ${what} is refused, naming the field`,
      async () => {
        const b = far();
        try {
          await run(b, 'true'); // installed
          // The cwd is inside the root (the sandbox hides the rest of /tmp, where the test's files are).
          await expect(b.createTerminal({ command: script(dir), cwd: root(dir) }, { sandbox: { writableRoots: [root(dir)] } })).rejects.toMatchObject({
            code: 'ERR_INVALID_ARG',
            message: expect.stringContaining('options.sandbox.writableRoots'),
          });
          // Beside the server's directories, a sandbox works as before.
          fs.mkdirSync(path.join(dir, 'work'));
          expect(await run(b, `echo ok > ${dir}/work/f && cat ${dir}/work/f`, { sandbox: { writableRoots: [path.join(dir, 'work')] } }, path.join(dir, 'work'))).toBe('ok\n');
        } finally {
          await b.close();
        }
        const next = far();
        try {
          expect(await run(next, 'echo ours')).toBe('ours\n');
          expect(fs.existsSync(marker)).toBe(false);
        } finally {
          await next.close();
        }
      },
    );
  }
});
