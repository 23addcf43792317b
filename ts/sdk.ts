/**
 * Lazy loading of the optional peer dependency `@agentclientprotocol/sdk` (ESM-only).
 *
 * The package is loaded with a dynamic `import()` (kept as `import()` by the CommonJS build, so it works on
 * every supported Node version); under jest, ts-jest turns it into `require()` of the transformed SDK.
 */

import { AcpTerminalError, errorMessage } from './errors';

/** The SDK's stable (v1) entrypoint module. */
export type SdkModule = typeof import('@agentclientprotocol/sdk', { with: { 'resolution-mode': 'import' } });
/** The SDK's `experimental/v2` entrypoint module. */
export type SdkV2Module = typeof import('@agentclientprotocol/sdk/experimental/v2', {
  with: { 'resolution-mode': 'import' },
});

let sdk: Promise<SdkModule> | undefined;
let sdkV2: Promise<SdkV2Module> | undefined;

function missing(specifier: string, error: unknown): AcpTerminalError {
  return new AcpTerminalError(
    'ERR_SDK_NOT_FOUND',
    `${specifier} could not be loaded (install the optional peer dependency @agentclientprotocol/sdk@^2.4.0): ${errorMessage(error)}`,
    { specifier },
  );
}

/** Loads `@agentclientprotocol/sdk` once; rejects with `ERR_SDK_NOT_FOUND` when it is not installed. */
export function loadSdk(): Promise<SdkModule> {
  sdk ??= import('@agentclientprotocol/sdk').catch((error: unknown) => {
    sdk = undefined;
    throw missing('@agentclientprotocol/sdk', error);
  });
  return sdk;
}

/** Loads `@agentclientprotocol/sdk/experimental/v2` once; rejects with `ERR_SDK_NOT_FOUND` when missing. */
export function loadSdkV2(): Promise<SdkV2Module> {
  sdkV2 ??= import('@agentclientprotocol/sdk/experimental/v2').catch((error: unknown) => {
    sdkV2 = undefined;
    throw missing('@agentclientprotocol/sdk/experimental/v2', error);
  });
  return sdkV2;
}
