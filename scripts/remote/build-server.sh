#!/usr/bin/env bash
# Builds acp-terminal-server without Node-API (`--no-default-features --features server`):
#   bash scripts/remote/build-server.sh             # this machine's (target/release/acp-terminal-server)
#   bash scripts/remote/build-server.sh musl        # static x86_64 musl, for any x86_64 Linux far end (busybox containers)
#                                                   # -> target/x86_64-unknown-linux-musl/release/acp-terminal-server
#   bash scripts/remote/build-server.sh musl-arm64  # static aarch64 musl, for any aarch64 Linux far end
#                                                   # -> target/aarch64-unknown-linux-musl/release/acp-terminal-server
#   bash scripts/remote/build-server.sh stage DIR...  # copies both static servers into each platform package DIR as
#                                                   # acp-terminal-server.linux-{x64,arm64}-musl and lists them in its
#                                                   # package.json `files`: every platform package ships both, since a
#                                                   # far end's arch is its own (a Mac reaches x86_64 and aarch64 hosts)
#
# The aarch64 build needs no cross gcc and no rustup target: Debian's rustc with its own std source
# (scripts/debian-rust.sh, the pinned `rustc-web`) builds std for the target (`-Zbuild-std`), and
# `cargo zigbuild` links with `zig cc`, which ships musl for aarch64 (zig and cargo-zigbuild from
# scripts/ci-install-tools.sh). The server compiles no C, so zig is only the linker. Its own target dir
# (target/server-cross): Debian's rustc must not share fingerprints with the host toolchain's builds.
set -euo pipefail
cd "$(dirname "$0")/../.."
args=(build --release --locked --no-default-features --features server --bin acp-terminal-server)
case "${1:-}" in
  '') exec cargo "${args[@]}" ;;
  musl)
    target=x86_64-unknown-linux-musl
    if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
      rustup target add "$target"
    fi
    exec cargo "${args[@]}" --target "$target"
    ;;
  musl-arm64)
    target=aarch64-unknown-linux-musl
    tools=$(bash scripts/ci-install-tools.sh | tail -1)
    start=$(date +%s)
    if rustup target list --installed 2>/dev/null | grep -qx "$target"; then
      # A toolchain with the target's std (a release runner: `rustup target add`): zig links.
      export PATH="$tools:$PATH" CARGO_TARGET_DIR="$PWD/target/server-cross"
      cargo zigbuild "${args[@]}" --target "$target"
    else
      # shellcheck source=scripts/debian-rust.sh
      . scripts/debian-rust.sh
      debian_rust_install || exit 2
      # No rustup std: no self-contained crt1.o/libc.a either; zig's musl provides them.
      export PATH="$tools:$PATH" CARGO_TARGET_DIR="$PWD/target/server-cross" \
        CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=no"
      cargo zigbuild "${args[@]}" --target "$target" -Zbuild-std=std,panic_abort
    fi
    mkdir -p "target/$target/release"
    cp "$CARGO_TARGET_DIR/$target/release/acp-terminal-server" "target/$target/release/acp-terminal-server"
    echo "build-server: target/$target/release/acp-terminal-server ($(($(date +%s) - start)) s)" >&2
    ;;
  stage)
    shift
    [ $# -gt 0 ] || { echo "build-server: stage needs at least one directory" >&2; exit 2; }
    for dir in "$@"; do
      for arch in x64:x86_64 arm64:aarch64; do
        src="target/${arch#*:}-unknown-linux-musl/release/acp-terminal-server"
        [ -f "$src" ] || { echo "build-server: $src is not built (build-server.sh musl / musl-arm64)" >&2; exit 2; }
        install -m 755 "$src" "$dir/acp-terminal-server.linux-${arch%%:*}-musl"
      done
      # The package's `files` (napi create-npm-dirs writes them with the addon only).
      node -e '
        const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f, "utf8"));
        p.files = [...new Set([...(p.files || []), "acp-terminal-server.linux-x64-musl", "acp-terminal-server.linux-arm64-musl"])];
        fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");' "$dir/package.json"
    done
    ;;
  *)
    echo "usage: build-server.sh [musl|musl-arm64|stage DIR...]" >&2
    exit 2
    ;;
esac
