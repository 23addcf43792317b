#!/usr/bin/env bash
# Fails when a binary needs a glibc symbol version above the given maximum (default 2.17: the oldest
# glibc napi-rs packages support; Debian 8+, Ubuntu 14.04+, Amazon Linux 2, RHEL 7).
# Usage: scripts/check-glibc.sh <file.node> [max-version]
set -euo pipefail
file="${1:?usage: check-glibc.sh <file.node> [max-version]}"
max="${2:-2.17}"
if command -v objdump >/dev/null; then
  dump="$(objdump -T "$file")"
else
  dump="$(readelf --dyn-syms --wide "$file")"
fi
versions="$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$dump" | sed 's/GLIBC_//' | sort -uV || true)"
if [ -z "$versions" ]; then
  echo "check-glibc: $file needs no versioned glibc symbols" >&2
  exit 0
fi
highest="$(tail -n1 <<<"$versions")"
too_new="$(awk -v max="$max" 'BEGIN { split(max, m, ".") } { split($0, v, "."); if (v[1] > m[1] || (v[1] == m[1] && v[2] + 0 > m[2] + 0)) print }' <<<"$versions")"
if [ -n "$too_new" ]; then
  echo "check-glibc: $file needs glibc $highest (above $max); symbols:" >&2
  for v in $too_new; do grep "GLIBC_$v\b" <<<"$dump" | awk '{ print "  " $NF " (GLIBC_'"$v"')" }' >&2; done
  exit 1
fi
echo "check-glibc: $file needs at most glibc $highest (<= $max)"
