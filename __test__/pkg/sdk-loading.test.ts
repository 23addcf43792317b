// Loading the optional ESM-only SDK (ts/sdk.ts): require() first (jest's module system here, so the
// suite needs no --experimental-vm-modules), import() only where require() cannot load ES modules, and
// a failure is a loud, coded error: registerTerminalHandlers throws at registration, never -32603 later.
import { client } from '@agentclientprotocol/sdk';
import { TerminalHost } from '../../ts/host';

type SdkModuleApi = typeof import('../../ts/sdk');
type HandlersApi = typeof import('../../ts/handlers');
type TestClientApi = typeof import('../../ts/testclient');

afterEach(() => {
  jest.resetModules();
  jest.dontMock('@agentclientprotocol/sdk');
});

/** Loads our modules with the SDK replaced by a module whose evaluation throws `error`. */
function withFailingSdk<T>(error: Error, fn: (m: { sdk: SdkModuleApi; handlers: HandlersApi; testclient: TestClientApi }) => T): T {
  let result!: T;
  jest.isolateModules(() => {
    jest.doMock('@agentclientprotocol/sdk', () => {
      throw error;
    });
    result = fn({
      sdk: require('../../ts/sdk') as SdkModuleApi,
      handlers: require('../../ts/handlers') as HandlersApi,
      testclient: require('../../ts/testclient') as TestClientApi,
    });
  });
  return result;
}

test('the SDK loads synchronously through require() (same instance as the test file imports)', () => {
  const { requireSdk } = require('../../ts/sdk') as SdkModuleApi;
  const sdk = requireSdk();
  expect(sdk).toBeDefined();
  expect(sdk!.client).toBe(client);
});

test('an SDK that fails to evaluate: registerTerminalHandlers throws ERR_SDK_LOAD_FAILED with the reason and the jest config', () => {
  withFailingSdk(new SyntaxError("Cannot use import statement outside a module"), ({ handlers }) => {
    const host = new TerminalHost();
    let thrown: unknown;
    try {
      handlers.registerTerminalHandlers(client({ name: 'x' }), host);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: 'ERR_SDK_LOAD_FAILED' });
    const message = (thrown as Error).message;
    expect(message).toContain('Cannot use import statement outside a module');
    expect(message).toContain("preset 'ts-jest/presets/js-with-ts'");
    expect(message).toContain("transformIgnorePatterns: ['/node_modules/(?!@agentclientprotocol/sdk/)']");
  });
});

test('createTestClient rejects with the same loud error', async () => {
  await withFailingSdk(new Error('boom in the SDK'), async ({ testclient }) => {
    await expect(testclient.createTestClient()).rejects.toMatchObject({ code: 'ERR_SDK_LOAD_FAILED', message: expect.stringContaining('boom in the SDK') });
  });
});

test('an SDK that is not installed: ERR_SDK_NOT_FOUND naming the package to install', async () => {
  const notFound = Object.assign(new Error("Cannot find module '@agentclientprotocol/sdk' from 'ts/sdk.ts'"), { code: 'MODULE_NOT_FOUND' });
  await withFailingSdk(notFound, async ({ sdk, handlers }) => {
    expect(() => handlers.registerTerminalHandlers(client({ name: 'x' }), new TerminalHost())).toThrow(
      expect.objectContaining({ code: 'ERR_SDK_NOT_FOUND', message: expect.stringContaining('npm install @agentclientprotocol/sdk@^2.4.0') }),
    );
    await expect(sdk.loadSdk()).rejects.toMatchObject({ code: 'ERR_SDK_NOT_FOUND' });
  });
});

test('a dependency of the SDK missing is a load failure, not "SDK not installed"', async () => {
  const depMissing = Object.assign(new Error("Cannot find module 'zod' from 'node_modules/@agentclientprotocol/sdk/dist/x.js'"), { code: 'MODULE_NOT_FOUND' });
  await withFailingSdk(depMissing, async ({ sdk }) => {
    await expect(sdk.loadSdk()).rejects.toMatchObject({ code: 'ERR_SDK_LOAD_FAILED', message: expect.stringContaining("'zod'") });
  });
});

test('where require() cannot load ES modules (ERR_REQUIRE_ESM), import() is used, and its failure is loud too', async () => {
  const requireEsm = Object.assign(new Error('require() of ES Module not supported'), { code: 'ERR_REQUIRE_ESM' });
  await withFailingSdk(requireEsm, async ({ sdk }) => {
    expect(sdk.requireSdk()).toBeUndefined();
    // Under jest (no --experimental-vm-modules) the import() fallback itself fails: it must say so.
    await expect(sdk.loadSdk()).rejects.toMatchObject({ code: 'ERR_SDK_LOAD_FAILED' });
  });
});
