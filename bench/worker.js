'use strict';
/**
 * One benchmark scenario for one implementation, in a fresh Node process (started by
 * bench/index.js), so that the RSS and heap of one implementation never pollute the other's.
 *
 *   node --expose-gc bench/worker.js '<json config>'
 *
 * Prints the result as one line `@@RESULT@@{json}` on stdout. Peak RSS is the kernel's high-water
 * mark (VmHWM) after resetting it (`echo 5 > /proc/self/clear_refs`) at the start of the measured
 * section, so short spikes between samples are never missed.
 */
const fs = require('fs');
const path = require('path');
const { monitorEventLoopDelay } = require('perf_hooks');

const cfg = JSON.parse(process.argv[2]);
const impl = cfg.impl === 'node' ? require('./node-terminal') : require(path.resolve(cfg.nativePath));
const { createTerminal } = impl;

const MiB = 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const yieldLoop = () => new Promise((r) => setImmediate(r));
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms

function procStatus() {
  const out = {};
  for (const line of fs.readFileSync('/proc/self/status', 'utf8').split('\n')) {
    const m = /^(VmRSS|VmHWM|Threads):\s+(\d+)/.exec(line);
    if (m) out[m[1]] = Number(m[2]) * (m[1] === 'Threads' ? 1 : 1024);
  }
  return out; // bytes (Threads: count)
}

function fdCount() {
  return fs.readdirSync('/proc/self/fd').length;
}

/** Voluntary + involuntary context switches summed over all threads (wakeups). */
function ctxSwitches() {
  let n = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const s = fs.readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      for (const m of s.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)/gm)) n += Number(m[1]);
    } catch {}
  }
  return n;
}

/**
 * Read calls and the bytes they returned, summed over the process's threads (`/proc/self/task/<tid>/io`:
 * `syscr`, `rchar`): the pipe's reads wherever they happen (the addon's reader threads, libuv's main
 * loop), plus a few of the process's own. The main thread is read last, so that this function's own
 * reads of the other threads' files are counted before the section it measures begins, not in it.
 */
function readCalls() {
  const tids = fs.readdirSync('/proc/self/task').sort((a, b) => (a === String(process.pid)) - (b === String(process.pid)));
  let calls = 0;
  let bytes = 0;
  for (const tid of tids) {
    try {
      const io = fs.readFileSync(`/proc/self/task/${tid}/io`, 'utf8');
      calls += Number(/^syscr:\s+(\d+)/m.exec(io)[1]);
      bytes += Number(/^rchar:\s+(\d+)/m.exec(io)[1]);
    } catch {}
  }
  return { calls, bytes };
}

/** utime+stime of the whole process from /proc/self/stat, in ms. */
function statCpuMs() {
  const s = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  // fields 14/15 overall -> index 11/12 after the comm field
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ = 100 on Linux
}

async function settleHeap() {
  for (let i = 0; i < 2; i++) {
    if (global.gc) global.gc();
    await sleep(20);
  }
}

/** Resets VmHWM to the current RSS and returns that baseline (bytes). */
function resetPeak() {
  fs.writeFileSync('/proc/self/clear_refs', '5');
  return procStatus().VmRSS;
}

function eld() {
  const h = monitorEventLoopDelay({ resolution: 1 });
  return {
    h,
    /**
     * The histogram records the time between its timer's ticks and drops the first interval
     * after enable(): a block right after enable() would be invisible. So wait for a few ticks
     * before the measured section starts.
     */
    async start() {
      h.reset();
      h.enable();
      await sleep(5);
    },
    stopMaxMs() {
      h.disable();
      return h.max / 1e6;
    },
  };
}

async function runOnce(command, extra = {}) {
  const t = await createTerminal({ command, ...extra });
  const st = await t.waitForExit();
  const o = await t.currentOutput();
  await t.release();
  return { st, o };
}

async function warmup() {
  for (let i = 0; i < 3; i++) await runOnce('true');
  await runOnce(`head -c ${4 * MiB} /dev/zero`, { outputByteLimit: MiB });
}

function describeMismatch(got, want) {
  if (typeof got !== 'string') return `output is ${typeof got}`;
  if (got.length !== want.length) return `length ${got.length} != expected ${want.length}`;
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== want[i]) return `first difference at char ${i}`;
  }
  return 'differs';
}

