/**
 * SDK adapter: serves the five ACP v1 `terminal/*` requests of an `@agentclientprotocol/sdk` 2.x
 * `ClientApp` from a TerminalHost, turning failures into JSON-RPC errors an agent can act on.
 */

import { errorCode, errorMessage, invalidArg } from './errors';
import type { HostCreateTerminalRequest, RegisterTerminalHandlersOptions, TerminalHost } from './host';
import { isDeclined } from './host-create';
import { loadSdk, requireSdk, sdkForApp, type SdkModule } from './sdk';
import { trackConnections } from './session-cwds';
import type { ClientApp, RequestError } from './sdk-types';

/** JSON-RPC code for an unknown or released terminal id ("resource not found"). */
export const RESOURCE_NOT_FOUND = -32002;
/**
 * JSON-RPC code for a request the client will not run as sent: invalid (relative or missing cwd, NUL
 * bytes, bad limit, unknown program, arguments too long) or refused by the client's policy (cwd outside
 * the allowed roots, a denied program, the user declined). `data.code` says which; the message says why.
 */
export const INVALID_PARAMS = -32602;
/** JSON-RPC code for anything else (too many terminals, host closed, backend failure). */
export const INTERNAL_ERROR = -32603;

const NOT_FOUND_CODES = new Set(['ERR_TERMINAL_NOT_FOUND', 'ERR_TERMINAL_RELEASED']);
const INVALID_PARAMS_CODES = new Set([
  'ERR_INVALID_ARG',
  'ERR_INVALID_CWD',
  'ENOENT',
  'EACCES',
  'ENOTDIR',
  'E2BIG',
  'ERR_POLICY_DENIED',
  'ERR_CWD_OUTSIDE_ROOTS',
  'ERR_NOT_APPROVED',
]);

/** Maps an error code of the host or the native core to the JSON-RPC code sent to the agent. */
export function jsonRpcCodeFor(code: string | undefined): number {
  if (code !== undefined && NOT_FOUND_CODES.has(code)) return RESOURCE_NOT_FOUND;
  if (code !== undefined && INVALID_PARAMS_CODES.has(code)) return INVALID_PARAMS;
  return INTERNAL_ERROR;
}

/**
 * Converts any error into the SDK's `RequestError` (kept as is when it already is one), with the original
 * message and `data: { code, ...details }`.
 */
export async function toRequestError(error: unknown): Promise<RequestError> {
  return requestErrorWith(await loadSdk(), error);
}

function requestErrorWith(sdk: SdkModule, error: unknown): RequestError {
  const { RequestError } = sdk;
  if (error instanceof RequestError) return error;
  // A decline in the client's own class (`declinedError`) is sent as the host's own decline.
  const code = isDeclined(error) ? 'ERR_NOT_APPROVED' : errorCode(error);
  const details =
    typeof error === 'object' && error !== null && 'details' in error && typeof error.details === 'object'
      ? (error.details as Record<string, unknown>)
      : {};
  return new RequestError(jsonRpcCodeFor(code), errorMessage(error), { ...details, ...(code ? { code } : {}) });
}

/** A params "parser" that hands the params on as sent (the host validates them). */
function asSent<T>(params: unknown): T {
  return (params ?? {}) as T;
}

/**
 * Registers `terminal/create`, `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` and
 * `terminal/release` on `app`, served by `host`. Returns `app` for chaining.
 *
 * Loads the SDK now: throws `ERR_SDK_NOT_FOUND` / `ERR_SDK_LOAD_FAILED` here when it cannot be loaded
 * (where Node can only `import()` it, on 20.4-20.18 and 22.0-22.11, the same error rejects each request
 * instead and is also emitted once as a process warning).
 *
 * Each handler passes the request's `ctx.signal` to the host: a request the agent cancels with
 * `$/cancel_request` is answered at once with the SDK's `-32800` (Request cancelled); see the host's
 * methods for what a cancel stops (a wait stops waiting, the command keeps running).
 *
 * The app's `connect` and `connectWith` are wrapped so that, on each connection:
 * - the client's `initialize` advertises `clientCapabilities.terminal: true` (added when the client's
 *   own request leaves it out; agents never call `terminal/*` otherwise); `{ advertiseTerminal: false }`
 *   sends `initialize` as the client wrote it;
 * - the host learns the `cwd` of each session the client creates (`session/new`), loads or resumes
 *   (`TerminalHost.setSessionCwd`): an agent's `terminal/create` without `cwd` then runs in its session's
 *   directory (a relative one is refused, see `TerminalHost.refuseSessionCwd`);
 * - the client's `session/cancel` reaches `TerminalHost.cancelSession`: what the agent leaves running
 *   after a cancel is killed after the host's `killAfterCancelMs`.
 */
export function registerTerminalHandlers(app: ClientApp, host: TerminalHost, options: RegisterTerminalHandlersOptions = {}): ClientApp {
  if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object such as { advertiseTerminal: false }');
  if (options.advertiseTerminal !== undefined && typeof options.advertiseTerminal !== 'boolean') {
    throw invalidArg('options.advertiseTerminal', 'must be a boolean');
  }
  const sdk: SdkModule | undefined = requireSdk();
  // Errors are made with the RequestError class of the SDK copy the app comes from (found on the first
  // error): the SDK keeps a handler's error code only for its own class (see sdkForApp).
  let appSdk: Promise<SdkModule> | undefined;
  if (!sdk) {
    loadSdk().catch((error: unknown) => process.emitWarning(errorMessage(error), { code: errorCode(error) }));
  }
  const serve = async <T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      // Cancelled (`$/cancel_request`): the SDK answers with the reason it aborted with, -32800.
      if (signal.aborted && error === signal.reason) throw error;
      if (!appSdk) {
        appSdk = sdkForApp(app);
        appSdk.catch(() => (appSdk = undefined)); // not loadable yet: tried again on the next error
      }
      throw requestErrorWith(await appSdk, error);
    }
  };
  trackConnections(app, host, options);
  // Each request's `ctx.signal` (aborted by the agent's `$/cancel_request` or when the connection closes)
  // goes to the host, so a cancelled wait is answered at once with the SDK's -32800.
  return app
    // terminal/create's params go to the host as sent: it checks every field itself (errors name the
    // field), and only so can a host with `clampLimits` clamp an `outputByteLimit` the SDK's schema refuses.
    .onRequest('terminal/create', asSent<HostCreateTerminalRequest>, ({ params, signal }) =>
      serve(signal, () => host.createTerminal(params, { signal })),
    )
    .onRequest('terminal/output', ({ params, signal }) => serve(signal, () => host.terminalOutput(params, { signal })))
    .onRequest('terminal/wait_for_exit', ({ params, signal }) => serve(signal, () => host.waitForTerminalExit(params, { signal })))
    .onRequest('terminal/kill', ({ params, signal }) => serve(signal, () => host.killTerminal(params, { signal })))
    .onRequest('terminal/release', ({ params, signal }) => serve(signal, () => host.releaseTerminal(params, { signal })));
}
