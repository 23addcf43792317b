#!/usr/bin/env bash
# Builds acp-terminal-server without Node-API (`--no-default-features --features server`):
#   bash scripts/remote/build-server.sh               # this machine's (target/release/acp-terminal-server)
#   bash scripts/remote/build-server.sh musl          # static x86_64 musl, for any x86_64 Linux far end (busybox containers)
#                                                     # -> target/x86_64-unknown-linux-musl/release/acp-terminal-server
#   bash scripts/remote/build-server.sh musl-arm64    # static aarch64 musl, for any aarch64 Linux far end
#                                                     # -> target/aarch64-unknown-linux-musl/release/acp-terminal-server
#   bash scripts/remote/build-server.sh stage DIR...  # copies both static servers into each platform package DIR as
#                                                     # acp-terminal-server.linux-{x64,arm64}-musl, listed in its
#                                                     # package.json `files`: every platform package ships both, since
#                                                     # a far end's arch is its own (a Mac reaches x86_64 and aarch64 hosts)
# CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 make a faster build of the same code
# (CI's checks); a release builds with the profile as it is.
#
# A static build needs no cross gcc. With rustup's std for the target installed (a release runner:
# `rustup target add`), that std is used: x86_64 links with rustup's self-contained musl, aarch64 with
# `zig cc`. Without it (a fresh machine of this project: rustup cannot download targets there), Debian's
# rustc with its own std source (scripts/debian-rust.sh, the pinned `rustc-web`) builds std for the
# target (`-Zbuild-std`) and `cargo zigbuild` links with `zig cc`, which ships musl's crt and libc for
# both arches (zig and cargo-zigbuild pinned by scripts/ci-install-tools.sh). The server compiles no C,
# so zig is only the linker. Those builds use their own target dir (target/server-cross): Debian's rustc
# must not share fingerprints with the host toolchain's builds. Each prints the seconds it took.
set -euo pipefail
cd "$(dirname "$0")/../.."
args=(build --release --locked --no-default-features --features server --bin acp-terminal-server)

# static TRIPLE: builds target/TRIPLE/release/acp-terminal-server.
static() {
  local target=$1 start=$SECONDS tools
  if rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    if [ "$target" = x86_64-unknown-linux-musl ]; then
      cargo "${args[@]}" --target "$target"
      echo "build-server: target/$target/release/acp-terminal-server ($((SECONDS - start)) s)" >&2
      return
    fi
    tools=$(bash scripts/ci-install-tools.sh | tail -1)
    PATH="$tools:$PATH" CARGO_TARGET_DIR="$PWD/target/server-cross" cargo zigbuild "${args[@]:1}" --target "$target"
  else
    tools=$(bash scripts/ci-install-tools.sh | tail -1)
    (
      # shellcheck source=scripts/debian-rust.sh
      . scripts/debian-rust.sh
      debian_rust_install || exit 2
      # No rustup std: no self-contained crt1.o/libc.a either; zig's musl provides them.
      local flags="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
      export PATH="$tools:$PATH" CARGO_TARGET_DIR="$PWD/target/server-cross" "$flags=-C link-self-contained=no"
      cargo zigbuild "${args[@]:1}" --target "$target" -Zbuild-std=std,panic_abort
    )
  fi
  mkdir -p "target/$target/release"
  cp "target/server-cross/$target/release/acp-terminal-server" "target/$target/release/acp-terminal-server"
  echo "build-server: target/$target/release/acp-terminal-server ($((SECONDS - start)) s)" >&2
}

case "${1:-}" in
  '') exec cargo "${args[@]}" ;;
  musl) static x86_64-unknown-linux-musl ;;
  musl-arm64) static aarch64-unknown-linux-musl ;;
  stage)
    shift
    [ $# -gt 0 ] || { echo "build-server: stage needs at least one directory" >&2; exit 2; }
    for dir in "$@"; do
      for arch in x64:x86_64 arm64:aarch64; do
        src="target/${arch#*:}-unknown-linux-musl/release/acp-terminal-server"
        name="acp-terminal-server.linux-${arch%%:*}-musl"
        [ -f "$src" ] || { echo "build-server: $src is not built (build-server.sh musl / musl-arm64)" >&2; exit 2; }
        install -m 755 "$src" "$dir/$name"
      done
      # The package's `files` (committed in npm/*/package.json; `napi create-npm-dirs` rewrites them with
      # the addon only, so the publish job stages after it).
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
