#!/usr/bin/env bash
# Installs what the remote backends' tests need (Debian, as root): podman with runc, a static busybox
# for the test image (and a static bash for its shell sessions), OpenSSH's server; and builds the server binaries (host and static musl).
# The tests start and stop their containers and their sshd themselves (__test__/fixtures/remote-env.ts).
set -euo pipefail
cd "$(dirname "$0")/../.."
need=()
for p in podman:podman runc:runc busybox:busybox-static bash-static:bash-static sshd:openssh-server; do
  command -v "${p%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${p%%:*}" ] || need+=("${p##*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
bash scripts/remote/build-server.sh
bash scripts/remote/build-server.sh musl
