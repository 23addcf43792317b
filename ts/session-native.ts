/**
 * The native core as `ShellSessions` and the text renderer use it, loaded on first use: the one
 * place these files require `../index.js`. Typed by the generated `index.d.ts`.
 */

type NativeModule = typeof import('../index.js');

let cached: NativeModule | undefined;

/** The native module (`createTerminal`, `isKeyName`, `killSessionTree`, renderers, ...). */
export function nativeCore(): NativeModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  cached ??= require('../index.js') as NativeModule;
  return cached;
}
