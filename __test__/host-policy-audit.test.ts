// TerminalHost policy: the user's approval and the audit stream (approve, onEvent), on the scripted fake
// backend with a real temporary tree (fixtures/policy-host.ts).
import * as path from 'node:path';
import type { ApprovalRequest, TerminalHost } from '../ts/host';
import { backend, bin, events, failure, newHost, outside, root, S, usePolicyFixtures } from './fixtures/policy-host';

let host: TerminalHost;

usePolicyFixtures();

beforeEach(() => {
  host = newHost();
});

describe('approve', () => {
  test('sees the request as it will run, and nothing runs before it answers true', async () => {
    const asked: ApprovalRequest[] = [];
    let answer!: (ok: boolean) => void;
    host = newHost({
      allowedRoots: [root],
      env: { PATH: `${bin}:/usr/bin:/bin` },
      approve: (r) => {
        asked.push(r);
        return new Promise<boolean>((res) => (answer = res));
      },
    });
    const creating = host.createTerminal({
      sessionId: S,
      command: 'build',
      args: ['--fast'],
      cwd: path.join(outside, 'into-root'),
      env: [{ name: 'MODE', value: 'fast' }],
    });
    let settled = false;
    creating.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (asked.length === 0 && !settled) await new Promise((r) => setImmediate(r));
    expect(backend.terminals).toHaveLength(0);
    expect(asked[0]).toMatchObject({
      sessionId: S,
      command: 'build',
      args: ['--fast'],
      cwd: path.join(root, 'sub'),
      env: [
        { name: 'PATH', value: `${bin}:/usr/bin:/bin` },
        { name: 'MODE', value: 'fast' },
      ],
      program: path.join(bin, 'build'),
      commands: [expect.objectContaining({ word: 'build', path: path.join(bin, 'build') })],
    });
    answer(true);
    await expect(creating).resolves.toHaveProperty('terminalId');
    expect(backend.terminals).toHaveLength(1);
  });

  test.each([
    ['false', () => false],
    ['a truthy non-boolean', () => 'yes' as unknown as boolean],
  ])('%s refuses with ERR_NOT_APPROVED and a denied event', async (_what, approve) => {
    host = newHost({ approve });
    const err = await failure(host.createTerminal({ sessionId: S, command: 'ls' }));
    expect(err.code).toBe('ERR_NOT_APPROVED');
    expect(err.message).toMatch(/not approved by the user/);
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_NOT_APPROVED' })]);
  });

  test('is not asked when the policy already refused', async () => {
    const approve = jest.fn(() => true);
    host = newHost({ approve, commandPolicy: { deny: ['rm'] } });
    await expect(host.createTerminal({ sessionId: S, command: 'rm x' })).rejects.toMatchObject({ code: 'ERR_POLICY_DENIED' });
    expect(approve).not.toHaveBeenCalled();
  });

  test('pending approvals count against maxTerminals; closing during approval fails the create', async () => {
    let answer!: (ok: boolean) => void;
    host = newHost({ maxTerminals: 1, approve: () => new Promise<boolean>((res) => (answer = res)) });
    const first = host.createTerminal({ sessionId: S, command: 'ls' });
    await expect(host.createTerminal({ sessionId: S, command: 'ls' })).rejects.toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
    while (!answer) await new Promise((r) => setImmediate(r));
    const closing = host.close();
    answer(true);
    await expect(first).rejects.toMatchObject({ code: 'ERR_HOST_CLOSED' });
    await closing;
    expect(backend.terminals).toHaveLength(0);
    expect(events.map((e) => e.type)).toEqual(['denied', 'failed']);
  });
});

