// One owner per rule: the host's program lookup, allowedRoots (resolving the roots and checking a cwd
// against them) and environment defaults are the core's (through the binding), and the platform list
// is package.json's napi.targets. Each test swaps the core for a stub with a different rule and checks
// the TS layer follows it.
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

function withCore<T>(stub: Record<string, unknown>, fn: () => T): T {
  let result!: T;
  jest.isolateModules(() => {
    jest.doMock('../../index.js', () => ({ ...jest.requireActual('../../index.js'), ...stub }));
    // The TS layer loads the core on first use: load the stub now, while it is the one registered.
    (require('../../ts/native') as typeof import('../../ts/native')).loadNative();
    result = fn();
  });
  jest.dontMock('../../index.js');
  return result;
}

describe('environment defaults: the core owns them', () => {
  test('the core reports PAGER=cat and GIT_PAGER=cat', () => {
    const core = jest.requireActual<typeof import('../../index.js')>('../../index.js');
    expect(core.envDefaults()).toEqual([
      { name: 'PAGER', value: 'cat' },
      { name: 'GIT_PAGER', value: 'cat' },
    ]);
  });

  test('on a pty the core also defaults TERM', () => {
    const core = jest.requireActual<typeof import('../../index.js')>('../../index.js');
    expect(core.envDefaults(true)).toEqual([
      { name: 'PAGER', value: 'cat' },
      { name: 'GIT_PAGER', value: 'cat' },
      { name: 'TERM', value: 'xterm-256color' },
    ]);
  });

  test('a ShellSession with dropInheritedEnv gets the same TERM and PAGER as one that inherits', async () => {
    const { ShellSessions } = jest.requireActual<typeof import('../../ts/index')>('../../ts/index');
    const saved = { TERM: process.env.TERM, PAGER: process.env.PAGER };
    process.env.TERM = 'dumb';
    process.env.PAGER = 'less';
    try {
      const seen: string[] = [];
      for (const dropInheritedEnv of [undefined, ['NOTHING_MATCHES_*']]) {
        const shells = new ShellSessions({ dropInheritedEnv });
        try {
          seen.push((await shells.execute({ command: 'echo "TERM=$TERM PAGER=$PAGER"' })).content.trim());
        } finally {
          await shells.closeAll();
        }
      }
      expect(seen).toEqual(['TERM=xterm-256color PAGER=cat', 'TERM=xterm-256color PAGER=cat']);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  test("a ShellSession's env sets PAGER and GIT_PAGER over the core's defaults: the session's rc sets none", async () => {
    const { ShellSessions } = jest.requireActual<typeof import('../../ts/index')>('../../ts/index');
    const { rcText } = jest.requireActual<typeof import('../../ts/session-protocol')>('../../ts/session-protocol');
    expect(rcText('0'.repeat(32))).not.toMatch(/PAGER/);
    const shells = new ShellSessions({ env: { PAGER: 'less -R', GIT_PAGER: 'delta' } });
    try {
      const r = await shells.execute({ command: 'echo "PAGER=$PAGER GIT_PAGER=$GIT_PAGER"' });
      expect(r.content).toBe('PAGER=less -R GIT_PAGER=delta');
    } finally {
      await shells.closeAll();
    }
  });

  test('filteredInheritedEnv leaves out exactly the names the core defaults', () => {
    const env = { PAGER: 'less', GIT_PAGER: 'less', EDITOR: 'vi', KEEP: '1' };
    const names = withCore({ envDefaults: () => [{ name: 'EDITOR', value: 'true' }] }, () => {
      const { filteredInheritedEnv } = require('../../ts/policy-env') as typeof import('../../ts/policy-env');
      return filteredInheritedEnv(() => false, env).map((e) => e.name);
    });
    expect(names).toEqual(['PAGER', 'GIT_PAGER', 'KEEP']);
  });
});

describe('allowedRoots: the host asks the core', () => {
  test("a TerminalHost's roots are the core's canonicalRoots answer, errors included; no realpath in the TS layer", async () => {
    const calls: unknown[] = [];
    const stub = {
      canonicalRoots: (roots: string[]) => {
        calls.push(roots);
        if (roots.includes('/refused')) throw Object.assign(new Error('options.allowedRoots[0]: the core says no'), { code: 'ERR_INVALID_ARG' });
        return roots.map((r) => `/pinned${r}`);
      },
      cwdInRoots: async (cwd: string, roots: string[]) => ({ resolved: cwd, inside: roots.some((r) => cwd.startsWith(r)) }),
    };
    const { host, refused } = withCore(stub, () => {
      const { TerminalHost } = require('../../ts/host') as typeof import('../../ts/host');
      let error: unknown;
      try {
        new TerminalHost({ allowedRoots: ['/refused'] });
      } catch (e) {
        error = e;
      }
      return { host: new TerminalHost({ allowedRoots: ['/r'], cwd: '/r', createTerminal: async () => ({}) as never }), refused: error };
    });
    expect(refused).toMatchObject({ code: 'ERR_INVALID_ARG', message: 'options.allowedRoots[0]: the core says no' });
    expect(calls).toEqual([['/refused'], ['/r']]);
    await expect(host.authorize({ sessionId: 's', command: 'true', cwd: '/elsewhere' })).rejects.toMatchObject({
      code: 'ERR_CWD_OUTSIDE_ROOTS',
      details: { allowedRoots: ['/pinned/r'] },
    });
    await host.close();
    // No second resolution of the roots in TS (the command policy's real path of a program is another rule).
    const policy = fs.readFileSync(path.join(root, 'ts/policy.ts'), 'utf8');
    const compileRoots = policy.slice(policy.indexOf('export function compileRoots'), policy.indexOf('export async function resolveCwdInRoots'));
    expect(compileRoots).toContain('canonicalRoots');
    const code = (file: string): string => fs.readFileSync(path.join(root, file), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
    expect([compileRoots, code('ts/host-options.ts'), code('ts/host-create.ts')].map((text) => /realpath|statSync/.test(text))).toEqual([false, false, false]);
  });

  test('the core: canonicalRoots resolves a symlinked root and refuses a relative, missing or file root naming it', () => {
    const core = jest.requireActual<typeof import('../../index.js')>('../../index.js');
    const tmp = fs.mkdtempSync(path.join(fs.realpathSync(require('node:os').tmpdir()), 'roots-'));
    try {
      fs.mkdirSync(path.join(tmp, 'root'));
      fs.symlinkSync(path.join(tmp, 'root'), path.join(tmp, 'link'));
      fs.writeFileSync(path.join(tmp, 'file'), '');
      expect(core.canonicalRoots([path.join(tmp, 'link'), path.join(tmp, 'root', '..', 'root')])).toEqual([path.join(tmp, 'root'), path.join(tmp, 'root')]);
      for (const [roots, field] of [
        [['relative'], 'options.allowedRoots[0]: must be an absolute path'],
        [[tmp, path.join(tmp, 'nope')], 'options.allowedRoots[1]: '],
        [[path.join(tmp, 'file')], 'options.allowedRoots[0]: '],
        [[`${tmp}\0x`], 'options.allowedRoots[0]: contains a NUL byte'],
      ] as const) {
        expect(() => core.canonicalRoots([...roots])).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining(field) }));
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('resolveCwdInRoots follows the core cwdInRoots verdict and resolved path', async () => {
    const calls: unknown[] = [];
    const stub = {
      cwdInRoots: (cwd: string, roots: string[]) => {
        calls.push([cwd, roots]);
        return { resolved: '/somewhere/else', inside: cwd.endsWith('ok') };
      },
    };
    const { resolveCwdInRoots } = withCore(stub, () => require('../../ts/policy') as typeof import('../../ts/policy'));
    await expect(resolveCwdInRoots('/r/ok', ['/r'])).resolves.toBe('/somewhere/else');
    await expect(resolveCwdInRoots('/r/no', ['/r'])).rejects.toMatchObject({
      code: 'ERR_CWD_OUTSIDE_ROOTS',
      details: { resolved: '/somewhere/else', allowedRoots: ['/r'] },
    });
    expect(calls).toEqual([
      ['/r/ok', ['/r']],
      ['/r/no', ['/r']],
    ]);
  });

  test('the core: a missing cwd is ERR_INVALID_CWD naming it; a sibling with the root as prefix is outside', async () => {
    const core = jest.requireActual<typeof import('../../index.js')>('../../index.js');
    const tmp = fs.mkdtempSync(path.join(fs.realpathSync(require('node:os').tmpdir()), 'roots-'));
    try {
      fs.mkdirSync(path.join(tmp, 'root', 'sub'), { recursive: true });
      fs.mkdirSync(path.join(tmp, 'root-sibling'));
      fs.symlinkSync(path.join(tmp, 'root', 'sub'), path.join(tmp, 'link'));
      const roots = [path.join(tmp, 'root')];
      await expect(core.cwdInRoots(path.join(tmp, 'link'), roots)).resolves.toEqual({ resolved: path.join(tmp, 'root', 'sub'), inside: true });
      await expect(core.cwdInRoots(path.join(tmp, 'root-sibling'), roots)).resolves.toEqual({ resolved: path.join(tmp, 'root-sibling'), inside: false });
      await expect(core.cwdInRoots(path.join(tmp, 'nope'), roots)).rejects.toMatchObject({ code: 'ERR_INVALID_CWD', message: expect.stringContaining('does not exist') });
      await expect(core.cwdInRoots(tmp, ['relative'])).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('allowedRoots[0]') });
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("a request's strings: NUL bytes and variable names are the core's rule", () => {
  test('the host refuses what the core checkText / checkEnvName refuse, with their errors, and nothing else', async () => {
    const seen: string[] = [];
    const refuse = (field: string, value: string) => {
      seen.push(field);
      if (value.includes('bad')) throw Object.assign(new Error(`${field}: the core says no`), { code: 'ERR_INVALID_ARG' });
    };
    const stub = { checkText: (value: string, field: string) => refuse(field, value), checkEnvName: (name: string, field: string) => refuse(field, name) };
    const host = withCore(stub, () => {
      const { TerminalHost } = require('../../ts/host') as typeof import('../../ts/host');
      return new TerminalHost({ createTerminal: async () => ({}) as never });
    });
    try {
      for (const [request, message] of [
        [{ command: 'bad' }, 'command: the core says no'],
        [{ command: 'true', args: ['ok', 'bad'] }, 'args[1]: the core says no'],
        [{ command: 'true', env: [{ name: 'bad', value: '1' }] }, 'env[0].name: the core says no'],
        [{ command: 'true', env: [{ name: 'A', value: 'bad' }] }, 'env[0].value: the core says no'],
        [{ command: 'true', cwd: '/bad' }, 'cwd: the core says no'],
      ] as Array<[Record<string, unknown>, string]>) {
        await expect(host.authorize({ sessionId: 's', ...request } as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message });
      }
      // What the core accepts passes, whatever its bytes (here a name with '=' and a NUL, which the real core refuses).
      seen.length = 0;
      await expect(host.authorize({ sessionId: 's', command: 'true', args: ['a\0'], env: [{ name: 'A=B', value: 'x' }] })).resolves.toBeDefined();
      expect(seen).toEqual(expect.arrayContaining(['command', 'args[0]', 'env[0].name', 'env[0].value']));
    } finally {
      await host.close();
    }
    for (const file of ['ts/validate.ts', 'ts/host-create.ts']) {
      const code = fs.readFileSync(path.join(root, file), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
      expect({ file, nul: code.includes("'\\0'"), equals: code.includes("includes('=')") }).toEqual({ file, nul: false, equals: false });
    }
  });

  test('the core: checkText and checkEnvName name the field', () => {
    const core = jest.requireActual<typeof import('../../index.js')>('../../index.js');
    expect(() => core.checkText('a\0b', 'args[2]')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: 'args[2]: contains a NUL byte' }));
    expect(core.checkText('ab', 'args[2]')).toBeUndefined();
    for (const name of ['', 'A=B', 'A\0']) {
      expect(() => core.checkEnvName(name, 'env[0].name')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringMatching(/^env\[0\]\.name: /) }));
    }
    expect(core.checkEnvName('PATH', 'env[0].name')).toBeUndefined();
  });
});

describe('program lookup: the host uses the core resolveProgram', () => {
  test('a TerminalHost resolves its shell with the core rule', () => {
    const seen: string[] = [];
    const host = withCore({ resolveProgram: (command: string) => (seen.push(command), `/core/${command}`) }, () => {
      const { TerminalHost } = require('../../ts/host') as typeof import('../../ts/host');
      return new TerminalHost({ shell: 'some-shell' });
    });
    expect(seen).toEqual(['some-shell']);
    return host.close();
  });
});

describe('the platform list: package.json napi.targets, in one place', () => {
  test('platforms.js derives the ids from napi.targets, Windows triples included', () => {
    const platforms = jest.requireActual<typeof import('../../platforms.js')>('../../platforms.js');
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { napi: { targets: string[] } };
    expect(platforms.SUPPORTED_PLATFORMS).toEqual(pkg.napi.targets.map(platforms.platformOfTriple));
    expect(['x86_64-unknown-linux-gnu', 'aarch64-unknown-linux-musl', 'aarch64-apple-darwin', 'x86_64-pc-windows-msvc'].map(platforms.platformOfTriple)).toEqual([
      'linux-x64-gnu',
      'linux-arm64-musl',
      'darwin-arm64',
      'win32-x64-msvc',
    ]);
  });

  test('the loader (index.js) loads the local build, else the platform package, else fails with every attempt', () => {
    const { platformId } = jest.requireActual<typeof import('../../platforms.js')>('../../platforms.js');
    const { nativeUnavailable } = jest.requireActual<typeof import('../../ts/native')>('../../ts/native');
    const id = platformId();
    const binary = path.join(root, `acp-terminal.${id}.node`);
    const tmp = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'loader-'));
    const load = (dir: string): { ok: boolean; keys?: number; message?: string; causes?: unknown[] } => {
      const code =
        `try { const m = require(${JSON.stringify(path.join(dir, 'index.js'))}); console.log(JSON.stringify({ ok: true, keys: Object.keys(m).length })) }` +
        ` catch (e) { console.log(JSON.stringify({ ok: false, message: e.message, causes: e.cause.map((c) => ({ code: c.code, message: c.message })) })) }`;
      const r = require('node:child_process').spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: '' } });
      return JSON.parse(r.stdout) as { ok: boolean };
    };
    try {
      for (const f of ['index.js', 'platforms.js', 'package.json']) fs.copyFileSync(path.join(root, f), path.join(tmp, f));
      const none = load(tmp);
      expect(none).toMatchObject({ ok: false, message: expect.stringContaining('Cannot find native binding') });
      expect(none.causes).toHaveLength(2);
      expect(none.causes).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'MODULE_NOT_FOUND', message: expect.stringContaining(`acp-terminal-${id}`) })]));
      const advice = nativeUnavailable(Object.assign(new Error(none.message), { cause: none.causes }), id);
      expect(advice.message).toContain('It is not installed');
      // The platform package.
      const pkgDir = path.join(tmp, 'node_modules', `acp-terminal-${id}`);
      fs.mkdirSync(pkgDir, { recursive: true });
      fs.writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify({ name: `acp-terminal-${id}`, main: `acp-terminal.${id}.node` }));
      fs.copyFileSync(binary, path.join(pkgDir, `acp-terminal.${id}.node`));
      expect(load(tmp)).toMatchObject({ ok: true, keys: expect.any(Number) });
      // A local build comes first (the package removed, it still loads).
      fs.rmSync(path.join(tmp, 'node_modules'), { recursive: true });
      fs.copyFileSync(binary, path.join(tmp, `acp-terminal.${id}.node`));
      expect(load(tmp)).toMatchObject({ ok: true });
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('no other source file spells the platform list or a libc check', () => {
    const files = ['index.js', 'scripts/ensure-built.js', 'scripts/publish-registry.js', 'scripts/test-registry-install.js', 'ts/native.ts'];
    for (const file of files) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      expect({ file, libc: /glibcVersionRuntime|ldd/.test(text), list: /'linux-arm64-musl'|'darwin-x64'/.test(text) }).toEqual({ file, libc: false, list: false });
    }
  });
});
