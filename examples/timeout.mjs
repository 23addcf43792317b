// The spec's timeout recipe for ACP agents: race waitForExit() with a timer; on expiry kill, read the
// output, release. Shared by the demo agent and the end-to-end test agent.

/**
 * Runs an SDK TerminalHandle to completion or until `timeoutMs` elapsed.
 * @param {{ waitForExit(): Promise<{exitCode?: number|null, signal?: string|null}>, kill(): Promise<unknown>, currentOutput(): Promise<{output: string, truncated: boolean, exitStatus?: unknown}>, release(): Promise<unknown> }} terminal
 * @param {number} timeoutMs
 * @returns {Promise<{ timedOut: boolean, exitStatus: {exitCode?: number|null, signal?: string|null}, output: string, truncated: boolean }>}
 */
export async function runWithTimeout(terminal, timeoutMs) {
  let timer;
  const expired = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const first = await Promise.race([terminal.waitForExit(), expired]);
    const timedOut = first === 'timeout';
    if (timedOut) await terminal.kill();
    const exitStatus = timedOut ? await terminal.waitForExit() : first;
    const { output, truncated } = await terminal.currentOutput();
    return { timedOut, exitStatus, output, truncated };
  } finally {
    clearTimeout(timer);
    await terminal.release();
  }
}
