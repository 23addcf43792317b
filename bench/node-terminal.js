'use strict';
/**
 * A careful pure-Node implementation of the acp-terminal API on `child_process`, used by the
 * benchmark as the fair comparison point. Same shape as the native core:
 *
 *   createTerminal(params, options?) -> Promise<TerminalHandle>
 *   handle.currentOutput() / waitForExit() / kill() / release() / onOutput() / [Symbol.asyncDispose]
 *
 * What makes it "careful" (each point is something the naive recipe gets wrong):
 * - Shell rule: no args (or empty args) -> `/bin/sh -c command`; with args -> exec directly.
 * - stdin is /dev/null ('ignore').
 * - stdout and stderr are ONE stream, in order: both child fds are dups of the same connected
 *   Unix stream socket (what libuv itself uses for stdio 'pipe' is a socketpair, so this is the
 *   same kind of channel Node gives a child by default). Node has no pipe(2)/socketpair(2) API,
 *   so the parent connects a socket to a shared private listener, tags the connection with a
 *   token, passes the connecting end to the child as fd 1 and fd 2, and closes its own copy; the
 *   accepted end is the reader. No `exec 2>&1` wrapper shell, no extra process.
 * - Output stays as Buffer chunks; a tail of at most `outputByteLimit` bytes is kept (chunks
 *   dropped / sliced from the front); `truncated` is sticky; the cut is moved forward to a UTF-8
 *   character boundary and decoding happens only in currentOutput() (cached until new bytes
 *   arrive), so multi-byte characters split across reads are never mangled.
 * - The child gets its own session/process group (`detached`); kill() sends SIGTERM to the group
 *   and SIGKILL after `killGraceMs` (default 2000) if it is still alive.
 * - Exit is reported only after the output stream reached EOF, with a bounded drain: after the
 *   leader exited we wait for EOF as long as data keeps arriving (idle limit 100 ms, hard cap 2 s,
 *   both checked only after a poll phase so a blocked event loop cannot cut the output short),
 *   so a grandchild that keeps the pipe open cannot hang waitForExit().
 * - kill() resolves once the command exited; release() kills if running and frees the buffers;
 *   every later call except release() rejects with code 'ERR_TERMINAL_RELEASED'.
 */

const { spawn } = require('child_process');
const net = require('net');
const fs = require('fs');
const path = require('path');
const os = require('os');

const DEFAULT_KILL_GRACE_MS = 2000;
const DRAIN_IDLE_MS = 100;
const DRAIN_MAX_MS = 2000;
const TOKEN_LEN = 16;

function codedError(code, message) {
  const err = new Error(message);
  err.code = code;
  return err;
}

function hasNul(s) {
  return typeof s === 'string' && s.indexOf('\0') !== -1;
}

// ---------------------------------------------------------------------------------------------
// The merged-output channel: one shared listener, one connection per terminal.
// ---------------------------------------------------------------------------------------------
let listener = null; // { server, path, ready: Promise<string>, waiting: Map<token, fn> }
let tokenCounter = 0;
const tokenPrefix = (process.pid.toString(36) + 'xxxxxxxx').slice(0, 8);

