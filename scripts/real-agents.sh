#!/usr/bin/env bash
# Opt-in end to end with real third-party ACP agents that call the client's terminal/* methods:
# fast-agent (PyPI fast-agent-mcp), kimi-cli (PyPI), mistral-vibe (PyPI) and Zed's Claude agent
# (npm @zed-industries/claude-code-acp, its last line that uses client terminals), each pinned,
# installed into .tools/ (git-ignored, reused by later runs) and driven over stdio by
# scripts/real-agents.mjs against TerminalHost + registerTerminalHandlers, with a scripted model
# (fast-agent's own `passthrough`; for the others a fake OpenAI/Anthropic server on 127.0.0.1).
# Needs Python >= 3.12 (PATH, else pyenv's; 3.12.0-3.12.x with x < 3 cannot run kimi-cli, see below)
# and the PyPI and npm registries for the first install. The Python packages go through `uv`
# (itself from PyPI): pip's resolver takes minutes on fast-agent's dependency tree, uv seconds.
# Network: fast-agent, kimi-cli and mistral-vibe connect only to 127.0.0.1 (checked with strace, telemetry and
# update checks off); the Claude Code CLI under claude-code-acp also looks up api.anthropic.com for a few
# endpoints it calls without ANTHROPIC_BASE_URL (metrics, hello), which fail offline without effect on the run.
# Usage: bash scripts/real-agents.sh [--quick] [agent ...]
#   agents: fast-agent kimi-cli mistral-vibe claude-code-acp (default: all four)
#   --quick: fast-agent only, its first three scenarios (what .ci/run runs)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"

FAST_AGENT_VERSION=0.10.48
KIMI_CLI_VERSION=1.51.0 # 1.52.0, the last release, is a deprecation stub whose every entry point only prints a notice
MISTRAL_VIBE_VERSION=2.24.5
CLAUDE_CODE_ACP_VERSION=0.16.2 # the last @zed-industries release; its successor runs Bash itself
UV_VERSION=0.9.5

quick=false
agents=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=true ;;
    fast-agent | kimi-cli | mistral-vibe | claude-code-acp) agents+=("$arg") ;;
    *) echo "real-agents: unknown argument '$arg' (agents: fast-agent kimi-cli mistral-vibe claude-code-acp; --quick)" >&2; exit 2 ;;
  esac
done
if $quick; then agents=(fast-agent); fi
[ ${#agents[@]} -gt 0 ] || agents=(fast-agent kimi-cli mistral-vibe claude-code-acp)

# A Python >= 3.12; kimi-cli also needs >= 3.12.3 (on 3.12.1 its slash-command registry dies with
# "super(type, obj): obj must be an instance or subtype of type", a CPython bug fixed later), so the
# newest one found is taken.
python=""
best=0
for candidate in python3.14 python3.13 python3.12 python3 /root/.pyenv/versions/3.1[2-9]*/bin/python3; do
  path="$(command -v "$candidate" 2>/dev/null || true)"
  [ -n "$path" ] || continue
  version="$("$path" -c 'import sys; print("%d%03d%03d" % sys.version_info[:3])' 2>/dev/null || echo 0)"
  if [ "$version" -ge 3012003 ] && [ "$version" -gt "$best" ]; then
    python="$path"
    best="$version"
  fi
done
if [ -z "$python" ]; then
  echo "real-agents: these agents need Python >= 3.12.3 and none was found (PATH, pyenv)" >&2
  exit 1
fi

mkdir -p "$tools"
uv="$tools/uv-$UV_VERSION/bin/uv"
pip_install() { # pip_install <venv dir> <requirement>: a venv made once, reused while its entry point exists
  local venv="$1" requirement="$2"
  if [ ! -x "$uv" ]; then
    rm -rf "$tools/uv-$UV_VERSION"
    "$python" -m venv "$tools/uv-$UV_VERSION"
    "$tools/uv-$UV_VERSION/bin/pip" install --quiet --disable-pip-version-check "uv==$UV_VERSION"
  fi
  echo "real-agents: installing $requirement with $python into $venv"
  rm -rf "$venv"
  "$uv" venv --quiet --python "$python" "$venv"
  # uv uses the system's certificate store (as pip does here), and no Python download: the venv's own.
  UV_NATIVE_TLS=1 UV_PYTHON_DOWNLOADS=never "$uv" pip install --quiet --python "$venv/bin/python" "$requirement"
}

status=0
summary=()
for agent in "${agents[@]}"; do
  start=$(date +%s)
  case "$agent" in
    fast-agent)
      dir="$tools/fast-agent-$FAST_AGENT_VERSION"
      [ -x "$dir/bin/fast-agent-acp" ] || pip_install "$dir" "fast-agent-mcp==$FAST_AGENT_VERSION" ;;
    kimi-cli)
      dir="$tools/kimi-cli-$KIMI_CLI_VERSION"
      [ -x "$dir/bin/kimi" ] || pip_install "$dir" "kimi-cli==$KIMI_CLI_VERSION" ;;
    mistral-vibe)
      dir="$tools/mistral-vibe-$MISTRAL_VIBE_VERSION"
      [ -x "$dir/bin/vibe-acp" ] || pip_install "$dir" "mistral-vibe==$MISTRAL_VIBE_VERSION" ;;
    claude-code-acp)
      dir="$tools/claude-code-acp-$CLAUDE_CODE_ACP_VERSION"
      if [ ! -f "$dir/node_modules/@zed-industries/claude-code-acp/dist/index.js" ]; then
        echo "real-agents: installing @zed-industries/claude-code-acp@$CLAUDE_CODE_ACP_VERSION into $dir"
        rm -rf "$dir"
        mkdir -p "$dir"
        echo '{ "private": true }' >"$dir/package.json"
        (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --save-exact "@zed-industries/claude-code-acp@$CLAUDE_CODE_ACP_VERSION" >/dev/null)
      fi ;;
  esac
  installed=$(date +%s)
  flags=()
  $quick && flags+=(--quick)
  set +e
  out="$(node "$root/scripts/real-agents.mjs" "$agent" "$dir" "${flags[@]}" 2>&1)"
  rc=$?
  set -e
  echo "$out"
  [ $rc -eq 0 ] || status=1
  summary+=("$(grep -E "^$agent: [0-9]+ passed, [0-9]+ failed$" <<<"$out" || echo "$agent: did not finish (rc $rc)") (install $((installed - start)) s, run $(($(date +%s) - installed)) s)")
done
echo
echo "real-agents summary:"
printf '  %s\n' "${summary[@]}"
exit $status
