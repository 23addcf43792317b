/**
 * What a host's policy asks about the far end of a backend (`TerminalHost({ backend })`): its `PATH`,
 * working directory and environment, where a program is found, a file's real path, whether a cwd lies
 * inside the allowed roots. All are answered by the far end (its `lookup` request: its PATH, its file
 * system), and judged on the near side before anything starts there.
 *
 * Invariants:
 * - Nothing about the far end is read on this machine: no local PATH, realpath or cwd check leaks in.
 * - The policy's checks are synchronous; {@link FarEnd.judge} runs one against answers fetched ahead
 *   and runs it again with what it asked for and was missing, until it asked for nothing new. Only a
 *   run with every answer known counts.
 */

import { AcpTerminalError } from '../errors';
import type { EnvVariable, ResolveProgramFn, ResolveProgramOptions } from '../types';
import { RemoteError } from './connection';

/** A `lookup` request (see `src/server/lookup.rs`). */
export interface LookupRequest {
  programs?: { command: string; cwd?: string; path?: string }[];
  realPaths?: string[];
  roots?: string[];
  cwd?: string;
  env?: boolean;
}

/** The far end's answer to a `lookup`. */
export interface LookupResult {
  /** The server's `PATH` (null: unset). */
  path: string | null;
  /** The server's working directory (the default cwd of a command). */
  cwd: string;
  programs: ({ path: string } | { error: { code: string; message: string; details?: Record<string, unknown> } })[];
  realPaths: (string | null)[];
  roots: string[];
  cwdInRoots?: { resolved: string; inside: boolean } | { error: { code: string; message: string; details?: Record<string, unknown> } };
  env?: EnvVariable[];
}

/** What a host needs of a backend: terminals at the far end and answers about it. */
export interface LookupBackend {
  /** Answers a {@link LookupRequest} at the far end. */
  lookup(request: LookupRequest): Promise<LookupResult>;
}

/** The far end's standing facts, fetched once per host. */
export interface FarFacts {
  /** Its `PATH` (undefined: unset). */
  path: string | undefined;
  /** The server's working directory. */
  cwd: string;
  /** Its environment (what a command inherits). */
  env: NodeJS.ProcessEnv;
}

/** Most rounds {@link FarEnd.judge} makes (each asks for what the previous one found it needed). */
const MAX_ROUNDS = 8;

function remoteError(e: { code: string; message: string; details?: Record<string, unknown> }): RemoteError {
  return new RemoteError(e.code, e.message, e.details ?? {});
}

/** The far end of one backend, as a host's policy sees it. */
export class FarEnd {
  private facts: Promise<FarFacts> | undefined;

  constructor(private readonly backend: LookupBackend) {}

  /** The far end's PATH, cwd and environment (asked once; asked again after a failure). */
  standing(): Promise<FarFacts> {
    if (!this.facts) {
      const p = this.backend.lookup({ env: true }).then((r) => ({
        path: r.path ?? undefined,
        cwd: r.cwd,
        env: Object.fromEntries((r.env ?? []).map((e) => [e.name, e.value])),
      }));
      this.facts = p;
      p.catch(() => {
        if (this.facts === p) this.facts = undefined;
      });
    }
    return this.facts;
  }

  /** `roots` resolved at the far end as `allowedRoots` are (`ERR_INVALID_ARG` naming `field[i]`). */
  async roots(roots: readonly string[], field: string): Promise<string[]> {
    try {
      return (await this.backend.lookup({ roots: [...roots] })).roots;
    } catch (e) {
      const m = /^roots\[(\d+)\]/.exec((e as Error).message);
      if ((e as { code?: string }).code === 'ERR_INVALID_ARG' && m) {
        throw new AcpTerminalError('ERR_INVALID_ARG', `${field}[${m[1]}]${(e as Error).message.slice(m[0].length)} (at the far end)`, {
          field: `${field}[${m[1]}]`,
        });
      }
      throw e;
    }
  }

