import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  createTerminal,
  type CreateTerminalOptions,
  type CreateTerminalParams,
  type OutputChunkInfo,
  type TerminalHandle,
} from '../../index';

export { createTerminal };

/** An `onOutput` listener that blocks the JS thread `ms` per call, and what it got: bytes delivered,
 * bytes dropped (counted by the bound on pending output), calls, and the largest chunk. */
export function blockingListener(ms: number) {
  const seen = { delivered: 0, dropped: 0, calls: 0, largest: 0 };
  const listener = (chunk: Buffer, info: OutputChunkInfo) => {
    seen.calls++;
    seen.delivered += chunk.length;
    seen.dropped += info.dropped;
    seen.largest = Math.max(seen.largest, chunk.length);
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // blocks the JS thread
    }
  };
  return { listener, seen };
}

/** Runs a command to completion and releases it. */
export async function run(params: CreateTerminalParams, options?: CreateTerminalOptions) {
  const t = await createTerminal(params, options);
  try {
    const status = await t.waitForExit();
    const out = await t.currentOutput();
    return { ...out, status, pid: t.pid };
  } finally {
    await t.release();
  }
}

/** Process state letter from /proc, or null when the pid no longer exists. */
export function procState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** A process is gone when it no longer exists or is a zombie (dead, awaiting its reaper). */
export function isGone(pid: number): boolean {
  const s = procState(pid);
  return s === null || s === 'Z' || s === 'X';
}

/** Polls until `cond` holds (event-free conditions only, e.g. /proc state), or fails. */
export async function eventually(cond: () => boolean, what: string, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Resolves with the output once what a listener attached now has received satisfies `done`: waits on
 * the output event itself. The listener is removed then; fails after `timeoutMs`.
 */
export function outputReaching(t: TerminalHandle, done: (received: Buffer) => boolean, what: string, timeoutMs = 20000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out waiting for: ${what}`));
    }, timeoutMs);
    const unsubscribe = t.onOutput((chunk) => {
      chunks.push(chunk);
      const received = Buffer.concat(chunks);
      if (!done(received)) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(received);
    });
  });
}

/** Open file descriptors of this process. */
export function fdCount(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

/** Every process from /proc with its state, parent and process group. */
export function processes(): { pid: number; state: string; ppid: number; pgrp: number }[] {
  const out = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(e), state: f[0] ?? '', ppid: Number(f[1]), pgrp: Number(f[2]) });
    } catch {
      /* raced with exit */
    }
  }
  return out;
}

/** Direct children of this process that are zombies. */
export function zombieChildren(): number[] {
  return processes()
    .filter((p) => p.ppid === process.pid && p.state === 'Z')
    .map((p) => p.pid);
}

/** Live (non-zombie) processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  return processes()
    .filter((p) => p.pgrp === pgid && p.state !== 'Z')
    .map((p) => p.pid);
}

export const ROOT = path.resolve(__dirname, '..', '..');

/** Runs a Node script in a fresh process (with the package resolvable) and returns its output. */
export function runNode(script: string, args: string[] = [], timeoutMs = 30000) {
  const r = spawnSync(process.execPath, [...args, '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status, signal: r.signal };
}

export type { TerminalHandle };

/** Whether another user (`nobody`) can reach and read `dir`: every directory on its path searchable by
 * others, and `dir` itself readable by them. */
function readableByOthers(dir: string): boolean {
  for (let d = dir; ; d = path.dirname(d)) {
    const mode = fs.statSync(d).mode;
    if ((mode & 0o001) === 0 || (d === dir && (mode & 0o004) === 0)) return false;
    if (path.dirname(d) === d) return true;
  }
}

let forOthers: string | undefined;

/**
 * The package root as another user (`nobody`, through setpriv) can load it: the checkout itself when it
 * is readable by others, else (a checkout under a private directory, such as a `mktemp -d` clone) a copy
 * of what an install holds (package.json, index.js, platforms.js, the `.node` addon, lib/) and the test fixtures, in a
 * temporary directory others can read, made once per test file (remove it with `removePackageCopy` in an
 * `afterAll`).
 */
export function packageRootForOthers(): string {
  if (readableByOthers(ROOT)) return ROOT;
  if (forOthers) return forOthers;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-terminal-pkg-'));
  const entries = fs.readdirSync(ROOT).filter((e) => ['package.json', 'index.js', 'platforms.js'].includes(e) || e.endsWith('.node'));
  for (const e of [...entries, 'lib', path.join('__test__', 'fixtures')]) {
    fs.cpSync(path.join(ROOT, e), path.join(dir, e), { recursive: true });
  }
  // Directories 0755, files 0644 (the addon 0755), whatever the checkout's modes.
  const open = (p: string): void => {
    const st = fs.statSync(p);
    fs.chmodSync(p, st.isDirectory() || p.endsWith('.node') ? 0o755 : 0o644);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) open(path.join(p, e));
  };
  open(dir);
  forOthers = dir;
  return dir;
}

/** Removes the copy `packageRootForOthers` made, if it made one. */
export function removePackageCopy(): void {
  if (forOthers) fs.rmSync(forOthers, { recursive: true, force: true });
  forOthers = undefined;
}

/**
 * Runs a Node script as nobody (setpriv; the caller must be root) from a fresh directory every user
 * may write: `script(lib, dir)` writes the script's text given the package's `lib/index.js` that
 * nobody can read and that directory (also its cwd). Returns what it printed and nobody's uid; the
 * directory is removed afterwards.
 */
export function runAsNobody(script: (lib: string, dir: string) => string): { out: string; uid: string } {
  const lib = path.join(packageRootForOthers(), 'lib', 'index.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-terminal-nobody-'));
  try {
    fs.chmodSync(dir, 0o777);
    const file = path.join(dir, 'run.js');
    fs.writeFileSync(file, script(lib, dir));
    fs.chmodSync(file, 0o644);
    const out = execFileSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, file], {
      encoding: 'utf8',
      cwd: dir,
    });
    return { out, uid: execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim() };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
