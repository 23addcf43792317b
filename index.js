// The loader of the native addon (`napi build --no-js`: this file is ours, not generated). It loads
// this platform's binary: a local build beside this file (`acp-terminal.<platform>.node`, a source
// checkout), else the platform package `acp-terminal-<platform>`, an optional dependency of the
// published package. The platform id and the libc check come from platforms.js, the one place that
// knows them; `NAPI_RS_NATIVE_LIBRARY_PATH` names another binary to load instead (as napi-rs loaders do).
'use strict';

const { platformId } = require('./platforms.js');

function load() {
  const id = platformId();
  const candidates = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
    ? [process.env.NAPI_RS_NATIVE_LIBRARY_PATH]
    : [`./acp-terminal.${id}.node`, `acp-terminal-${id}`];
  const errors = [];
  for (const candidate of candidates) {
    try {
      return require(candidate);
    } catch (error) {
      errors.push(error);
    }
  }
  // The shape ts/native.ts reads: every attempt's error in `cause`.
  const error = new Error(`Cannot find native binding for ${id} (tried ${candidates.join(', ')})`);
  error.cause = errors;
  throw error;
}

module.exports = load();
