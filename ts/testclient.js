"use strict";
/**
 * A ready-made ACP client for agent authors' test suites: real terminals through a TerminalHost,
 * `clientCapabilities.terminal: true`, permission requests answered, and every session update recorded.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.createTestClient = createTestClient;
const errors_1 = require("./errors");
const handlers_1 = require("./handlers");
const host_1 = require("./host");
const sdk_1 = require("./sdk");
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
async function createTestClient(options = {}) {
    const sdk = await (0, sdk_1.loadSdk)();
    if (typeof sdk.client !== 'function') {
        throw new errors_1.AcpTerminalError('ERR_SDK_LOAD_FAILED', 'createTestClient needs @agentclientprotocol/sdk 2.4 or later (the installed one has no client() app API)', { specifier: '@agentclientprotocol/sdk' });
    }
    const name = options.name ?? 'acp-terminal-test-client';
    const ownsHost = !(options.host instanceof host_1.TerminalHost);
    const host = options.host instanceof host_1.TerminalHost ? options.host : new host_1.TerminalHost(options.host);
    const policy = options.permission ?? 'allow';
    const updates = [];
    const permissionRequests = [];
    const waiters = new Set();
    const connections = new Set();
    let closed = false;
    const app = (0, handlers_1.registerTerminalHandlers)(sdk.client({ name }), host)
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
        if (typeof policy === 'function')
            return policy(ctx.params);
        if (policy === 'cancel')
            return { outcome: { outcome: 'cancelled' } };
        const kinds = policy === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
        const option = ctx.params.options.find((o) => kinds.includes(o.kind));
        return option
            ? { outcome: { outcome: 'selected', optionId: option.optionId } }
            : { outcome: { outcome: 'cancelled' } };
    });
    const client = {
        app,
        host,
        updates,
        permissionRequests,
        async connect(agent) {
            if (closed)
                throw new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the test client is closed');
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
            if (found)
                return Promise.resolve(found);
            if (closed)
                return Promise.reject(new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the test client is closed'));
            return new Promise((resolve, reject) => {
                const waiter = { predicate, resolve, reject };
                const { signal } = waitOptions;
                if (signal) {
                    if (signal.aborted)
                        return reject(signal.reason);
                    signal.addEventListener('abort', () => {
                        waiters.delete(waiter);
                        reject(signal.reason);
                    }, { once: true });
                }
                waiters.add(waiter);
            });
        },
        terminalIds() {
            const ids = [];
            for (const { update } of updates) {
                if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update')
                    continue;
                for (const content of update.content ?? []) {
                    if (content.type === 'terminal' && !ids.includes(content.terminalId))
                        ids.push(content.terminalId);
                }
            }
            return ids;
        },
        async output(terminalId) {
            const live = host.terminal(terminalId);
            if (live) {
                try {
                    return (0, host_1.normalizeSnapshot)(await live.currentOutput());
                }
                catch {
                    // Released meanwhile: fall through to the final snapshot.
                }
            }
            return host.finalOutput(terminalId);
        },
        async close() {
            closed = true;
            for (const waiter of waiters)
                waiter.reject(new errors_1.AcpTerminalError('ERR_HOST_CLOSED', 'the test client is closed'));
            waiters.clear();
            for (const connection of connections)
                connection.close();
            connections.clear();
            if (ownsHost)
                await host.close();
        },
        async [Symbol.asyncDispose]() {
            await client.close();
        },
    };
    return client;
}
function isStream(value) {
    return 'readable' in value && 'writable' in value;
}
