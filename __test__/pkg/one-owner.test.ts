// One owner per rule: the host's program lookup, allowedRoots check and environment defaults are the
// core's (through the binding), and the platform list is package.json's napi.targets. Each test swaps
// the core for a stub with a different rule and checks the TS layer follows it.
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

  test('the core: a missing cwd is ERR_INVALID_CWD naming it; a sibling with the root as prefix is outside', () => {
    const core = jest.requireActual<typeof import('../../index.js')>('../../index.js');
    const tmp = fs.mkdtempSync(path.join(fs.realpathSync(require('node:os').tmpdir()), 'roots-'));
    try {
      fs.mkdirSync(path.join(tmp, 'root', 'sub'), { recursive: true });
      fs.mkdirSync(path.join(tmp, 'root-sibling'));
      fs.symlinkSync(path.join(tmp, 'root', 'sub'), path.join(tmp, 'link'));
      const roots = [path.join(tmp, 'root')];
      expect(core.cwdInRoots(path.join(tmp, 'link'), roots)).toEqual({ resolved: path.join(tmp, 'root', 'sub'), inside: true });
      expect(core.cwdInRoots(path.join(tmp, 'root-sibling'), roots)).toEqual({ resolved: path.join(tmp, 'root-sibling'), inside: false });
      expect(() => core.cwdInRoots(path.join(tmp, 'nope'), roots)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CWD', message: expect.stringContaining('does not exist') }));
      expect(() => core.cwdInRoots(tmp, ['relative'])).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('allowedRoots[0]') }));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
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

  test('no other source file spells the platform list or a libc check', () => {
    const files = ['scripts/ensure-built.js', 'scripts/test-registry-install.js', 'ts/native.ts'];
    for (const file of files) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      expect({ file, libc: /glibcVersionRuntime|ldd/.test(text), list: /'linux-arm64-musl'|'darwin-x64'/.test(text) }).toEqual({ file, libc: false, list: false });
    }
  });
});
