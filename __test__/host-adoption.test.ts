// Issue 22 (adoption in a few lines): what a client replacing its own terminal manager needs from
// TerminalHost: arg-less requests run as the client means them (`argless`), the client's own approval
// errors and cancel signal, a host that outlives an agent (`releaseAll`, lenient release), lenient
// numbers on request (`maxTerminals: Infinity`, `clampLimits`), and an ENOENT that names the program
// without telling the agent the host's PATH.
import { agent, client, type AgentConnection } from '@agentclientprotocol/sdk';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { INVALID_PARAMS, registerTerminalHandlers } from '../ts/handlers';
import { TerminalHost } from '../ts/host';
import { createTerminal } from '../ts/index';

const sessionId = 'sess';
let tmp: string;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-adopt-')));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function rejection(work: Promise<unknown>): Promise<Error & { code: unknown; details?: Record<string, unknown>; data?: unknown }> {
  return work.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error & { code: unknown },
  );
}

describe('ENOENT names the program; the searched PATH is in details/data only', () => {
  const searched = '/nonexistent-a:/nonexistent-b';

  test('createTerminal', async () => {
    const err = await rejection(
      createTerminal({ command: 'no-such-program-xyz', args: ['a'], env: [{ name: 'PATH', value: searched }] }),
    );
    expect(err.code).toBe('ENOENT');
    expect(err.message).toContain('no-such-program-xyz');
    expect(err.message).not.toContain('/nonexistent-a');
    expect(err.details).toEqual({ program: 'no-such-program-xyz', path: searched });
  });

  test('over the wire (registerTerminalHandlers on the native backend)', async () => {
    const host = new TerminalHost({ env: { PATH: searched } });
    const conn: AgentConnection = agent({ name: 'a' }).connect(registerTerminalHandlers(client({ name: 'c' }), host));
    try {
      const err = await rejection(conn.client.createTerminal({ sessionId, command: 'no-such-program-xyz', args: ['a'] }));
      expect(err.code).toBe(INVALID_PARAMS);
      expect(err.message).toContain('no-such-program-xyz');
      expect(err.message).not.toContain('/nonexistent-a');
      expect(err.data).toEqual({ code: 'ENOENT', program: 'no-such-program-xyz', path: searched });
    } finally {
      conn.close();
      await host.close();
    }
  });
});