function getListener() {
  if (listener) return listener.ready;
  const waiting = new Map();
  // Abstract-namespace socket on Linux: nothing on disk to clean up; a file elsewhere.
  const sockPath =
    process.platform === 'linux'
      ? `\0acp-terminal-bench-${process.pid}-${Math.random().toString(36).slice(2)}`
      : path.join(os.tmpdir(), `acp-terminal-bench-${process.pid}-${Math.random().toString(36).slice(2)}.sock`);
  const server = net.createServer({ pauseOnConnect: false }, (sock) => {
    // The first TOKEN_LEN bytes name the terminal; everything after is the child's output.
    let head = Buffer.alloc(0);
    const onData = (buf) => {
      head = head.length ? Buffer.concat([head, buf]) : buf;
      if (head.length < TOKEN_LEN) return;
      sock.pause();
      sock.removeListener('data', onData);
      sock.removeListener('error', onEarlyError);
      const token = head.subarray(0, TOKEN_LEN).toString('latin1');
      const rest = head.length > TOKEN_LEN ? head.subarray(TOKEN_LEN) : null;
      const fn = waiting.get(token);
      if (!fn) {
        sock.destroy();
        return;
      }
      waiting.delete(token);
      fn(sock, rest);
    };
    const onEarlyError = () => sock.destroy();
    sock.on('data', onData);
    sock.on('error', onEarlyError);
  });
  server.unref();
  const ready = new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ path: sockPath, backlog: 4096 }, () => {
      server.removeListener('error', reject);
      resolve(sockPath);
    });
  });
  listener = { server, path: sockPath, ready, waiting };
  if (!sockPath.startsWith('\0')) {
    process.once('exit', () => {
      try {
        fs.unlinkSync(sockPath);
      } catch {}
    });
  }
  return ready;
}

/** Connects a new socket and tags it. Resolves { writeEnd: net.Socket, readEnd: Promise<[sock, rest]> }. */
async function openChannel() {
  const sockPath = await getListener();
  const token = (tokenPrefix + (tokenCounter++).toString(36).padStart(8, '0')).slice(0, TOKEN_LEN);
  let resolveRead;
  const readEnd = new Promise((r) => (resolveRead = r));
  listener.waiting.set(token, (sock, rest) => resolveRead([sock, rest]));
  for (let attempt = 0; ; attempt++) {
    try {
      const writeEnd = await new Promise((resolve, reject) => {
        const c = net.connect(sockPath);
        c.once('error', reject);
        c.once('connect', () => {
          c.removeListener('error', reject);
          c.pause();
          c.write(token, 'latin1', (err) => (err ? reject(err) : resolve(c)));
        });
      });
      return { writeEnd, readEnd, token };
    } catch (err) {
      // A full accept backlog gives EAGAIN on a non-blocking Unix connect: retry.
      if ((err.code === 'EAGAIN' || err.code === 'ECONNREFUSED') && attempt < 200) {
        await new Promise((r) => setTimeout(r, Math.min(1 + attempt, 20)));
        continue;
      }
      listener.waiting.delete(token);
      throw err;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The retained tail.
// ---------------------------------------------------------------------------------------------
class Tail {
  constructor(limit) {
    this.limit = limit; // Infinity when unbounded
    this.chunks = [];
    this.head = 0; // index of the first live chunk
    this.size = 0; // bytes retained
    this.total = 0; // bytes ever received
    this.truncated = false;
  }

  push(buf) {
    const len = buf.length;
    if (len === 0) return;
    this.total += len;
    const limit = this.limit;
    if (limit === Infinity) {
      this.chunks.push(buf);
      this.size += len;
      return;
    }
    if (len >= limit) {
      // This chunk alone fills the window.
      if (this.size > 0 || len > limit) this.truncated = true;
      this.chunks = limit > 0 ? [buf.subarray(len - limit)] : [];
      this.head = 0;
      this.size = limit;
      return;
    }
    this.chunks.push(buf);
    this.size += len;
    let excess = this.size - limit;
    if (excess > 0) {
      this.truncated = true;
      const chunks = this.chunks;
      while (excess > 0) {
        const first = chunks[this.head];
        if (first.length <= excess) {
          chunks[this.head++] = undefined;
          this.size -= first.length;
          excess -= first.length;
        } else {
          chunks[this.head] = first.subarray(excess);
          this.size -= excess;
          excess = 0;
        }
      }
      if (this.head > 64 && this.head * 2 > chunks.length) {
        this.chunks = chunks.slice(this.head);
        this.head = 0;
      }
    }
  }

  /** Retained bytes as one Buffer (the cut moved to a UTF-8 boundary when bytes were dropped). */
  bytes() {
    let buf;
    const n = this.chunks.length - this.head;
    if (n === 0) buf = Buffer.alloc(0);
    else if (n === 1) buf = this.chunks[this.head];
    else buf = Buffer.concat(this.head ? this.chunks.slice(this.head) : this.chunks, this.size);
    if (this.truncated) {
      let i = 0;
      while (i < 3 && i < buf.length && (buf[i] & 0xc0) === 0x80) i++;
      if (i) buf = buf.subarray(i);
    }
    return buf;
  }

  clear() {
    this.chunks = [];
    this.head = 0;
    this.size = 0;
  }
}

/** Length of `buf` without an incomplete UTF-8 sequence at its end. */
function completeUtf8Length(buf) {
  const len = buf.length;
  for (let back = 1; back <= 3 && back <= len; back++) {
    const b = buf[len - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back
    let need;
    if (b < 0x80) need = 1;
    else if ((b & 0xe0) === 0xc0) need = 2;
    else if ((b & 0xf0) === 0xe0) need = 3;
    else if ((b & 0xf8) === 0xf0) need = 4;
    else return len; // invalid lead byte: decode lossily
    return need > back ? len - back : len;
  }
  return len;
}

// ---------------------------------------------------------------------------------------------
// Registry: kill every live group when Node exits.
// ---------------------------------------------------------------------------------------------
const live = new Set();
let exitHookInstalled = false;
function register(state) {
  live.add(state);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const s of live) signalGroup(s, 'SIGKILL');
    });
  }
}

