// A result's status, exit code and content are one snapshot: a completion that arrives while the
// previous output is still being rendered (off the JS thread) belongs to the next call. Under load
// the rendering is slow enough for this to happen by itself (an MCP `terminal_execute` poll said
// `completed` with `exit_code: null`); here the rendering waits for the completion on purpose.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { eventually } from './core/helpers';
import { gateCommand } from './fixtures/shell-sessions';

/** While set, rendering waits until it says true: the completion then arrives mid-render. */
let holdRenderUntil: (() => boolean) | undefined;

jest.mock('../ts/screen-text', () => {
  const actual = jest.requireActual<typeof import('../ts/screen-text')>('../ts/screen-text');
  return {
    ...actual,
    renderTerminalOutputAsync: async (...args: Parameters<typeof actual.renderTerminalOutputAsync>) => {
      const until = holdRenderUntil;
      if (until) {
        holdRenderUntil = undefined;
        await eventually(until, 'the completion arrives while the output renders');
      }
      return actual.renderTerminalOutputAsync(...args);
    },
  };
});

// Imported after the mock is declared (jest hoists jest.mock; the import order is for the reader).
import { ShellSessions } from '../ts/sessions';

let work: string;
let shells: ShellSessions;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-status-')));
  shells = new ShellSessions({ cwd: work });
});

afterEach(async () => {
  holdRenderUntil = undefined;
  await shells.closeAll();
  fs.rmSync(work, { recursive: true, force: true });
});

/** The session's pending completion (the event this test waits on), read from outside. */
function completed(id: string): boolean {
  const session = (shells as unknown as { sessions: Map<string, { completion: unknown }> }).sessions.get(id);
  return session?.completion != null;
}

test('a completion that arrives while a running result renders is reported by the next call, with its exit code', async () => {
  const gate = path.join(work, 'gate');
  await shells.execute({ terminalId: 't', command: 'true', timeoutMs: 30_000 });
  // The command waits for the gate; the call returns `running` after 50 ms. Its rendering starts,
  // the gate opens, and the rendering waits until the shell's completion has come in.
  holdRenderUntil = () => {
    if (!fs.existsSync(gate)) fs.writeFileSync(gate, '');
    return completed('t');
  };
  const first = await shells.execute({ terminalId: 't', command: `${gateCommand(gate)}; echo done; (exit 3)`, timeoutMs: 50 });
  expect(first.status).toBe('running');
  expect(first.exitCode).toBeNull();
  const second = await shells.execute({ terminalId: 't', command: '', timeoutMs: 30_000 });
  expect(second).toMatchObject({ status: 'completed', exitCode: 3, content: 'done' });
});
