// Refuse what is not understood: under a broad allow rule (`/usr/bin/*`) with `rm` denied, each request
// below deleted the victim with `rm` (a program the list refuses) through a program or builtin the analysis
// did not read (the third independent attack). Each is first shown deleting the victim through a host without
// a policy, then refused by the broad policy with the victim kept; the same requests are refused as nobody.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TerminalHost, type HostCreateTerminalRequest, type TerminalHostOptions } from '../ts/host';
import { MAX_CHECKED_PROGRAMS } from '../ts/policy';
import { shellCommandWords } from '../ts/shell-analysis';
import { removePackageCopy, runAsNobody } from './core/helpers';
import { testIf } from './fixtures/require-feature';

const S = 'understood';
let tmp: string;
const hosts: TerminalHost[] = [];
type Request = Omit<HostCreateTerminalRequest, 'sessionId'>;

const which = (name: string): string | undefined => {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
};
const ARCH = ({ x64: 'x86_64', arm64: 'aarch64' } as Record<string, string>)[os.arch()] ?? os.arch();

/** The broad policy of the attacks: every program of the system directories, `rm` refused. */
const BROAD = { allow: ['/usr/bin/*', '/bin/*', '/usr/sbin/*'], deny: ['rm'] };

function host(options: TerminalHostOptions): TerminalHost {
  const h = new TerminalHost({ cwd: tmp, ...options });
  hosts.push(h);
  return h;
}

async function run(h: TerminalHost, request: Request): Promise<void> {
  const { terminalId } = await h.createTerminal({ sessionId: S, cwd: tmp, ...request });
  await h.waitForTerminalExit({ sessionId: S, terminalId });
  await h.releaseTerminal({ sessionId: S, terminalId });
}

const victim = (): string => {
  const v = path.join(tmp, 'victim');
  fs.writeFileSync(v, 'x');
  return v;
};

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-understood-')));
  // Files the agent wrote in its workspace.
  fs.writeFileSync(path.join(tmp, 'rc'), 'rm -f victim\n');
  fs.writeFileSync(path.join(tmp, 'prog.awk'), 'BEGIN { system("rm -f victim") }\n');
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  removePackageCopy();
});

/** [label, the request, extra host options, the refusal expected] */
const ATTACKS: Array<[string, Request, TerminalHostOptions, Record<string, unknown>]> = [
  ['setpriv PROG', { command: `setpriv sh -c 'rm -f victim'` }, {}, { reason: 'code-execution', word: 'setpriv' }],
  ['prlimit PROG', { command: `prlimit --nofile=256 sh -c 'rm -f victim'` }, {}, { reason: 'code-execution', word: 'prlimit' }],
  ['unshare PROG', { command: `unshare sh -c 'rm -f victim'` }, {}, { reason: 'code-execution', word: 'unshare' }],
  ['setarch ARCH PROG', { command: `setarch ${ARCH} sh -c 'rm -f victim'` }, {}, { reason: 'code-execution', word: 'setarch' }],
  ['script -c', { command: `script -qc 'rm -f victim' /dev/null` }, {}, { reason: 'code-execution', word: 'script' }],
  ['gdb -ex !cmd', { command: `gdb -batch -nx -ex '!rm -f victim'` }, {}, { reason: 'code-execution', word: 'gdb' }],
  ['sqlite3 .shell', { command: `sqlite3 :memory: '.shell rm -f victim'` }, {}, { reason: 'code-execution', word: 'sqlite3' }],
  ['rvim runs as vim through its real path', { command: `rvim -Nu NONE -es -c '!rm -f victim' -c 'qa!'` }, {}, { reason: 'unknown-program', word: 'rvim', runsAs: expect.stringMatching(/^vim/) }],
  ['mawk -W exec', { command: 'mawk -W exec prog.awk' }, {}, { reason: 'unknown-option', word: 'mawk' }],
  ['perl /dev/stdin', { command: `echo 'system "rm -f victim"' | perl /dev/stdin` }, {}, { reason: 'code-execution', word: 'perl' }],
  ['perl /proc/self/fd/0', { command: `echo 'system "rm -f victim"' | perl /proc/self/fd/0` }, {}, { reason: 'code-execution', word: 'perl' }],
  ['make -f -', { command: `printf 'x:\\n\\trm -f victim\\n' | make -s -f - x` }, {}, { reason: 'code-execution', word: 'make' }],
  ['ssh -o \'"ProxyCommand" ...\'', { command: `ssh -o '"ProxyCommand" sh -c "rm -f victim"' -o BatchMode=yes x` }, {}, { reason: 'code-execution', word: 'ssh' }],
  ['set -k (bash)', { command: 'set -k; bash -c : BASH_ENV=./rc' }, { shell: 'bash' }, { reason: 'shell-construct', word: 'set' }],
  ['set -o keyword (bash)', { command: 'set -o keyword; bash -c : BASH_ENV=./rc' }, { shell: 'bash' }, { reason: 'shell-construct', word: 'set' }],
  ['bash -k', { command: `bash -kc 'bash -c : BASH_ENV=./rc'` }, {}, { reason: 'shell-construct', word: 'bash' }],
  ['jobs -x (bash)', { command: 'jobs -x rm -f victim' }, { shell: 'bash' }, { reason: 'shell-construct', word: 'jobs' }],
  ['bash --rcfile', { command: 'bash --rcfile ./rc -ic :' }, {}, { reason: 'wrapper-option', word: 'bash' }],
  // Start-up files the line writes (HOME is the host's choice, here the cwd).
  ['bash -lc (login start-up file)', { command: `printf 'rm -f victim\\n' > .bash_profile; bash -lc true` }, { env: { HOME: '.' } }, { reason: 'shell-construct', word: 'bash' }],
  ['bash -ic (interactive start-up file)', { command: `printf 'rm -f victim\\n' > .bashrc; bash -ic true` }, { env: { HOME: '.' } }, { reason: 'shell-construct', word: 'bash' }],
  ['sh -l -c (login start-up file)', { command: `printf 'rm -f victim\\n' > .profile; sh -l -c true` }, { env: { HOME: '.' } }, { reason: 'shell-construct', word: 'sh' }],
];

