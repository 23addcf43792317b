// The cwd check against a swap, through TerminalHost and the native core: the checked cwd is swapped (renameat2
// RENAME_EXCHANGE, in a loop) with a symlink to a directory outside `allowedRoots` while terminals are
// created in it. The host's own realpath check is done before the policy and the approval, so the swap
// can land between it and the spawn; the core (given `allowedRoots`) checks the directory it opens and
// starts the command in that very directory. No command may start outside the root, and the audit
// `created` event must name the directory the command really got. The swap is made at the worst moment
// (from `approve`, which runs after the host's check) and then, raced, 1,000 times.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TerminalAuditEvent } from '../ts/events';
import { TerminalHost } from '../ts/host';
import { startSwapper } from './fixtures/cwd-swapper';

const S = 'race';
let base: string;

beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-host-cwd-race-'));
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe('the cwd is replaced after the host checked it (from approve, which runs after the check)', () => {
  let root: string;
  let outside: string;
  let events: TerminalAuditEvent[];
  let swap: (() => void) | undefined;
  let host: TerminalHost;

  beforeEach(() => {
    const dir = fs.mkdtempSync(path.join(base, 'approve-'));
    root = path.join(dir, 'root');
    outside = path.join(dir, 'outside');
    fs.mkdirSync(path.join(root, 'work'), { recursive: true });
    fs.mkdirSync(path.join(root, 'other'));
    fs.mkdirSync(outside);
    root = fs.realpathSync(root);
    outside = fs.realpathSync(outside);
    events = [];
    swap = undefined;
    host = new TerminalHost({
      allowedRoots: [root],
      onEvent: (e) => void events.push(e),
      approve: () => {
        swap?.();
        return true;
      },
    });
  });
  afterEach(() => host.close());

  /** Moves `root/work` away and puts a symlink to `target` in its place. */
  const replaceWorkWithLinkTo = (target: string) => () => {
    fs.renameSync(path.join(root, 'work'), path.join(root, 'moved'));
    fs.symlinkSync(target, path.join(root, 'work'));
  };

  test('by a symlink to outside: ERR_CWD_OUTSIDE_ROOTS from the core, nothing runs, a denied event', async () => {
    swap = replaceWorkWithLinkTo(outside);
    const err = await host.createTerminal({ sessionId: S, command: 'touch ran', cwd: path.join(root, 'work') }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_CWD_OUTSIDE_ROOTS', message: expect.stringContaining('options.allowedRoots') });
    expect(fs.existsSync(path.join(outside, 'ran'))).toBe(false);
    expect(events.map((e) => e.type)).toEqual(['denied']);
  });

  test('by a symlink to another directory inside: it runs there, and the created event says so', async () => {
    swap = replaceWorkWithLinkTo(path.join(root, 'other'));
    const { terminalId } = await host.createTerminal({ sessionId: S, command: 'pwd -P', cwd: path.join(root, 'work') });
    await host.waitForTerminalExit({ sessionId: S, terminalId });
    const ranIn = (await host.terminalOutput({ sessionId: S, terminalId })).output.trim();
    expect(ranIn).toBe(path.join(root, 'other'));
    expect(events[0]).toMatchObject({ type: 'created', terminalId, cwd: ranIn });
  });
});

test('1,000 swaps of the checked directory with a symlink to outside: 0 escapes, the audit cwd is the real one', async () => {
  const root = path.join(base, 'root');
  const work = path.join(root, 'work');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(root, 'link'));
  const realRoot = fs.realpathSync(root);
  const inside = fs.statSync(work).ino;
  const outsideIno = fs.statSync(outside).ino;
  // The only names the inside directory ever has.
  const namesOfInside = [path.join(realRoot, 'work'), path.join(realRoot, 'link')];

  const events: TerminalAuditEvent[] = [];
  const host = new TerminalHost({ allowedRoots: [root], onEvent: (e) => void events.push(e) });
  const swapper = await startSwapper(work, path.join(root, 'link'));
  let started = 0;
  let refusedByHost = 0; // the host's realpath saw the symlink
  let refusedByCore = 0; // the host's check passed, the swap came before the spawn: the core refused
  const escapes: string[] = [];
  const auditMismatches: string[] = [];
  try {
    // At least 1,000 creates; then go on (bounded) until the race was really run: under load the
    // swapper can be starved long enough that no create lands between the host's check and the spawn.
    const attempts = (): number => started + refusedByHost + refusedByCore;
    while (attempts() < 1000 || ((started < 50 || refusedByCore === 0) && attempts() < 50_000)) {
      let terminalId: string;
      try {
        ({ terminalId } = await host.createTerminal({ sessionId: S, command: 'stat -c %i .', cwd: work }));
      } catch (e) {
        const { code, message } = e as { code: string; message: string };
        expect(['ERR_CWD_OUTSIDE_ROOTS', 'ERR_INVALID_CWD']).toContain(code);
        if (/options\.allowedRoots/.test(message)) refusedByCore++;
        else refusedByHost++;
        continue;
      }
      await host.waitForTerminalExit({ sessionId: S, terminalId });
      // The directory is identified by its inode: its name changes with every swap (it is `work` or
      // `link` in turn), so a path read later may name it differently than the path read at spawn.
      const ranIn = Number((await host.terminalOutput({ sessionId: S, terminalId })).output.trim());
      if (ranIn !== inside) escapes.push(ranIn === outsideIno ? 'outside' : `inode ${ranIn}`);
      const created = events.find((e) => e.type === 'created' && e.terminalId === terminalId);
      const audited = created?.type === 'created' ? created.cwd : undefined;
      if (audited === undefined || !namesOfInside.includes(audited)) auditMismatches.push(`audited as ${audited}`);
      started++;
      await host.releaseTerminal({ sessionId: S, terminalId });
    }
  } finally {
    swapper.kill('SIGKILL');
    await host.close();
  }
  expect(escapes).toEqual([]);
  expect(auditMismatches).toEqual([]);
  expect(started).toBeGreaterThan(0);
  expect(refusedByHost).toBeGreaterThan(0);
  // The race between the host's check and the spawn was really run (and lost by the attacker).
  expect(refusedByCore).toBeGreaterThan(0);
  // Every refusal is audited (a denial, or a failure for a cwd that could not be resolved).
  expect(events.filter((e) => e.type === 'denied' || e.type === 'failed')).toHaveLength(refusedByHost + refusedByCore);
}, 300_000);