function signalGroup(state, sig) {
  if (!state.pid) return;
  try {
    process.kill(-state.pid, sig);
  } catch {
    // ESRCH: the group is gone.
  }
}

let idCounter = 0;

class TerminalHandle {
  constructor(state) {
    this._s = state;
    this.id = state.id;
    this.sessionId = state.sessionId;
    this.pid = state.pid;
  }

  _check() {
    if (this._s.released) {
      return Promise.reject(codedError('ERR_TERMINAL_RELEASED', `terminal ${this.id} was released`));
    }
    return null;
  }

  currentOutput() {
    const rej = this._check();
    if (rej) return rej;
    const s = this._s;
    const done = s.exitStatus !== null;
    if (s.cache === null || s.cacheTotal !== s.tail.total || s.cacheDone !== done) {
      let buf = s.tail.bytes();
      if (!done) {
        const n = completeUtf8Length(buf);
        if (n !== buf.length) buf = buf.subarray(0, n);
      }
      s.cache = buf.toString('utf8');
      s.cacheTotal = s.tail.total;
      s.cacheDone = done;
    }
    const res = { output: s.cache, truncated: s.tail.truncated };
    if (done) res.exitStatus = { exitCode: s.exitStatus.exitCode, signal: s.exitStatus.signal };
    return Promise.resolve(res);
  }

  waitForExit() {
    const rej = this._check();
    if (rej) return rej;
    return this._s.exited.then((st) => ({ exitCode: st.exitCode, signal: st.signal }));
  }

  /** SIGTERM to the group (SIGKILL after the grace); resolves once the command exited. */
  kill() {
    const rej = this._check();
    if (rej) return rej;
    killState(this._s);
    return this._s.exited.then(() => ({}));
  }

  /** Kills if running and frees the output; a second release resolves (like the native core). */
  release() {
    const s = this._s;
    if (s.released) return Promise.resolve({});
    s.released = true;
    if (s.exitStatus === null) killState(s);
    s.listeners.clear();
    s.tail.clear();
    s.cache = null;
    // The reader stays open until exit (so the drain and the exit promise still complete); the
    // retained tail is already freed and nothing more is kept.
    s.tail.limit = 0;
    return Promise.resolve({});
  }

  async [Symbol.asyncDispose]() {
    if (!this._s.released) await this.release();
  }

  onOutput(listener) {
    const s = this._s;
    if (s.released) throw codedError('ERR_TERMINAL_RELEASED', `terminal ${this.id} was released`);
    s.listeners.add(listener);
    return () => s.listeners.delete(listener);
  }
}

