#!/usr/bin/env bash
# A C compiler for scripts/check-targets.sh: `zig cc` for $ZIG_CC_TARGET (a zig target such as
# aarch64-macos or x86_64-linux-musl), which ships the libc headers of macOS and musl, so build
# scripts that compile C (tree-sitter's, through the cc crate) work for those targets without an
# SDK. The cc crate's own target flags (`--target=...`, `-arch X`, `-mmacosx-version-min=...`)
# name targets in LLVM's or Apple's spelling, which zig does not parse: they are dropped.
set -euo pipefail
: "${ZIG:?ZIG must name the zig binary}" "${ZIG_CC_TARGET:?ZIG_CC_TARGET must name the zig target}"
args=()
skip=0
for a in "$@"; do
  if [ "$skip" -eq 1 ]; then skip=0; continue; fi
  case "$a" in
    --target=*|-mmacosx-version-min=*|-miphoneos-version-min=*) ;;
    -arch|-target) skip=1 ;;
    *) args+=("$a") ;;
  esac
done
exec "$ZIG" cc -target "$ZIG_CC_TARGET" "${args[@]}"
