#!/usr/bin/env bash
# Runs the unit tests of the Windows platform layer under Wine (see Cargo.toml), or with
# --check, clippy for both msvc targets (zero errors and warnings required).
#
# Needs Debian's rustc-web, cargo-web, rust-web-src (and rust-web-clippy for --check), wine64 and
# gcc-mingw-w64-x86-64, and a Wine prefix that claims Windows 10 and holds the two DLLs Wine 8
# lacks (what scripts/windows/setup.sh prepares; its env.sh is used when present, otherwise
# WINEPREFIX must name such a prefix).
#
# Usage: winsys/run.sh [--check] [TEST-FILTER...]
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
export PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
unset RUSTUP_TOOLCHAIN RUSTFLAGS CARGO_BUILD_TARGET
export CARGO_TARGET_DIR="$root/target/winsys"
std=(-Zbuild-std=std,panic_abort,panic_unwind,test)

if [ "${1:-}" = "--check" ]; then
  status=0
  for target in x86_64-pc-windows-msvc aarch64-pc-windows-msvc; do
    echo "== winsys: cargo clippy --all-targets --target $target"
    out=$(/usr/bin/cargo clippy --locked --ignore-rust-version --all-targets "${std[@]}" \
      --target "$target" --message-format short 2>&1) || status=1
    if grep -E '^(warning|error)|: (warning|error)' <<<"$out"; then status=1; fi
  done
  exit "$status"
fi

# Rust's windows-gnu links every program with rsbegin.o and rsend.o, which -Zbuild-std does not
# build: they are compiled here from the same std source.
rt="$CARGO_TARGET_DIR/rtstartup"
src=$(/usr/bin/rustc --print sysroot)/lib/rustlib/src/rust/library/rtstartup
mkdir -p "$rt"
for obj in rsbegin rsend; do
  [ -f "$rt/$obj.o" ] || /usr/bin/rustc --target x86_64-pc-windows-gnu --emit=obj -o "$rt/$obj.o" \
    -Cpanic=abort -Copt-level=2 --edition=2021 "$src/$obj.rs"
done
export RUSTFLAGS="-L$rt"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
exe=$(/usr/bin/cargo test --locked --ignore-rust-version --no-run "${std[@]}" \
  --target x86_64-pc-windows-gnu --message-format json \
  | node -e 'let e="";for(const l of require("fs").readFileSync(0,"utf8").split("\n")){try{const m=JSON.parse(l);if(m.profile&&m.profile.test&&m.executable)e=m.executable}catch{}}process.stdout.write(e)')
[ -n "$exe" ] || { echo "winsys: the test build failed" >&2; exit 1; }

if [ -f "$root/scripts/windows/env.sh" ]; then
  # shellcheck source=/dev/null
  . "$root/scripts/windows/env.sh"
fi
: "${WINEPREFIX:?winsys: set WINEPREFIX to a prepared Wine prefix (scripts/windows/setup.sh makes one)}"
WINE=${WINE:-/usr/lib/wine/wine64}
export WINEPREFIX WINEDEBUG=-all
log=$(mktemp)
set +e
"$WINE" "$exe" --test-threads=1 "$@" >"$log" 2>&1
rc=$?
set -e
cat "$log"
rm -f "$log"
exit "$rc"
