/**
 * `sandbox.network: { allow }` through a backend: the allow-list proxy runs in this Node process and the
 * far end's network namespace has no way back to it, so it is refused with ERR_INVALID_ARG naming the
 * field: by the backend before anything is sent, by the server if a client sends it anyway, and by a
 * `TerminalHost({ backend })` at construction. `network: true`/`false` go through.
 */

import * as fs from 'node:fs';

import * as backends from '../ts/backends';
import { TerminalHost } from '../ts/host';
import { HOST_SERVER } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const allow = { writableRoots: [], network: { allow: ['registry.npmjs.org'] } };
const refused = { code: 'ERR_INVALID_ARG', message: expect.stringMatching(/options\.sandbox\.network.*not supported/) };

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)('network allow lists at the far end', () => {
  test('the backend refuses it before connecting', async () => {
    // A transport that cannot start: the refusal comes first.
    const b = backends.command(['/nonexistent/acp-transport']);
    await expect(b.createTerminal({ command: 'true' }, { sandbox: allow as never })).rejects.toMatchObject(refused);
    await b.close();
  });

  test('the server refuses it too, and the connection goes on', async () => {
    const b = backends.command([HOST_SERVER]);
    try {
      const conn = await b.connection();
      await expect(conn.call('create', { params: { command: 'true' }, options: { sandbox: allow } })).rejects.toMatchObject(refused);
      const t = await b.createTerminal({ command: 'echo still' });
      await t.waitForExit();
      expect((await t.currentOutput()).output).toBe('still\n');
    } finally {
      await b.close();
    }
  });

  test('a TerminalHost with a backend refuses it at construction', async () => {
    const b = backends.command([HOST_SERVER]);
    expect(() => new TerminalHost({ backend: b, sandbox: allow as never })).toThrow(expect.objectContaining(refused));
    await b.close();
  });
});
