/**
 * Loading of the optional peer dependency `@agentclientprotocol/sdk` (an ES module only).
 *
 * `require()` first: Node 20.19+ and 22.12+ can require an ES module, and under jest `require()` goes
 * through jest's module system, which serves the SDK as compiled by the user's config (so a jest suite
 * needs no `--experimental-vm-modules`, and gets the same SDK instance its test files import). Where
 * Node cannot require it (`ERR_REQUIRE_ESM` on older 20.x/22.x), a dynamic `import()` instead.
 * A failure is an `AcpTerminalError`: `ERR_SDK_NOT_FOUND` when it is not installed, `ERR_SDK_LOAD_FAILED`
 * otherwise, with the reason (and, under jest, the config it needs).
 */

import { AcpTerminalError, errorCode, errorMessage } from './errors';
import type { SdkModule, SdkV2Module } from './sdk-types';

export type { SdkModule, SdkV2Module } from './sdk-types';

/** The SDK's stable entrypoint. */
export const SDK = '@agentclientprotocol/sdk';
/** The SDK's `experimental/v2` entrypoint. */
export const SDK_V2 = '@agentclientprotocol/sdk/experimental/v2';

/** Error codes with which `require()` says "this is an ES module I cannot load synchronously". */
const NEEDS_IMPORT = new Set(['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE']);

const loaded = new Map<string, unknown>();
const pending = new Map<string, Promise<unknown>>();

/** The jest configuration the SDK needs, named in `ERR_SDK_LOAD_FAILED` errors raised under jest. */
export const JEST_HINT =
  "Under jest, let ts-jest compile the ESM-only SDK: preset 'ts-jest/presets/js-with-ts' and " +
  "transformIgnorePatterns: ['/node_modules/(?!@agentclientprotocol/sdk/)'] (see the README's jest section).";

/** Turns a failure to load `specifier` into `ERR_SDK_NOT_FOUND` or `ERR_SDK_LOAD_FAILED`. */
export function sdkLoadError(specifier: string, error: unknown): AcpTerminalError {
  const code = errorCode(error);
  const message = errorMessage(error);
  const notFound =
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    (message.includes(`'${specifier}'`) || message.includes(`'${SDK}'`) || message.includes(`"${SDK}"`));
  const result = notFound
    ? new AcpTerminalError(
        'ERR_SDK_NOT_FOUND',
        `${specifier} is not installed: registerTerminalHandlers, createTestClient and the v2 bridge need the ` +
          `optional peer dependency (npm install @agentclientprotocol/sdk@^2.4.0).`,
        { specifier },
      )
    : new AcpTerminalError(
        'ERR_SDK_LOAD_FAILED',
        `${specifier} is installed but could not be loaded: ${message}` +
          (process.env.JEST_WORKER_ID !== undefined ? ` ${JEST_HINT}` : ''),
        { specifier },
      );
  (result as Error & { cause?: unknown }).cause = error;
  return result;
}

/**
 * Loads `specifier` synchronously when this runtime can: returns the module, or undefined when only
 * `import()` can load it here. Throws `ERR_SDK_NOT_FOUND` / `ERR_SDK_LOAD_FAILED`.
 */
function requireNow(specifier: string): unknown {
  if (loaded.has(specifier)) return loaded.get(specifier);
  let module: unknown;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    module = require(specifier);
  } catch (error) {
    if (NEEDS_IMPORT.has(errorCode(error) ?? '')) return undefined;
    throw sdkLoadError(specifier, error);
  }
  loaded.set(specifier, module);
  return module;
}

function load(specifier: string): Promise<unknown> {
  let promise = pending.get(specifier);
  if (!promise) {
    promise = (async () => {
      const now = requireNow(specifier);
      if (now !== undefined) return now;
      try {
        const module: unknown = await import(specifier);
        loaded.set(specifier, module);
        return module;
      } catch (error) {
        throw sdkLoadError(specifier, error);
      }
    })();
    // A failed load is tried again next time (the package may be installed meanwhile).
    promise.catch(() => pending.delete(specifier));
    pending.set(specifier, promise);
  }
  return promise;
}

/**
 * Loads the SDK synchronously when this runtime can (Node 20.19+, 22.12+, or jest with the SDK
 * compiled); returns undefined when only the asynchronous `loadSdk()` can. Throws `ERR_SDK_NOT_FOUND`
 * or `ERR_SDK_LOAD_FAILED`, so callers fail where they are called instead of on a later request.
 */
export function requireSdk(): SdkModule | undefined {
  return requireNow(SDK) as SdkModule | undefined;
}

/** Loads `@agentclientprotocol/sdk` once; rejects with `ERR_SDK_NOT_FOUND` or `ERR_SDK_LOAD_FAILED`. */
export function loadSdk(): Promise<SdkModule> {
  return load(SDK) as Promise<SdkModule>;
}

/** Loads `@agentclientprotocol/sdk/experimental/v2` once; rejects like `loadSdk()`. */
export function loadSdkV2(): Promise<SdkV2Module> {
  return load(SDK_V2) as Promise<SdkV2Module>;
}
