// The one loader of the native core (ts/native.ts): lazy, and an error that names the platform and
// what to do when the binary is missing or does not load. The package layout napi-rs expects.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  license: string;
  os: string[];
  files: string[];
  napi: { binaryName: string; targets: string[] };
  optionalDependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** napi's platform id of a Rust target triple (the suffix of the npm/<id>/ package). */
function platformOf(triple: string): string {
  const arch = triple.startsWith('x86_64') ? 'x64' : triple.startsWith('aarch64') ? 'arm64' : '?';
  if (triple.endsWith('-apple-darwin')) return `darwin-${arch}`;
  if (triple.endsWith('-pc-windows-msvc')) return `win32-${arch}-msvc`;
  return `linux-${arch}-${triple.endsWith('-musl') ? 'musl' : 'gnu'}`;
}

/** A generated-loader failure as index.js throws it: the attempts in `cause`. */
function loaderError(...causes: Error[]): Error {
  return Object.assign(new Error('Cannot find native binding. npm has a bug related to optional dependencies'), { cause: causes });
}

function missingModule(name: string): Error {
  return Object.assign(new Error(`Cannot find module '${name}'\nRequire stack:\n- index.js`), { code: 'MODULE_NOT_FOUND' });
}

describe('nativeUnavailable: the message', () => {
  const { nativeUnavailable } = jest.requireActual<typeof import('../../ts/native')>('../../ts/native');

  test('a supported platform whose package is missing: names the platform and package, says reinstall', () => {
    const e = nativeUnavailable(loaderError(missingModule('./acp-terminal.linux-x64-gnu.node'), missingModule('acp-terminal-linux-x64-gnu')), 'linux-x64-gnu');
    expect(e.code).toBe('ERR_NATIVE_UNAVAILABLE');
    expect(e.message).toContain('on linux-x64-gnu (Node ');
    expect(e.message).toContain('acp-terminal-linux-x64-gnu');
    expect(e.message).toContain('It is not installed: reinstall acp-terminal without --omit=optional');
    expect(e.message).toContain("Cannot find module 'acp-terminal-linux-x64-gnu'");
    expect(e.message).not.toMatch(/npm has a bug/);
    expect(e.details).toMatchObject({ platform: 'linux-x64-gnu', packageName: 'acp-terminal-linux-x64-gnu', supported: true });
  });

  test('a binary that is present but does not load (old glibc): says it did not load, with the reason', () => {
    const dlopen = new Error("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by acp-terminal.linux-x64-gnu.node)");
    const e = nativeUnavailable(loaderError(dlopen), 'linux-x64-gnu');
    expect(e.message).toContain('It did not load:');
    expect(e.message).toContain("GLIBC_2.34' not found");
  });

  test('an unsupported platform: lists the supported ones (Windows included), how to build', () => {
    const e = nativeUnavailable(loaderError(), 'freebsd-x64');
    expect(e.message).toContain(
      'No prebuilt binary exists for freebsd-x64: acp-terminal supports linux-x64-gnu, linux-arm64-gnu, linux-x64-musl, ' +
        'linux-arm64-musl, darwin-x64, darwin-arm64, win32-x64-msvc, win32-arm64-msvc. On another platform, build it',
    );
    expect(e.message).not.toMatch(/Windows is not supported|another Unix/);
    expect(e.message).toContain('npm run build');
    expect(e.details).toMatchObject({ supported: false });
  });

  test('Windows x64 and arm64 are supported platforms: a missing package says reinstall, naming the msvc package', () => {
    for (const id of ['win32-x64-msvc', 'win32-arm64-msvc']) {
      const e = nativeUnavailable(loaderError(missingModule(`acp-terminal-${id}`)), id);
      expect(e.message).toContain(`on ${id} (Node `);
      expect(e.message).toContain(`ships in the npm package acp-terminal-${id}, an optional dependency`);
      expect(e.details).toMatchObject({ platform: id, packageName: `acp-terminal-${id}`, supported: true });
    }
  });

  test('platformId follows napi-rs naming', () => {
    const { platformId } = jest.requireActual<typeof import('../../ts/native')>('../../ts/native');
    expect(platformId('linux', 'x64', true)).toBe('linux-x64-gnu');
    expect(platformId('linux', 'arm64', false)).toBe('linux-arm64-musl');
    expect(platformId('darwin', 'arm64')).toBe('darwin-arm64');
    expect(platformId('win32', 'x64')).toBe('win32-x64-msvc');
    expect(platformId('win32', 'arm64')).toBe('win32-arm64-msvc');
  });
});

