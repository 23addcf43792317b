// Node SIGKILLed while sandboxed launches are in flight (the eighth attack's break): nothing of those
// launches outlives it. A child Node launches sandboxed `sleep 30` in a burst (two shapes, so that
// sandboxes made ahead are joined as well as made per launch) and SIGKILLs itself part way; then no
// process of another PID namespace that appeared meanwhile is alive (zombies aside: a container's
// pid 1 may not reap). As root and as nobody. The break is a race (a launch whose intermediate
// process outlives Node arms the parent-death signal of what it starts too late): several runs each.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { containmentInfo } from '../index';
import { packageRootForOthers, removePackageCopy } from './core/helpers';
import { testIf } from './fixtures/require-feature';

afterAll(removePackageCopy);

const info = containmentInfo().sandbox;
const isRoot = process.getuid?.() === 0;
const NOBODY = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];

/** Live processes of other PID namespaces: pid → a description. */
function foreign(): Map<string, string> {
  const mine = fs.readlinkSync('/proc/self/ns/pid');
  const out = new Map<string, string>();
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (fs.readlinkSync(`/proc/${p}/ns/pid`) === mine) continue;
      const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      // A zombie, or a process on its way out (its memory released: no command line), is not alive.
      const cmdline = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      if (/^State:\s*Z/m.test(status) || cmdline === '') continue;
      out.set(p, `${cmdline} (parent ${/^PPid:\s*(\d+)/m.exec(status)?.[1]})`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const CHILD = `
const [pkg, base, at] = process.argv.slice(1);
const m = require(pkg);
const cfgs = [m.sandboxConfig({ writableRoots: [base] }), m.sandboxConfig({ writableRoots: [base], network: true })];
let i = 0;
const launch = () => { const k = i++; m.createTerminal({ command: 'sleep 30', cwd: base }, { sandbox: cfgs[k % 2] }).catch(() => {}); };
setInterval(() => { launch(); launch(); }, 10);
setTimeout(() => process.kill(process.pid, 'SIGKILL'), Number(at));
`;

async function killedMidBurst(prefix: string[], pkg: string, base: string, at: number): Promise<string[]> {
  const before = foreign();
  const argv = [...prefix, process.execPath, '-e', CHILD, pkg, base, String(at)];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', cwd: base });
  await new Promise((resolve) => child.on('exit', resolve));
  // What the kernel ends on the launcher's death takes a moment to go: up to 5 s.
  let left: string[] = [];
  for (let t = 0; t < 20; t++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    left = [...foreign()].filter(([p]) => !before.has(p)).map(([p, d]) => `${p} ${d}`);
    if (left.length === 0) break;
  }
  return left;
}

const RUNS = 8;

testIf('sandbox', info.available, `containmentInfo().sandbox is unavailable: ${info.reasons.join('; ')}`)(
  'a Node SIGKILLed during a burst of sandboxed launches leaves none of their processes alive',
  async () => {
    const base = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-killed-'));
    try {
      const left: string[] = [];
      for (let r = 0; r < RUNS; r++) left.push(...(await killedMidBurst([], path.join(__dirname, '..'), base, 200 + r * 60)));
      expect(left).toEqual([]);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  },
  120000,
);

testIf('root', isRoot && info.available, 'not root (or no sandbox): cannot drop to nobody')(
  'the same as nobody (a user namespace)',
  async () => {
    const base = fs.mkdtempSync(path.join('/var/tmp', 'acp-sbx-killed-'));
    fs.chmodSync(base, 0o777);
    try {
      const pkg = packageRootForOthers();
      const left: string[] = [];
      for (let r = 0; r < RUNS; r++) left.push(...(await killedMidBurst(NOBODY, pkg, base, 200 + r * 60)));
      expect(left).toEqual([]);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  },
  120000,
);
