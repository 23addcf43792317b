"use strict";
/**
 * The one loader of the native core. Every module that needs the addon calls `loadNative()`, which
 * loads it on first use (so the pure-JS parts of the package work without it) and turns a failure into
 * one clear `ERR_NATIVE_UNAVAILABLE` error that names this platform and what to do.
 *
 * Where the binary comes from: `../index.js` (the loader, with the platform id from `platforms.js`) tries a local build first
 * (`acp-terminal.<platform>.node` beside it: a source checkout) and then the per-platform npm package
 * (`acp-terminal-<platform>`, an optional dependency of the published package, holding only the `.node`).
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
exports.SUPPORTED_PLATFORMS = void 0;
exports.loadNative = loadNative;
exports.loadNativeCreateTerminal = loadNativeCreateTerminal;
exports.loadNativeResolveProgram = loadNativeResolveProgram;
exports.platformId = platformId;
exports.nativeUnavailable = nativeUnavailable;
const platforms = __importStar(require("../platforms.js"));
const errors_1 = require("./errors");
/** The platforms a prebuilt binary is published for (`napi.targets` in package.json), as platform ids. */
exports.SUPPORTED_PLATFORMS = platforms.SUPPORTED_PLATFORMS;
let cached;
/**
 * Loads the native core once and returns it. Throws `ERR_NATIVE_UNAVAILABLE` (details: `platform`,
 * `packageName`, `supported`, `causes`) when this platform has no binary or the binary cannot be loaded.
 */
function loadNative() {
    if (cached)
        return cached;
    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        cached = require('../index.js');
    }
    catch (error) {
        throw nativeUnavailable(error);
    }
    return cached;
}
/** Returns the native `createTerminal`, loading the addon on first use. */
function loadNativeCreateTerminal() {
    return loadNative().createTerminal;
}
/** Returns the native `resolveProgram` (the core's own PATH resolution), loading the addon on first use. */
function loadNativeResolveProgram() {
    return loadNative().resolveProgram;
}
/** This process's platform id as the npm packages name it: `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`. */
function platformId(platform, arch, glibc) {
    return platforms.platformId(platform, arch, glibc);
}
/** The message and advice for a failed load; exported for tests (`platform` as `platformId()` gives it). */
function nativeUnavailable(error, platform = platformId()) {
    const packageName = `acp-terminal-${platform}`;
    const causes = loadCauses(error);
    const supported = exports.SUPPORTED_PLATFORMS.includes(platform);
    const advice = supported
        ? `The binary for this platform ships in the npm package ${packageName}, an optional dependency of acp-terminal. ` +
            `${causes.some(isMissingModule) ? 'It is not installed: ' : 'It did not load: '}` +
            'reinstall acp-terminal without --omit=optional / --no-optional (and not from a node_modules copied from ' +
            'another OS, CPU or libc), or build it from a source checkout with Rust installed (`npm install && npm run build`).'
        : `No prebuilt binary exists for ${platform}: acp-terminal supports ${exports.SUPPORTED_PLATFORMS.join(', ')}. ` +
            'On another platform, build it from a source checkout with Rust installed (`npm install && npm run build`).';
    const detail = causes.length > 0 ? ` Load errors: ${causes.map(errors_1.errorMessage).map(firstLine).join(' | ')}` : '';
    const err = new errors_1.AcpTerminalError('ERR_NATIVE_UNAVAILABLE', `acp-terminal: the native core could not be loaded on ${platform} (Node ${process.version}). ${advice}${detail}`, { platform, packageName, supported, causes: causes.map(errors_1.errorMessage) });
    err.cause = error;
    return err;
}
/** The individual failures behind the generated loader's error (it keeps them in `cause`). */
function loadCauses(error) {
    const cause = typeof error === 'object' && error !== null ? error.cause : undefined;
    if (Array.isArray(cause) && cause.length > 0)
        return cause;
    if (cause !== undefined)
        return [cause];
    // An error of the loader itself (no list of attempts) is the cause.
    return /Cannot find native binding/.test((0, errors_1.errorMessage)(error)) ? [] : [error];
}
function isMissingModule(error) {
    return typeof error === 'object' && error !== null && error.code === 'MODULE_NOT_FOUND';
}
function firstLine(text) {
    const line = text.split('\n', 1)[0] ?? '';
    return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}
