#!/usr/bin/env bash
# `npm run test:windows:rust`: the crate's Rust unit tests (the whole crate, what the workflow's
# `cargo test` runs on its Windows runners) built for x86_64-pc-windows-gnu as build:windows
# builds the addon, and run under Wine in the prefix scripts/windows/setup.sh prepares.
#
# The test program imports N-API from node.exe, as the addon does (napi-build links the gnu target
# against node.exe's import library), so Windows Node's directory is put on Wine's PATH (WINEPATH)
# for the loader to find it; the tests themselves never call N-API. Output goes to a file and is
# relayed, as node.exe's is in test.sh. The last line is libtest's `test result: ...`.
#
# Usage: scripts/windows/cargo-test.sh [TEST-FILTER...]   (arguments go to the test program)
# Environment: ACP_WIN_TOOLS (see env.sh); ACP_WIN_TEST_TIMEOUT seconds for the run (default 900).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

bash scripts/windows/setup.sh >/dev/null
# shellcheck source=scripts/windows/env.sh
. scripts/windows/env.sh
# shellcheck source=scripts/debian-rust.sh
. scripts/debian-rust.sh
export CARGO_TARGET_DIR="$root/target/windows"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER="$root/scripts/windows/linker.sh"
export LIBNODE_PATH

echo "== test:windows:rust: cargo test --no-run --target x86_64-pc-windows-gnu ($(/usr/bin/rustc --version))" >&2
start=$(date +%s)
json=$(mktemp)
out=$(mktemp)
trap 'rm -f "$json" "$out"' EXIT
/usr/bin/cargo test --locked "${DEBIAN_RUST_FLAGS[@]}" --no-run -Zbuild-std=std,panic_abort,panic_unwind,test \
  --target x86_64-pc-windows-gnu --message-format json >"$json"
exe=$(node -e '
let exe = "";
for (const line of require("fs").readFileSync(0, "utf8").split("\n")) {
  try {
    const m = JSON.parse(line);
    if (m.reason === "compiler-artifact" && m.profile?.test && m.target?.src_path?.endsWith("src/lib.rs") && m.executable) exe = m.executable;
  } catch {}
}
process.stdout.write(exe);' <"$json")
if [ -z "$exe" ]; then
  echo "test:windows:rust: cargo built no unit-test program" >&2
  exit 1
fi
echo "== test:windows:rust: built $(basename "$exe") in $(($(date +%s) - start))s; running it under $("$WINE" --version)" >&2

start=$(date +%s)
set +e
WINEPREFIX=$WINEPREFIX WINEDEBUG=-all WINEPATH="$(win_path "$WIN_NODE_DIR")" timeout "${ACP_WIN_TEST_TIMEOUT:-900}" \
  "$WINE" "$exe" --test-threads=2 "$@" </dev/null >"$out" 2>&1
rc=$?
set -e
WINEPREFIX=$WINEPREFIX "$WINESERVER" -k 2>/dev/null || true
tr -d '\r' <"$out"
echo "== test:windows:rust: the test program exited $rc after $(($(date +%s) - start))s" >&2
result=$(tr -d '\r' <"$out" | grep '^test result: ' | tail -n 1 || true)
if [ -z "$result" ]; then
  echo "test:windows:rust: no result line from the test program (exit $rc)" >&2
  exit 1
fi
echo "$result"
[ "$rc" -eq 0 ]
