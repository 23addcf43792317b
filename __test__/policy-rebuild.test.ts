// What runs under an allow list is what was checked. Each attack is first shown deleting a victim file
// through a host that lets it through (no command policy), then refused (or made harmless) by an allow list
// of absolute paths without codeRunners, on the native core.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TerminalHost, type HostCreateTerminalRequest, type TerminalHostOptions } from '../ts/host';
import { testIf } from './fixtures/require-feature';

const S = 'rebuild';
let tmp: string;
const hosts: TerminalHost[] = [];

const which = (name: string): string | undefined => {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? fs.realpathSync(r.stdout.trim()) : undefined;
};
const BIN = Object.fromEntries(['ls', 'bash', 'sh', 'ln', 'git', 'tar', 'node', 'make', 'sort', 'setpriv'].map((n) => [n, which(n)]));

function host(options: TerminalHostOptions): TerminalHost {
  const h = new TerminalHost({ cwd: tmp, ...options });
  hosts.push(h);
  return h;
}

type Request = Omit<HostCreateTerminalRequest, 'sessionId'>;

async function run(h: TerminalHost, request: Request): Promise<string> {
  const { terminalId } = await h.createTerminal({ sessionId: S, cwd: tmp, ...request });
  await h.waitForTerminalExit({ sessionId: S, terminalId });
  const { output } = await h.terminalOutput({ sessionId: S, terminalId });
  await h.releaseTerminal({ sessionId: S, terminalId });
  return output;
}

function victim(): string {
  const v = path.join(tmp, 'victim');
  fs.writeFileSync(v, 'x');
  return v;
}

/** The request deletes the victim with no policy, and `strict` refuses it (`refusal`) with the victim kept. */
async function refused(request: Request, strict: TerminalHostOptions, refusal: Record<string, unknown>): Promise<void> {
  const v = victim();
  await run(host({}), request);
  expect(fs.existsSync(v)).toBe(false);
  victim();
  const h = host(strict);
  await expect(h.createTerminal({ sessionId: S, cwd: tmp, ...request })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED', details: refusal });
  expect(fs.existsSync(v)).toBe(true);
  expect(h.liveTerminals).toBe(0);
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-rebuild-')));
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const allow = (...names: string[]): TerminalHostOptions => ({
  commandPolicy: { allow: names.map((n) => BIN[n] ?? `/nonexistent/${n}`) },
});

describe('bytes the grammar and the shells read differently are refused, not interpreted', () => {
  const CRLF = 'ls \\\r\nrm -f victim';
  test.each([
    ['an sh line', {}],
    ['a bash line', { shell: 'bash' }],
  ])('backslash-CR-LF in %s', async (_label, shell) => {
    await refused({ command: CRLF }, { ...allow('ls'), ...shell }, { reason: 'shell-construct' });
  });

  test('backslash-CR-LF in the -c script of an argv request (shellLines deny)', async () => {
    await refused(
      { command: 'bash', args: ['-lc', CRLF] },
      { commandPolicy: { allow: [BIN.ls!, BIN.bash!], shellLines: 'deny' } },
      { reason: 'shell-construct' },
    );
  });

  test('a backslash-newline inside a -c script joins `x#; cmd`', async () => {
    await refused(
      { command: 'bash', args: ['-c', 'ls x\\\n#; rm -f victim'] },
      { commandPolicy: { allow: [BIN.ls!, BIN.bash!], shellLines: 'deny' } },
      { reason: 'shell-construct' },
    );
  });

  test.each(['\r', '\x0b', '\x1b', '\x7f'])('the control character %j anywhere in a line', async (c) => {
    const h = host(allow('ls'));
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, command: `ls x${c}y` })).rejects.toMatchObject({
      details: { reason: 'shell-construct' },
    });
  });
});

