// Shared by the Windows suites (node:test, run by `npm run test:windows` in Windows Node under
// Wine, and by the workflow's Windows job on a real Windows runner): the package as a user loads
// it from this checkout, the named platform conditions tests are skipped by, and small helpers.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The checkout: package.json `main` (lib/) loads ../index.js, which loads the .node beside it. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The package, loaded the way a user's `require('acp-terminal')` does. */
export const acp = require(root);
/** The native addon itself (index.js, its loader): what the package builds on, `processStartTime` included. */
export const native = require(path.join(root, 'index.js'));

if (process.platform !== 'win32') {
  throw new Error(`__test__/windows/ runs on Windows (npm run test:windows runs it under Wine), not ${process.platform}`);
}

/**
 * Named platform conditions. A test that cannot apply passes one of these as `skip`: node:test
 * prints the reason next to the skipped test, and the runner counts skips.
 */
const system32 = path.join(process.env.SystemRoot ?? 'C:\\windows', 'system32');
/** Wine (not Windows): its system32 holds wineboot.exe, which Windows never has. */
export const UNDER_WINE = fs.existsSync(path.join(system32, 'wineboot.exe'));
/**
 * Under Wine, scripts/windows/test.sh first runs the probes in scripts/windows/probes/ and passes
 * what they found: ACP_WIN_PROBE_CONPTY (`works` when a pseudo console's output arrived) and
 * ACP_WIN_PROBE_JOB_LIMITS (the job limits Wine enforces). Wine 8: its pseudo console works (a
 * write to CONOUT$ arrives) but a command attached to it does not get it as its standard handles,
 * so what it prints goes nowhere; no job limit enforced. On Windows nothing is skipped.
 */
const probe = (name) => process.env[`ACP_WIN_PROBE_${name}`];
export const CONPTY_UNAVAILABLE =
  UNDER_WINE && probe('CONPTY') !== 'works'
    ? `this Wine's ConPTY gives a command's output no way out (probe: ${probe('CONPTY') ?? 'not run'}); tested on the workflow Windows runner`
    : false;
/** The skip condition of a test of the job limit behind `limits.<name>` (processes, memory, cpu). */
export function jobLimitUnenforced(limit) {
  const enforced = (probe('JOB_LIMITS') ?? '').split(' ');
  return UNDER_WINE && !enforced.includes(limit)
    ? `this Wine does not enforce the job's ${limit} limit (probe: ${probe('JOB_LIMITS') === undefined ? 'not run' : `enforced: ${probe('JOB_LIMITS') || 'none'}`}); tested on the workflow Windows runner`
    : false;
}
/** Wine 8's powershell.exe is a stub: `powershell -Command 'Write-Output 1'` exits 0 and prints nothing. */
export const NO_POWERSHELL = UNDER_WINE ? "Wine 8's powershell.exe is a stub (exits 0, runs nothing)" : false;

/** The first `name` found on this process's PATH with one of PATHEXT's extensions, or null. */
export function onPath(name) {
  const exts = (process.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean);
  for (const dir of (process.env.PATH ?? '').split(';').filter(Boolean)) {
    for (const ext of ['', ...exts]) {
      const p = path.join(dir, name + ext);
      try {
        if (fs.statSync(p).isFile()) return p;
      } catch {}
    }
  }
  return null;
}

/** PowerShell 7 (`pwsh.exe`), which Windows does not ship and Wine does not have. */
export const NO_PWSH = onPath('pwsh') ? false : 'no pwsh.exe on PATH (PowerShell 7 is not installed)';

/** Git for Windows' bash.exe when this machine has one (ShellSessions and `shell: 'bash'` need it). */
export const BASH = onPath('bash');
export const NO_BASH = BASH ? false : 'no bash.exe on PATH (Git for Windows is not installed)';

/** Runs a terminal to its end and releases it: its exit status and retained output. */
export async function run(params, options) {
  const t = await acp.createTerminal(params, options);
  try {
    const exitStatus = await t.waitForExit();
    const snap = await t.currentOutput();
    return { exitStatus, output: snap.output, truncated: snap.truncated, pid: t.pid };
  } finally {
    await t.release();
  }
}

/** Node's own executable: direct-execution tests run `node -e` as the program that reports. */
export const nodeExe = process.execPath;

/** A fresh temporary directory, removed by the returned function. */
export function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-win-'));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Whether a process with this pid exists (signal 0 tests it on Windows too). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits (polling) until none of `pids` is alive and returns the ones still alive at `deadlineMs`:
 * a liveness bound, not a timing assertion; a contained tree is gone long before it.
 */
export async function survivors(pids, deadlineMs = 30000) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Ends processes a failed test left behind (TerminateProcess). */
export function cleanup(pids) {
  for (const pid of pids) {
    try {
      process.kill(pid);
    } catch {}
  }
}

/**
 * A node script that starts a grandchild detached (outside any job of its parent's, the way a
 * daemonizing tool does) and one attached, prints `PIDS [detached, attached]` and then waits.
 */
export const TREE_SCRIPT = `
const { spawn } = require('node:child_process');
const idle = ['-e', 'setInterval(() => {}, 1000)'];
const d = spawn(process.execPath, idle, { detached: true, stdio: 'ignore' });
d.unref();
const a = spawn(process.execPath, idle, { stdio: 'ignore' });
console.log('PIDS ' + JSON.stringify([d.pid, a.pid]));
setInterval(() => {}, 1000);
`;

/** Waits until a terminal's output holds `PIDS [...]` and returns the pids. */
export async function treePids(terminal) {
  for (;;) {
    const snap = await terminal.currentOutput();
    const m = /PIDS (\[[0-9,]+\])/.exec(snap.output);
    if (m) return JSON.parse(m[1]);
    if (snap.exitStatus) throw new Error(`the tree script ended: ${JSON.stringify(snap)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
