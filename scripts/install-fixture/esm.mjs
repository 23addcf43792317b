// ES module consumer: named imports, a command through TerminalHost end to end.
import assert from 'node:assert';
import { createTerminal, TerminalHost } from 'acp-terminal';

const host = new TerminalHost();
const { terminalId } = await host.createTerminal({ sessionId: 's', command: 'echo esm-ok; exit 3' });
assert.deepEqual(await host.waitForTerminalExit({ sessionId: 's', terminalId }), { exitCode: 3, signal: null });
assert.deepEqual(await host.terminalOutput({ sessionId: 's', terminalId }), {
  output: 'esm-ok\n',
  truncated: false,
  exitStatus: { exitCode: 3, signal: null },
});
assert.equal(typeof createTerminal, 'function');
await host.close();
console.log('esm: ok');
