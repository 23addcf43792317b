// The marker protocol of ShellSessions on a scripted pty backend: the test decides exactly how the
// bytes are chunked (markers split byte by byte, glued to output, followed by background output,
// stale or forged), which a real shell cannot be made to do deterministically.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  ShellSessions,
  type PtyCreateTerminalOptions,
  type PtyTerminalLike,
} from '../ts/sessions';
import { COMMAND_PREFIX } from '../ts/session-protocol';
import type { CreateTerminalParams, ExitStatus, OutputSnapshot } from '../ts/types';

/** The text of the `$'...'` words a session typed (`typedWord`): the escapes it uses undone. */
function typedText(typed: string): string {
  const bytes: number[] = [];
  for (const [, body] of typed.matchAll(/\$'((?:[^'\\]|\\[\s\S])*)'/g)) {
    for (let i = 0; i < body!.length; i++) {
      if (body![i] !== '\\') {
        bytes.push(body!.charCodeAt(i));
      } else if (body![i + 1] === 'x') {
        bytes.push(parseInt(body!.slice(i + 2, i + 4), 16));
        i += 3;
      } else {
        bytes.push(body!.charCodeAt(++i));
      }
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A pty terminal whose output the test emits; its pid is a real, harmless `sleep` (for /proc). */
class ScriptedPty implements PtyTerminalLike {
  readonly writes: string[] = [];
  token = '';
  private readonly listeners = new Set<(chunk: Buffer) => void>();
  private exitResolve!: (s: ExitStatus) => void;
  private readonly exited = new Promise<ExitStatus>((r) => (this.exitResolve = r));
  private sent = 0;

  constructor(private readonly child: ChildProcess) {}

  get pid(): number {
    return this.child.pid!;
  }

  get outputBytes(): number {
    return this.sent;
  }

  async write(data: string | Buffer): Promise<void> {
    const text = data.toString();
    this.writes.push(text);
    if (text.startsWith(' \\builtin eval $\'')) {
      // Learn the token the way bash would: from the octal escapes of the rc's printf format.
      const rcText = typedText(text);
      const octal = /\\033\]6973;((?:\\\d{3})+)E;/.exec(rcText)![1]!;
      this.token = octal
        .split('\\')
        .filter(Boolean)
        .map((o) => String.fromCharCode(parseInt(o, 8)))
        .join('')
        .replace(/;$/, '');
      setImmediate(() => this.emit(this.marker(0, 0)));
    }
  }

  async sendKeys(keys: string[]): Promise<void> {
    this.writes.push(`<keys ${keys.join(' ')}>`);
  }

  onOutput(listener: (chunk: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(data: string | Buffer): void {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    this.sent += chunk.length;
    for (const l of this.listeners) l(chunk);
  }

  marker(seq: number, status: number, token = this.token): string {
    return `\x1b]6973;${token};E;${seq};${status}\x07`;
  }

  /** The sequence number of the last command line typed. */
  get lastSeq(): number {
    const typed = [...this.writes].reverse().find((w) => w.includes('__acp_n='));
    return Number(/__acp_n=(\d+)/.exec(typed ?? '')?.[1] ?? NaN);
  }

  waitForExit(): Promise<ExitStatus> {
    return this.exited;
  }

  async currentOutput(): Promise<OutputSnapshot> {
    return { output: '', truncated: false };
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    this.exitResolve({ exitCode: null, signal: 'SIGKILL' });
  }

  async release(): Promise<void> {
    await this.kill();
  }

  exit(code: number): void {
    this.exitResolve({ exitCode: code, signal: null });
  }
}

let ptys: ScriptedPty[];
let shells: ShellSessions;
const created: Array<{ params: CreateTerminalParams; options: PtyCreateTerminalOptions }> = [];

beforeEach(() => {
  ptys = [];
  shells = new ShellSessions({
    cwd: os.tmpdir(),
    screen: false,
    createTerminal: async (params, options) => {
      created.push({ params, options });
      const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', cwd: os.tmpdir() });
      const pty = new ScriptedPty(child);
      ptys.push(pty);
      return pty;
    },
  });
});

afterEach(async () => {
  await shells.closeAll();
});

/** Starts a command and resolves once the session typed its line (so the test can answer). */
async function start(command: string, timeoutMs = 20_000) {
  const result = shells.execute({ command, timeoutMs });
  const deadline = Date.now() + 20_000;
  while (!(ptys[0]?.writes.some((w) => w.includes('__acp_n=')) && ptys[0].lastSeq === expectSeq)) {
    if (Date.now() > deadline) throw new Error('the command line was never typed');
    await new Promise((r) => setImmediate(r));
  }
  expectSeq++;
  return { result, pty: ptys[0]! };
}
let expectSeq = 1;
beforeEach(() => {
  expectSeq = 1;
});

test('the shell is started without rc files and without a line editor, on a pty', async () => {
  await shells.execute({ command: '' });
  expect(created[created.length - 1]!.params).toMatchObject({ command: 'bash', args: ['--noprofile', '--norc', '--noediting', '-i'] });
  expect(created[created.length - 1]!.options.pty).toEqual({ cols: 160, rows: 40 });
});

test('a marker split byte by byte across chunks completes the command and is removed', async () => {
  const { result, pty } = await start('make');
  pty.emit('hello\r\n');
  for (const ch of pty.marker(pty.lastSeq, 3)) pty.emit(ch);
  expect(await result).toMatchObject({ status: 'completed', exitCode: 3, content: 'hello' });
});

test('output glued to the marker on both sides: the part after it is reported next time', async () => {
  const { result, pty } = await start('printf x');
  pty.emit(`no newline${pty.marker(pty.lastSeq, 0)}background line\r\n`);
  expect(await result).toMatchObject({ status: 'completed', exitCode: 0, content: 'no newline' });
  expect(await shells.execute({ command: '' })).toMatchObject({ content: 'background line', exitCode: null });
});

test('forged, stale and malformed markers do not complete the command; they stay out of the content', async () => {
  const { result, pty } = await start('run', 300);
  const seq = pty.lastSeq;
  pty.emit(pty.marker(seq, 0, 'f'.repeat(32))); // another token
  pty.emit(pty.marker(seq - 1, 0)); // a stale prompt (the empty line typed before the command)
  pty.emit(`\x1b]6973;${pty.token};E;${seq};9999\x07`); // not a status
  pty.emit('still running\r\n');
  const r = await result;
  expect(r).toMatchObject({ status: 'running', exitCode: null, content: 'still running' });
  const done = shells.execute({ command: '' });
  pty.emit(pty.marker(seq, 0));
  expect(await done).toMatchObject({ status: 'completed', exitCode: 0, content: '' });
});

test('a UTF-8 character split across chunks and across results stays whole', async () => {
  const { result, pty } = await start('x', 300);
  const bytes = Buffer.from('héllo 😀', 'utf8');
  pty.emit(bytes.subarray(0, 2)); // 'h' + first byte of 'é'
  const first = await result;
  pty.emit(bytes.subarray(2, 9)); // rest of 'é', 'llo ', first bytes of the emoji
  const done = shells.execute({ command: '' });
  pty.emit(Buffer.concat([bytes.subarray(9), Buffer.from(pty.marker(pty.lastSeq, 0), 'latin1')]));
  const second = await done;
  expect(first.content + second.content).toBe('héllo 😀');
  expect(second).toMatchObject({ status: 'completed', exitCode: 0 });
});

test('the shell exiting while a command runs reports its exit code and ends the session', async () => {
  const { result, pty } = await start('exit 5');
  pty.emit('bye\r\n');
  pty.exit(5);
  expect(await result).toMatchObject({ status: 'completed', exitCode: 5, content: 'bye', sessionEnded: true });
  expect(shells.ids).toEqual([]);
});

test('a shell killed by a signal reports exitCode null, never a made-up code', async () => {
  const { result, pty } = await start('sleep 1');
  await pty.kill();
  expect(await result).toMatchObject({ status: 'completed', exitCode: null, sessionEnded: true });
});

test('the command is typed, after C-u and two line ends, into a here-string the shell sources by its descriptor', async () => {
  const { result, pty } = await start('cat <<EOF\nx\nEOF');
  const typed = pty.writes[pty.writes.length - 1]!;
  // `exec` and `.` in POSIX mode (special builtins: no function can stand in for them), back to normal mode in the text.
  // eslint-disable-next-line no-control-regex -- \x15 is the pty's line-kill (^U) the session types first
  expect(typed).toMatch(/^\x15\n\n __acp_o=\$BASHOPTS; POSIXLY_CORRECT=1; __acp_n=\d+; \\exec \{__acp_f\}<<<\$'[^\n]*' && \\\. "\/dev\/fd\/\$__acp_f"\n$/);
  expect(typedText(typed)).toBe(`${COMMAND_PREFIX}cat <<EOF\nx\nEOF`);
  expect(COMMAND_PREFIX).toMatch(/^\{ \\exec \{__acp_f\}<&-; \[\[ ! -o emacs && ! -o vi \]\] \|\| \\set \+o emacs \+o vi; \} 2>\/dev\/null; /);
  expect(COMMAND_PREFIX).toMatch(/\\unset POSIXLY_CORRECT; \\__acp_opts; $/);
  pty.emit(pty.marker(pty.lastSeq, 0));
  await result;
});

test('a session writes no file and adds no writable root to the sandbox it is given', async () => {
  // The ShellSessions modules make no file or directory (the rc and the commands are typed).
  for (const file of ['sessions.ts', 'session.ts', 'session-protocol.ts', 'session-input.ts']) {
    const source = fs.readFileSync(path.join(__dirname, '..', 'ts', file), 'utf8');
    expect(source).not.toMatch(/\bfs\.(writeFile|appendFile|open|mkdir|mkdtemp|rm|unlink|symlink|copyFile|createWriteStream)(Sync)?\(/);
  }
  const sandbox = { writableRoots: ['/nonexistent/w'], tmpBytes: 1 << 20 };
  const sandboxed = new ShellSessions({
    cwd: os.tmpdir(),
    screen: false,
    sandbox,
    createTerminal: async (params, options) => {
      created.push({ params, options });
      const pty = new ScriptedPty(spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', cwd: os.tmpdir() }));
      ptys.push(pty);
      return pty;
    },
  });
  try {
    await sandboxed.execute({ command: '' });
    expect(created[created.length - 1]!.options.sandbox).toEqual(sandbox);
  } finally {
    await sandboxed.closeAll();
  }
});
