"use strict";
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
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.JEST_HINT = exports.SDK_V2 = exports.SDK = void 0;
exports.sdkLoadError = sdkLoadError;
exports.requireSdk = requireSdk;
exports.loadSdk = loadSdk;
exports.loadSdkV2 = loadSdkV2;
exports.sdkForApp = sdkForApp;
exports.sdkV2ForApp = sdkV2ForApp;
const node_module_1 = require("node:module");
const path = __importStar(require("node:path"));
const node_url_1 = require("node:url");
const errors_1 = require("./errors");
/** The SDK's stable entrypoint. */
exports.SDK = '@agentclientprotocol/sdk';
/** The SDK's `experimental/v2` entrypoint. */
exports.SDK_V2 = '@agentclientprotocol/sdk/experimental/v2';
/** Error codes with which `require()` says "this is an ES module I cannot load synchronously". */
const NEEDS_IMPORT = new Set(['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE']);
const loaded = new Map();
const pending = new Map();
/** The jest configuration the SDK needs, named in `ERR_SDK_LOAD_FAILED` errors raised under jest. */
exports.JEST_HINT = "Under jest, let ts-jest compile the ESM-only SDK: preset 'ts-jest/presets/js-with-ts' and " +
    "transformIgnorePatterns: ['/node_modules/(?!@agentclientprotocol/sdk/)'] (see the README's jest section).";
/** Turns a failure to load `specifier` into `ERR_SDK_NOT_FOUND` or `ERR_SDK_LOAD_FAILED`. */
function sdkLoadError(specifier, error) {
    const code = (0, errors_1.errorCode)(error);
    const message = (0, errors_1.errorMessage)(error);
    const notFound = (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
        (message.includes(`'${specifier}'`) || message.includes(`'${exports.SDK}'`) || message.includes(`"${exports.SDK}"`));
    const result = notFound
        ? new errors_1.AcpTerminalError('ERR_SDK_NOT_FOUND', `${specifier} is not installed: registerTerminalHandlers, createTestClient and the v2 bridge need the ` +
            `optional peer dependency (npm install @agentclientprotocol/sdk@^2.4.0).`, { specifier })
        : new errors_1.AcpTerminalError('ERR_SDK_LOAD_FAILED', `${specifier} is installed but could not be loaded: ${message}` +
            (process.env.JEST_WORKER_ID !== undefined ? ` ${exports.JEST_HINT}` : ''), { specifier });
    result.cause = error;
    return result;
}
/**
 * Loads `specifier` synchronously when this runtime can: returns the module, or undefined when only
 * `import()` can load it here. Throws `ERR_SDK_NOT_FOUND` / `ERR_SDK_LOAD_FAILED`.
 */
function requireNow(specifier) {
    if (loaded.has(specifier))
        return loaded.get(specifier);
    let module;
    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        module = require(specifier);
    }
    catch (error) {
        if (NEEDS_IMPORT.has((0, errors_1.errorCode)(error) ?? ''))
            return undefined;
        throw sdkLoadError(specifier, error);
    }
    loaded.set(specifier, module);
    return module;
}
function load(specifier) {
    let promise = pending.get(specifier);
    if (!promise) {
        promise = (async () => {
            const now = requireNow(specifier);
            if (now !== undefined)
                return now;
            try {
                const module = await import(specifier);
                loaded.set(specifier, module);
                return module;
            }
            catch (error) {
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
function requireSdk() {
    return requireNow(exports.SDK);
}
/** Loads `@agentclientprotocol/sdk` once; rejects with `ERR_SDK_NOT_FOUND` or `ERR_SDK_LOAD_FAILED`. */
function loadSdk() {
    return load(exports.SDK);
}
/** Loads `@agentclientprotocol/sdk/experimental/v2` once; rejects like `loadSdk()`. */
function loadSdkV2() {
    return load(exports.SDK_V2);
}
/** Whether `app` is a `ClientApp` or an `AgentApp` of this copy of an SDK entrypoint. */
function madeBy(app, module) {
    const { ClientApp, AgentApp } = (module ?? {});
    return [ClientApp, AgentApp].some((cls) => typeof cls === 'function' && app instanceof cls);
}
/**
 * The package directory of the SDK copy `app`'s class comes from, read from the stack of an error its own
 * code throws: `onConnect` called on a throwaway object fails inside that copy's file (and touches nothing).
 */
function sdkDirOf(app) {
    const onConnect = Object.getPrototypeOf(app)?.onConnect;
    if (typeof onConnect !== 'function')
        return undefined;
    let stack = '';
    try {
        onConnect.call({}, undefined);
    }
    catch (error) {
        stack = String(error?.stack ?? '');
    }
    const found = /((?:file:\/\/)?[^\s()]*?[\\/]node_modules[\\/]@agentclientprotocol[\\/]sdk)[\\/]/.exec(stack);
    const dir = found?.[1];
    if (dir === undefined)
        return undefined;
    return dir.startsWith('file://') ? (0, node_url_1.fileURLToPath)(dir) : dir;
}
const warned = new WeakSet();
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
async function moduleForApp(app, specifier, ours) {
    const own = await ours();
    if (madeBy(app, own))
        return own;
    // The app's own copy, located from its code, loaded both ways: a loader may serve require() and
    // import() of one file as two instances (tsx does), and the app may have used either.
    const appRequire = () => {
        const dir = sdkDirOf(app);
        return dir === undefined ? undefined : (0, node_module_1.createRequire)(path.join(dir, 'package.json'));
    };
    const candidates = [
        () => import(specifier),
        () => appRequire()?.(specifier),
        () => {
            const entry = appRequire()?.resolve(specifier);
            return entry === undefined ? undefined : import((0, node_url_1.pathToFileURL)(entry).href);
        },
    ];
    for (const candidate of candidates) {
        try {
            const module = await candidate();
            if (madeBy(app, module))
                return module;
        }
        catch {
            // This way of finding the app's copy does not work here (e.g. import() under jest): try the next.
        }
    }
    if (!warned.has(app)) {
        warned.add(app);
        process.emitWarning(`acp-terminal: the app given to acp-terminal comes from a copy of ${specifier} that could not be ` +
            'located; JSON-RPC errors may reach the agent as -32603 (Internal error) instead of their own codes.', { code: 'ACP_TERMINAL_SDK_COPY' });
    }
    return own;
}
/** The SDK (stable entrypoint) a `ClientApp` was made with (see `moduleForApp`). */
function sdkForApp(app) {
    return moduleForApp(app, exports.SDK, loadSdk);
}
/** The SDK's `experimental/v2` entrypoint a v2 `AgentApp` was made with (see `moduleForApp`). */
function sdkV2ForApp(app) {
    return moduleForApp(app, exports.SDK_V2, loadSdkV2);
}
