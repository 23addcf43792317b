/** Lazy access to the native core (`../index.js`), typed by the structural contract in `./types`. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CreateTerminalFn, ResolveProgramFn, ResolveProgramOptions } from './types';

interface NativeModule {
  createTerminal: CreateTerminalFn;
  resolveProgram?: ResolveProgramFn;
}

let cached: NativeModule | undefined;

function native(): NativeModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  cached ??= require('../index.js') as NativeModule;
  return cached;
}

/** Returns the native `createTerminal`, loading the addon on first use. */
export function loadNativeCreateTerminal(): CreateTerminalFn {
  return native().createTerminal;
}

/**
 * Returns the native `resolveProgram` (the core's own PATH resolution), or `jsResolveProgram` when the
 * loaded addon predates it.
 */
export function loadNativeResolveProgram(): ResolveProgramFn {
  return native().resolveProgram ?? jsResolveProgram;
}

function codedError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

function executableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A JavaScript equivalent of the core's `resolveProgram` (execvp rules): a name with a `/` is taken
 * relative to `cwd`; otherwise the first executable regular file in `PATH` (an empty entry is the cwd).
 * Throws `ENOENT` when nothing is found, `EACCES` when only non-executable candidates exist.
 */
export function jsResolveProgram(command: string, options: ResolveProgramOptions = {}): string {
  const cwd = options.cwd ?? process.cwd();
  if (command.includes('/')) {
    const file = path.resolve(cwd, command);
    if (executableFile(file)) return file;
    if (fs.existsSync(file)) throw codedError('EACCES', `program \`${command}\` is not executable`);
    throw codedError('ENOENT', `program \`${command}\` not found`);
  }
  const search = options.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  let denied = false;
  for (const dir of search.split(':')) {
    const file = path.resolve(cwd, dir === '' ? '.' : dir, command);
    if (executableFile(file)) return file;
    if (fs.existsSync(file)) denied = true;
  }
  if (denied) throw codedError('EACCES', `program \`${command}\` is not executable`);
  throw codedError('ENOENT', `program \`${command}\` not found in PATH`);
}
