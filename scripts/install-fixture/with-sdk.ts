// Type check with the SDK installed: our handle where agent code takes the SDK's terminal shape,
// requests and responses in both directions.
import type * as acp from '@agentclientprotocol/sdk';
import {
  createTerminal,
  createTestClient,
  registerTerminalHandlers,
  TerminalHost,
  type AcpTerminalHandle,
  type HostCreateTerminalRequest,
  type OutputSnapshot,
  type TerminalOutputLike,
} from 'acp-terminal';

async function agentTool(terminal: Pick<acp.TerminalHandle, 'id' | 'currentOutput' | 'waitForExit' | 'release'>): Promise<string> {
  await terminal.waitForExit();
  const { output } = await terminal.currentOutput();
  await terminal.release();
  return output;
}

export async function main(sdkRequest: acp.CreateTerminalRequest, sdkOutput: acp.TerminalOutputResponse, sdkHandle: acp.TerminalHandle): Promise<void> {
  const ours = await createTerminal(sdkRequest);
  await agentTool(ours);
  const shaped: AcpTerminalHandle = sdkHandle;
  const alsoShaped: AcpTerminalHandle = ours;
  void [shaped, alsoShaped];
  const back: acp.CreateTerminalRequest = { ...({} as HostCreateTerminalRequest) };
  const forth: HostCreateTerminalRequest = sdkRequest;
  const wire: TerminalOutputLike = sdkOutput;
  const snapshot: acp.TerminalOutputResponse = {} as OutputSnapshot;
  void [back, forth, wire, snapshot];
  const host = new TerminalHost();
  registerTerminalHandlers({} as acp.ClientApp, host);
  await using tc = await createTestClient({ host });
  const updates: readonly acp.SessionNotification[] = tc.updates;
  void updates;
}
