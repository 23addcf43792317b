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

import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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

/** Whether `app` is a `ClientApp` or an `AgentApp` of this copy of an SDK entrypoint. */
function madeBy(app: object, module: unknown): boolean {
  const { ClientApp, AgentApp } = (module ?? {}) as { ClientApp?: unknown; AgentApp?: unknown };
  return [ClientApp, AgentApp].some((cls) => typeof cls === 'function' && app instanceof cls);
}

/**
 * The package directory of the SDK copy `app`'s class comes from, read from the stack of an error its own
 * code throws: `onConnect` called on a throwaway object fails inside that copy's file (and touches nothing).
 */
function sdkDirOf(app: object): string | undefined {
  const onConnect = (Object.getPrototypeOf(app) as { onConnect?: unknown } | null)?.onConnect;
  if (typeof onConnect !== 'function') return undefined;
  let stack = '';
  try {
    (onConnect as (this: object, handler: unknown) => unknown).call({}, undefined);
  } catch (error) {
    stack = String((error as { stack?: unknown } | null)?.stack ?? '');
  }
  const found = /((?:file:\/\/)?[^\s()]*?[\\/]node_modules[\\/]@agentclientprotocol[\\/]sdk)[\\/]/.exec(stack);
  const dir = found?.[1];
  if (dir === undefined) return undefined;
  return dir.startsWith('file://') ? fileURLToPath(dir) : dir;
}

const warned = new WeakSet<object>();

/**
 * The SDK module `app` (a `ClientApp` or `AgentApp` of entrypoint `specifier`) was made with: the one this
 * package loads (`ours`) when it is the same copy (one install, jest), else the same package through
 * `import()` (which a loader such as tsx serves as a second instance from `require()`), else the copy the
 * app's own code lives in (an `npm install <path>` symlink resolves the SDK from the linked package's
 * node_modules). The SDK recognises errors by `instanceof RequestError` of its own copy: an error made
 * with another copy's class would reach the agent as -32603 whatever its code. When no copy matches, ours
 * is used and a warning says so. Rejects with `ERR_SDK_NOT_FOUND` / `ERR_SDK_LOAD_FAILED` when the SDK
 * cannot be loaded at all.
 */
async function moduleForApp<T>(app: object, specifier: string, ours: () => Promise<T>): Promise<T> {
  const own = await ours();
  if (madeBy(app, own)) return own;
  // The app's own copy, located from its code, loaded both ways: a loader may serve require() and
  // import() of one file as two instances (tsx does), and the app may have used either.
  const appRequire = (): NodeJS.Require | undefined => {
    const dir = sdkDirOf(app);
    return dir === undefined ? undefined : createRequire(path.join(dir, 'package.json'));
  };
  const candidates: Array<() => unknown> = [
    () => import(specifier),
    () => appRequire()?.(specifier),
    () => {
      const entry = appRequire()?.resolve(specifier);
      return entry === undefined ? undefined : import(pathToFileURL(entry).href);
    },
  ];
  for (const candidate of candidates) {
    try {
      const module = await candidate();
      if (madeBy(app, module)) return module as T;
    } catch {
      // This way of finding the app's copy does not work here (e.g. import() under jest): try the next.
    }
  }
  if (!warned.has(app)) {
    warned.add(app);
    process.emitWarning(
      `acp-terminal: the app given to acp-terminal comes from a copy of ${specifier} that could not be ` +
        'located; JSON-RPC errors may reach the agent as -32603 (Internal error) instead of their own codes.',
      { code: 'ACP_TERMINAL_SDK_COPY' },
    );
  }
  return own;
}

/** The SDK (stable entrypoint) a `ClientApp` was made with (see `moduleForApp`). */
export function sdkForApp(app: object): Promise<SdkModule> {
  return moduleForApp(app, SDK, loadSdk);
}

/** The SDK's `experimental/v2` entrypoint a v2 `AgentApp` was made with (see `moduleForApp`). */
export function sdkV2ForApp(app: object): Promise<SdkV2Module> {
  return moduleForApp(app, SDK_V2, loadSdkV2);
}
