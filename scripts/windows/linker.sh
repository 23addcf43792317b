#!/usr/bin/env bash
# The linker for x86_64-pc-windows-gnu builds with Debian's rustc (scripts/windows/build.sh):
# mingw-w64 gcc, given Rust's startup objects. rustc passes rsbegin.o and rsend.o by bare name
# when its sysroot has no std for the target (the case with -Zbuild-std), and ld looks for them
# in the current directory only; scripts/windows/setup.sh compiles them into $LIBNODE_PATH.
set -euo pipefail
args=()
for arg in "$@"; do
  case "$arg" in
    rsbegin.o | rsend.o) arg="$LIBNODE_PATH/$arg" ;;
  esac
  args+=("$arg")
done
exec x86_64-w64-mingw32-gcc "${args[@]}"
