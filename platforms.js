// The platforms acp-terminal ships a prebuilt binary for, and this process's platform id, in one place.
// The list is package.json's `napi.targets` (Rust target triples), named as napi-rs names the
// `acp-terminal-<id>` npm packages and the `acp-terminal.<id>.node` files: `linux-x64-gnu`,
// `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`. Used by the addon loader (index.js), the
// TypeScript layer (lib/native.js), scripts/ensure-built.js and the release scripts.
'use strict';

const ARCH = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' };
const OS = { linux: 'linux', darwin: 'darwin', windows: 'win32', freebsd: 'freebsd', android: 'android' };

/** napi-rs's platform id of a Rust target triple (`aarch64-unknown-linux-musl` -> `linux-arm64-musl`). */
function platformOfTriple(triple) {
  const parts = triple.split('-');
  const arch = ARCH[parts[0]] ?? parts[0];
  const osName = parts.find((p) => p in OS);
  if (osName === undefined) throw new Error(`napi.targets: cannot tell the OS of ${triple}`);
  const abi = parts[parts.indexOf(osName) + 1];
  return [OS[osName], arch, ...(abi ? [abi] : [])].join('-');
}

/** The platform ids of package.json's `napi.targets`. */
const SUPPORTED_PLATFORMS = Object.freeze(require('./package.json').napi.targets.map(platformOfTriple));

/** True when this Linux process runs on glibc (Node's own report says which libc it was loaded with). */
function isGlibc() {
  if (process.platform !== 'linux') return false;
  const report = process.report?.getReport();
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

/** A process's platform id as the npm packages name it (by default this process's). */
function platformId(platform = process.platform, arch = process.arch, glibc = isGlibc()) {
  if (platform === 'linux') return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

module.exports = { SUPPORTED_PLATFORMS, platformOfTriple, platformId, isGlibc };
