#!/usr/bin/env bash
# `npm run build:windows`: builds the Windows x64 addon on this Linux machine and puts it in the
# checkout as acp-terminal.win32-x64-msvc.node, the name index.js loads on Windows x64 with the
# official (msvc-built) Node, so Windows Node under Wine loads the package from the checkout.
#
# How (see scripts/windows/setup.sh, which this runs first): Debian's rustc with its own std
# source builds std for x86_64-pc-windows-gnu (`-Zbuild-std`), the mingw-w64 gcc links, and
# napi-build links against an import library of node.exe's exports. The addon imports N-API
# from node.exe, the host process, as an msvc build does; the gnu target only changes the C
# runtime and the linker, which is why the msvc loader name is right for it. Releases are built
# for the msvc targets by the workflow's Windows runner.
#
# Usage: scripts/windows/build.sh [--debug]
# Environment: ACP_WIN_TOOLS (see env.sh); the cargo target dir is target/windows.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

profile=release # the output directory under target/windows/<target>/
cargo_profile=release
if [ "${1:-}" = "--debug" ]; then
  profile=debug
  cargo_profile=dev
fi

bash scripts/windows/setup.sh >/dev/null
# shellcheck source=scripts/windows/env.sh
. scripts/windows/env.sh

TARGET=x86_64-pc-windows-gnu
# Debian's compiler (rustup's has no std source for -Zbuild-std), its settings only.
# shellcheck source=scripts/debian-rust.sh
. scripts/debian-rust.sh
export CARGO_TARGET_DIR="$root/target/windows"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER="$root/scripts/windows/linker.sh"
export LIBNODE_PATH

echo "== build:windows: cargo build $profile --target $TARGET ($(/usr/bin/rustc --version))" >&2
start=$(date +%s)
/usr/bin/cargo build --locked "${DEBIAN_RUST_FLAGS[@]}" --profile "$cargo_profile" \
  -Zbuild-std=std,panic_abort \
  --target "$TARGET"
out="$root/acp-terminal.win32-x64-msvc.node"
cp "$CARGO_TARGET_DIR/$TARGET/$profile/acp_terminal.dll" "$out"
echo "== build:windows: $(basename "$out") ($(stat -c %s "$out") bytes) in $(($(date +%s) - start))s" >&2
