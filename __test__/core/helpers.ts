import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
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
