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

// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type AgentApp = acp.AgentApp;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type AgentConnection = acp.AgentConnection;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type AnyMessage = acp.AnyMessage;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type ClientApp = acp.ClientApp;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type ClientConnection = acp.ClientConnection;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type ClientContext = acp.ClientContext;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type InitializeResponse = acp.InitializeResponse;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type RequestError = acp.RequestError;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type RequestPermissionRequest = acp.RequestPermissionRequest;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type RequestPermissionResponse = acp.RequestPermissionResponse;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type SessionNotification = acp.SessionNotification;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type Stream = acp.Stream;

// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type V2AgentApp = acpV2.AgentApp;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type V2CancelTerminalRequest = acpV2.CancelTerminalRequest;
// @ts-ignore -- `any` without the SDK; absent from SDK 0.x/1.x (the legacy API needs none of these)
export type V2UpdateSessionNotification = acpV2.UpdateSessionNotification;
