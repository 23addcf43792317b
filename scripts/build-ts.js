#!/usr/bin/env node
// Compiles ts/ to lib/ (tsc -p tsconfig.build.json) and copies the hand-written declaration files of
// ts/ (tsc does not emit them): ts/sdk-types.d.ts carries `@ts-ignore` comments that a generated
// declaration would lose, and that keep consumers without the optional SDK free of TS2307.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
for (const name of fs.readdirSync(path.join(root, 'ts'))) {
  if (name.endsWith('.d.ts')) fs.copyFileSync(path.join(root, 'ts', name), path.join(root, 'lib', name));
}