describe('the shell runs the line rebuilt from the parse, programs by the real path checked', () => {
  test('a plain line runs as written (quotes, redirections, here-documents, $VARS)', async () => {
    const h = host({ commandPolicy: { allow: [BIN.ls!, '/usr/bin/cat', '/usr/bin/tail', '/usr/bin/tr'] } });
    fs.writeFileSync(path.join(tmp, 'a b.txt'), 'hello\n');
    const out = await run(h, {
      command: "cat 'a b.txt' | tr a-z A-Z > up.txt && cat <<'EOF' | tail -1\n$(not run)\nlast $HOME\nEOF\ncat up.txt; echo \"$HOME\" x*y",
    });
    expect(out).toBe(`last $HOME\nHELLO\n${os.homedir()} x*y\n`);
  });

  testIf('setpriv', BIN.setpriv !== undefined, 'no setpriv')('`cd /usr/bin && ./setpriv ...` where the workspace setpriv is ls', async () => {
    fs.symlinkSync(BIN.ls!, path.join(tmp, 'setpriv'));
    try {
      await refused(
        { command: `cd ${path.dirname(BIN.setpriv!)} && ./setpriv ${BIN.sh} -c 'rm -f ${tmp}/victim'` },
        allow('ls'),
        { reason: 'shell-construct' },
      );
    } finally {
      fs.rmSync(path.join(tmp, 'setpriv'));
    }
  });

  test('`ln -sfn rm t && ./t -f victim` where t was ls when checked runs ls', async () => {
    fs.symlinkSync(BIN.ls!, path.join(tmp, 't'));
    try {
      const v = victim();
      await run(host({}), { command: `ln -sfn /bin/rm t && ./t -f victim` });
      expect(fs.existsSync(v)).toBe(false);
      fs.rmSync(path.join(tmp, 't'));
      fs.symlinkSync(BIN.ls!, path.join(tmp, 't'));
      victim();
      const out = await run(host(allow('ls', 'ln')), { command: `ln -sfn /bin/rm t && ./t -f victim` });
      expect(fs.existsSync(v)).toBe(true);
      expect(out).toMatch(/victim/); // ls listed it
    } finally {
      fs.rmSync(path.join(tmp, 't'), { force: true });
    }
  });

  test('a symlink retargeted while an argv request awaits approval does not change what runs', async () => {
    const link = path.join(tmp, 'flip');
    fs.symlinkSync(BIN.ls!, link);
    const race = async (options: TerminalHostOptions): Promise<number> => {
      let won = 0;
      for (let i = 0; i < 12; i++) {
        fs.rmSync(link, { force: true });
        fs.symlinkSync(BIN.ls!, link);
        const v = victim();
        const h = host({
          ...options,
          // The approval takes a moment; meanwhile another process of the agent retargets the link.
          approve: async () => {
            spawnSync('ln', ['-sfn', '/bin/rm', link]);
            return true;
          },
        });
        await run(h, { command: link, args: ['-f', v] }).catch(() => undefined);
        if (!fs.existsSync(v)) won++;
      }
      return won;
    };
    expect(await race({ commandPolicy: { deny: ['/nonexistent'] } })).toBeGreaterThan(0);
    expect(await race(allow('ls'))).toBe(0);
    fs.rmSync(link, { force: true });
  });

  test('a program not found when checked cannot be pinned: refused', async () => {
    const h = host({ commandPolicy: { allow: ['made-later'] } });
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, command: 'made-later x' })).rejects.toMatchObject({
      details: { reason: 'not-found' },
    });
  });
});

