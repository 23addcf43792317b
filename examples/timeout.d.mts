/** Exit status as the SDK reports it. */
export interface TimeoutExitStatus { exitCode?: number | null; signal?: string | null }
/** The part of the SDK's TerminalHandle the recipe uses. */
export interface TimeoutTerminal {
  waitForExit(): Promise<TimeoutExitStatus>;
  kill(): Promise<unknown>;
  currentOutput(): Promise<{ output: string; truncated: boolean }>;
  release(): Promise<unknown>;
}
/** Race waitForExit() with a timer; on expiry kill; then read the output and release. */
export declare function runWithTimeout(
  terminal: TimeoutTerminal,
  timeoutMs: number,
): Promise<{ timedOut: boolean; exitStatus: TimeoutExitStatus; output: string; truncated: boolean }>;
