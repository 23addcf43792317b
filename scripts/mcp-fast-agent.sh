#!/usr/bin/env bash
# End to end with a real MCP host nobody here wrote: fast-agent (PyPI `fast-agent-mcp`, pinned) and its
# scripted `passthrough` model (`***CALL_TOOL <server>__<tool> <json>` becomes a tool call) drive
# `acp-terminal mcp`, configured with the README's fast-agent YAML pasted as is, in a project where
# `npx acp-terminal` is this checkout (as after `npm install acp-terminal`). Checks the tools' answers
# and that the README's `--sandbox --writable .` holds: a write in the project works, one outside fails.
# Needs Python >= 3.12 (PATH, else pyenv's); the venv is cached in .tools/ (first run: about 75 s of pip).
# Usage: bash scripts/mcp-fast-agent.sh [--quick]   (--quick: the first two calls, what .ci/run runs;
#        FAST_AGENT_VENV=<dir>: a venv of its own, made there if missing)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
FAST_AGENT_VERSION=0.10.48
quick=false
[ "${1-}" = --quick ] && quick=true

python=""
for candidate in python3.14 python3.13 python3.12 python3 /root/.pyenv/versions/3.1[2-9]*/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
    "$candidate" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    python="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$python" ]; then
  echo "mcp-fast-agent: fast-agent needs Python >= 3.12 and none was found (PATH, pyenv)" >&2
  exit 1
fi

venv="${FAST_AGENT_VENV:-$root/.tools/fast-agent-$FAST_AGENT_VERSION}"
if [ ! -x "$venv/bin/fast-agent" ]; then
  echo "mcp-fast-agent: installing fast-agent-mcp==$FAST_AGENT_VERSION with $python into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "fast-agent-mcp==$FAST_AGENT_VERSION"
fi

work="$(mktemp -d /var/tmp/mcp-fast-agent.XXXXXX)" # not under /tmp: the sandbox gives commands a private one
trap 'rm -rf "$work"' EXIT
project="$work/project"
outside="$(mktemp -d /var/tmp/mcp-fast-agent-outside.XXXXXX)"
trap 'rm -rf "$work" "$outside"' EXIT
mkdir -p "$project/node_modules/.bin" "$work/home"
ln -s "$root" "$project/node_modules/acp-terminal"
ln -s ../acp-terminal/bin/acp-terminal.js "$project/node_modules/.bin/acp-terminal"
echo '{ "name": "project", "private": true, "dependencies": { "acp-terminal": "*" } }' >"$project/package.json"

# The README's fast-agent YAML (its first yaml block), as pasted, after the scripted model's settings.
{
  echo 'default_model: passthrough'
  echo 'logger: {level: error}'
  awk '/^```yaml/ { inside = 1; next } /^```/ { if (inside) exit } inside' "$root/README.md"
} >"$project/fastagent.config.yaml"
grep -q 'acp-terminal' "$project/fastagent.config.yaml" || { echo "mcp-fast-agent: no fast-agent YAML in README.md" >&2; exit 1; }

call() { # call <tool> <json arguments>: prints what fast-agent printed; the tool's result is in $work/result.json
  (cd "$project" && HOME="$work/home" NO_COLOR=1 timeout 120 "$venv/bin/fast-agent" go --config-path fastagent.config.yaml \
    --servers terminal --model passthrough --quiet --message "***CALL_TOOL terminal__$1 $2" --results "$work/result.json")
}
expect() { # expect <what> <text> <regex>
  if ! grep -qE -- "$3" <<<"$2"; then
    echo "mcp-fast-agent: FAILED: $1: expected /$3/ in:" >&2
    echo "$2" >&2
    exit 1
  fi
  echo "ok - $1"
}

out="$(call run '{"command":"printf hi; exit 3"}')"
expect "run: output and exit code" "$out" 'hi'
expect "run: the status line" "$(cat "$work/result.json")" 'exit code 3'

out="$(call run "{\"command\":\"echo inside > made-by-mcp; echo outside > $outside/escaped\"}")"
expect "the README's sandbox: a write outside the project is refused" "$out" 'Read-only file system'
[ "$(cat "$project/made-by-mcp")" = inside ] || { echo "mcp-fast-agent: FAILED: the write in the project did not happen" >&2; exit 1; }
[ ! -e "$outside/escaped" ] || { echo "mcp-fast-agent: FAILED: a write outside the project got through" >&2; exit 1; }
echo "ok - the README's sandbox: the write in the project happened"
if $quick; then
  echo "mcp-fast-agent: fast-agent $FAST_AGENT_VERSION drove acp-terminal mcp end to end (quick)"
  exit 0
fi

out="$(call terminal_execute '{"command":"mkdir -p sub && cd sub && pwd"}')"
expect "terminal_execute: a session command" "$out" "$project/sub"

out="$(call wait '{"terminal_id":"no-such-terminal"}')"
expect "an error is a tool result with the host's code" "$out$(cat "$work/result.json")" 'ERR_TERMINAL_NOT_FOUND'
echo "mcp-fast-agent: fast-agent $FAST_AGENT_VERSION drove acp-terminal mcp end to end"
