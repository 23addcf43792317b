/// Lazy access to the native core (`../index.js`), typed by the structural contract in `./types`.

import type { CreateTerminalFn } from './types';

let cached: CreateTerminalFn | undefined;

/// Returns the native `createTerminal`, loading the addon on first use.
export function loadNativeCreateTerminal(): CreateTerminalFn {
  if (!cached) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const native = require('../index.js') as { createTerminal: CreateTerminalFn };
    cached = native.createTerminal;
  }
  return cached;
}