describe('options that run code are read with the program grammar', () => {
  const rm = (): string => `rm -f ${tmp}/victim`;
  const cases: Array<[string, string, () => string[], Record<string, unknown>?]> = [
    ['git ls-remote --upload-pack', 'git', () => ['ls-remote', `--upload-pack=${rm()};:`, tmp]],
    ['git fetch --upload-pack', 'git', () => ['-C', path.join(tmp, 'repo'), 'fetch', `--upload-pack=${rm()};:`, tmp]],
    ['git clone -u', 'git', () => ['clone', '-u', `${rm()};:`, path.join(tmp, 'repo'), path.join(tmp, `clone-${Math.random()}`)]],
    ['git archive --exec', 'git', () => ['archive', `--exec=${rm()};:`, `--remote=${tmp}`, 'HEAD']],
    ['git grep -O', 'git', () => ['-C', path.join(tmp, 'repo'), 'grep', `-O${rm()};:`, 'x']],
    ['tar --to-com=', 'tar', () => ['-xf', path.join(tmp, 'a.tar'), `--to-com=${rm()}`]],
    ['tar --checkpoint-act=exec=', 'tar', () => ['-cf', '/dev/null', '--checkpoint=1', `--checkpoint-act=exec=${rm()}`, 'a.tar']],
    ['tar --use-comp=', 'tar', () => ['-cf', '/dev/null', `--use-comp=sh -c '${rm()}'`, 'a.tar']],
    ['tar -I in a cluster', 'tar', () => ['-cI', `sh -c '${rm()}'`, '-f', '/dev/null', 'a.tar']],
    ['node --import data:', 'node', () => ['--import', `data:text/javascript,import fs from "fs"; fs.rmSync(${JSON.stringify(path.join(tmp, 'victim'))})`, path.join(tmp, 'noop.js')]],
    ['make --eval', 'make', () => ['-f', '/dev/null', `--eval=x:;${rm()}`, 'x']],
    ['sort --compress-program', 'sort', () => ['--compress-program=sh', '-S', '1k', '-T', tmp, path.join(tmp, 'big.txt')]],
  ];
  beforeAll(() => {
    if (BIN.git) {
      const repo = path.join(tmp, 'repo');
      fs.mkdirSync(repo, { recursive: true });
      spawnSync('git', ['init', '-q', repo]);
      fs.writeFileSync(path.join(repo, 'f'), 'x\n');
      spawnSync('git', ['-C', repo, 'add', 'f']);
      spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
      spawnSync('git', ['init', '-q', '--bare', path.join(tmp, 'bare')]);
    }
    // sort's compress program (`sh`) reads the data it compresses as a script.
    fs.writeFileSync(path.join(tmp, 'big.txt'), `rm -f ${tmp}/victim\n`.repeat(400));
    fs.writeFileSync(path.join(tmp, 'noop.js'), '');
    spawnSync('tar', ['-cf', path.join(tmp, 'a.tar'), '-C', tmp, 'big.txt']);
  });
  test.each(cases)('%s', async (_label, program, args) => {
    if (BIN[program] === undefined) return expect(program).toBe('installed');
    const shown = (): boolean => !fs.existsSync(path.join(tmp, 'victim'));
    victim();
    const request = { command: program, args: args(), cwd: tmp };
    // Some of these need a remote that answers: the victim goes when the command runs at all.
    await run(host({}), request).catch(() => undefined);
    expect(shown()).toBe(true);
    victim();
    const h = host({ commandPolicy: { allow: [BIN[program]!], shellLines: 'deny' } });
    await expect(h.createTerminal({ sessionId: S, ...request, args: args() })).rejects.toMatchObject({
      code: 'ERR_POLICY_DENIED',
      details: { reason: 'code-execution' },
    });
    expect(shown()).toBe(false);
  });

  test('an option a program grammar does not list is refused, naming it', async () => {
    const h = host(allow('tar'));
    await expect(h.createTerminal({ sessionId: S, cwd: tmp, command: 'tar', args: ['--frobnicate', '-xf', 'a.tar'] })).rejects.toMatchObject({
      details: { reason: 'unknown-option', option: expect.stringContaining('--frobnicate') },
    });
  });

  test.each([
    ['TAR_OPTIONS', 'tar', () => ({ command: 'tar', args: ['-cf', '/dev/null', 'a.tar'], env: [{ name: 'TAR_OPTIONS', value: `--checkpoint=1 --checkpoint-action=exec=rm\\ -f\\ ${tmp}/victim` }] })],
    ['MAKEFLAGS', 'make', () => ({ command: 'make', args: ['-f', '/dev/null', 'x'], env: [{ name: 'MAKEFLAGS', value: `--eval=x:;rm\\ -f\\ ${tmp}/victim` }] })],
  ])('the request env %s', async (name, program, request) => {
    await refused(request(), allow(program), { reason: 'env', name });
  });
});

test('an allowed program still runs through a host without a policy when spawned plainly (sanity)', async () => {
  const child = spawn(BIN.ls!, [tmp]);
  await new Promise((r) => child.on('exit', r));
  expect(child.exitCode).toBe(0);
});