/**
 * The request as the policy's rebuild ran it before the fix: programs by their real path (only `rvim` reads
 * its own name: run as its real path `vim`, it is no longer restricted).
 */
function shown(request: Request): Request {
  const rvim = which('rvim');
  if (!request.command.startsWith('rvim ') || rvim === undefined) return request;
  return { ...request, command: `'${fs.realpathSync(rvim)}'${request.command.slice(4)}` };
}

describe('a broad allow rule admits only programs the analysis understands', () => {
  test.each(ATTACKS)('%s', async (_label, request, extra, refusal) => {
    const program = (request.command.match(/(?:^|; |\| )([a-z0-9]+)/g) ?? []).map((m) => m.replace(/^(; |\| )/, ''));
    for (const p of program) if (!['set', 'jobs', 'echo', 'printf'].includes(p)) expect(which(p) ?? `${p} not installed`).toMatch(/^\//);
    const v = victim();
    await run(host(extra), shown(request));
    expect(fs.existsSync(v)).toBe(false); // the attack works without the policy
    victim();
    const h = host({ ...extra, commandPolicy: BROAD });
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, ...request })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: refusal });
    expect(fs.existsSync(v)).toBe(true);
    expect(h.liveTerminals).toBe(0);
  });

  test('a program named exactly is the user taking responsibility for it; plain programs pass a broad rule', async () => {
    const out = path.join(tmp, 'exact.txt');
    // `hostname` is in none of the analysis's tables: a broad rule does not admit it, a rule naming it does.
    await expect(host({ commandPolicy: BROAD }).createTerminal({ sessionId: S, cwd: tmp, command: 'hostname' })).rejects.toMatchObject({
      details: { reason: 'unknown-program', word: 'hostname', rule: '"/usr/bin/*"' },
    });
    const h = host({ commandPolicy: { allow: [...BROAD.allow, which('hostname')!] } });
    await run(h, { command: `hostname > ${out}` });
    expect(fs.readFileSync(out, 'utf8').trim()).toBe(os.hostname());
    await run(host({ commandPolicy: BROAD }), { command: `ls -la | grep prog | wc -l > ${out}` });
    expect(fs.readFileSync(out, 'utf8').trim()).toBe('1');
  });

  test('a line longer than a program argument may be is refused before it is analysed, naming the field', async () => {
    const h = host({ commandPolicy: BROAD });
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, command: `echo ${'x'.repeat(200_000)}` })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      details: { field: 'command', limit: 131_071 },
    });
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, command: 'ls', args: ['a', 'é'.repeat(70_000)] })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      details: { field: 'args[1]' },
    });
  });

  test('the analysis runs off the JS thread: the event loop keeps turning while a long line is checked', async () => {
    const h = host({ commandPolicy: BROAD });
    const line = 'echo ' + 'x '.repeat(60_000); // one command of many words: the analysis is the cost
    const t0 = performance.now();
    expect(shellCommandWords(line).refusals).toEqual([]);
    const syncMs = performance.now() - t0; // what a synchronous check holds the loop for
    let last = performance.now();
    let maxGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 1);
    const { terminalId } = await h.createTerminal({ sessionId: S, cwd: tmp, command: line });
    clearInterval(timer);
    maxGap = Math.max(maxGap, performance.now() - last); // a loop blocked until the end never ran the timer
    await h.waitForTerminalExit({ sessionId: S, terminalId });
    expect(maxGap).toBeLessThan(syncMs / 2);
  });

  test('a line of more programs than the policy judges is refused (ERR_INVALID_ARG) without holding the event loop', async () => {
    const h = host({ commandPolicy: BROAD });
    const line = 'ls;'.repeat(40_000); // 117 KiB, 40 000 programs: judging each (PATH lookup, real path) is JS work
    const t0 = performance.now();
    const analysis = shellCommandWords(line);
    expect([analysis.programCount, analysis.words.length, analysis.rebuild]).toEqual([40_000, MAX_CHECKED_PROGRAMS + 1, undefined]);
    const syncMs = performance.now() - t0; // the analysis alone, synchronously
    let last = performance.now();
    let maxGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 1);
    const err = await h.createTerminal({ sessionId: S, cwd: tmp, command: line }).catch((e: unknown) => e);
    clearInterval(timer);
    maxGap = Math.max(maxGap, performance.now() - last); // a loop blocked until the end never ran the timer
    expect(err).toMatchObject({ code: 'ERR_INVALID_ARG', details: { field: 'command', programs: 40_000, limit: MAX_CHECKED_PROGRAMS } });
    expect(h.liveTerminals).toBe(0);
    // The loop waits at most for the analysis' result to be read, never for 40 000 programs to be judged.
    expect(maxGap).toBeLessThan(syncMs / 2);
    // A line just at the limit is judged as before.
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, command: 'true;'.repeat(MAX_CHECKED_PROGRAMS) })).resolves.toHaveProperty('terminalId');
  });
});

