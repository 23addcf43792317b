// Shell rule, environment, cwd, stdin, merged streams, ids and errors of createTerminal.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { createTerminal, ROOT, run, runNode } from './helpers';

/** Directories the tests make, removed when the file's tests end. */
const made: string[] = [];
function tempDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-')));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

describe('shell rule', () => {
  test('a command without args is a shell line', async () => {
    const r = await run({ command: 'echo a && echo b; false || echo c' });
    expect(r.output).toBe('a\nb\nc\n');
    expect(r.status).toEqual({ exitCode: 0, signal: null });
  });

  test('empty args also means a shell line', async () => {
    const r = await run({ command: 'echo $((1+2))', args: [] });
    expect(r.output).toBe('3\n');
  });

  test('args are passed literally, with no shell', async () => {
    const r = await run({ command: 'printf', args: ['%s|', 'a b', '$HOME', '*', "'q'", ';ls'] });
    expect(r.output).toBe("a b|$HOME|*|'q'|;ls|");
  });

  test('options.shell false executes the command directly', async () => {
    const r = await run({ command: 'echo' }, { shell: false });
    expect(r.output).toBe('\n');
    await expect(createTerminal({ command: 'echo hi' }, { shell: false })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  test('options.shell names another shell', async () => {
    const r = await run({ command: 'echo "${BASH_VERSION:+bash}"' }, { shell: 'bash' });
    expect(r.output).toBe('bash\n');
    const r2 = await run({ command: 'echo "[${BASH_VERSION}]"' });
    expect(r2.output).toBe('[]\n');
  });

  test('a program with a slash is a path, relative to cwd', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'hello.sh'), '#!/bin/sh\necho "hi $1"\n', { mode: 0o755 });
    const r = await run({ command: './hello.sh', args: ['there'], cwd: dir });
    expect(r.output).toBe('hi there\n');
    fs.writeFileSync(path.join(dir, 'noexec.sh'), '#!/bin/sh\n', { mode: 0o644 });
    await expect(createTerminal({ command: './noexec.sh', args: ['x'], cwd: dir })).rejects.toMatchObject({
      code: 'EACCES',
    });
  });
});

describe('environment', () => {
  test('inherits the parent environment (process.env, workers too) and applies entries in order', () => {
    // A fresh Node process: jest gives each test file its own copy of process.env.
    const r = runNode(`
      const { createTerminal } = require('.');
      const { Worker, isMainThread } = require('node:worker_threads');
      async function once(tag) {
        process.env.ACP_TERMINAL_INHERITED = tag;
        const t = await createTerminal({ command: 'echo "$ACP_TERMINAL_INHERITED $A $B"',
          env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }, { name: 'B', value: 'b' }] });
        await t.waitForExit();
        const out = (await t.currentOutput()).output;
        await t.release();
        return out;
      }
      once('main').then(async (o) => {
        process.stdout.write(o);
        const w = new Worker(\`
          const { parentPort } = require('node:worker_threads');
          const { createTerminal } = require(${JSON.stringify(ROOT)});
          (async () => {
            process.env.ACP_TERMINAL_INHERITED = 'worker';
            const t = await createTerminal({ command: 'echo "$ACP_TERMINAL_INHERITED"' });
            await t.waitForExit();
            parentPort.postMessage((await t.currentOutput()).output);
            await t.release();
          })();
        \`, { eval: true });
        w.on('message', (m) => process.stdout.write(m));
      });
    `);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('main 2 b\nworker\n');
  });

  test('a request entry overrides an inherited variable', async () => {
    expect(process.env.HOME).toBeTruthy();
    const r = await run({ command: 'echo $HOME', env: [{ name: 'HOME', value: '/override' }] });
    expect(r.output).toBe('/override\n');
  });

  test('an empty env list does not wipe the inherited environment', async () => {
    const r = await run({ command: 'echo "$HOME"', env: [] });
    expect(r.output).toBe(`${process.env.HOME}\n`);
  });

  test('PAGER and GIT_PAGER are cat unless the request sets them', async () => {
    const r = await run({ command: 'echo "$PAGER $GIT_PAGER"' });
    expect(r.output).toBe('cat cat\n');
    const r2 = await run({ command: 'echo "$PAGER $GIT_PAGER"', env: [{ name: 'GIT_PAGER', value: 'more' }] });
    expect(r2.output).toBe('cat more\n');
    // Even over an inherited pager (a fresh process, where process.env is the real one).
    const r3 = runNode(`
      process.env.PAGER = 'less';
      require('.').createTerminal({ command: 'echo $PAGER' }).then(async (t) => {
        await t.waitForExit(); process.stdout.write((await t.currentOutput()).output); await t.release();
      });`);
    expect(r3.stdout).toBe('cat\n');
  });

  test('inheritEnv false starts empty', async () => {
    const r = await run(
      { command: '/usr/bin/env', args: ['-0'], env: [{ name: 'ONLY', value: 'me' }] },
      { inheritEnv: false },
    );
    const vars = r.output.split('\0').filter(Boolean).sort();
    expect(vars).toEqual(['GIT_PAGER=cat', 'ONLY=me', 'PAGER=cat']);
  });

  test('PATH from the request is used to find the program', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'mytool'), '#!/bin/sh\necho mytool ran\n', { mode: 0o755 });
    const r = await run({ command: 'mytool', args: ['x'], env: [{ name: 'PATH', value: `${dir}:/usr/bin:/bin` }] });
    expect(r.output).toBe('mytool ran\n');
  });
});

