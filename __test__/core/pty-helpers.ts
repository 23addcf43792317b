// Shared by the pty and text suites.
import type { TerminalHandle } from './helpers';

/** Resolves once the output matches `re` (polls currentOutput; no timing assertion). */
export async function waitForOutput(t: TerminalHandle, re: RegExp, timeoutMs = 20000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { output } = await t.currentOutput();
    if (re.test(output)) return output;
    if (Date.now() > deadline) throw new Error(`output never matched ${re}: ${JSON.stringify(output)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
