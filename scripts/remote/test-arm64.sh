#!/usr/bin/env bash
# The aarch64 server at an aarch64 far end, run here under qemu-user: installs qemu-user-static when
# missing (Debian, as root, as check-targets.sh does for llvm), builds the aarch64 server
# (build-server.sh musl-arm64) and the host one when missing, then runs __test__/remote-arm64.test.ts
# with ACP_TERMINAL_REQUIRE naming it, so that it cannot skip.
#   bash scripts/remote/test-arm64.sh          # the release build (LTO, as shipped)
#   bash scripts/remote/test-arm64.sh --quick  # CI: no LTO, parallel codegen (same code, a faster build)
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test-arm64: qemu-user-static is not installed and this is not root: apt-get install -y qemu-user-static" >&2
    exit 2
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null
fi
if [ "${1:-}" = --quick ]; then
  export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
fi
bash scripts/remote/build-server.sh musl-arm64
[ -x target/release/acp-terminal-server ] || bash scripts/remote/build-server.sh
ACP_TERMINAL_REQUIRE="${ACP_TERMINAL_REQUIRE:+$ACP_TERMINAL_REQUIRE,}acp-terminal-server-arm64" \
  npx jest __test__/remote-arm64.test.ts
