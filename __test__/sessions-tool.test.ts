// ShellSessions as an agent's terminal tool (what agents' prompts are written for, after OpenHands'
// terminal tool): a program waiting for input returns `running` early, so does a quiet one when the
// caller asks; a command that finished after returning `running` reports its own end in the next
// result; content can be cut to its head and tail. Every wait is for an event (a gate file, the
// session's own answer), never for a time.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ShellSessions, type ExecuteRequest, type ExecuteResult } from '../ts/sessions';
import { drain, gateCommand } from './fixtures/shell-sessions';

let shells: ShellSessions;
let work: string;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-tool-')));
  shells = new ShellSessions({ cwd: work });
});

afterEach(async () => {
  await shells.closeAll();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Sends `request` until the session takes it (a command still running is refused, nothing sent). */
async function whenIdle(request: ExecuteRequest): Promise<ExecuteResult> {
  const deadline = Date.now() + 50_000;
  for (;;) {
    try {
      return await shells.execute(request);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_COMMAND_RUNNING' || Date.now() > deadline) throw error;
      // The refused call sent nothing; the session answers the next one once the command ended.
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describe('a program waiting for input returns running early', () => {
  test('python3 at its >>> prompt: running long before timeoutMs, saying it waits for input', async () => {
    const started = Date.now();
    const r = await shells.execute({ command: 'python3 -i -q', timeoutMs: 60_000 });
    expect(r).toMatchObject({ status: 'running', exitCode: null, early: 'input' });
    expect(r.content).toContain('>>>');
    expect(Date.now() - started).toBeLessThan(60_000);
    const answer = await shells.execute({ command: 'print(6*7)', isInput: true });
    expect(answer).toMatchObject({ status: 'running', early: 'input' });
    expect(answer.content).toContain('42');
    const { last } = await drain(shells, await shells.execute({ command: 'exit(3)', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 3 });
  });

  test("the shell's own read builtin waits for input the same way", async () => {
    const r = await shells.execute({ command: 'echo ask; read -r x; echo "got $x"', timeoutMs: 60_000 });
    expect(r).toMatchObject({ status: 'running', content: 'ask', early: 'input' });
    const { content, last } = await drain(shells, await shells.execute({ command: 'it', isInput: true }));
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(content).toBe('got it');
  });

  test('returnOnInputWait: false waits for the timeout as before', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, returnOnInputWait: false });
    const r = await shells.execute({ command: 'read -r x', timeoutMs: 1500 });
    expect(r.status).toBe('running');
    expect(r.early).toBeUndefined();
    await shells.execute({ command: 'x', isInput: true });
  });

  test('a command that prints nothing for quietMs returns running, saying it was quiet', async () => {
    const gate = path.join(work, 'gate');
    const r = await shells.execute({ command: `echo started; ${gateCommand(gate)}; echo done`, timeoutMs: 60_000, quietMs: 300 });
    expect(r).toMatchObject({ status: 'running', content: 'started', early: 'quiet' });
    fs.writeFileSync(gate, '');
    const { content, last } = await drain(shells, await shells.execute({ command: '' }));
    expect(content).toBe('done');
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
  });
});

describe('a command that finished after returning running reports its own end', () => {
  test('in the next result, as previous: its exit code and its last output; the next command has only its own', async () => {
    const gate = path.join(work, 'gate');
    const command = `echo early; ${gateCommand(gate)}; echo late; (exit 3)`;
    const r = await shells.execute({ command, timeoutMs: 200 });
    expect(r).toMatchObject({ status: 'running', content: 'early' });
    fs.writeFileSync(gate, '');
    const next = await whenIdle({ command: 'echo next' });
    expect(next).toMatchObject({ status: 'completed', exitCode: 0, content: 'next' });
    expect(next.previous).toEqual({ command, exitCode: 3, content: 'late', truncated: false });
    expect((await shells.execute({ command: 'echo again' })).previous).toBeUndefined();
  });

  test('collected with an empty command: its own result, no previous', async () => {
    const gate = path.join(work, 'gate');
    const r = await shells.execute({ command: `${gateCommand(gate)}; echo late; (exit 4)`, timeoutMs: 200 });
    expect(r.status).toBe('running');
    fs.writeFileSync(gate, '');
    const { content, last } = await drain(shells, await shells.execute({ command: '' }));
    expect(content).toBe('late');
    expect(last).toMatchObject({ status: 'completed', exitCode: 4 });
    expect(last.previous).toBeUndefined();
  });
});

describe('maxContentChars: head and tail of a long output', () => {
  test('the middle is elided with a marker; short outputs are whole', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, maxContentChars: 1000 });
    const r = await shells.execute({ command: 'seq 1 100000' });
    expect(r).toMatchObject({ status: 'completed', exitCode: 0, truncated: true });
    const [head, tail] = r.content.split(/\n\[\.\.\. \d+ (?:characters|bytes) elided \.\.\.\]\n/);
    expect(head!.startsWith('1\n2\n3\n')).toBe(true);
    expect(tail!.endsWith('99999\n100000')).toBe(true);
    expect(head!.length + tail!.length).toBeLessThanOrEqual(1000);
    expect((await shells.execute({ command: 'seq 1 3' })).content).toBe('1\n2\n3');
  });

  test('the head is kept even when the output is larger than maxOutputBytes', async () => {
    await shells.closeAll();
    shells = new ShellSessions({ cwd: work, maxContentChars: 2000, maxOutputBytes: 64 * 1024 });
    const r = await shells.execute({ command: 'seq 1 200000' });
    expect(r).toMatchObject({ status: 'completed', truncated: true });
    expect(r.content.startsWith('1\n2\n3\n')).toBe(true);
    expect(r.content.endsWith('199999\n200000')).toBe(true);
    expect(r.content).toMatch(/\n\[\.\.\. \d+ bytes elided \.\.\.\]\n/);
  });

  test('bad values are named', () => {
    expect(() => new ShellSessions({ maxContentChars: 0 })).toThrow(/^options\.maxContentChars:/);
    expect(() => new ShellSessions({ quietMs: -1 })).toThrow(/^options\.quietMs:/);
    expect(() => new ShellSessions({ returnOnInputWait: 1 as never })).toThrow(/^options\.returnOnInputWait:/);
  });
});
