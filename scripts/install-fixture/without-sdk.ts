// Type check without the SDK installed (skipLibCheck: false): the package's declarations must not
// fail with TS2307 for the optional peer.
import { createTerminal, TerminalHost, type OutputSnapshot } from 'acp-terminal';

export async function main(): Promise<OutputSnapshot> {
  await using host = new TerminalHost();
  const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'true' });
  await using t = await createTerminal({ command: 'true' });
  await t.waitForExit();
  return host.terminalOutput({ sessionId: 's', terminalId });
}
