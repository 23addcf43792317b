// `npm run demo` end to end: the demo client and agent processes (needs the built lib/). Checked by what
// happened (the host's record of each command: exit status, output, audit trail, no process left), not
// only by what the demo prints.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { isGone } from './core/helpers';

interface DemoRecord {
  runs: { terminalId: string; command: string; output: string; truncated: boolean; exitStatus: { exitCode: number | null; signal: string | null } }[];
  toolCalls: { title: string; status: string }[];
  audit: { type: string; terminalId?: string; pid?: number; reason?: string; wasRunning?: boolean; exitStatus?: unknown }[];
  liveTerminals: number;
}

test('the demo runs a succeeding, a failing and a timed-out command: exit statuses, output, audit trail, nothing left running', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-demo-'));
  const record = path.join(dir, 'record.json');
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [path.join(__dirname, '..', 'examples', 'demo.mjs'), '--json', record], { timeout: 110_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
      );
    });
    const r = JSON.parse(fs.readFileSync(record, 'utf8')) as DemoRecord;

    // What each command did, as the host recorded it.
    expect(r.runs.map((x) => x.exitStatus)).toEqual([
      { exitCode: 0, signal: null },
      { exitCode: 3, signal: null },
      { exitCode: null, signal: 'SIGTERM' },
    ]);
    expect(r.runs[0]!.output).toBe('building step 1\nbuilding step 2\nbuilding step 3\ndone\n');
    expect(r.runs[1]!.output).toMatch(/^checking config\nls: .*\/no\/such\/config.*\n$/);
    expect(r.runs[2]!.output).toMatch(/^tick 1\n(tick \d+\n)*$/);
    expect(r.runs.every((x) => !x.truncated)).toBe(true);

    // The agent's view: the tool calls' statuses. (The last update can arrive after the prompt's answer,
    // when the demo has already closed the connection: it is not checked.)
    expect(r.toolCalls.slice(0, 2)).toEqual([
      { title: 'A command that succeeds', status: 'completed' },
      { title: 'A command that fails', status: 'failed' },
    ]);

    // The audit trail: created, (killed by the agent's timeout,) exited, released by the agent's request.
    const trail = (id: string) => r.audit.filter((e) => e.terminalId === id).map((e) => e.type);
    expect(r.runs.map((x) => trail(x.terminalId))).toEqual([
      ['created', 'exited', 'released'],
      ['created', 'exited', 'released'],
      ['created', 'killed', 'exited', 'released'],
    ]);
    expect(r.audit.filter((e) => e.type === 'released').map((e) => [e.reason, e.wasRunning])).toEqual([
      ['request', false],
      ['request', false],
      ['request', false],
    ]);
    expect(r.liveTerminals).toBe(0);
    const pids = r.audit.filter((e) => e.type === 'created').map((e) => e.pid!);
    expect(pids).toHaveLength(3);
    expect(pids.filter((pid) => !isGone(pid))).toEqual([]);

    // And what a person sees.
    expect(stdout).toMatch(/■ A command that succeeds: completed/);
    expect(stdout).toMatch(/■ A command that fails: failed/);
    expect(stdout).toMatch(/exit code 0 .*building step/);
    expect(stdout).toMatch(/exit code 3 .*checking config/);
    expect(stdout).toMatch(/killed by SIGTERM .*tick/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