describe('cwd', () => {
  test('defaults to the Node process cwd', async () => {
    const r = await run({ command: 'pwd -P' });
    expect(r.output).toBe(`${fs.realpathSync(process.cwd())}\n`);
  });

  test('runs in the given absolute directory', async () => {
    const dir = tempDir();
    const r = await run({ command: 'pwd -P', cwd: dir });
    expect(r.output).toBe(`${dir}\n`);
  });

  test.each([
    ['relative', 'some/dir', /absolute/],
    ['missing', '/no/such/dir/anywhere', /\/no\/such\/dir\/anywhere/],
    ['a file', '/etc/hostname', /not a directory/],
  ])('a %s cwd is ERR_INVALID_CWD', async (_kind, cwd, msg) => {
    const err = await createTerminal({ command: 'true', cwd }).catch((e) => e);
    expect(err.code).toBe('ERR_INVALID_CWD');
    expect(err.message).toMatch(/cwd/);
    expect(err.message).toMatch(msg);
  });
});

describe('stdio', () => {
  test('stdin is /dev/null: readers see EOF at once', async () => {
    const r = await run({ command: 'cat; read x; echo "got:[$x] $?"' });
    expect(r.output).toBe('got:[] 1\n');
  });

  test('stdout and stderr are one stream in write order', async () => {
    for (let i = 0; i < 50; i++) {
      const r = await run({ command: 'sh', args: ['-c', 'echo a; echo b >&2; echo c'] });
      expect(r.output).toBe('a\nb\nc\n');
    }
  });

  test('10,000 interleaved stdout/stderr lines stay in order', async () => {
    const script = 'for i in $(seq 1 10000); do if [ $((i % 2)) -eq 0 ]; then echo "e$i" >&2; else echo "o$i"; fi; done';
    const r = await run({ command: script });
    const lines = r.output.trimEnd().split('\n');
    expect(lines).toHaveLength(10000);
    lines.forEach((l, i) => expect(l).toBe(`${(i + 1) % 2 === 0 ? 'e' : 'o'}${i + 1}`));
  });
});

describe('identity', () => {
  test('ids are unique, sessionId comes from params, pid is the child', async () => {
    const a = await createTerminal({ command: 'echo $$', sessionId: 'sess-1' });
    const b = await createTerminal({ command: 'echo $$' });
    try {
      expect(a.id).not.toBe(b.id);
      expect(typeof a.id).toBe('string');
      expect(a.sessionId).toBe('sess-1');
      expect(b.sessionId).toBe('');
      await a.waitForExit();
      expect((await a.currentOutput()).output).toBe(`${a.pid}\n`);
    } finally {
      await a.release();
      await b.release();
    }
  });
});

describe('invalid requests', () => {
  const marker = path.join(os.tmpdir(), `acp-terminal-never-${process.pid}`);
  const touch = `touch ${marker}`;
  afterAll(() => fs.rmSync(marker, { force: true }));

  test.each([
    ['NUL in command', { command: `${touch}\0x` }, 'ERR_INVALID_ARG', /command/],
    ['NUL in args', { command: 'touch', args: [marker, 'a\0b'] }, 'ERR_INVALID_ARG', /args\[1\]/],
    ['NUL in env value', { command: touch, env: [{ name: 'A', value: 'x\0' }] }, 'ERR_INVALID_ARG', /env\[0\]\.value/],
    ['NUL in env name', { command: touch, env: [{ name: 'A\0', value: 'x' }] }, 'ERR_INVALID_ARG', /env\[0\]\.name/],
    ['empty env name', { command: touch, env: [{ name: 'OK', value: '1' }, { name: '', value: 'x' }] }, 'ERR_INVALID_ARG', /env\[1\]\.name/],
    ['env name with =', { command: touch, env: [{ name: 'A=B', value: 'x' }] }, 'ERR_INVALID_ARG', /env\[0\]\.name/],
    ['negative limit', { command: touch, outputByteLimit: -1 }, 'ERR_INVALID_ARG', /outputByteLimit/],
    ['fractional limit', { command: touch, outputByteLimit: 1.5 }, 'ERR_INVALID_ARG', /outputByteLimit/],
    ['NaN limit', { command: touch, outputByteLimit: NaN }, 'ERR_INVALID_ARG', /outputByteLimit/],
    ['infinite limit', { command: touch, outputByteLimit: Infinity }, 'ERR_INVALID_ARG', /outputByteLimit/],
    ['string limit', { command: touch, outputByteLimit: '10' as unknown as number }, 'ERR_INVALID_ARG', /outputByteLimit/],
    ['2^64 limit', { command: touch, outputByteLimit: 2 ** 64 }, 'ERR_INVALID_ARG', /outputByteLimit/],
    ['non-string arg', { command: 'touch', args: [marker, 5 as unknown as string] }, 'ERR_INVALID_ARG', /args\[1\]/],
    ['missing command', { command: undefined as unknown as string }, 'ERR_INVALID_ARG', /command/],
    ['empty command', { command: '' }, 'ERR_INVALID_ARG', /command/],
    ['command not found', { command: 'acp-no-such-program', args: [marker] }, 'ENOENT', /acp-no-such-program/],
  ])('%s', async (_name, params, code, field) => {
    const err = await createTerminal(params).catch((e) => e);
    expect(err).toHaveProperty('code', code);
    expect(err.message).toMatch(field);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('bad options name the option', async () => {
    await expect(createTerminal({ command: 'true' }, { killGraceMs: -5 })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/killGraceMs/),
    });
    await expect(createTerminal({ command: 'true' }, { shell: 3 as unknown as string })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG',
      message: expect.stringMatching(/options\.shell/),
    });
    await expect(createTerminal(null as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
  });

  test('a rejected request leaves everything else working', async () => {
    await createTerminal({ command: 'x', cwd: 'rel' }).catch(() => undefined);
    const r = await run({ command: 'echo still fine' });
    expect(r.output).toBe('still fine\n');
  });
});
