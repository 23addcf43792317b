#!/usr/bin/env bash
# The remote backends' whole suite, opt-in (it installs podman and builds the static server, which
# takes minutes): setup, then every remote suite with podman, sshd and the servers required, so a
# skip fails. CI runs the short version (.ci/run: the host server and sshd; podman skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/remote/setup.sh
node scripts/build-ts.js
ACP_TERMINAL_REQUIRE="${ACP_TERMINAL_REQUIRE:+$ACP_TERMINAL_REQUIRE,}root,podman,sshd,kubectl,acp-terminal-server" \
  npx jest __test__/remote-server.test.ts __test__/remote-ssh.test.ts __test__/remote-podman.test.ts __test__/remote-sessions.test.ts \
    __test__/remote-host.test.ts __test__/remote-kubectl.test.ts __test__/remote-mcp.test.ts
