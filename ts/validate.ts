/**
 * Input validation shared by the host, the adapters and the v2 bridge. Every failure is an
 * `ERR_INVALID_ARG` error whose message names the field.
 */

import * as path from 'node:path';
import { invalidArg } from './errors';
import { loadNative } from './native';
import type { EnvVariable } from './types';

/** Returns `value` if it is a non-empty string, else throws naming `field`. */
export function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidArg(field, 'must be a non-empty string');
  return value;
}

/**
 * Throws `ERR_INVALID_ARG` naming `field` when `value` contains a NUL byte (no C string can carry it):
 * the core's rule (`checkText`), asked before the policy sees a request.
 */
export function rejectNul(value: string, field: string): void {
  loadNative().checkText(value, field);
}

/** Returns `value` if it is undefined/null or a non-negative safe integer, else throws naming `field`. */
export function optionalCount(value: unknown, field: string, min = 0): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    const shown = typeof value === 'number' || typeof value === 'bigint' ? String(value) : JSON.stringify(value) ?? String(value);
    throw invalidArg(field, `must be an integer >= ${min} and <= 2^53-1, got ${typeof value === 'string' ? 'the string ' : ''}${shown}`);
  }
  return value;
}

/**
 * `optionalCount` for a lenient client (`clampLimits`): a number that is not a non-negative integer is
 * rounded down and clamped to [`min`, 2^53-1] instead of refused; anything else (a string, NaN) is still
 * refused naming `field`.
 */
export function clampedCount(value: unknown, field: string, min = 0): number | undefined {
  if (typeof value === 'number' && !Number.isNaN(value)) {
    return Math.min(Math.max(Math.floor(value), min), Number.MAX_SAFE_INTEGER);
  }
  return optionalCount(value, field, min);
}

/** Returns `value` if it is undefined/null or an absolute path string, else throws naming `field`. */
export function optionalAbsolutePath(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !path.isAbsolute(value)) {
    throw invalidArg(field, `must be an absolute path, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Normalizes an env overlay given as a record or as ACP `[{name, value}]` entries. */
export function normalizeEnv(
  value: Readonly<Record<string, string>> | readonly EnvVariable[] | undefined,
  field: string,
): EnvVariable[] {
  if (value === undefined) return [];
  const entries: EnvVariable[] = Array.isArray(value)
    ? (value as readonly EnvVariable[]).map((e) => ({ name: e?.name, value: e?.value }))
    : Object.entries(value as Record<string, string>).map(([name, v]) => ({ name, value: v }));
  // The types are checked here; which names and values the OS can take is the core's rule.
  const core = entries.length > 0 ? loadNative() : undefined;
  entries.forEach((e, i) => {
    if (typeof e.name !== 'string') throw invalidArg(`${field}[${i}].name`, `invalid variable name ${JSON.stringify(e.name)}`);
    core!.checkEnvName(e.name, `${field}[${i}].name`);
    if (typeof e.value !== 'string') throw invalidArg(`${field}[${i}].value`, 'must be a string');
    core!.checkText(e.value, `${field}[${i}].value`);
  });
  return entries;
}

/** Merges env lists; later lists win for the same name, keeping first-seen order. */
export function mergeEnv(...lists: readonly EnvVariable[][]): EnvVariable[] {
  const merged = new Map<string, string>();
  for (const list of lists) for (const { name, value } of list) merged.set(name, value);
  return [...merged].map(([name, value]) => ({ name, value }));
}

/** The `{ signal }` option every host method accepts. */
export interface CallOptions {
  /** Aborting it cancels the call: it rejects with `signal.reason` at once (see each method for what stops). */
  signal?: AbortSignal;
  /**
   * A liveness check besides the signal (a client's "is this connection / turn still mine?"): called when
   * the call starts and, for `terminal/create`, again after the approval and after the spawn; what it
   * throws rejects the call with that very error, and a command the create started is released.
   */
  assertActive?: () => void;
}

/** The `assertActive` of `options` (undefined when absent), else `ERR_INVALID_ARG` naming it. */
export function optionalAssertActive(options: CallOptions | undefined): (() => void) | undefined {
  if (options === undefined || options === null || typeof options !== 'object') return undefined;
  const check = options.assertActive as unknown;
  if (check === undefined || check === null) return undefined;
  if (typeof check !== 'function') throw invalidArg('assertActive', 'must be a function');
  return check as () => void;
}

/**
 * Returns the `signal` of `options` (undefined when absent), else throws `ERR_INVALID_ARG` naming
 * `signal`. Checked by shape, not `instanceof`: signals may come from another realm (jest, vm).
 */
export function optionalSignal(options: CallOptions | undefined): AbortSignal | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object') throw invalidArg('options', 'must be an object such as { signal }');
  const signal = options.signal as unknown;
  if (signal === undefined || signal === null) return undefined;
  const s = signal as Partial<AbortSignal>;
  if (typeof s !== 'object' || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function') {
    throw invalidArg('signal', 'must be an AbortSignal');
  }
  return signal as AbortSignal;
}

/**
 * `work`, or a rejection with `signal.reason` as soon as `signal` aborts (whichever comes first). `work`
 * itself goes on; a rejection it has later is ignored. Without a signal, `work` itself is returned.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
