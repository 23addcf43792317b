"use strict";
/**
 * Input validation shared by the host, the adapters and the v2 bridge. Every failure is an
 * `ERR_INVALID_ARG` error whose message names the field.
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
exports.requireString = requireString;
exports.rejectNul = rejectNul;
exports.optionalCount = optionalCount;
exports.clampedCount = clampedCount;
exports.optionalAbsolutePath = optionalAbsolutePath;
exports.normalizeEnv = normalizeEnv;
exports.mergeEnv = mergeEnv;
exports.optionalSignal = optionalSignal;
exports.abortable = abortable;
const path = __importStar(require("node:path"));
const errors_1 = require("./errors");
/** Returns `value` if it is a non-empty string, else throws naming `field`. */
function requireString(value, field) {
    if (typeof value !== 'string' || value.length === 0)
        throw (0, errors_1.invalidArg)(field, 'must be a non-empty string');
    return value;
}
/** Throws `ERR_INVALID_ARG` naming `field` when `value` contains a NUL byte (no C string can carry it). */
function rejectNul(value, field) {
    if (value.includes('\0'))
        throw (0, errors_1.invalidArg)(field, 'contains a NUL byte');
}
/** Returns `value` if it is undefined/null or a non-negative safe integer, else throws naming `field`. */
function optionalCount(value, field, min = 0) {
    if (value === undefined || value === null)
        return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
        const shown = typeof value === 'number' || typeof value === 'bigint' ? String(value) : JSON.stringify(value) ?? String(value);
        throw (0, errors_1.invalidArg)(field, `must be an integer >= ${min} and <= 2^53-1, got ${typeof value === 'string' ? 'the string ' : ''}${shown}`);
    }
    return value;
}
/**
 * `optionalCount` for a lenient client (`clampLimits`): a number that is not a non-negative integer is
 * rounded down and clamped to [`min`, 2^53-1] instead of refused; anything else (a string, NaN) is still
 * refused naming `field`.
 */
function clampedCount(value, field, min = 0) {
    if (typeof value === 'number' && !Number.isNaN(value)) {
        return Math.min(Math.max(Math.floor(value), min), Number.MAX_SAFE_INTEGER);
    }
    return optionalCount(value, field, min);
}
/** Returns `value` if it is undefined/null or an absolute path string, else throws naming `field`. */
function optionalAbsolutePath(value, field) {
    if (value === undefined || value === null)
        return undefined;
    if (typeof value !== 'string' || !path.isAbsolute(value)) {
        throw (0, errors_1.invalidArg)(field, `must be an absolute path, got ${JSON.stringify(value)}`);
    }
    return value;
}
/** Normalizes an env overlay given as a record or as ACP `[{name, value}]` entries. */
function normalizeEnv(value, field) {
    if (value === undefined)
        return [];
    const entries = Array.isArray(value)
        ? value.map((e) => ({ name: e?.name, value: e?.value }))
        : Object.entries(value).map(([name, v]) => ({ name, value: v }));
    entries.forEach((e, i) => {
        if (typeof e.name !== 'string' || e.name === '' || e.name.includes('=') || e.name.includes('\0')) {
            throw (0, errors_1.invalidArg)(`${field}[${i}].name`, `invalid variable name ${JSON.stringify(e.name)}`);
        }
        if (typeof e.value !== 'string')
            throw (0, errors_1.invalidArg)(`${field}[${i}].value`, 'must be a string');
        if (e.value.includes('\0'))
            throw (0, errors_1.invalidArg)(`${field}[${i}].value`, 'contains a NUL byte');
    });
    return entries;
}
/** Merges env lists; later lists win for the same name, keeping first-seen order. */
function mergeEnv(...lists) {
    const merged = new Map();
    for (const list of lists)
        for (const { name, value } of list)
            merged.set(name, value);
    return [...merged].map(([name, value]) => ({ name, value }));
}
/**
 * Returns the `signal` of `options` (undefined when absent), else throws `ERR_INVALID_ARG` naming
 * `signal`. Checked by shape, not `instanceof`: signals may come from another realm (jest, vm).
 */
function optionalSignal(options) {
    if (options === undefined || options === null)
        return undefined;
    if (typeof options !== 'object')
        throw (0, errors_1.invalidArg)('options', 'must be an object such as { signal }');
    const signal = options.signal;
    if (signal === undefined || signal === null)
        return undefined;
    const s = signal;
    if (typeof s !== 'object' || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function') {
        throw (0, errors_1.invalidArg)('signal', 'must be an AbortSignal');
    }
    return signal;
}
/**
 * `work`, or a rejection with `signal.reason` as soon as `signal` aborts (whichever comes first). `work`
 * itself goes on; a rejection it has later is ignored. Without a signal, `work` itself is returned.
 */
function abortable(work, signal) {
    if (!signal)
        return work;
    if (signal.aborted) {
        work.catch(() => undefined);
        return Promise.reject(signal.reason);
    }
    return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        work.then((value) => {
            signal.removeEventListener('abort', onAbort);
            resolve(value);
        }, (error) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
        });
    });
}
