# Sourced by scripts/check-targets.sh and the Windows scripts: Debian's Rust (`rustc-web`, with its
# own std source for -Zbuild-std), pinned to one exact package version, and the settings that make
# it build this crate for other targets.
# - The pin: every CI run installs these packages fresh, and Debian's security archive replaces them
#   in place (1.85 became 1.96 between two runs, and 1.96's new clippy lints failed the msvc check
#   of an unchanged tree). `debian_rust_install` installs exactly DEBIAN_RUST_VERSION (downgrading a
#   newer one); when the archive no longer has it, it stops with a message that names the versions
#   there are: move the pin on purpose, with the lints the new clippy asks for fixed in the same
#   commit.
# - Debian's tools come first on PATH (rustup's shims would shadow them), rustup's settings are
#   dropped, and RUSTC_BOOTSTRAP=1 allows the unstable -Z flags (-Zbuild-std).
# shellcheck shell=bash
DEBIAN_RUST_VERSION=1.96.0+dfsg1-1~deb12u2
DEBIAN_RUST_PACKAGES=(rustc-web cargo-web rust-web-src)

# debian_rust_install [EXTRA_RUST_PACKAGE...]: installs the pinned packages (and the extra ones,
# e.g. rust-web-clippy, at the same version) unless they are installed at the pin already.
debian_rust_install() {
  local pkgs=("${DEBIAN_RUST_PACKAGES[@]}" "$@") p wanted=() have
  for p in "${pkgs[@]}"; do
    have=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null || true)
    [ "$have" = "install ok installed $DEBIAN_RUST_VERSION" ] || wanted+=("$p=$DEBIAN_RUST_VERSION")
  done
  [ ${#wanted[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "debian-rust: ${wanted[*]} are not installed and this is not root: run" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends --allow-downgrades ${wanted[*]}" >&2
    return 2
  fi
  echo "== installing ${wanted[*]} (Debian's rustc with its own std source, pinned)" >&2
  apt-get update -qq
  if ! apt-cache madison rustc-web | grep -qF " $DEBIAN_RUST_VERSION "; then
    echo "debian-rust: rustc-web $DEBIAN_RUST_VERSION is no longer in the archive; it has:" >&2
    apt-cache madison rustc-web >&2
    echo "Move DEBIAN_RUST_VERSION in scripts/debian-rust.sh and fix what the new clippy reports." >&2
    return 2
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --allow-downgrades \
    "${wanted[@]}" >/dev/null
}

export PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
unset RUSTUP_TOOLCHAIN RUSTFLAGS CARGO_BUILD_TARGET
# Extra cargo flags for Debian's cargo (none are needed at the pinned version; kept as the one place
# to add them).
DEBIAN_RUST_FLAGS=()