function killState(s) {
  if (s.exitStatus !== null) return; // fully finished: nothing to stop
  signalGroup(s, 'SIGTERM');
  if (!s.killTimer) {
    s.killTimer = setTimeout(() => {
      if (s.exitStatus === null || !s.readerEnded) signalGroup(s, 'SIGKILL');
    }, s.killGraceMs);
    s.killTimer.unref();
  }
}

async function createTerminal(params, options = {}) {
  if (!params || typeof params !== 'object') throw codedError('ERR_INVALID_ARG', 'params must be an object');
  const { command } = params;
  if (typeof command !== 'string' || command.length === 0) {
    throw codedError('ERR_INVALID_ARG', 'command must be a non-empty string');
  }
  if (hasNul(command)) throw codedError('ERR_INVALID_ARG', 'command contains a NUL byte');
  const args = params.args == null ? [] : params.args;
  if (!Array.isArray(args)) throw codedError('ERR_INVALID_ARG', 'args must be an array of strings');
  args.forEach((a, i) => {
    if (typeof a !== 'string') throw codedError('ERR_INVALID_ARG', `args[${i}] must be a string`);
    if (hasNul(a)) throw codedError('ERR_INVALID_ARG', `args[${i}] contains a NUL byte`);
  });
  let limit = Infinity;
  if (params.outputByteLimit != null) {
    const l = params.outputByteLimit;
    if (typeof l !== 'number' || !Number.isSafeInteger(l) || l < 0) {
      throw codedError('ERR_INVALID_ARG', 'outputByteLimit must be a non-negative integer');
    }
    limit = l;
  }
  const inheritEnv = options.inheritEnv !== false;
  const env = inheritEnv ? { ...process.env } : {};
  if (params.env != null) {
    if (!Array.isArray(params.env)) throw codedError('ERR_INVALID_ARG', 'env must be an array');
    params.env.forEach((e, i) => {
      if (!e || typeof e.name !== 'string' || typeof e.value !== 'string') {
        throw codedError('ERR_INVALID_ARG', `env[${i}] must be { name, value } strings`);
      }
      if (e.name === '' || e.name.includes('=') || hasNul(e.name)) {
        throw codedError('ERR_INVALID_ARG', `env[${i}].name is not a valid variable name`);
      }
      if (hasNul(e.value)) throw codedError('ERR_INVALID_ARG', `env[${i}].value contains a NUL byte`);
      env[e.name] = e.value;
    });
  }
  let cwd;
  if (params.cwd != null) {
    cwd = params.cwd;
    if (typeof cwd !== 'string' || !path.isAbsolute(cwd) || hasNul(cwd)) {
      throw codedError('ERR_INVALID_CWD', `cwd must be an absolute path: ${cwd}`);
    }
    let st;
    try {
      st = await fs.promises.stat(cwd);
    } catch {
      throw codedError('ERR_INVALID_CWD', `cwd does not exist: ${cwd}`);
    }
    if (!st.isDirectory()) throw codedError('ERR_INVALID_CWD', `cwd is not a directory: ${cwd}`);
  }
  const shell = options.shell === undefined ? '/bin/sh' : options.shell;
  let file;
  let argv;
  if (args.length === 0 && shell !== false) {
    file = shell;
    argv = ['-c', command];
  } else {
    file = command;
    argv = args;
  }
  const killGraceMs = options.killGraceMs == null ? DEFAULT_KILL_GRACE_MS : options.killGraceMs;

  const { writeEnd, readEnd, token } = await openChannel();
  let child;
  try {
    child = spawn(file, argv, {
      stdio: ['ignore', writeEnd, writeEnd],
      detached: true,
      env,
      cwd,
      windowsHide: true,
    });
  } catch (err) {
    writeEnd.destroy();
    listener.waiting.delete(token);
    readEnd.then(([sock]) => sock.destroy());
    throw err;
  }
  // Our copy of the write end must go, or EOF never comes.
  writeEnd.destroy();

  await new Promise((resolve, reject) => {
    const onError = (err) => {
      child.removeListener('spawn', onSpawn);
      listener.waiting.delete(token);
      readEnd.then(([sock]) => sock.destroy());
      const e = codedError(err.code || 'ERR_SPAWN', `command: failed to start ${JSON.stringify(file)}: ${err.message}`);
      if (err.code === 'ENOENT') e.message = `command not found: ${JSON.stringify(file)}`;
      reject(e);
    };
    const onSpawn = () => {
      child.removeListener('error', onError);
      resolve();
    };
    child.once('error', onError);
    child.once('spawn', onSpawn);
  });

  let resolveExited;
  const state = {
    id: `term_${process.pid.toString(36)}_${(idCounter++).toString(36)}`,
    sessionId: params.sessionId || '',
    pid: child.pid,
    tail: new Tail(limit),
    listeners: new Set(),
    exitStatus: null, // set only after exit AND drain
    leaderStatus: null,
    readerEnded: false,
    released: false,
    killTimer: null,
    killGraceMs,
    cache: null,
    cacheTotal: -1,
    cacheDone: false,
    exited: new Promise((r) => (resolveExited = r)),
  };
  register(state);

  let reader = null;
  let drainTimer = null;
  let exitAt = 0;

  const finish = () => {
    if (state.exitStatus !== null) return;
    if (drainTimer) clearTimeout(drainTimer);
    state.exitStatus = state.leaderStatus;
    live.delete(state);
    if (reader && !state.readerEnded) {
      // Drain bound hit: something (a grandchild) still holds the pipe; stop reading.
      state.readerEnded = true;
      reader.destroy();
    }
    if (state.killTimer && state.readerEnded) {
      clearTimeout(state.killTimer);
      state.killTimer = null;
    }
    resolveExited(state.exitStatus);
  };

  // Bounded drain after the leader exited. A timer alone is not enough: when the event loop was
  // blocked (e.g. by other spawns), an expired timer runs before the poll phase that would read
  // the pending bytes and the EOF. So a timer only schedules a check in the next check phase
  // (setImmediate), i.e. after one poll phase, and the drain ends only when the reader is attached
  // and that poll phase brought no new bytes (or the hard cap passed).
  const armDrain = () => {
    const seen = state.tail.total;
    drainTimer = setTimeout(() => {
      drainTimer = null;
      setImmediate(() => {
        if (state.exitStatus !== null || state.readerEnded) return;
        const capped = Date.now() - exitAt >= DRAIN_MAX_MS;
        if (reader && (capped || state.tail.total === seen)) finish();
        else armDrain();
      });
    }, DRAIN_IDLE_MS);
  };

  const onChunk = (buf) => {
    state.tail.push(buf);
    if (state.listeners.size) {
      for (const l of state.listeners) {
        try {
          l(buf);
        } catch (err) {
          process.nextTick(() => {
            throw err;
          });
        }
      }
    }
  };

  const onEnd = () => {
    if (state.readerEnded) return;
    state.readerEnded = true;
    if (state.leaderStatus !== null) finish();
  };

  child.once('exit', (code, signal) => {
    state.leaderStatus = { exitCode: signal ? null : code, signal: signal || null };
    if (state.readerEnded) return finish();
    exitAt = Date.now();
    armDrain();
  });

  readEnd.then(([sock, rest]) => {
    reader = sock;
    if (state.exitStatus !== null && !state.readerEnded) {
      // Finished (drain bound) before the reader even arrived.
      state.readerEnded = true;
      sock.destroy();
      return;
    }
    if (rest) onChunk(rest);
    sock.on('data', onChunk);
    sock.on('end', onEnd);
    sock.on('close', onEnd);
    sock.on('error', onEnd);
    sock.resume();
  });

  return new TerminalHandle(state);
}

module.exports = { createTerminal, TerminalHandle, _Tail: Tail, _completeUtf8Length: completeUtf8Length };