// ---------------------------------------------------------------------------------------------
const scenarios = {
  /** Flood N bytes through a 1 MiB tail until waitForExit(). */
  async flood() {
    const limit = cfg.limit;
    let expected;
    let command;
    if (cfg.file) {
      command = `cat ${cfg.file}`;
      const fd = fs.openSync(cfg.file, 'r');
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(limit);
      fs.readSync(fd, buf, 0, limit, size - limit);
      fs.closeSync(fd);
      let i = 0;
      while ((buf[i] & 0xc0) === 0x80) i++;
      expected = buf.subarray(i).toString('utf8');
    } else {
      command = `head -c ${cfg.bytes} /dev/zero`;
      expected = '\0'.repeat(limit);
    }
    await warmup();
    await settleHeap();
    const loop = eld();
    const base = resetPeak();
    const cpu0 = process.cpuUsage();
    await loop.start();
    const reads0 = readCalls();
    const t0 = now();
    const t = await createTerminal({ command, outputByteLimit: limit });
    // flood-listen: a UI's listener, decoding every chunk as it arrives.
    const heard = { bytes: 0, dropped: 0, calls: 0, largest: 0, longestMs: 0 };
    if (cfg.listen) {
      const decoder = new TextDecoder('utf-8');
      t.onOutput((chunk, info) => {
        const a = now();
        decoder.decode(chunk, { stream: true });
        heard.calls++;
        heard.bytes += chunk.length;
        heard.dropped += (info && info.dropped) || 0;
        heard.largest = Math.max(heard.largest, chunk.length);
        heard.longestMs = Math.max(heard.longestMs, now() - a);
      });
    }
    const st = await t.waitForExit();
    const t1 = now();
    const reads1 = readCalls();
    // The histogram records a block only when its next tick runs: one more tick, so that the turn
    // that reported the exit (and delivered what was pending to listeners) is counted too.
    await sleep(2);
    const eldMax = loop.stopMaxMs(); // the flood itself: create .. waitForExit()
    const cpu = process.cpuUsage(cpu0);
    const o = await t.currentOutput();
    const outputMs = now() - t1;
    const peak = procStatus().VmHWM;
    await t.release();
    const errors = [];
    if (st.exitCode !== 0) errors.push(`exit ${JSON.stringify(st)}`);
    if (o.truncated !== true) errors.push('truncated is not true');
    if (o.output !== expected) errors.push(`output is not the last <= 1 MiB: ${describeMismatch(o.output, expected)}`);
    // Every byte reaches the listener before the exit is reported (none dropped).
    if (cfg.listen && (heard.bytes !== cfg.bytes || heard.dropped)) errors.push(`listener at the exit: ${heard.bytes} bytes heard, ${heard.dropped} dropped, of ${cfg.bytes}`);
    return {
      ...(cfg.listen ? { heardBytes: heard.bytes, heardCalls: heard.calls, heardLargest: heard.largest, heardLongestMs: heard.longestMs } : {}),
      wallMs: t1 - t0,
      throughputMiBs: cfg.bytes / MiB / ((t1 - t0) / 1000),
      rssGrowthMiB: (peak - base) / MiB,
      eldMaxMs: eldMax,
      readCalls: reads1.calls - reads0.calls,
      readKiB: (reads1.bytes - reads0.bytes) / 1024 / Math.max(1, reads1.calls - reads0.calls),
      cpuMs: (cpu.user + cpu.system) / 1000,
      outputMs,
      ok: errors.length === 0,
      errors,
    };
  },

  /** create -> waitForExit -> currentOutput -> release of `true`, N times in a row. */
  async spawn() {
    let heapInfo = null;
    if (cfg.heapBytes) {
      const t0 = now();
      // Real live objects (small records in arrays), kept reachable from a global.
      const keep = [];
      global.__benchKeep = keep;
      let i = 0;
      while (process.memoryUsage().heapUsed < cfg.heapBytes) {
        const arr = new Array(1 << 16);
        for (let j = 0; j < arr.length; j++) arr[j] = { id: i++, v: j * 0.5, tag: null, next: null };
        keep.push(arr);
      }
      await settleHeap();
      const m = process.memoryUsage();
      heapInfo = { heapUsedMiB: m.heapUsed / MiB, rssMiB: m.rss / MiB, objects: i, allocMs: now() - t0 };
    }
    await warmup();
    await settleHeap();
    const reps = [];
    for (let r = 0; r < (cfg.inProcessReps || 1); r++) {
      const loop = eld();
      await loop.start();
      const times = [];
      const errors = [];
      const t0 = now();
      for (let i = 0; i < cfg.iterations; i++) {
        const a = now();
        const t = await createTerminal({ command: 'true' });
        const st = await t.waitForExit();
        const o = await t.currentOutput();
        await t.release();
        times.push(now() - a);
        if (st.exitCode !== 0 || o.output !== '') errors.push(`iteration ${i}: ${JSON.stringify(st)} ${JSON.stringify(o.output)}`);
      }
      const wall = now() - t0;
      times.sort((x, y) => x - y);
      reps.push({
        medianMs: times[times.length >> 1],
        p90Ms: times[Math.floor(times.length * 0.9)],
        wallMs: wall,
        eldMaxMs: loop.stopMaxMs(),
        ok: errors.length === 0,
        errors: errors.slice(0, 3),
        heap: heapInfo,
      });
    }
    return reps;
  },

  /** N terminals of `echo start; sleep 0.2; echo end` started at once. */
  async concurrent() {
    const n = cfg.count;
    await warmup();
    await settleHeap();
    const loop = eld();
    const base = resetPeak();
    const fds0 = fdCount();
    await loop.start();
    const t0 = now();
    const creates = [];
    for (let i = 0; i < n; i++) creates.push(createTerminal({ command: 'echo start; sleep 0.2; echo end' }));
    const createLoopMs = now() - t0; // JS-thread time of the n createTerminal() calls themselves
    const handles = await Promise.all(creates);
    const tCreated = now();
    const fdsPeak = fdCount();
    const errors = [];
    let correct = 0;
    await Promise.all(
      handles.map(async (t, i) => {
        const st = await t.waitForExit();
        const o = await t.currentOutput();
        await t.release();
        if (st.exitCode === 0 && st.signal === null && o.output === 'start\nend\n' && !o.truncated) correct++;
        else if (errors.length < 3) errors.push(`#${i}: ${JSON.stringify(st)} ${JSON.stringify(o.output)}`);
      }),
    );
    const t1 = now();
    const eldMax = loop.stopMaxMs();
    const peak = procStatus().VmHWM;
    return {
      wallMs: t1 - t0,
      createAllMs: tCreated - t0,
      createLoopMs,
      eldMaxMs: eldMax,
      rssGrowthMiB: (peak - base) / MiB,
      fdsPerTerminal: (fdsPeak - fds0) / n,
      correct,
      ok: correct === n,
      errors,
    };
  },

  /** currentOutput() in a loop while the command writes N bytes through a 1 MiB tail. */
  async poll() {
    const command = `head -c ${cfg.bytes} /dev/zero`;
    await warmup();
    await settleHeap();
    // Same command without polling: the producer's unhindered time with this implementation.
    const a0 = now();
    const t = await createTerminal({ command, outputByteLimit: cfg.limit });
    await t.waitForExit();
    const noPollMs = now() - a0;
    await t.release();
    await settleHeap();

    const loop = eld();
    await loop.start();
    const t0 = now();
    const p = await createTerminal({ command, outputByteLimit: cfg.limit });
    let done = false;
    const exited = p.waitForExit().then((st) => {
      done = true;
      return st;
    });
    let polls = 0;
    let lastLen = 0;
    let sane = true;
    const pollMs = [];
    while (!done) {
      const a = now();
      const o = await p.currentOutput();
      pollMs.push(now() - a);
      polls++;
      if (o.output.length > cfg.limit || o.output.length < lastLen) sane = false;
      lastLen = o.output.length;
      await yieldLoop(); // both implementations: one event-loop turn between polls
    }
    const st = await exited;
    const wall = now() - t0;
    const last = await p.currentOutput();
    const eldMax = loop.stopMaxMs();
    // Steady state: polls of an unchanged 1 MiB tail after the exit.
    const after = [];
    for (let i = 0; i < 50; i++) {
      const a = now();
      await p.currentOutput();
      after.push(now() - a);
      await yieldLoop();
    }
    pollMs.sort((x, y) => x - y);
    after.sort((x, y) => x - y);
    await p.release();
    const errors = [];
    if (!sane) errors.push('a poll returned more than the limit or shrank');
    if (st.exitCode !== 0) errors.push(`exit ${JSON.stringify(st)}`);
    if (last.output.length !== cfg.limit || !last.truncated) errors.push('final output is not the last 1 MiB');
    return {
      pollsPerSec: polls / (wall / 1000),
      polls,
      wallMs: wall,
      noPollMs,
      slowdown: wall / noPollMs,
      pollMedianMs: pollMs[pollMs.length >> 1],
      pollMaxMs: pollMs[pollMs.length - 1],
      pollAfterExitMs: after[after.length >> 1],
      eldMaxMs: eldMax,
      ok: errors.length === 0,
      errors,
    };
  },

  /** N live terminals of `sleep 30`: memory per terminal, CPU and wakeups while idle. */
  async idle() {
    const n = cfg.count;
    await warmup();
    await settleHeap();
    // The same idle measurement before any terminal exists: what Node itself costs.
    const idleCost = async () => {
      const cs0 = ctxSwitches();
      const cpu0 = process.cpuUsage();
      await sleep(cfg.intervalMs);
      const cpu = process.cpuUsage(cpu0);
      const cs1 = ctxSwitches();
      return { cpuMsPerSec: (cpu.user + cpu.system) / cfg.intervalMs, wakeupsPerSec: ((cs1 - cs0) * 1000) / cfg.intervalMs };
    };
    const baseline = await idleCost();
    await settleHeap();
    const base = procStatus();
    const fds0 = fdCount();
    const t0 = now();
    const creates = [];
    for (let i = 0; i < n; i++) creates.push(createTerminal({ command: 'sleep 30' }));
    const handles = await Promise.all(creates);
    const createMs = now() - t0;
    await sleep(cfg.settleMs);
    await settleHeap();
    await sleep(200);
    const during = procStatus();
    const fds1 = fdCount();
    // Probes outside the interval: only the one timer wakeup below falls inside it.
    const cs0 = ctxSwitches();
    const stat0 = statCpuMs();
    const cpu0 = process.cpuUsage();
    await sleep(cfg.intervalMs);
    const cpu = process.cpuUsage(cpu0);
    const stat1 = statCpuMs();
    const cs1 = ctxSwitches();
    const outputs = await Promise.all(handles.map((t) => t.currentOutput()));
    const running = outputs.filter((o) => !o.exitStatus).length;
    await Promise.all(handles.map((t) => t.kill()));
    const sts = await Promise.all(handles.map((t) => t.waitForExit()));
    for (const t of handles) await t.release();
    const errors = [];
    if (running !== n) errors.push(`${n - running} terminals were not running during the idle interval`);
    const notTerm = sts.filter((s) => s.signal !== 'SIGTERM').length;
    if (notTerm) errors.push(`${notTerm} terminals did not end by SIGTERM`);
    const secs = cfg.intervalMs / 1000;
    return {
      rssPerTermKiB: (during.VmRSS - base.VmRSS) / 1024 / n,
      cpuMsPerSec: (cpu.user + cpu.system) / 1000 / secs,
      baselineCpuMsPerSec: baseline.cpuMsPerSec,
      baselineWakeupsPerSec: baseline.wakeupsPerSec,
      statCpuMs: stat1 - stat0,
      wakeupsPerSec: (cs1 - cs0) / secs,
      threads: during.Threads,
      threadsBase: base.Threads,
      fdsPerTerminal: (fds1 - fds0) / n,
      createMs,
      ok: errors.length === 0,
      errors,
    };
  },

  /** N runs of "write 2 MB then exit": every byte must arrive. */
  async tail() {
    const expected = fs.readFileSync(cfg.file, 'latin1');
    const command = `head -c ${expected.length} ${cfg.file}`;
    await warmup();
    let lost = 0;
    let bad = 0;
    const errors = [];
    const times = [];
    let next = 0;
    const worker = async () => {
      while (next < cfg.runs) {
        const i = next++;
        const a = now();
        const t = await createTerminal({ command, outputByteLimit: 4 * MiB });
        const st = await t.waitForExit();
        const o = await t.currentOutput();
        await t.release();
        times.push(now() - a);
        if (o.output !== expected || st.exitCode !== 0 || o.truncated) {
          bad++;
          lost += Math.max(0, expected.length - Buffer.byteLength(o.output));
          if (errors.length < 3) errors.push(`run ${i}: got ${o.output.length} chars, exit ${JSON.stringify(st)}`);
        }
      }
    };
    const t0 = now();
    await Promise.all(Array.from({ length: cfg.concurrency }, worker));
    const wall = now() - t0;
    times.sort((x, y) => x - y);
    return {
      runs: cfg.runs,
      badRuns: bad,
      lostBytes: lost,
      medianMs: times[times.length >> 1],
      wallMs: wall,
      ok: bad === 0,
      errors,
    };
  },
};

(async () => {
  let result;
  try {
    result = await scenarios[cfg.kind]();
  } catch (err) {
    result = { ok: false, errors: [`worker error: ${err && err.stack ? err.stack : err}`], crashed: true };
  }
  process.stdout.write(`\n@@RESULT@@${JSON.stringify(result)}\n`);
  process.exit(0);
})();
