// package-lock.json must hold what every platform installs: the optional platform packages of our
// dependencies (@napi-rs/*-<platform>, @emnapi/* for wasm32) included. A lockfile written from one
// machine's node_modules lists only that machine's, so `npm install` in a fresh clone (which resolves
// from the registry) rewrites it and dirties the tree, and `npm ci` refuses it as out of sync.
import * as fs from 'node:fs';
import * as path from 'node:path';

interface LockedPackage {
  version?: string;
  optionalDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const root = path.resolve(__dirname, '..', '..');
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockedPackage>;
};

/** The lockfile key Node's resolution finds for `dep` required from the package at `from` ('' is the root). */
function resolveIn(from: string, dep: string): string | undefined {
  let dir = from;
  for (;;) {
    const key = dir === '' ? `node_modules/${dep}` : `${dir}/node_modules/${dep}`;
    if (lock.packages[key]) return key;
    if (dir === '') return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  test('is a v3 lockfile', () => {
    expect(lock.lockfileVersion).toBe(3);
  });

  test('locks every optional dependency of every locked package, for every platform', () => {
    const missing: string[] = [];
    for (const [key, pkg] of Object.entries(lock.packages)) {
      for (const dep of Object.keys(pkg.optionalDependencies ?? {})) {
        if (!resolveIn(key, dep)) missing.push(`${key || '(root)'} -> ${dep}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test('locks every regular dependency of every locked package', () => {
    const missing: string[] = [];
    for (const [key, pkg] of Object.entries(lock.packages)) {
      for (const dep of Object.keys(pkg.dependencies ?? {})) {
        if (!resolveIn(key, dep)) missing.push(`${key || '(root)'} -> ${dep}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
