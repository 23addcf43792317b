#!/usr/bin/env bash
# `npm run test:windows`: runs the Windows suites (__test__/windows/*.test.mjs, node:test) in
# Windows Node under Wine against the addon `npm run build:windows` put in the checkout.
#
# node:test, not jest: each Windows process start costs 1-3 s under Wine, and node.exe's own
# test runner starts one process per file. node.exe cannot write to a pipe under Wine (EBADF),
# so its reports go to files, relayed here; the last line is `N passed, N failed`.
# Probes (scripts/windows/probes/) first find out what this Wine can do (ConPTY output, job
# limits) and tell the suites. Everything still running in the prefix afterwards is ended
# (`wineserver -k`).
#
# Usage: scripts/windows/test.sh [FILE...]   (default: every __test__/windows/*.test.mjs)
# Environment: ACP_WIN_TOOLS (see env.sh); ACP_WIN_TEST_TIMEOUT seconds for the whole run (default
# 1800); ACP_WIN_FILE_TIMEOUT seconds for one test file (default 600): a hang guard, not a timed
# assertion: a file that never ends fails by its name, with the tests it passed, and the other
# files still report (node.exe killed by the whole run's timeout reports nothing of that file).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

bash scripts/windows/setup.sh >/dev/null
# shellcheck source=scripts/windows/env.sh
. scripts/windows/env.sh

addon="$root/acp-terminal.win32-x64-msvc.node"
if [ ! -f "$addon" ]; then
  echo "test:windows: $addon is missing: run npm run build:windows first" >&2
  exit 2
fi
# The package's JavaScript (lib/) is the same on every platform: build it here with Linux Node.
node scripts/build-ts.js >/dev/null

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(__test__/windows/*.test.mjs)
fi
winfiles=()
for f in "${files[@]}"; do
  winfiles+=("$(win_path "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")")
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# What this Wine can do, found out rather than assumed: the suites skip (by name, with this
# evidence) the tests of what a probe shows missing, and run them when a newer Wine has it.
probe() { WINEPREFIX=$WINEPREFIX WINEDEBUG=-all "$WINE" "$ACP_WIN_TOOLS/probes/$1.exe" "${@:2}" </dev/null >"$out/probe.txt" 2>&1 || true; tail -n 1 "$out/probe.txt" | tr -d '\r'; }
read -r _ _ seen conout _ <<<"$(probe conpty)"
if [ "${seen:-0}" = 1 ]; then
  ACP_WIN_PROBE_CONPTY=works
elif [ "${conout:-0}" = 1 ]; then
  ACP_WIN_PROBE_CONPTY="no output on the command's standard handles (its CONOUT\$ writes arrive)"
else
  ACP_WIN_PROBE_CONPTY="no output"
fi
ACP_WIN_PROBE_JOB_LIMITS=""
for limit in processes memory cpu; do
  [ "$(probe joblimits "$limit")" = "$limit enforced" ] && ACP_WIN_PROBE_JOB_LIMITS+="$limit "
done
export ACP_WIN_PROBE_CONPTY ACP_WIN_PROBE_JOB_LIMITS
echo "== test:windows: probes: ConPTY output: $ACP_WIN_PROBE_CONPTY; job limits enforced: ${ACP_WIN_PROBE_JOB_LIMITS:-none}" >&2
echo "== test:windows: ${#files[@]} files in node.exe $ACP_WIN_NODE_VERSION under $("$WINE" --version)" >&2
start=$(date +%s)
set +e
WINEPREFIX=$WINEPREFIX WINEDEBUG=-all timeout "${ACP_WIN_TEST_TIMEOUT:-1800}" \
  "$WINE" "$WIN_NODE_DIR/node.exe" --test --test-concurrency=2 --test-timeout="$((${ACP_WIN_FILE_TIMEOUT:-600} * 1000))" \
  --test-reporter=spec --test-reporter-destination="$(win_path "$out/spec.txt")" \
  --test-reporter=tap --test-reporter-destination="$(win_path "$out/tap.txt")" \
  "${winfiles[@]}" </dev/null >"$out/stdout.txt" 2>"$out/stderr.txt"
rc=$?
set -e
WINEPREFIX=$WINEPREFIX "$WINESERVER" -k 2>/dev/null || true

cat "$out/spec.txt" 2>/dev/null || true
cat "$out/stdout.txt"
cat "$out/stderr.txt" >&2
count() { sed -n "s/^# $1 \([0-9]*\)$/\1/p" "$out/tap.txt" 2>/dev/null | tail -n 1; }
passed=$(count pass)
failed=$(count fail)
skipped=$(count skipped)
echo "== test:windows: node.exe exited $rc after $(($(date +%s) - start))s" >&2
if [ -z "$passed" ] || [ -z "$failed" ]; then
  echo "test:windows: no summary from node.exe --test (exit $rc)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "== test:windows: ${skipped:-0} skipped (each skip above names its condition)" >&2
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
