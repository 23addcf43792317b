# Sourced by scripts/check-targets.sh (and the Windows build): the settings that make Debian's
# rustc-web (1.85, with its own std source for -Zbuild-std) build this crate for other targets.
# - Debian's tools come first on PATH (rustup's shims would shadow them), rustup's settings are
#   dropped, and RUSTC_BOOTSTRAP=1 allows the unstable -Z flags.
# - napi 3.16 declares rust-version 1.88 but needs only one later library call,
#   `is_multiple_of` (stable in 1.87, behind the `unsigned_is_multiple_of` gate in 1.85):
#   DEBIAN_RUST_FLAGS skips the version check and opens that gate for the napi crate alone.
# shellcheck shell=bash
export PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
unset RUSTUP_TOOLCHAIN RUSTFLAGS CARGO_BUILD_TARGET
_napi_gate="['-Zcrate-attr=feature(unsigned_is_multiple_of)']"
DEBIAN_RUST_FLAGS=(
  --ignore-rust-version
  -Zprofile-rustflags
  --config "profile.dev.package.napi.rustflags=$_napi_gate"
  --config "profile.release.package.napi.rustflags=$_napi_gate"
)
unset _napi_gate
