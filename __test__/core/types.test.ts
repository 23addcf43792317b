// Type-level contract with the real ACP SDK (pinned in devDependencies). ts-jest type-checks this
// file: an incompatible change to index.d.ts fails the suite before any test runs.
import type * as acp from '@agentclientprotocol/sdk';

import type {
  CreateTerminalParams,
  TerminalEmptyResponse,
  TerminalExitStatus,
  TerminalHandle,
  TerminalOutputResponse,
} from '../../index';
import { createTerminal } from '../../index';

/** Compiles only when A is assignable to B. */
type Assignable<A, B> = [A] extends [B] ? true : false;
const yes = <T extends true>(_proof?: T): void => undefined;
const no = <T extends false>(_proof?: T): void => undefined;

type SdkHandle = Pick<acp.TerminalHandle, 'id' | 'currentOutput' | 'waitForExit' | 'kill' | 'release' | typeof Symbol.asyncDispose>;

test('an SDK CreateTerminalRequest can be passed straight to createTerminal', () => {
  yes<Assignable<acp.CreateTerminalRequest, CreateTerminalParams>>();
  // ...and our params (with a sessionId and no nulls) go back to the SDK as they are.
  yes<Assignable<Required<Pick<CreateTerminalParams, 'sessionId'>> & Omit<CreateTerminalParams, 'args' | 'env' | 'sessionId' | '_meta'> & { args?: string[]; env?: acp.EnvVariable[] }, acp.CreateTerminalRequest>>();
  yes<Assignable<acp.EnvVariable, NonNullable<CreateTerminalParams['env']>[number]>>();
});

test('our responses are valid SDK responses, and SDK responses fit ours', () => {
  yes<Assignable<TerminalOutputResponse, acp.TerminalOutputResponse>>();
  yes<Assignable<TerminalExitStatus, acp.WaitForTerminalExitResponse>>();
  yes<Assignable<TerminalExitStatus, acp.TerminalExitStatus>>();
  yes<Assignable<TerminalEmptyResponse, acp.KillTerminalResponse>>();
  yes<Assignable<TerminalEmptyResponse, acp.ReleaseTerminalResponse>>();
  // The SDK marks exitCode/signal optional; we always send both (null when not applicable).
  yes<Assignable<Required<Omit<acp.WaitForTerminalExitResponse, '_meta'>>, { exitCode?: number | null; signal?: string | null }>>();
  yes<Assignable<{ exitCode: number | null; signal: string | null }, TerminalExitStatus>>();
});

test('TerminalHandle has the SDK TerminalHandle shape (await using included)', () => {
  yes<Assignable<TerminalHandle, SdkHandle>>();
  no<Assignable<{ id: string }, SdkHandle>>();
});

test('the SDK request object works at run time too', async () => {
  const req: acp.CreateTerminalRequest = {
    sessionId: 'sess',
    command: 'printf',
    args: ['testy terminal\n'],
    env: [{ name: 'X', value: '1' }],
    cwd: '/tmp',
    outputByteLimit: 1024,
    _meta: { anything: true },
  };
  await using t = await createTerminal(req);
  const exit: acp.WaitForTerminalExitResponse = await t.waitForExit();
  const out: acp.TerminalOutputResponse = await t.currentOutput();
  expect(exit).toEqual({ exitCode: 0, signal: null });
  expect(out.output).toBe('testy terminal\n');
  const handle: SdkHandle = t;
  expect(handle.id).toBe(t.id);
});

// Issue 10, item 4: types interoperate both ways with SDK 2.x (the package's own exports).
import type {
  AcpTerminalHandle,
  ExitStatus as LayerExitStatus,
  ExitStatusLike,
  HostCreateTerminalRequest,
  HostCreateTerminalResponse,
  HostTerminalRequest,
  OutputSnapshot,
  TerminalOutputLike,
} from '../../ts/index';

test('HostCreateTerminalRequest and the SDK CreateTerminalRequest are assignable both ways', () => {
  yes<Assignable<acp.CreateTerminalRequest, HostCreateTerminalRequest>>();
  yes<Assignable<HostCreateTerminalRequest, acp.CreateTerminalRequest>>();
  yes<Assignable<acp.TerminalOutputRequest, HostTerminalRequest>>();
  yes<Assignable<HostTerminalRequest, acp.TerminalOutputRequest>>();
  yes<Assignable<acp.WaitForTerminalExitRequest, HostTerminalRequest>>();
  yes<Assignable<acp.KillTerminalRequest, HostTerminalRequest>>();
  yes<Assignable<acp.ReleaseTerminalRequest, HostTerminalRequest>>();
  yes<Assignable<HostCreateTerminalResponse, acp.CreateTerminalResponse>>();
  yes<Assignable<acp.CreateTerminalResponse, HostCreateTerminalResponse>>();
});

