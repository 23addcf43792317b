/**
 * The types this package uses from its optional peer dependency `@agentclientprotocol/sdk`.
 *
 * Hand-written (copied to lib/ as is by scripts/build-ts.js) so that the `@ts-ignore` comments survive:
 * without the SDK installed, these imports resolve to `any` instead of failing a consumer's type check
 * with TS2307 (`skipLibCheck: false`); with it installed (2.x) they are the SDK's own types.
 */

// @ts-ignore -- optional peer dependency: `any` when it is not installed
import type * as acp from '@agentclientprotocol/sdk';
// @ts-ignore -- optional peer dependency: `any` when it is not installed
import type * as acpV2 from '@agentclientprotocol/sdk/experimental/v2';

/** The SDK's stable (v1) entrypoint module. */
export type SdkModule = typeof acp;
/** The SDK's `experimental/v2` entrypoint module. */
export type SdkV2Module = typeof acpV2;

export type AgentApp = acp.AgentApp;
export type ClientApp = acp.ClientApp;
export type ClientConnection = acp.ClientConnection;
export type ClientContext = acp.ClientContext;
export type InitializeResponse = acp.InitializeResponse;
export type RequestError = acp.RequestError;
export type RequestPermissionRequest = acp.RequestPermissionRequest;
export type RequestPermissionResponse = acp.RequestPermissionResponse;
export type SessionNotification = acp.SessionNotification;
export type Stream = acp.Stream;

export type V2AgentApp = acpV2.AgentApp;
export type V2CancelTerminalRequest = acpV2.CancelTerminalRequest;
export type V2UpdateSessionNotification = acpV2.UpdateSessionNotification;
