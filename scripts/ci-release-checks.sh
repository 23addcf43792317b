#!/usr/bin/env bash
# The release checks CI runs after `npm install` (issue 10): installs the pinned tools (zig,
# cargo-zigbuild, actionlint), lints .github/workflows, then the registry end-to-end test (a glibc 2.17
# release build of this platform's package, published to a local Verdaccio, installed without Rust
# into a fresh project and tested there). Its last line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== release tools (pinned: scripts/ci-install-tools.sh)"
start=$SECONDS
PATH="$(bash scripts/ci-install-tools.sh | tail -n 1):$PATH"
export PATH
echo "   $((SECONDS - start)) s"
echo "== workflow lint (actionlint)"
bash scripts/lint-workflows.sh
echo "== registry end-to-end (scripts/test-registry-install.js)"
node scripts/test-registry-install.js
