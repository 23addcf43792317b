/**
 * A ready-made ACP client for agent authors' test suites: real terminals through a TerminalHost,
 * `clientCapabilities.terminal: true`, permission requests answered, and every session update recorded.
 */

import type {
  AgentApp,
  ClientApp,
  ClientConnection,
  ClientContext,
  InitializeResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  Stream,
} from './sdk-types';
import { AcpTerminalError } from './errors';
import { registerTerminalHandlers } from './handlers';
import { normalizeSnapshot, TerminalHost, type LiveTerminalInfo, type TerminalHostOptions } from './host';
import { loadSdk } from './sdk';
import type { OutputSnapshot } from './types';

/** How the test client answers `session/request_permission`. */
export type PermissionPolicy =
  | 'allow'
  | 'reject'
  | 'cancel'
  | ((request: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>);

/** Options of `createTestClient()`. */
export interface TestClientOptions {
  /** Client name (sent as `clientInfo.name`), default `"acp-terminal-test-client"`. */
  name?: string;
  /** The host that runs terminals, or options for a new one (default: `new TerminalHost()`). */
  host?: TerminalHost | TerminalHostOptions;
  /**
   * Answer to permission requests: the first allow option (default), the first reject option,
   * `cancelled`, or a custom function.
   */
  permission?: PermissionPolicy;
}

/** A connection opened by `TestClient.connect()`, already initialized. */
export interface TestClientConnection {
  /** Context for calling the agent (`agent.buildSession(cwd)`, `agent.request(...)`). */
  readonly agent: ClientContext;
  /** The agent's `initialize` response. */
  readonly initializeResponse: InitializeResponse;
  /** The underlying SDK connection. */
  readonly connection: ClientConnection;
}

/** Options of `TestClient.waitForUpdate()`. */
export interface WaitForUpdateOptions {
  /** Rejects the wait when aborted. */
  signal?: AbortSignal;
}

/** The object returned by `createTestClient()`. */
export interface TestClient extends AsyncDisposable {
  /** The SDK `ClientApp` (terminal, permission and session-update handlers registered). */
  readonly app: ClientApp;
  /** The host running this client's terminals. */
  readonly host: TerminalHost;
  /** Every `session/update` received, in arrival order. */
  readonly updates: readonly SessionNotification[];
  /** Every `session/request_permission` received, in arrival order. */
  readonly permissionRequests: readonly RequestPermissionRequest[];
  /**
   * Connects to an agent (in-process `AgentApp` or a `Stream`) and sends `initialize` with
   * `clientCapabilities.terminal: true`.
   */
  connect(agent: AgentApp | Stream): Promise<TestClientConnection>;
  /** Resolves with the first recorded or future update matching `predicate`. */
  waitForUpdate(
    predicate: (update: SessionNotification) => boolean,
    options?: WaitForUpdateOptions,
  ): Promise<SessionNotification>;
  /** Ids of the terminals embedded in tool calls (`content: [{ type: "terminal", terminalId }]`), in order. */
  terminalIds(): string[];
  /** Output of a terminal: live snapshot, or the final snapshot after release; undefined if unknown. */
  output(terminalId: string): Promise<OutputSnapshot | undefined>;
  /**
   * The leak check for a test's end (`afterEach(() => tc.assertNoLiveTerminals())`): throws
   * `ERR_LIVE_TERMINALS` when the host still has terminals the agent never released, naming each (id,
   * session, command line, running or exited, age); `details.terminals` lists them
   * (`host.listTerminals()`). Returns quietly otherwise.
   */
  assertNoLiveTerminals(): void;
  /** Closes every connection and releases every terminal. */
  close(): Promise<void>;
}

interface Waiter {
  predicate: (update: SessionNotification) => boolean;
  resolve: (update: SessionNotification) => void;
  reject: (error: unknown) => void;
}

/**
 * Creates a test client. Typical agent test:
 *
 * ```ts
 * await using tc = await createTestClient();
 * const { agent } = await tc.connect(myAgentApp);
 * const session = await agent.buildSession('/tmp').start();
 * await session.prompt('run ls');
 * expect(tc.terminalIds()).toHaveLength(1);
 * ```
 */
export function createTestClient(options?: Omit<TestClientOptions, 'host'> & { host?: TerminalHostOptions }): Promise<TestClient>;
/** Same, with a host of your own (it is not closed by the test client's `close()`). */
export function createTestClient(options?: TestClientOptions): Promise<TestClient>;
// Two signatures so that `host: { onEvent: (e) => ... }` is typed as TerminalHostOptions: against the union
// `TerminalHost | TerminalHostOptions` alone, `e` would have no contextual type under `strict` (TS7006).
export async function createTestClient(options: TestClientOptions = {}): Promise<TestClient> {
  // The host is made before the first await, in the test's own stack: jest's --detectOpenHandles then
  // traces a terminal the agent never released to this call (see LiveTerminalHandle).
  const ownsHost = !(options.host instanceof TerminalHost);
  const host = options.host instanceof TerminalHost ? options.host : new TerminalHost(options.host);
  let sdk: Awaited<ReturnType<typeof loadSdk>>;
  try {
    sdk = await loadSdk();
    if (typeof sdk.client !== 'function') {
      throw new AcpTerminalError(
        'ERR_SDK_LOAD_FAILED',
        'createTestClient needs @agentclientprotocol/sdk 2.4 or later (the installed one has no client() app API)',
        { specifier: '@agentclientprotocol/sdk' },
      );
    }
  } catch (error) {
    if (ownsHost) await host.close();
    throw error;
  }
  const name = options.name ?? 'acp-terminal-test-client';
  const policy = options.permission ?? 'allow';
  const updates: SessionNotification[] = [];
  const permissionRequests: RequestPermissionRequest[] = [];
  const waiters = new Set<Waiter>();
  const connections = new Set<ClientConnection>();
  let closed = false;

  const app = registerTerminalHandlers(sdk.client({ name }), host)
    .onNotification('session/update', (ctx) => {
      updates.push(ctx.params);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(ctx.params)) {
          waiters.delete(waiter);
          waiter.resolve(ctx.params);
        }
      }
    })
    .onRequest('session/request_permission', async (ctx) => {
      permissionRequests.push(ctx.params);
      if (typeof policy === 'function') return policy(ctx.params);
      if (policy === 'cancel') return { outcome: { outcome: 'cancelled' } };
      const kinds = policy === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
      const option = ctx.params.options.find((o) => kinds.includes(o.kind));
      return option
        ? { outcome: { outcome: 'selected', optionId: option.optionId } }
        : { outcome: { outcome: 'cancelled' } };
    });

  const client: TestClient = {
    app,
    host,
    updates,
    permissionRequests,
    async connect(agent) {
      if (closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the test client is closed');
      // The overloads of connect() take either kind; pick one statically.
      const connection = isStream(agent) ? app.connect(agent) : app.connect(agent);
      connections.add(connection);
      void connection.closed.finally(() => connections.delete(connection));
      const initializeResponse = await connection.agent.request('initialize', {
        protocolVersion: sdk.PROTOCOL_VERSION,
        clientCapabilities: { terminal: true },
        clientInfo: { name, version: '0.0.0' },
      });
      return { agent: connection.agent, initializeResponse, connection };
    },
    waitForUpdate(predicate, waitOptions = {}) {
      const found = updates.find(predicate);
      if (found) return Promise.resolve(found);
      if (closed) return Promise.reject(new AcpTerminalError('ERR_HOST_CLOSED', 'the test client is closed'));
      return new Promise<SessionNotification>((resolve, reject) => {
        const waiter: Waiter = { predicate, resolve, reject };
        const { signal } = waitOptions;
        if (signal) {
          if (signal.aborted) return reject(signal.reason);
          signal.addEventListener('abort', () => {
            waiters.delete(waiter);
            reject(signal.reason);
          }, { once: true });
        }
        waiters.add(waiter);
      });
    },
    terminalIds() {
      const ids: string[] = [];
      for (const { update } of updates) {
        if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') continue;
        for (const content of update.content ?? []) {
          if (content.type === 'terminal' && !ids.includes(content.terminalId)) ids.push(content.terminalId);
        }
      }
      return ids;
    },
    async output(terminalId) {
      const live = host.terminal(terminalId);
      if (live) {
        try {
          return normalizeSnapshot(await live.currentOutput());
        } catch {
          // Released meanwhile: fall through to the final snapshot.
        }
      }
      return host.finalOutput(terminalId);
    },
    assertNoLiveTerminals() {
      const live = host.listTerminals();
      if (live.length === 0) return;
      throw new AcpTerminalError(
        'ERR_LIVE_TERMINALS',
        `${live.length} terminal${live.length === 1 ? ' was' : 's were'} never released:\n${live.map(describeLive).join('\n')}`,
        { terminals: live },
      );
    },
    async close() {
      closed = true;
      for (const waiter of waiters) waiter.reject(new AcpTerminalError('ERR_HOST_CLOSED', 'the test client is closed'));
      waiters.clear();
      for (const connection of connections) connection.close();
      connections.clear();
      if (ownsHost) await host.close();
    },
    async [Symbol.asyncDispose]() {
      await client.close();
    },
  };
  return client;
}

/** One line per leaked terminal: `term-..-1 (session s1): sleep 30, running for 1.2 s`. */
function describeLive(t: LiveTerminalInfo): string {
  const age = t.ageMs < 10_000 ? `${(t.ageMs / 1000).toFixed(1)} s` : `${Math.round(t.ageMs / 1000)} s`;
  return `  ${t.terminalId} (session ${t.sessionId}): ${t.commandLine}, ${t.running ? `running for ${age} (pid ${t.pid})` : `exited, created ${age} ago`}`;
}

function isStream(value: AgentApp | Stream): value is Stream {
  return 'readable' in value && 'writable' in value;
}