describe('onEvent', () => {
  test('created → killed → exited → released, with the fields an audit needs', async () => {
    const { terminalId } = await host.createTerminal({ sessionId: S, command: 'make', args: ['all'], cwd: root, outputByteLimit: 100 });
    const t = backend.terminals[0]!;
    Object.defineProperty(t, 'outputBytes', { get: () => 1234 });
    await host.killTerminal({ sessionId: S, terminalId });
    await host.releaseTerminal({ sessionId: S, terminalId });
    expect(events.map((e) => e.type)).toEqual(['created', 'killed', 'exited', 'released']);
    const [created, killed, exited, released] = events;
    expect(created).toEqual({
      type: 'created',
      time: expect.any(Number),
      sessionId: S,
      terminalId,
      command: 'make',
      args: ['all'],
      commandLine: 'make all',
      cwd: root,
      pid: 4242,
      outputByteLimit: 100,
    });
    expect(killed).toMatchObject({ type: 'killed', terminalId, sessionId: S, reason: 'request', wasRunning: true });
    expect(exited).toMatchObject({
      type: 'exited',
      terminalId,
      exitStatus: { exitCode: null, signal: 'SIGTERM' },
      durationMs: expect.any(Number),
      outputBytes: 1234,
    });
    expect(released).toMatchObject({ type: 'released', terminalId, reason: 'request', wasRunning: false });
    expect(Object.isFrozen(created)).toBe(true);
  });

  test('a release of a running terminal reports wasRunning, exited comes first; session and close reasons', async () => {
    const a = await host.createTerminal({ sessionId: S, command: 'a' });
    await host.createTerminal({ sessionId: 'other', command: 'b' });
    await host.releaseTerminal({ sessionId: S, terminalId: a.terminalId });
    await host.releaseSession('other');
    const c = await host.createTerminal({ sessionId: S, command: 'c' });
    await host.close();
    const released = events.filter((e) => e.type === 'released');
    expect(released.map((e) => e.type === 'released' && [e.reason, e.wasRunning])).toEqual([
      ['request', true],
      ['session', true],
      ['close', true],
    ]);
    const order = events.filter((e) => 'terminalId' in e && e.terminalId === c.terminalId).map((e) => e.type);
    expect(order).toEqual(['created', 'exited', 'released']);
    const exited = events.find((e) => e.type === 'exited');
    // A backend that does not count output: the host counted what it saw (nothing here).
    expect(exited).toMatchObject({ outputBytes: 0, exitStatus: { exitCode: null, signal: 'SIGTERM' } });
  });

  test('a natural exit is reported once, with its status', async () => {
    await host.createTerminal({ sessionId: S, command: 'x' });
    backend.terminals[0]!.exit({ exitCode: 3, signal: null });
    while (!events.some((e) => e.type === 'exited')) await new Promise((r) => setImmediate(r));
    expect(events.filter((e) => e.type === 'exited')).toEqual([expect.objectContaining({ exitStatus: { exitCode: 3, signal: null } })]);
  });

  test('invalid requests and backend failures are failed events; nothing leaks env values', async () => {
    await expect(host.createTerminal({ sessionId: S, command: 'x', outputByteLimit: -1 })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
    await expect(host.createTerminal({ sessionId: S, command: 'x', cwd: 'rel' })).rejects.toMatchObject({ code: 'ERR_INVALID_CWD' });
    await expect(host.createTerminal(null as never)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG' });
    expect(events).toEqual([
      expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_ARG', command: 'x', message: expect.stringMatching(/^outputByteLimit:/) }),
      expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_CWD', cwd: 'rel' }),
      expect.objectContaining({ type: 'failed', code: 'ERR_INVALID_ARG', sessionId: '', command: '' }),
    ]);
    await host.createTerminal({ sessionId: S, command: 'x', env: [{ name: 'SECRET', value: 'hunter2' }] });
    expect(JSON.stringify(events)).not.toContain('hunter2');
  });

  test('maxTerminals refusals are denied events', async () => {
    host = newHost({ maxTerminals: 1 });
    await host.createTerminal({ sessionId: S, command: 'a' });
    await expect(host.createTerminal({ sessionId: S, command: 'b' })).rejects.toMatchObject({ code: 'ERR_TOO_MANY_TERMINALS' });
    expect(events[1]).toMatchObject({ type: 'denied', code: 'ERR_TOO_MANY_TERMINALS', command: 'b', reason: expect.stringMatching(/too many/) });
  });

  test('throwing and rejecting listeners break nothing; the option and unsubscribe work', async () => {
    const fromOption: string[] = [];
    host = newHost({
      onEvent: (e) => {
        fromOption.push(e.type);
        throw new Error('audit sink down');
      },
    });
    host.onEvent(async () => {
      throw new Error('async sink down');
    });
    const later: string[] = [];
    const off = host.onEvent((e) => {
      later.push(e.type);
    });
    const { terminalId } = await host.createTerminal({ sessionId: S, command: 'x' });
    off();
    await host.killTerminal({ sessionId: S, terminalId });
    await host.releaseTerminal({ sessionId: S, terminalId });
    await expect(host.createTerminal({ sessionId: S, command: 'y' })).resolves.toHaveProperty('terminalId');
    expect(later).toEqual(['created']);
    expect(fromOption).toEqual(['created', 'killed', 'exited', 'released', 'created']);
    expect(events.map((e) => e.type)).toEqual(fromOption);
    expect(() => host.onEvent('nope' as never)).toThrow(/listener/);
  });
});
