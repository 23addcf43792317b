#!/usr/bin/env bash
# Builds acp-terminal-server without Node-API (`--no-default-features --features server`):
#   bash scripts/remote/build-server.sh          # this machine's (target/release/acp-terminal-server)
#   bash scripts/remote/build-server.sh musl     # static x86_64 musl, for any Linux far end (busybox containers)
#                                                # -> target/x86_64-unknown-linux-musl/release/acp-terminal-server
set -euo pipefail
cd "$(dirname "$0")/../.."
args=(build --release --no-default-features --features server --bin acp-terminal-server)
if [ "${1:-}" = musl ]; then
  target=x86_64-unknown-linux-musl
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target"
  fi
  args+=(--target "$target")
fi
cargo "${args[@]}"
