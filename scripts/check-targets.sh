#!/usr/bin/env bash
# Compile-checks (with clippy) the crate for the targets this machine cannot build binaries for:
# aarch64/x86_64 macOS, aarch64/x86_64 Linux musl and x86_64/aarch64 Windows (msvc, what a release
# ships: no MSVC libraries here, so checked, not linked), unit tests included. Every target must
# have zero errors and zero warnings (rustc's and clippy's, in our own crate; dependencies'
# lints are capped by cargo).
#
# How: Debian's `rustc-web`, `cargo-web`, `rust-web-src` and `rust-web-clippy` packages hold a
# compiler, the source of its own std and clippy, so `-Zbuild-std` can build std for any target
# LLVM knows (no SDK and no linker are needed to check). They come first on PATH here, because
# rustup's shims shadow them otherwise, with RUSTC_BOOTSTRAP=1 for the unstable `-Zbuild-std`.
# The std source must match the compiler exactly, which is why rustup's toolchain is not used.
# The packages are installed when missing (needs root and apt; CI runs as root). C code of
# dependencies (tree-sitter) is compiled with zig cc (scripts/zig-cc.sh; zig from ci-install-tools.sh);
# for the msvc targets with zig's windows-gnu headers, archived by LLVM's `llvm-lib` (Debian's `llvm`,
# installed when missing): a check needs the objects to build, not to link against MSVC's runtime.
#
# Usage: scripts/check-targets.sh [TARGET...]   (default: the six targets below)
# Environment: CHECK_TARGETS_DIR overrides the cargo target dir (default target/check-targets).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(aarch64-apple-darwin x86_64-apple-darwin x86_64-unknown-linux-musl aarch64-unknown-linux-musl
    x86_64-pc-windows-msvc aarch64-pc-windows-msvc)
fi
RUSTC=/usr/bin/rustc
CARGO=/usr/bin/cargo
# shellcheck source=scripts/debian-rust.sh
. scripts/debian-rust.sh

# The msvc targets' C archives: the cc crate runs lib.exe's command line, which llvm-lib speaks.
LLVM_LIB=/usr/bin/llvm-lib
if [[ " ${TARGETS[*]} " == *-windows-msvc\ * ]] && [ ! -x "$LLVM_LIB" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "check-targets: llvm is not installed and this is not root: apt-get install -y llvm" >&2
    exit 2
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends llvm >/dev/null
fi

# Debian's rustc at the pinned version (scripts/debian-rust.sh), with clippy.
debian_rust_install rust-web-clippy || exit 2
sysroot=$("$RUSTC" --print sysroot)
if [ ! -f "$sysroot/lib/rustlib/src/rust/library/Cargo.lock" ]; then
  echo "check-targets: no std source under $sysroot/lib/rustlib/src/rust/library" >&2
  exit 2
fi
echo "== $("$RUSTC" --version), $("$CARGO" --version)"

# Debian's tools come first on PATH (`cargo clippy` finds cargo-clippy, and it clippy-driver).
export CARGO_TARGET_DIR="${CHECK_TARGETS_DIR:-$PWD/target/check-targets}"

# A C compiler for the targets: tree-sitter's build script compiles C (through the cc crate) for the
# target, and this machine has no macOS SDK or musl cross compiler. `zig cc` ships their libc headers
# (scripts/zig-cc.sh adapts the cc crate's flags). ZIG may name a zig binary; else a zig on PATH;
# else the pinned one scripts/ci-install-tools.sh installs (and prints the directory of).
if [ -z "${ZIG:-}" ]; then
  if command -v zig >/dev/null; then
    ZIG=$(command -v zig)
  else
    ZIG="$(bash scripts/ci-install-tools.sh | tail -1)/zig"
  fi
fi
export ZIG
zig_target() {
  case "$1" in
    aarch64-apple-darwin) echo aarch64-macos ;;
    x86_64-apple-darwin) echo x86_64-macos ;;
    x86_64-unknown-linux-musl) echo x86_64-linux-musl ;;
    aarch64-unknown-linux-musl) echo aarch64-linux-musl ;;
    x86_64-pc-windows-msvc) echo x86_64-windows-gnu ;;
    aarch64-pc-windows-msvc) echo aarch64-windows-gnu ;;
    *) echo "check-targets: no zig target for $1" >&2; return 1 ;;
  esac
}

# Counts diagnostics of our own crate in cargo's JSON messages and prints them rendered.
count='
let errors = 0, warnings = 0, failed = false;
const lines = require("fs").readFileSync(0, "utf8").split("\n");
for (const line of lines) {
  if (!line.startsWith("{")) continue;
  let m;
  try { m = JSON.parse(line); } catch { continue; }
  if (m.reason === "build-finished" && !m.success) failed = true;
  if (m.reason !== "compiler-message" || !m.package_id.includes("acp-terminal")) continue;
  const level = m.message.level;
  if (level === "error") errors++;
  else if (level === "warning") warnings++;
  else continue;
  process.stderr.write(m.message.rendered);
}
// A failed build without a diagnostic of ours (a dependency or std failed) still fails.
if (failed && errors === 0) errors = 1;
process.stdout.write(`${errors} ${warnings}\n`);
'

summary=()
status=0
for target in "${TARGETS[@]}"; do
  echo "== cargo clippy --all-targets --target $target"
  start=$(date +%s)
  log=$(mktemp)
  # napi-rs builds musl addons with a dynamic C runtime (a static one cannot make a cdylib). Other
  # targets take .cargo/config.toml's flags (the msvc ones: a static C runtime), as a release does.
  rustflags=()
  case "$target" in
    *-musl) rustflags=("RUSTFLAGS=-C target-feature=-crt-static") ;;
  esac
  ZIG_CC_TARGET=$(zig_target "$target")
  export ZIG_CC_TARGET "CC_${target//-/_}=$PWD/scripts/zig-cc.sh"
  case "$target" in
    *-windows-msvc) export "AR_${target//-/_}=$LLVM_LIB" ;;
  esac
  set +e
  # --all-targets: the unit tests must compile (and pass clippy) for every platform too.
  env "${rustflags[@]}" "$CARGO" clippy --locked "${DEBIAN_RUST_FLAGS[@]}" --all-targets -Zbuild-std=std,panic_abort,panic_unwind,test \
    --target "$target" --message-format json >"$log" 2>"$log.err"
  rc=$?
  set -e
  read -r errors warnings < <(node -e "$count" <"$log")
  if [ "$rc" -ne 0 ] && [ "$errors" -eq 0 ]; then
    # cargo itself failed (resolution, std source): show why.
    cat "$log.err" >&2
    errors=1
  fi
  rm -f "$log" "$log.err"
  secs=$(($(date +%s) - start))
  summary+=("$(printf '%-28s errors %3d  warnings %3d  %4ds' "$target" "$errors" "$warnings" "$secs")")
  if [ "$errors" -ne 0 ] || [ "$warnings" -ne 0 ]; then status=1; fi
done

echo "== check-targets summary"
printf '%s\n' "${summary[@]}"
if [ "$status" -ne 0 ]; then
  echo "check-targets: FAILED (every target must have zero errors and zero warnings)"
else
  echo "check-targets: ok"
fi
exit "$status"