describe('the loader on Windows (index.js, platforms.js and lib/native.js run in a Node that reports win32)', () => {
  // A copy of the loader chain in an empty directory, so no local build (acp-terminal.<id>.node) and
  // no installed platform package can be found; the Node process claims to be Windows on each CPU.
  function loadAs(platform: string, arch: string): { code: string; message: string; details: Record<string, unknown> } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-loader-'));
    try {
      fs.mkdirSync(path.join(dir, 'lib'));
      for (const f of ['index.js', 'platforms.js', 'package.json', 'lib/native.js', 'lib/errors.js', 'lib/network-proxy.js']) {
        fs.copyFileSync(path.join(root, f), path.join(dir, f));
      }
      const script =
        `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} });` +
        `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} });` +
        `try { require('./lib/native.js').loadNative(); console.log('loaded'); }` +
        `catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, details: e.details })); }`;
      const r = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  test.each([
    ['x64', 'win32-x64-msvc'],
    ['arm64', 'win32-arm64-msvc'],
  ])('win32 %s: tries acp-terminal.%s.node and its package, then ERR_NATIVE_UNAVAILABLE says reinstall', (arch, id) => {
    const e = loadAs('win32', arch);
    expect(e.code).toBe('ERR_NATIVE_UNAVAILABLE');
    expect(e.details).toMatchObject({ platform: id, packageName: `acp-terminal-${id}`, supported: true });
    expect(e.details.causes).toEqual([
      expect.stringContaining(`Cannot find module './acp-terminal.${id}.node'`),
      expect.stringContaining(`Cannot find module 'acp-terminal-${id}'`),
    ]);
    expect(e.message).toContain(`the native core could not be loaded on ${id} (Node `);
    expect(e.message).toContain('It is not installed: reinstall acp-terminal without --omit=optional');
  });

  test('win32 ia32 (no binary): lists the supported platforms', () => {
    const e = loadAs('win32', 'ia32');
    expect(e.details).toMatchObject({ platform: 'win32-ia32-msvc', supported: false });
    expect(e.message).toContain('No prebuilt binary exists for win32-ia32-msvc: acp-terminal supports');
    expect(e.message).toContain('win32-x64-msvc, win32-arm64-msvc.');
  });
});

describe('with a native module that fails to load', () => {
  afterEach(() => {
    jest.resetModules();
    jest.dontMock('../../index.js');
  });

  function withBrokenNative<T>(fn: () => T): T {
    let result!: T;
    jest.isolateModules(() => {
      jest.doMock('../../index.js', () => {
        throw loaderError(missingModule('acp-terminal-linux-x64-gnu'));
      });
      result = fn();
    });
    return result;
  }

  test('the package root still loads and its pure-JS parts work', async () => {
    await withBrokenNative(async () => {
      const acp = require('../../ts/index') as typeof import('../../ts/index');
      expect(acp.globToRegExp('src/**/*.ts').test('src/a/b.ts')).toBe(true);
      const host = new acp.TerminalHost();
      expect(host.liveTerminals).toBe(0);
      await host.close();
    });
  });

  test('the first call that needs the core throws (sync) or rejects (async) with ERR_NATIVE_UNAVAILABLE', async () => {
    await withBrokenNative(async () => {
      const acp = require('../../ts/index') as typeof import('../../ts/index');
      expect(() => acp.containmentInfo()).toThrow(expect.objectContaining({ code: 'ERR_NATIVE_UNAVAILABLE' }));
      expect(() => acp.resolveProgram('sh')).toThrow(/the native core could not be loaded on/);
      // The command policy's shell analysis is tree-sitter-bash in the core (issue 19).
      expect(() => acp.shellCommandWords('git status | wc -l')).toThrow(expect.objectContaining({ code: 'ERR_NATIVE_UNAVAILABLE' }));
      await expect(acp.createTerminal({ command: 'true' })).rejects.toMatchObject({ code: 'ERR_NATIVE_UNAVAILABLE' });
      await expect(acp.renderTerminalOutputAsync('x')).rejects.toMatchObject({ code: 'ERR_NATIVE_UNAVAILABLE' });
      const host = new acp.TerminalHost();
      await expect(host.createTerminal({ sessionId: 's', command: 'true' })).rejects.toMatchObject({ code: 'ERR_NATIVE_UNAVAILABLE' });
      await host.close();
    });
  });
});

describe('package layout (napi-rs)', () => {
  const { SUPPORTED_PLATFORMS } = jest.requireActual<typeof import('../../ts/native')>('../../ts/native');

  test('SUPPORTED_PLATFORMS is exactly napi.targets; Windows x64 and arm64 (msvc) included, and npm installs there', () => {
    expect([...SUPPORTED_PLATFORMS].sort()).toEqual(pkg.napi.targets.map(platformOf).sort());
    expect(pkg.napi.targets.filter((t) => t.includes('windows')).sort()).toEqual(['aarch64-pc-windows-msvc', 'x86_64-pc-windows-msvc']);
    expect(pkg.os).toEqual(['linux', 'darwin', 'win32']);
  });

  test('one npm/<platform>/ package per target: os, cpu, libc set, the .node file and both static Linux servers (a far end is Linux whatever the near side)', () => {
    expect(fs.readdirSync(path.join(root, 'npm')).sort()).toEqual(pkg.napi.targets.map(platformOf).sort());
    for (const triple of pkg.napi.targets) {
      const id = platformOf(triple);
      const sub = JSON.parse(fs.readFileSync(path.join(root, 'npm', id, 'package.json'), 'utf8'));
      expect(sub).toMatchObject({ name: `acp-terminal-${id}`, main: `${pkg.napi.binaryName}.${id}.node`, files: [`${pkg.napi.binaryName}.${id}.node`, 'acp-terminal-server.linux-x64-musl', 'acp-terminal-server.linux-arm64-musl'], license: pkg.license });
      expect(sub.os).toEqual([id.split('-')[0]]);
      expect(sub.cpu).toEqual([id.includes('arm64') ? 'arm64' : 'x64']);
      if (id.startsWith('linux')) expect(sub.libc).toEqual([id.endsWith('musl') ? 'musl' : 'glibc']);
    }
  });

  test('a LICENSE that matches package.json; optionalDependencies are filled at release, not in the source', () => {
    expect(pkg.license).toBe('MIT');
    expect(fs.readFileSync(path.join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(pkg.optionalDependencies).toBeUndefined();
  });

  test('the optional SDK peer accepts 0.14 and 1.x (the legacy API samples) and 2.4+', () => {
    expect(pkg.peerDependencies['@agentclientprotocol/sdk']).toBe('^0.14.0 || ^1.0.0 || ^2.4.0');
  });

  test('ts/native.ts is the only module that requires the native loader', () => {
    const loaders = fs
      .readdirSync(path.join(root, 'ts'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .filter((f) => /require\(['"]\.\.\/index(\.js)?['"]\)|from ['"]\.\.\/index(\.js)?['"]/.test(
        fs.readFileSync(path.join(root, 'ts', f), 'utf8').replace(/(import|export) type[^;]+;/g, ''),
      ));
    expect(loaders).toEqual(['native.ts']);
  });
});