  /**
   * `cwd` resolved at the far end and checked against `roots` (canonical) by the core's rule: the
   * canonical directory, or `ERR_INVALID_CWD` / `ERR_CWD_OUTSIDE_ROOTS` as `resolveCwdInRoots` throws them.
   */
  async cwdInRoots(cwd: string, roots: readonly string[]): Promise<string> {
    const r = (await this.backend.lookup({ roots: [...roots], cwd })).cwdInRoots;
    if (!r) throw new AcpTerminalError('ERR_INVALID_CWD', `cwd: the far end did not check ${JSON.stringify(cwd)}`, { field: 'cwd', cwd });
    if ('error' in r) {
      const code = r.error.code === 'ERR_INVALID_ARG' ? 'ERR_INVALID_ARG' : 'ERR_INVALID_CWD';
      throw new AcpTerminalError(code, r.error.message, { field: 'cwd', cwd });
    }
    if (!r.inside) {
      const shown = r.resolved === cwd ? JSON.stringify(cwd) : `${JSON.stringify(cwd)} (resolved: ${JSON.stringify(r.resolved)})`;
      throw new AcpTerminalError(
        'ERR_CWD_OUTSIDE_ROOTS',
        `cwd: ${shown} is outside the directories this client allows (${roots.map((x) => JSON.stringify(x)).join(', ')})`,
        { field: 'cwd', cwd, resolved: r.resolved, allowedRoots: [...roots] },
      );
    }
    return r.resolved;
  }

  /**
   * Runs the synchronous check `run` with a `resolveProgram` and a `realPath` answered by the far end:
   * what a run asks for and is not known yet is fetched in one `lookup`, and the check runs again, until
   * a run asks for nothing new; that run's result (or error) is the answer.
   */
  async judge<T>(
    defaults: { path: string | undefined; cwd: string },
    run: (resolve: ResolveProgramFn, realPath: (file: string) => string | undefined) => T,
  ): Promise<T> {
    // Answers hold for this check only: the far end's files may change before the next one.
    const programs = new Map<string, { path: string } | { error: RemoteError }>();
    const reals = new Map<string, string | undefined>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const wantPrograms = new Map<string, { command: string; cwd?: string; path?: string }>();
      const wantReals = new Set<string>();
      const resolve: ResolveProgramFn = (command: string, options?: ResolveProgramOptions) => {
        const cwd = options?.cwd ?? defaults.cwd;
        const path = options?.path ?? defaults.path;
        const key = `${cwd}\0${path ?? ''}\0${command}`;
        const known = programs.get(key);
        if (known && 'path' in known) return known.path;
        if (known) throw known.error;
        wantPrograms.set(key, { command, cwd, ...(path !== undefined ? { path } : {}) });
        throw new RemoteError('ENOENT', `command \`${command}\` is being looked up at the far end`);
      };
      const realPath = (file: string): string | undefined => {
        if (reals.has(file)) return reals.get(file);
        wantReals.add(file);
        return undefined;
      };
      let result: { ok: T } | { error: unknown };
      try {
        result = { ok: run(resolve, realPath) };
      } catch (error) {
        result = { error };
      }
      if (wantPrograms.size === 0 && wantReals.size === 0) {
        if ('ok' in result) return result.ok;
        throw result.error;
      }
      const keys = [...wantPrograms.keys()];
      const files = [...wantReals];
      const r = await this.backend.lookup({ programs: [...wantPrograms.values()], realPaths: files });
      keys.forEach((k, i) => {
        const p = r.programs[i];
        programs.set(k, p && 'path' in p ? { path: p.path } : { error: remoteError(p?.error ?? { code: 'ENOENT', message: 'not found' }) });
      });
      files.forEach((f, i) => reals.set(f, r.realPaths[i] ?? undefined));
    }
    throw new AcpTerminalError('ERR_INVALID_ARG', 'command: the far end lookups did not settle (the line names too many programs)');
  }
}
