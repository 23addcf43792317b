// ShellSessions in the OS sandbox, against a command that attacks what the host keeps for the
// session: nothing the host opens is writable inside. The session's command text, markers and rc
// reach the shell through its pty only, so there is no host-side file or directory a command could
// replace with a symlink or a FIFO, fill past `tmpBytes`, or make unremovable. Each attack runs in a
// child Node process (its stdout is checked, its event loop watched, its TMPDIR private), as the
// current user and, when that is root, as nobody.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ShellSessions } from '../ts/sessions';
import { packageRootForOthers, removePackageCopy } from './core/helpers';
import { describeIf, testIf } from './fixtures/require-feature';

const native = require('../index.js') as { containmentInfo(): { sandbox: { available: boolean; reasons: string[] } } };
const info = native.containmentInfo().sandbox;
const isRoot = process.getuid?.() === 0;

afterAll(removePackageCopy);

/** What a child reports (on stderr, after `REPORT `; undefined when it was killed first), and what it wrote to stdout. */
interface Run {
  report: Record<string, unknown> | undefined;
  stdout: string;
  stderr: string;
}

/**
 * Runs, in a child Node process (as nobody with `nobody`), a ShellSessions in the sandbox (writable
 * root: a fresh work directory; TMPDIR: a fresh private directory) that runs `attack` and then
 * `next`. The child reports the results, `closeAll()`'s outcome and what is left in its TMPDIR; a
 * child whose event loop stays blocked is killed after 25 s and reports nothing.
 */
function runAttack(
  attack: string | ((outside: string) => string),
  next: string,
  opts: { nobody: boolean; tmpBytes?: number },
): Run & { work: string; outside: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-sandbox-'));
  const work = path.join(base, 'work');
  const outside = path.join(base, 'outside');
  const tmp = path.join(base, 'tmp');
  for (const d of [work, outside, tmp]) fs.mkdirSync(d);
  for (const d of [base, work, outside, tmp]) fs.chmodSync(d, 0o777);
  fs.writeFileSync(path.join(outside, 'bashrc'), 'original\n');
  fs.chmodSync(path.join(outside, 'bashrc'), 0o666);
  const lib = path.join(packageRootForOthers(), 'lib', 'index.js');
  const sandbox = { writableRoots: [work], ...(opts.tmpBytes ? { tmpBytes: opts.tmpBytes } : {}) };
  const script = `const { ShellSessions } = require(${JSON.stringify(lib)});
const fs = require('fs');
const report = (r) => process.stderr.write('REPORT ' + JSON.stringify(r) + '\\n');
(async () => {
  const shells = new ShellSessions({ cwd: ${JSON.stringify(work)}, sandbox: ${JSON.stringify(sandbox)}, timeoutMs: 10000 });
  const attack = await shells.execute({ command: ${JSON.stringify(typeof attack === 'string' ? attack : attack(outside))} });
  // A host blocked in a synchronous open never gets here: the parent then finds no report.
  const next = await shells.execute({ command: ${JSON.stringify(next)} });
  let closed = 'ok';
  try { await shells.closeAll(); } catch (e) { closed = e.code || String(e); }
  report({ attack, next, closed, left: fs.readdirSync(${JSON.stringify(tmp)}) });
  process.exit(0);
})().catch((e) => { report({ error: String(e && e.stack || e) }); process.exit(1); });
`;
  const file = path.join(base, 'run.js');
  fs.writeFileSync(file, script, { mode: 0o644 });
  // stdout a real pipe (as an agent's ACP channel is), the child killed if its event loop hangs.
  const user = opts.nobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : [];
  const argv = ['sh', '-c', '"$@" | cat', 'sh', 'timeout', '-s', 'KILL', '25', ...user, process.execPath, file];
  const r = spawnSync(argv[0]!, argv.slice(1), {
    encoding: 'utf8',
    cwd: base,
    env: { ...process.env, TMPDIR: tmp },
  });
  const line = /^REPORT (.*)$/m.exec(r.stderr ?? '');
  const result = {
    report: line ? (JSON.parse(line[1]!) as Record<string, unknown>) : undefined,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    work,
    outside,
  };
  return result;
}

function cleanup(run: { work: string }): void {
  const base = path.dirname(run.work);
  // What a command left behind may be mode 000 (chmod'ed by the attack).
  spawnSync('chmod', ['-R', 'u+rwx', base]);
  fs.rmSync(base, { recursive: true, force: true });
}

/** Shell text: every directory the attack can find the host's session files in. */
const FIND_DIRS = 'for d in "$(dirname -- "${BASH_SOURCE[0]}")" /tmp/acp-shell-*; do [ -d "$d" ] || continue';

const users: Array<[string, boolean]> = [['as this user', false]];
if (isRoot) users.push(['as nobody', true]);

describeIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`)(
  'ShellSessions in the sandbox: nothing the host opens is writable inside',
  () => {
    describe.each(users)('%s', (_label, nobody) => {
      test('a symlink where the host keeps the command text: the next command lands nowhere outside', () => {
        const r = runAttack((o) => `${FIND_DIRS}; ln -sfn '${o}/bashrc' "$d/command.sh" 2>/dev/null; done; true`, 'echo NEXT-COMMAND', { nobody });
        try {
          expect(fs.readFileSync(path.join(r.outside, 'bashrc'), 'utf8')).toBe('original\n');
          expect(r.report?.next).toMatchObject({ status: 'completed', content: 'NEXT-COMMAND' });
        } finally {
          cleanup(r);
        }
        const d = runAttack((o) => `${FIND_DIRS}; ln -sfn '${o}/created' "$d/command.sh" 2>/dev/null; done; true`, 'echo NEXT-COMMAND', { nobody });
        try {
          expect(fs.existsSync(path.join(d.outside, 'created'))).toBe(false);
          expect(d.report?.next).toMatchObject({ status: 'completed', content: 'NEXT-COMMAND' });
        } finally {
          cleanup(d);
        }
      });

      test("a FIFO where the host keeps the command text: the host's event loop never blocks", () => {
        const r = runAttack(`${FIND_DIRS}; rm -f "$d/command.sh"; mkfifo "$d/command.sh" 2>/dev/null; done; true`, 'echo NEXT-COMMAND', { nobody });
        try {
          expect(r.report).toMatchObject({ next: { status: 'completed', content: 'NEXT-COMMAND' }, closed: 'ok' });
        } finally {
          cleanup(r);
        }
      });

      test("a link to /proc/self/fd/1: no command text reaches the host's stdout", () => {
        const injected = '{"jsonrpc":"2.0","method":"session/injected","params":{}}';
        const r = runAttack(`${FIND_DIRS}; ln -sfn /proc/self/fd/1 "$d/command.sh" 2>/dev/null; done; true`, `true\n${injected}\n`, { nobody });
        try {
          expect(r.stdout).not.toContain('session/injected');
          expect(r.report).toMatchObject({ closed: 'ok' });
        } finally {
          cleanup(r);
        }
      });

      test('a mode-000 directory where the host keeps session files: closeAll() resolves and nothing is left in TMPDIR', () => {
        const r = runAttack(`${FIND_DIRS}; mkdir -p "$d/x/y" 2>/dev/null && chmod 000 "$d/x"; done; true`, 'echo NEXT-COMMAND', { nobody });
        try {
          expect(r.report).toMatchObject({ closed: 'ok', left: [] });
        } finally {
          cleanup(r);
        }
      });

      test("writes are bounded by tmpBytes: nothing lands in the host's TMPDIR past it", () => {
        const r = runAttack(
          `${FIND_DIRS}; head -c 3145728 /dev/zero > "$d/big" 2>/dev/null && echo "WROTE $d"; done; ` +
            'head -c 3145728 /dev/zero > /tmp/big 2>/dev/null && echo WROTE-TMP; true',
          'echo NEXT-COMMAND',
          { nobody, tmpBytes: 1 << 20 },
        );
        try {
          expect(r.report?.attack).toMatchObject({ status: 'completed' });
          expect((r.report?.attack as { content: string }).content).not.toContain('WROTE');
          expect(r.report).toMatchObject({ left: [] });
        } finally {
          cleanup(r);
        }
      });
    });
  },
);

testIf('sandbox', info.available, 'containmentInfo().sandbox is unavailable')('the attack runner reports a plain run', () => {
  const r = runAttack('echo ATTACK', 'echo NEXT-COMMAND', { nobody: false });
  try {
    expect(r.report).toMatchObject({
      attack: { status: 'completed', content: 'ATTACK' },
      next: { status: 'completed', content: 'NEXT-COMMAND' },
      closed: 'ok',
    });
  } finally {
    cleanup(r);
  }
});

testIf('sandbox', info.available, 'containmentInfo().sandbox is unavailable')(
  "a command's text is kept in the sandbox's own /tmp: one that does not fit in tmpBytes is not run, and the session goes on",
  async () => {
    // Not under /tmp, which the sandbox replaces with its own.
    const work = fs.mkdtempSync(path.join('/var/tmp', 'sessions-sandbox-'));
    const shells = new ShellSessions({ cwd: work, sandbox: { writableRoots: [work], tmpBytes: 64 * 1024 } });
    try {
      const ran = path.join(work, 'ran');
      const big = await shells.execute({ command: `touch ran; : '${'x'.repeat(200_000)}'`, timeoutMs: 60_000 });
      expect(big).toMatchObject({ status: 'completed', exitCode: 1, content: expect.stringMatching(/cannot create temp file for here-document/) });
      expect(fs.existsSync(ran)).toBe(false);
      expect(await shells.execute({ command: 'echo still here' })).toMatchObject({ status: 'completed', exitCode: 0, content: 'still here' });
    } finally {
      await shells.closeAll();
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
);
