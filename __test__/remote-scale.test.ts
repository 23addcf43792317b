/**
 * Scale, the short version of `node scripts/remote/scale.js` (50 containers × 10 terminals, opt-in): one
 * Node process drives 5 far ends × 10 terminals at once, every output and exit right. Through servers
 * run directly (the generic argv backend), and through 5 podman containers when this machine has podman.
 */

import * as fs from 'node:fs';

import { HOST_SERVER, STATIC_SERVER, ensureImage, hasPodman } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

const { scale } = require('../scripts/remote/scale.js') as {
  scale(o: { far: string; containers: number; terminals: number }): Promise<{ failures: string[]; allDoneMs: number }>;
};

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)('scale', () => {
  test('5 servers × 10 terminals at once, all correct', async () => {
    const r = await scale({ far: 'local', containers: 5, terminals: 10 });
    expect(r.failures).toEqual([]);
  }, 120000);
});

describeIf('podman', hasPodman && fs.existsSync(STATIC_SERVER), 'needs root with podman, runc, busybox-static and the musl server (bash scripts/remote/setup.sh)')(
  'scale through podman',
  () => {
    test('5 containers × 10 terminals at once, all correct', async () => {
      ensureImage();
      const r = await scale({ far: 'podman', containers: 5, terminals: 10 });
      expect(r.failures).toEqual([]);
    }, 180000);
  },
);