testIf('root', process.getuid?.() === 0, 'not root: cannot drop to nobody with setpriv')('as nobody: the same attacks work without a policy and are refused under the broad rule', () => {
  const cases = ATTACKS.filter(([label]) => !label.includes('unshare')).map(([label, request, extra]) => ({ label, request, shown: shown(request), extra }));
  const { out } = runAsNobody(
    (lib, dir) => `const { TerminalHost } = require(${JSON.stringify(lib)});
const fs = require('fs');
const path = require('path');
const dir = ${JSON.stringify(dir)};
fs.writeFileSync(path.join(dir, 'rc'), 'rm -f victim\\n');
fs.writeFileSync(path.join(dir, 'prog.awk'), 'BEGIN { system("rm -f victim") }\\n');
const v = path.join(dir, 'victim');
(async () => {
  const results = {};
  for (const c of ${JSON.stringify(cases)}) {
    const r = {};
    for (const policy of [undefined, ${JSON.stringify(BROAD)}]) {
      fs.writeFileSync(v, 'x');
      const h = new TerminalHost({ cwd: dir, ...c.extra, ...(policy ? { commandPolicy: policy } : {}) });
      try {
        const { terminalId } = await h.createTerminal({ sessionId: 's', cwd: dir, ...(policy ? c.request : c.shown) });
        await h.waitForTerminalExit({ sessionId: 's', terminalId });
        r[policy ? 'broad' : 'open'] = fs.existsSync(v) ? 'kept' : 'deleted';
      } catch (e) {
        r[policy ? 'broad' : 'open'] = (e.details && e.details.reason) + (fs.existsSync(v) ? ' kept' : ' deleted');
      }
      await h.close();
    }
    results[c.label] = r;
  }
  console.log(JSON.stringify(results));
})();
`,
  );
  const results = JSON.parse(out) as Record<string, { open: string; broad: string }>;
  for (const [label, , , refusal] of ATTACKS.filter(([l]) => !l.includes('unshare'))) {
    expect([label, results[label]]).toEqual([label, { open: 'deleted', broad: `${refusal.reason as string} kept` }]);
  }
});