test('responses: ours are valid SDK responses; the SDK ones (exitStatus null, optional fields) fit the wire types', () => {
  yes<Assignable<OutputSnapshot, acp.TerminalOutputResponse>>();
  yes<Assignable<LayerExitStatus, acp.WaitForTerminalExitResponse>>();
  yes<Assignable<acp.TerminalOutputResponse, TerminalOutputLike>>();
  yes<Assignable<{ output: string; truncated: boolean; exitStatus: null }, TerminalOutputLike>>();
  yes<Assignable<acp.WaitForTerminalExitResponse, ExitStatusLike>>();
  yes<Assignable<acp.TerminalExitStatus, ExitStatusLike>>();
  yes<Assignable<OutputSnapshot, TerminalOutputLike>>();
  yes<Assignable<TerminalOutputResponse, TerminalOutputLike>>();
});

// Issue 20, item 4: the package's own types and the SDK's are assignable in BOTH directions, no casts.
import type { CreateTerminalParams as LayerCreateTerminalParams, TerminalExitStatus as PublicExitStatus, TerminalOutputResponse as PublicOutput, CreateTerminalParams as PublicCreateTerminalParams } from '../../ts/index';

/** Compiles only when A and B are assignable to each other. */
type BothWays<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

test('CreateTerminalParams <-> the SDK CreateTerminalRequest (minus sessionId, which ours makes optional)', () => {
  yes<BothWays<Omit<acp.CreateTerminalRequest, 'sessionId'>, Omit<LayerCreateTerminalParams, 'sessionId'>>>();
  yes<Assignable<acp.CreateTerminalRequest, LayerCreateTerminalParams>>();
  yes<Assignable<LayerCreateTerminalParams & { sessionId: string }, acp.CreateTerminalRequest>>();
  yes<BothWays<acp.CreateTerminalRequest, PublicCreateTerminalParams & { sessionId: string }>>();
  yes<BothWays<acp.EnvVariable, NonNullable<LayerCreateTerminalParams['env']>[number]>>();
});

test("our output and exit types <-> the SDK's responses", () => {
  yes<BothWays<OutputSnapshot, acp.TerminalOutputResponse>>();
  yes<BothWays<LayerExitStatus, acp.WaitForTerminalExitResponse>>();
  yes<BothWays<LayerExitStatus, acp.TerminalExitStatus>>();
  yes<BothWays<PublicOutput, acp.TerminalOutputResponse>>();
  yes<BothWays<PublicExitStatus, acp.WaitForTerminalExitResponse>>();
  yes<BothWays<PublicExitStatus, acp.TerminalExitStatus>>();
  // An SDK response with exitStatus null fits ours as it is.
  yes<Assignable<{ output: string; truncated: boolean; exitStatus: null }, OutputSnapshot>>();
  no<Assignable<{ output: string }, OutputSnapshot>>();
});

test('values flow between the SDK and the package without casts (host results, native handle results)', async () => {
  const fromSdk: acp.TerminalOutputResponse = { output: 'x', truncated: false, exitStatus: null };
  const ours: OutputSnapshot = fromSdk;
  const back: acp.TerminalOutputResponse = ours;
  const exit: acp.WaitForTerminalExitResponse = {};
  const oursExit: LayerExitStatus = exit;
  const request: acp.CreateTerminalRequest = { sessionId: 's', command: 'true', _meta: null };
  const params: PublicCreateTerminalParams = request;
  const sdkAgain: acp.CreateTerminalRequest = { ...params, sessionId: 's' };
  expect([back, oursExit, sdkAgain]).toEqual([fromSdk, exit, request]);
  await using t = await createTerminal(params);
  const out: PublicOutput = await t.currentOutput();
  const status: PublicExitStatus = await t.waitForExit();
  expect(status).toEqual({ exitCode: 0, signal: null });
  expect(typeof out.output).toBe('string');
});

test('AcpTerminalHandle: the SDK handle and ours both satisfy it; ours is not claimed to be the SDK class', () => {
  yes<Assignable<acp.TerminalHandle, AcpTerminalHandle>>();
  yes<Assignable<TerminalHandle, AcpTerminalHandle>>();
  yes<Assignable<AcpTerminalHandle, Pick<acp.TerminalHandle, 'id'>>>();
  no<Assignable<{ id: string; currentOutput(): Promise<TerminalOutputLike> }, AcpTerminalHandle>>();
  // The SDK class has private members (connection, sessionId): matched by declaration, not shape.
  no<Assignable<TerminalHandle, acp.TerminalHandle>>();
});

test('agent code typed with AcpTerminalHandle runs on our handle', async () => {
  async function runToEnd(terminal: AcpTerminalHandle): Promise<string> {
    await terminal.waitForExit();
    const { output } = await terminal.currentOutput();
    await terminal.release();
    return output;
  }
  await expect(runToEnd(await createTerminal({ command: 'printf', args: ['shaped'] }))).resolves.toBe('shaped');
});
