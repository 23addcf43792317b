/**
 * The one loader of the native core. Every module that needs the addon calls `loadNative()`, which
 * loads it on first use (so the pure-JS parts of the package work without it) and turns a failure into
 * one clear `ERR_NATIVE_UNAVAILABLE` error that names this platform and what to do.
 *
 * Where the binary comes from: `../index.js` (the loader, with the platform id from `platforms.js`) tries a local build first
 * (`acp-terminal.<platform>.node` beside it: a source checkout) and then the per-platform npm package
 * (`acp-terminal-<platform>`, an optional dependency of the published package, holding only the `.node`).
 */

import * as platforms from '../platforms.js';
import { AcpTerminalError, errorMessage } from './errors';
import { withNetworkProxy } from './network-proxy';
import type { CreateTerminalFn, ResolveProgramFn } from './types';

/** The native module's exports, as declared by the generated `index.d.ts`. */
export type NativeModule = typeof import('../index.js');

/** The platforms a prebuilt binary is published for (`napi.targets` in package.json), as platform ids. */
export const SUPPORTED_PLATFORMS: readonly string[] = platforms.SUPPORTED_PLATFORMS;

let cached: NativeModule | undefined;

/**
 * Loads the native core once and returns it. Throws `ERR_NATIVE_UNAVAILABLE` (details: `platform`,
 * `packageName`, `supported`, `causes`) when this platform has no binary or the binary cannot be loaded.
 */
export function loadNative(): NativeModule {
  if (cached) return cached;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    cached = require('../index.js') as NativeModule;
  } catch (error) {
    throw nativeUnavailable(error);
  }
  return cached;
}

let wrappedCreate: NativeModule['createTerminal'] | undefined;

/**
 * The native `createTerminal` with the host's network proxy served for `sandbox.network: { allow }` (and
 * `options.onNetwork`, see `withNetworkProxy`), loading the addon on first use. Every create of this package
 * goes through it.
 */
export function nativeCreateTerminal(): NativeModule['createTerminal'] {
  wrappedCreate ??= withNetworkProxy(loadNative().createTerminal);
  return wrappedCreate;
}

/** Returns the native `createTerminal` (with the network proxy, see `nativeCreateTerminal`), loading the addon on first use. */
export function loadNativeCreateTerminal(): CreateTerminalFn {
  return nativeCreateTerminal();
}

/** Returns the native `resolveProgram` (the core's own PATH resolution), loading the addon on first use. */
export function loadNativeResolveProgram(): ResolveProgramFn {
  return loadNative().resolveProgram;
}

/** This process's platform id as the npm packages name it: `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`. */
export function platformId(platform?: NodeJS.Platform, arch?: string, glibc?: boolean): string {
  return platforms.platformId(platform, arch, glibc);
}

/** The message and advice for a failed load; exported for tests (`platform` as `platformId()` gives it). */
export function nativeUnavailable(error: unknown, platform: string = platformId()): AcpTerminalError {
  const packageName = `acp-terminal-${platform}`;
  const causes = loadCauses(error);
  const supported = SUPPORTED_PLATFORMS.includes(platform);
  const advice = supported
    ? `The binary for this platform ships in the npm package ${packageName}, an optional dependency of acp-terminal. ` +
      `${causes.some(isMissingModule) ? 'It is not installed: ' : 'It did not load: '}` +
      'reinstall acp-terminal without --omit=optional / --no-optional (and not from a node_modules copied from ' +
      'another OS, CPU or libc), or build it from a source checkout with Rust installed (`npm install && npm run build`).'
    : `No prebuilt binary exists for ${platform}: acp-terminal supports ${SUPPORTED_PLATFORMS.join(', ')}. ` +
      'On another platform, build it from a source checkout with Rust installed (`npm install && npm run build`).';
  const detail = causes.length > 0 ? ` Load errors: ${causes.map(errorMessage).map(firstLine).join(' | ')}` : '';
  const err = new AcpTerminalError(
    'ERR_NATIVE_UNAVAILABLE',
    `acp-terminal: the native core could not be loaded on ${platform} (Node ${process.version}). ${advice}${detail}`,
    { platform, packageName, supported, causes: causes.map(errorMessage) },
  );
  (err as Error & { cause?: unknown }).cause = error;
  return err;
}

/** The individual failures behind the generated loader's error (it keeps them in `cause`). */
function loadCauses(error: unknown): unknown[] {
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  if (Array.isArray(cause) && cause.length > 0) return cause;
  if (cause !== undefined) return [cause];
  // An error of the loader itself (no list of attempts) is the cause.
  return /Cannot find native binding/.test(errorMessage(error)) ? [] : [error];
}

function isMissingModule(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'MODULE_NOT_FOUND';
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}
