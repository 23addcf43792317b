/**
 * The tools of `createMcpServer`: `run`, `output`, `wait`, `kill`, `release`, `list` on a `TerminalHost`,
 * and `terminal_execute` (OpenHands' persistent-session tool) on `ShellSessions`. Schemas and
 * descriptions are written for models (every parameter described, with its unit).
 *
 * Invariants: every command a tool starts went through the host's checks (`createTerminal`, or
 * `authorize` for a session command, whose shell then gets the line `authorize` checked and rebuilt) and,
 * when the server asks, through the user's approval, bound to the exact request; under a policy or `ask`,
 * text typed into a running session command passed the same checks as the command line it becomes when
 * the command ends before reading it, and nothing typed or keyed can edit that line into another; a
 * session command outliving the host's `timeoutMs` is interrupted; a tool error is a result with `isError` whose text starts with the host's error
 * code; a cancelled call kills the command it started or waits for; a finished terminal is released once
 * its exit was reported (its final output stays readable through `output`); progress notifications are
 * awaited before the result, so none is lost.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';
import { inputRequired, inputResponse, type CallToolResult, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { AcpTerminalError, errorCode, errorMessage } from './errors';
import type { TerminalHost } from './host';
import type { ApprovalRequest, AuthorizedRequest } from './host-types';
import { quoteForPrompt } from './prompt-quote';
import { requestKeys } from './session-input';
import { shellQuote } from './shell-quote';
import type { ShellSessions } from './sessions';
import type { ExecuteResult } from './session-types';
import type { ExitStatus, OutputSnapshot } from './types';

/** The ACP session id the MCP tools' terminals belong to on the host. */
export const MCP_SESSION_ID = 'mcp';
/** The tools a server registers (`terminal_execute` only when sessions are enabled). */
export const MCP_TOOL_NAMES = ['run', 'output', 'wait', 'kill', 'release', 'list', 'terminal_execute'] as const;

/** Longest wait a call may ask for, in seconds. */
const MAX_WAIT_SECONDS = 600;
/** Default wait of `run`, `wait` and `terminal_execute`, in seconds. */
const DEFAULT_WAIT_SECONDS = 30;
/** Characters of the newest output a progress notification carries. */
const PROGRESS_TAIL_CHARS = 1000;
/** The key of the approval question in an input-required result. */
const APPROVAL_KEY = 'approval';

/** What one `terminal_execute` call did, for the audit stream. */
export interface SessionCommandEvent {
  type: 'session';
  time: number;
  terminalId: string;
  command: string;
  isInput: boolean;
  status: ExecuteResult['status'] | 'cancelled';
  exitCode: number | null;
  workingDir: string;
}

/** What the tools need, shared by every SDK server object the factory builds. */
export interface ToolStateOptions {
  ask: boolean;
  progressIntervalMs: number;
  makeHost: (approve: ((request: ApprovalRequest) => boolean) | undefined) => TerminalHost;
  makeSessions: (() => ShellSessions) | undefined;
  cwd: string | undefined;
  /** Bytes of a session command's output a result carries at most (its end). */
  outputLimit: number;
  /**
   * Text typed into a running session command goes to whatever reads the terminal (the program, an editor
   * it started, the shell once it ends or reads only part of it), which no check of the text can judge:
   * `'refuse'` (the host has a command policy or an `approve`, or is not known: a given host) refuses it,
   * `'ask'` (`--ask` alone) puts it to the user as typed input into the foreground program, `'free'`
   * (neither) sends it. Guarded (`'refuse'`, `'ask'`), only the keys of `GUARDED_KEYS` are sent.
   */
  typedInput: 'free' | 'ask' | 'refuse';
  /** `timeoutMs` of the host: a session command still running this long after it started is interrupted. */
  commandTimeoutMs: number | undefined;
  onSessionCommand?: (event: SessionCommandEvent) => void;
}

interface TerminalRecord {
  command: string;
  args: string[];
  cwd: string | undefined;
  pid: number;
  startedAt: number;
  exit: ExitStatus | undefined;
}

/** The terminals and sessions behind the tools (outside the SDK's per-request server objects). */
export class TerminalToolState {
  readonly host: TerminalHost;
  readonly ask: boolean;
  readonly progressIntervalMs: number;
  readonly outputLimit: number;
  readonly typedInput: 'free' | 'ask' | 'refuse';
  readonly commandTimeoutMs: number | undefined;
  /** Per session: the timer that interrupts its running command at `commandTimeoutMs`. */
  private readonly deadlines = new Map<string, NodeJS.Timeout>();
  /** Per session: what a timeout's interrupt collected, reported by the session's next call. */
  private readonly timedOut = new Map<string, Promise<ExecuteResult | undefined>>();
  /** Sessions a call is waiting on in steps (it interrupts the command itself when `due`). */
  private readonly waiting = new Set<string>();
  /** Sessions whose command reached `commandTimeoutMs` while a call waited on it. */
  private readonly due = new Set<string>();
  private readonly cwd: string | undefined;
  private readonly makeSessions: (() => ShellSessions) | undefined;
  private sessionsCache: ShellSessions | undefined;
  private readonly records = new Map<string, TerminalRecord>();
  /** True inside a call whose command the user approved (read by the host's `approve`). */
  private readonly approved = new AsyncLocalStorage<boolean>();
  /** Binds an approval to the request it was given for. */
  private readonly secret = randomBytes(32);
  private closed = false;
  readonly onSessionCommand: ((event: SessionCommandEvent) => void) | undefined;

  constructor(options: ToolStateOptions) {
    this.ask = options.ask;
    this.progressIntervalMs = options.progressIntervalMs;
    this.cwd = options.cwd;
    this.outputLimit = options.outputLimit;
    this.typedInput = options.typedInput;
    this.commandTimeoutMs = options.commandTimeoutMs;
    this.makeSessions = options.makeSessions;
    this.onSessionCommand = options.onSessionCommand;
    this.host = options.makeHost(options.ask ? () => this.approved.getStore() === true : undefined);
  }

  /** Whether `terminal_execute` is served. */
  get hasSessions(): boolean {
    return this.makeSessions !== undefined;
  }

  /** The sessions, created on first use. */
  sessions(): ShellSessions {
    if (this.closed) throw new AcpTerminalError('ERR_HOST_CLOSED', 'the MCP server is closed');
    this.sessionsCache ??= this.makeSessions!();
    return this.sessionsCache;
  }

  /** The sessions if they were created. */
  get existingSessions(): ShellSessions | undefined {
    return this.sessionsCache;
  }

  /** A directory the model gave, made absolute against the server's working directory. */
  absolute(dir: string | undefined): string | undefined {
    if (dir === undefined) return undefined;
    return path.resolve(this.cwd ?? process.cwd(), dir);
  }

  /** Runs `fn` with the user's approval granted to the creates it makes. */
  withApproval<T>(fn: () => Promise<T>): Promise<T> {
    return this.approved.run(true, fn);
  }

  /** A tag binding an approval to `request` (sent as request state, checked on the retry). */
  approvalTag(request: unknown): string {
    return createHmac('sha256', this.secret).update(JSON.stringify(request)).digest('base64url');
  }

  record(terminalId: string, record: TerminalRecord): void {
    this.records.set(terminalId, record);
  }

  recordOf(terminalId: string): TerminalRecord | undefined {
    return this.records.get(terminalId);
  }

  forget(terminalId: string): void {
    this.records.delete(terminalId);
  }

  /** The live terminals' ids and records. */
  live(): Array<[string, TerminalRecord]> {
    return [...this.records].filter(([id]) => this.host.terminal(id) !== undefined);
  }

  /**
   * A command line was just sent to session `terminalId`: under `commandTimeoutMs` it is interrupted (C-c,
   * then SIGTERM and SIGKILL to its process group) if it still runs that long after, whether or not a call
   * waits for it; what the interrupt collects is kept for the session's next call.
   */
  startDeadline(terminalId: string): void {
    this.clearDeadline(terminalId);
    this.timedOut.delete(terminalId);
    const ms = this.commandTimeoutMs;
    if (ms === undefined) return;
    const timer = setTimeout(() => {
      this.deadlines.delete(terminalId);
      const sessions = this.existingSessions;
      if (!sessions || this.closed) return;
      this.due.add(terminalId);
      // A call waiting on it interrupts it at its next step, so its output stays in order.
      if (!this.waiting.has(terminalId)) this.interruptDue(terminalId);
    }, ms);
    timer.unref();
    this.deadlines.set(terminalId, timer);
  }

  /** The command of `terminalId` ended (reported completed): no interrupt is due. */
  clearDeadline(terminalId: string): void {
    const timer = this.deadlines.get(terminalId);
    if (timer !== undefined) clearTimeout(timer);
    this.deadlines.delete(terminalId);
    this.due.delete(terminalId);
  }

  /**
   * Interrupts the command of `terminalId` that reached `commandTimeoutMs`; what the interrupt collects
   * (even when nothing was running any more: `interrupt.signal` null) is the session's next call's.
   */
  interruptDue(terminalId: string): void {
    this.due.delete(terminalId);
    const sessions = this.existingSessions;
    if (!sessions || this.closed) return;
    this.timedOut.set(
      terminalId,
      sessions.interrupt(terminalId).catch(() => undefined),
    );
  }

  /** A call waits on `terminalId` in steps (`true`) or stopped (`false`). */
  setWaiting(terminalId: string, on: boolean): void {
    if (on) this.waiting.add(terminalId);
    else this.waiting.delete(terminalId);
  }

  /** Whether the command of `terminalId` reached `commandTimeoutMs` (then the waiting call interrupts it). */
  isDue(terminalId: string): boolean {
    return this.due.has(terminalId);
  }

  /** Gives back what `takeTimedOut` took, for a call that was refused before it could report it. */
  keepTimedOut(terminalId: string, result: ExecuteResult): void {
    if (!this.timedOut.has(terminalId)) this.timedOut.set(terminalId, Promise.resolve(result));
  }

  /** What a timeout's interrupt of `terminalId` collected, once (awaited: it may still be under way). */
  async takeTimedOut(terminalId: string): Promise<ExecuteResult | undefined> {
    const result = this.timedOut.get(terminalId);
    this.timedOut.delete(terminalId);
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.deadlines.values()) clearTimeout(timer);
    this.deadlines.clear();
    await Promise.all([this.host.close(), this.sessionsCache?.closeAll()]);
  }
}

// ---------------------------------------------------------------------------------------------------
// Results

function textResult(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** A tool error: `isError`, the host's code and message (as ACP errors carry them). */
export function errorResult(error: unknown): CallToolResult {
  const code = errorCode(error) ?? 'ERR_INTERNAL';
  const message = errorMessage(error);
  return { content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { error: { code, message } }, isError: true };
}

function statusLine(snapshot: OutputSnapshot, terminalId: string, running: boolean): string {
  const notes: string[] = [];
  if (snapshot.truncated) notes.push('output truncated: only its end is shown');
  if (running) notes.push(`still running as terminal_id ${terminalId}: call wait or output to see more, kill to stop it`);
  else if (snapshot.exitStatus?.signal) notes.push(`killed by ${snapshot.exitStatus.signal}`);
  else notes.push(`exit code ${snapshot.exitStatus?.exitCode ?? 'unknown'}`);
  return `[${notes.join('; ')}]`;
}

function snapshotResult(snapshot: OutputSnapshot, terminalId: string, running: boolean): CallToolResult {
  const text = snapshot.output + (snapshot.output === '' || snapshot.output.endsWith('\n') ? '' : '\n') + statusLine(snapshot, terminalId, running);
  return textResult(text, {
    terminal_id: terminalId,
    status: running ? 'running' : 'exited',
    output: snapshot.output,
    truncated: snapshot.truncated,
    exit_code: running ? null : (snapshot.exitStatus?.exitCode ?? null),
    signal: running ? null : (snapshot.exitStatus?.signal ?? null),
  });
}

// ---------------------------------------------------------------------------------------------------
// Progress, cancellation and approval of one call

/** Sends progress notifications with the newest output while a call waits; `flush()` awaits them all. */
class Progress {
  private sending: Promise<void> = Promise.resolve();
  private lastMessage: string | undefined;
  private readonly started = Date.now();

  constructor(
    private readonly ctx: ServerContext,
    private readonly totalSeconds: number,
  ) {}

  get enabled(): boolean {
    return this.ctx.mcpReq._meta?.progressToken !== undefined;
  }

  /** Sends `output`'s tail unless it is what the previous notification said. */
  send(output: string): void {
    const token = this.ctx.mcpReq._meta?.progressToken;
    if (token === undefined) return;
    const message = output.length > PROGRESS_TAIL_CHARS ? output.slice(-PROGRESS_TAIL_CHARS) : output;
    if (message === this.lastMessage) return;
    this.lastMessage = message;
    const progress = Math.min((Date.now() - this.started) / 1000, this.totalSeconds);
    this.sending = this.sending.then(() =>
      this.ctx.mcpReq
        .notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: this.totalSeconds, message } })
        .catch(() => undefined),
    );
  }

  flush(): Promise<void> {
    return this.sending;
  }
}

const approvalSchema = z.object({ approve: z.boolean() });

/**
 * The user's decision on `approval` when the server asks: `true` (approved in this retried call),
 * `false` (declined), or an input-required result that puts the question to the user.
 */
function askUser(
  state: TerminalToolState,
  server: McpServer,
  ctx: ServerContext,
  approval: ApprovalRequest | undefined,
  bound: unknown,
  typed?: { message: string; title: string; description: string },
): boolean | CallToolResult {
  const tag = state.approvalTag(bound);
  const answer = inputResponse(ctx.mcpReq.inputResponses, APPROVAL_KEY);
  if (answer.kind === 'elicit') {
    // The answer counts only for the request it was asked about.
    if (ctx.mcpReq.requestState() !== tag) return false;
    const parsed = approvalSchema.safeParse(answer.content ?? {});
    return answer.action === 'accept' && parsed.success && parsed.data.approve;
  }
  // The connection's capabilities (2025 era), else the request's own (2026-07-28: in its `_meta` envelope).
  const envelope = ctx.mcpReq.envelope as Record<string, { elicitation?: unknown } | undefined> | undefined;
  const caps = server.server.getClientCapabilities() ?? envelope?.['io.modelcontextprotocol/clientCapabilities'];
  if (caps?.elicitation === undefined) {
    return errorResult(
      new AcpTerminalError(
        'ERR_NOT_APPROVED',
        'this server asks the user before every command, and this MCP client cannot ask (it did not declare the elicitation capability): the command was not run',
        { reason: 'cannot-ask' },
      ),
    );
  }
  let message: string;
  if (approval) {
    // Every word the agent chose is quoted: a raw CR, ESC or invisible character could make it read as another command.
    const lines = ['Run this command?', '', [approval.command, ...approval.args].map(quoteForPrompt).join(' ')];
    if (approval.cwd !== undefined) lines.push('', `in ${quoteForPrompt(approval.cwd)}`);
    const programs = approval.commands.map((c) => c.path ?? c.word).filter((p, i, all) => all.indexOf(p) === i);
    if (programs.length > 0) lines.push(`programs: ${programs.map(quoteForPrompt).join(', ')}`);
    message = lines.join('\n');
  } else {
    message = typed!.message;
  }
  const title = typed?.title ?? 'Run it';
  const description = typed?.description ?? 'Yes to run the command, no to refuse it';
  return inputRequired({
    inputRequests: {
      [APPROVAL_KEY]: inputRequired.elicit({
        message,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title, description } },
          required: ['approve'],
        },
      }),
    },
    requestState: tag,
  }) as unknown as CallToolResult;
}

/** The result of a cancelled call (the client no longer waits for it; written for the record). */
function cancelled(message: string): CallToolResult {
  return errorResult({ code: 'ERR_CANCELLED', message });
}

function notApproved(): CallToolResult {
  return errorResult(
    new AcpTerminalError('ERR_NOT_APPROVED', 'the user did not approve this command; do not retry the same command', { reason: 'declined' }),
  );
}

/** Resolves with 'aborted' when `signal` aborts (at once when it already has). */
function whenAborted(signal: AbortSignal): { promise: Promise<'aborted'>; dispose(): void } {
  let onAbort: () => void = () => undefined;
  const promise = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) resolve('aborted');
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

// ---------------------------------------------------------------------------------------------------
// Terminal tools

/** Waits up to `seconds` for the terminal's exit, sending progress; reports its output and status. */
async function waitAndReport(state: TerminalToolState, terminalId: string, seconds: number, ctx: ServerContext): Promise<CallToolResult> {
  const { host } = state;
  const ids = { sessionId: MCP_SESSION_ID, terminalId };
  const progress = new Progress(ctx, seconds);
  const exit = host.waitForTerminalExit(ids).then(
    (status) => ({ kind: 'exited' as const, status }),
    (error: unknown) => ({ kind: 'error' as const, error }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ kind: 'timeout' }>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), seconds * 1000);
  });
  const abort = whenAborted(ctx.mcpReq.signal);
  const ticker = progress.enabled
    ? setInterval(() => {
        host.terminalOutput(ids).then(
          (snapshot) => progress.send(snapshot.output),
          () => undefined,
        );
      }, state.progressIntervalMs)
    : undefined;
  let outcome: Awaited<typeof exit> | { kind: 'timeout' } | 'aborted';
  try {
    outcome = await Promise.race([exit, timeout, abort.promise]);
  } finally {
    clearTimeout(timer);
    clearInterval(ticker);
    abort.dispose();
  }
  await progress.flush();
  if (outcome === 'aborted') {
    // A cancelled call kills its command: nothing it started keeps running.
    await release(state, terminalId);
    return cancelled('the call was cancelled: the command was killed');
  }
  if (outcome.kind === 'error') return errorResult(outcome.error);
  return report(state, terminalId);
}

/** The terminal's output and status; a terminal that exited is released (its output stays readable). */
async function report(state: TerminalToolState, terminalId: string): Promise<CallToolResult> {
  const { host } = state;
  const ids = { sessionId: MCP_SESSION_ID, terminalId };
  if (host.terminal(terminalId) === undefined) {
    const final = host.finalOutput(terminalId);
    if (final) return snapshotResult(final, terminalId, false);
  }
  const snapshot = await host.terminalOutput(ids);
  if (snapshot.exitStatus) {
    await release(state, terminalId);
    return snapshotResult(host.finalOutput(terminalId) ?? snapshot, terminalId, false);
  }
  return snapshotResult(snapshot, terminalId, true);
}

async function release(state: TerminalToolState, terminalId: string): Promise<void> {
  await state.host.releaseTerminal({ sessionId: MCP_SESSION_ID, terminalId }).catch(() => undefined);
  state.forget(terminalId);
}

/** Runs `handler`, turning a thrown error into an `isError` result with the host's code. */
async function guarded(handler: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await handler();
  } catch (error) {
    return errorResult(error);
  }
}

const terminalIdParam = z.string().min(1).describe('The terminal_id a `run` call returned');
const waitParam = (what: string) =>
  z
    .number()
    .positive()
    .max(MAX_WAIT_SECONDS)
    .optional()
    .describe(
      `Seconds to wait ${what} (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}). Many clients give up on a call ` +
        'after 60 seconds without progress: for long commands prefer a short wait and call `wait` again.',
    );

/** Registers the tools on one SDK server object; they share `state`. */
export function registerTerminalTools(server: McpServer, state: TerminalToolState): void {
  const { host } = state;

  server.registerTool(
    'run',
    {
      title: 'Run a command',
      description:
        'Runs a command on the user\'s machine under the user\'s policy (allowed directories, allowed programs, sandbox, ' +
        'limits) and waits for it up to `timeout` seconds. Returns the end of its output (the retained output is bounded; ' +
        '`truncated` says when its beginning was dropped) and the exit code; a command still running after `timeout` keeps ' +
        'running and the result gives its `terminal_id` with status "running": then call `wait`, `output`, `kill` or ' +
        '`release`. Without `args`, `command` is a shell line (`sh -c`): pipes, `&&` and redirections work. With `args`, ' +
        '`command` is the program, run directly without a shell. A refusal is an error whose text starts with its code ' +
        '(ERR_POLICY_DENIED, ERR_CWD_OUTSIDE_ROOTS, ERR_NOT_APPROVED, ERR_TOO_MANY_TERMINALS): do not retry a refused ' +
        'command unchanged. No terminal: stdin is closed, so interactive programs must be given their input in flags ' +
        '(or use `terminal_execute`).',
      inputSchema: z.object({
        command: z.string().min(1).describe('A shell line such as `npm test 2>&1 | tail -50` (no `args`), or the program to run (with `args`)'),
        args: z.array(z.string()).optional().describe('Arguments of `command`; when given, `command` is run directly, without a shell'),
        cwd: z
          .string()
          .optional()
          .describe('Working directory: absolute, or relative to the server\'s working directory (default: that directory)'),
        env: z
          .record(z.string(), z.string())
          .optional()
          .describe('Environment variables to set for this command, name to value (some names such as LD_PRELOAD or PATH may be refused)'),
        timeout: waitParam('for the command to finish before returning with status "running"'),
      }),
      annotations: { destructiveHint: true, openWorldHint: true },
    },
    (args, ctx) =>
      guarded(async () => {
        const request = {
          sessionId: MCP_SESSION_ID,
          command: args.command,
          ...(args.args !== undefined ? { args: args.args } : {}),
          ...(args.cwd !== undefined ? { cwd: state.absolute(args.cwd) } : {}),
          ...(args.env !== undefined ? { env: Object.entries(args.env).map(([name, value]) => ({ name, value })) } : {}),
        };
        let create = () => host.createTerminal(request, { signal: ctx.mcpReq.signal });
        if (state.ask) {
          const approval = await host.authorize(request);
          const decision = askUser(state, server, ctx, approval, ['run', request]);
          if (decision === false) return notApproved();
          if (decision !== true) return decision;
          create = () => state.withApproval(() => host.createTerminal(request, { signal: ctx.mcpReq.signal }));
        }
        const { terminalId } = await create();
        const terminal = host.terminal(terminalId);
        const record: TerminalRecord = {
          command: args.command,
          args: args.args ?? [],
          cwd: terminal?.cwd ?? request.cwd,
          pid: terminal?.pid ?? 0,
          startedAt: Date.now(),
          exit: undefined,
        };
        state.record(terminalId, record);
        terminal?.waitForExit().then(
          (status) => (record.exit = status),
          () => undefined,
        );
        return waitAndReport(state, terminalId, args.timeout ?? DEFAULT_WAIT_SECONDS, ctx);
      }),
  );

  server.registerTool(
    'output',
    {
      title: 'Read a command\'s output',
      description:
        'Returns the output of a command started by `run` so far (its end, when it outgrew the retained size) and whether it ' +
        'is still running, without waiting. Once it has exited, its exit code is reported and the terminal is freed.',
      inputSchema: z.object({ terminal_id: terminalIdParam }),
      annotations: { readOnlyHint: true },
    },
    (args) => guarded(() => report(state, args.terminal_id)),
  );

  server.registerTool(
    'wait',
    {
      title: 'Wait for a command',
      description:
        'Waits up to `timeout` seconds for a command started by `run` to finish, then returns its output and exit code, or ' +
        'status "running" if it is still going. Progress notifications carry its newest output meanwhile.',
      inputSchema: z.object({ terminal_id: terminalIdParam, timeout: waitParam('for it to finish') }),
      annotations: { readOnlyHint: true },
    },
    (args, ctx) =>
      guarded(async () => {
        // A released or unknown id is answered by `report` (final output, or ERR_TERMINAL_NOT_FOUND).
        if (host.terminal(args.terminal_id) === undefined) return report(state, args.terminal_id);
        return waitAndReport(state, args.terminal_id, args.timeout ?? DEFAULT_WAIT_SECONDS, ctx);
      }),
  );

  server.registerTool(
    'kill',
    {
      title: 'Stop a command',
      description:
        'Stops a command started by `run` and everything it started (SIGTERM to its process group, SIGKILL after a grace ' +
        'period), then returns its final output and how it ended; the terminal is freed.',
      inputSchema: z.object({ terminal_id: terminalIdParam }),
      annotations: { destructiveHint: true },
    },
    (args) =>
      guarded(async () => {
        if (host.terminal(args.terminal_id) !== undefined) {
          await host.killTerminal({ sessionId: MCP_SESSION_ID, terminalId: args.terminal_id });
          await host.waitForTerminalExit({ sessionId: MCP_SESSION_ID, terminalId: args.terminal_id });
        }
        return report(state, args.terminal_id);
      }),
  );

  server.registerTool(
    'release',
    {
      title: 'Free a terminal',
      description:
        'Frees a terminal started by `run`, stopping its command if it still runs. Finished commands are freed ' +
        'automatically once their exit was reported; use this for a command you no longer need.',
      inputSchema: z.object({ terminal_id: terminalIdParam }),
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    (args) =>
      guarded(async () => {
        const wasLive = host.terminal(args.terminal_id) !== undefined;
        await host.releaseTerminal({ sessionId: MCP_SESSION_ID, terminalId: args.terminal_id });
        state.forget(args.terminal_id);
        return textResult(wasLive ? `released ${args.terminal_id}` : `${args.terminal_id} was already released`, {
          terminal_id: args.terminal_id,
          released: true,
        });
      }),
  );

  server.registerTool(
    'list',
    {
      title: 'List running commands',
      description: 'Lists the commands started by `run` that were not freed yet: terminal_id, command, directory, pid, status.',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
    },
    () =>
      guarded(async () => {
        const terminals = state.live().map(([terminalId, r]) => ({
          terminal_id: terminalId,
          command: r.args.length > 0 ? [r.command, ...r.args].join(' ') : r.command,
          cwd: r.cwd ?? null,
          pid: r.pid,
          status: r.exit ? 'exited' : 'running',
          exit_code: r.exit?.exitCode ?? null,
          running_seconds: Math.round((Date.now() - r.startedAt) / 1000),
        }));
        const text =
          terminals.length === 0
            ? 'no terminals'
            : terminals.map((t) => `${t.terminal_id}  ${t.status}  pid ${t.pid}  ${t.running_seconds}s  ${t.command}`).join('\n');
        return textResult(text, { terminals });
      }),
  );

  if (state.hasSessions) registerSessionTool(server, state);
}

// ---------------------------------------------------------------------------------------------------
// terminal_execute

/** Keeps the last `limit` bytes of `text` (whole characters). */
function tailBytes(text: string, limit: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return { text, cut: false };
  let start = bytes.length - limit;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return { text: bytes.subarray(start).toString('utf8'), cut: true };
}

function registerSessionTool(server: McpServer, state: TerminalToolState): void {
  const { host } = state;
  server.registerTool(
    'terminal_execute',
    {
      title: 'Run in a persistent shell',
      description:
        'Runs a bash command in a persistent shell session (one per `terminal_id`): the working directory, exported ' +
        'variables, functions and background jobs persist between calls. Waits up to `timeout` seconds: a command still ' +
        'running then returns status "running" and keeps running; call again with an empty `command` to see more output, ' +
        'with `is_input: true` to type into it (a line of text, or a key such as C-c, C-d, Up, Enter), or send C-c to ' +
        'interrupt it. Returns the new output (`content`), `exit_code` (null while running or unknown), `status` ' +
        '("completed", "running", or "broken": then use a new terminal_id) and `working_dir`. Commands are checked ' +
        'against the user\'s policy like `run`; under a policy, typed text is refused (it goes to whatever reads the terminal, ' +
        'which no check can judge) and only the keys C-c, C-d, C-\\, C-z and Enter are sent, so give programs their answers ' +
        'in the command (flags, a pipe). ' +
        '`timed_out` says the server\'s time limit stopped the command.',
      inputSchema: z.object({
        command: z
          .string()
          .describe('The bash command (may span lines); "" to collect more output; key names such as `C-c` send keys'),
        is_input: z
          .boolean()
          .optional()
          .describe('true: send `command` as text typed into the running program (followed by Enter unless no_enter)'),
        timeout: waitParam('for the command to finish before returning with status "running"'),
        terminal_id: z
          .string()
          .min(1)
          .max(64)
          .regex(/^[A-Za-z0-9_.-]+$/)
          .optional()
          .describe('Session name (default "default"); a new name opens a new shell in the server\'s working directory'),
        no_enter: z.boolean().optional().describe('With is_input: do not press Enter after the text'),
      }),
      annotations: { destructiveHint: true, openWorldHint: true },
    },
    (args, ctx) =>
      guarded(async () => {
        const sessions = state.sessions();
        const terminalId = args.terminal_id ?? 'default';
        const isInput = args.is_input === true;
        const keys = requestKeys(args.command, isInput);
        // Read where the shell runs (the far end's, with a backend).
        const shellCwd = (): Promise<string | undefined> => sessions.workingDir(terminalId).catch(() => undefined);
        // What the shell gets: a command line as the host checked it (under an allow list, rebuilt from what
        // was checked), typed input as given (checked as a line too when guarded), keys, or "" to poll.
        let command = args.command;
        let newLine = false;
        if (keys !== null) {
          if (state.typedInput !== 'free') guardKeys(keys);
        } else if (!isInput && args.command.trim() !== '') {
          // A new command line is judged by the host's policy in the shell's current directory, and put to the
          // user when the server asks; the shell runs what was judged.
          const cwd = await shellCwd();
          const authorized = await host.authorize({ sessionId: MCP_SESSION_ID, command: args.command, ...(cwd ? { cwd } : {}) });
          if (state.ask) {
            const decision = askUser(state, server, ctx, authorized, ['terminal_execute', terminalId, authorized.cwd, args.command]);
            if (decision === false) return notApproved();
            if (decision !== true) return decision;
          }
          command = sessionLine(authorized);
          newLine = true;
        } else if (isInput && state.typedInput !== 'free' && args.command !== '') {
          // Typed text goes to whatever reads the terminal: the program, an editor or pager it started (vi's
          // `:!cmd`), or the shell, as a command line, once the program ends or after it read part of it
          // (`dd bs=5` eats `echo `), with the shell's history expansion and translations. No check of the
          // text can judge that: under a policy it is refused; asked, the user sees it as what it is.
          if (state.typedInput === 'refuse') refuseTyped();
          guardText(args.command, args.no_enter === true);
          // The answer is bound to the program it names too: another foreground program by the retry is not approved.
          const program = sessions.local ? foregroundProgram(sessions.shellPid(terminalId)) : undefined;
          const decision = askUser(state, server, ctx, undefined, ['terminal_execute:input', terminalId, program ?? null, args.command], {
            message: typedQuestion(terminalId, args.command, program),
            title: 'Type it',
            description: 'Yes to type the text into the terminal, no to refuse it',
          });
          if (decision === false) return notApproved();
          if (decision !== true) return decision;
        }
        const seconds = args.timeout ?? DEFAULT_WAIT_SECONDS;
        const deadline = Date.now() + seconds * 1000;
        const chunkMs = Math.max(100, state.progressIntervalMs);
        const progress = new Progress(ctx, seconds);
        const signal = ctx.mcpReq.signal;
        // Commands and polls ("") are waited for in steps; typed input and keys settle once.
        const polling = !isInput && keys === null;
        let result: ExecuteResult;
        let content = '';
        let truncated = false;
        // The server's --timeout stopped this call's command, or (reported now) the session's previous one.
        let stopped: 'this' | 'previous' | undefined;
        const append = (more: ExecuteResult): void => {
          // Each result's text ends without its last line end: the chunks are lines apart.
          content += content !== '' && more.content !== '' && !content.endsWith('\n') ? `\n${more.content}` : more.content;
          truncated ||= more.truncated;
          const bounded = tailBytes(content, state.outputLimit);
          content = bounded.text;
          truncated ||= bounded.cut;
        };
        // What a --timeout interrupt collected since the session's last call comes first.
        const earlier = await state.takeTimedOut(terminalId);
        if (earlier) {
          append(earlier);
          if (earlier.interrupt?.signal != null) stopped = newLine ? 'previous' : 'this';
        }
        if (polling) state.setWaiting(terminalId, true);
        try {
          try {
            result = await sessions.execute({
              terminalId,
              command,
              isInput,
              noEnter: args.no_enter === true,
              timeoutMs: Math.max(1, polling ? Math.min(chunkMs, deadline - Date.now()) : deadline - Date.now()),
            });
          } catch (error) {
            // Refused (nothing running to type into, ...): what a timeout collected stays for the next call.
            if (earlier) state.keepTimedOut(terminalId, earlier);
            throw error;
          }
          if (newLine) state.startDeadline(terminalId);
          append(result);
          // A command is waited for in short steps, so progress carries its newest output, a cancel stops it
          // soon, and the server's --timeout interrupts it in order.
          while (polling && result.status === 'running' && Date.now() < deadline && !signal.aborted) {
            if (state.isDue(terminalId)) {
              state.clearDeadline(terminalId);
              result = await sessions.interrupt(terminalId);
              append(result);
              stopped = 'this';
              break;
            }
            progress.send(content);
            result = await sessions.execute({ terminalId, command: '', timeoutMs: Math.max(1, Math.min(chunkMs, deadline - Date.now())) });
            append(result);
          }
        } finally {
          if (polling) state.setWaiting(terminalId, false);
        }
        await progress.flush();
        if (signal.aborted && result.status === 'running') {
          await sessions.interrupt(terminalId).catch(() => undefined);
          state.clearDeadline(terminalId);
          state.onSessionCommand?.({
            type: 'session', time: Date.now(), terminalId, command: args.command, isInput, status: 'cancelled',
            exitCode: null, workingDir: result.workingDir,
          });
          return cancelled('the call was cancelled: the command was interrupted (C-c)');
        }
        if (result.status !== 'running') state.clearDeadline(terminalId);
        // Due after this call's last step: interrupted now, reported by the next call.
        else if (state.isDue(terminalId)) state.interruptDue(terminalId);
        state.onSessionCommand?.({
          type: 'session', time: Date.now(), terminalId, command: args.command, isInput, status: result.status,
          exitCode: result.exitCode, workingDir: result.workingDir,
        });
        return sessionResult(result, content, truncated, stopped && { which: stopped, ms: state.commandTimeoutMs! });
      }),
  );
}

/**
 * Keys a guarded session takes: none of them can spell text, so none can make a program (an editor's
 * `:!cmd`, a REPL) or the shell run something. `C-c`, `C-\`, `C-z`: SIGINT, SIGQUIT, SIGTSTP to the
 * foreground group (the terminal's line discipline sends them; a raw-mode program reads a byte it
 * cannot turn into a command alone). `C-d`: end of input (sends what is pending, which nobody typed).
 * `Enter`, `C-m`, `C-j`: a line end, submitting what is pending, again nothing typed. Left out:
 * `Escape` (vi's normal mode, where text becomes commands), `Up`/`Down` (history recall: a line from a
 * history file a command may have written), `Tab` (completion types text), `Left`/`Right` and every
 * editing or meta key (they act only on text, and none can be typed).
 */
const GUARDED_KEYS = new Set(['C-c', 'C-d', 'C-\\', 'C-z', 'Enter', 'C-m', 'C-j']);

/** Under a guard, refuses keys that could type or recall text (Escape, Up, Tab, BSpace, M-x, ...): see `GUARDED_KEYS`. */
function guardKeys(keys: readonly string[]): void {
  const bad = keys.find((k) => !GUARDED_KEYS.has(k));
  if (bad === undefined) return;
  throw new AcpTerminalError(
    'ERR_POLICY_DENIED',
    `command: the key ${JSON.stringify(bad)} is refused under this server's command policy: keys that type, recall or edit text ` +
      `reach whatever reads the terminal (an editor's commands, history), which no check can judge; send ${[...GUARDED_KEYS].join(', ')}`,
    { field: 'command', reason: 'typed-input', key: bad },
  );
}

/**
 * Refuses typed text under a command policy: it goes to whatever reads the terminal, as typed, which no
 * check can judge (a program that reads part of it leaves the rest to the shell; an editor runs `:!cmd`;
 * the shell expands history and translations in it).
 */
function refuseTyped(): never {
  throw new AcpTerminalError(
    'ERR_POLICY_DENIED',
    'is_input: typed text is refused under this server\'s command policy: it goes as typed to whatever reads the terminal ' +
      '(the running program, an editor or pager it started, or the shell once the program ends or reads only part of it), ' +
      'and no check of the text can judge what that does; give the program its answers in the command itself (flags, ' +
      '`printf \'y\\n\' | prog`, a here-document), or interrupt it with C-c; keys C-c, C-d, C-\\, C-z and Enter are accepted',
    { field: 'is_input', reason: 'typed-input' },
  );
}

/**
 * The foreground program of a session's terminal, for the question about typed input: the executable of
 * the leader of the terminal's foreground process group (`tpgid` of the shell's `/proc/PID/stat`), with
 * its pid; the shell itself when it reads (a `read` builtin). Undefined where `/proc` does not tell.
 */
function foregroundProgram(shellPid: number | undefined): { pid: number; exe: string } | undefined {
  if (shellPid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${shellPid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp session tty_nr tpgid.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(fields[5]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return { pid, exe: readlinkSync(`/proc/${pid}/exe`) };
  } catch {
    return undefined;
  }
}

/** The question put to the user about typed input under `--ask`: typed input, not a command line. */
function typedQuestion(terminalId: string, text: string, program: { pid: number; exe: string } | undefined): string {
  const target = program ? `${program.exe} (pid ${program.pid})` : 'the program running';
  return [
    `Type this text into ${target} in terminal ${JSON.stringify(terminalId)}?`,
    '',
    JSON.stringify(text),
    '',
    'This is not a command the policy checked: it goes as typed to whatever reads the terminal. That program may treat it ' +
      'as its own commands (an editor, a REPL, a shell escape), and what it does not read (all of it, if it ends first) ' +
      'is read by the shell as a command line.',
  ].join('\n');
}

/**
 * Under a guard, typed text as the line it would become: whole (Enter follows it: no `no_enter`), without
 * control bytes (which the terminal's line editing acts on: C-u, C-w, erase, C-v) but tabs and line ends.
 */
function guardText(text: string, noEnter: boolean): string {
  const refuse = (field: string, why: string): never => {
    throw new AcpTerminalError('ERR_POLICY_DENIED', `${field}: ${why}`, { field, reason: 'typed-input' });
  };
  if (noEnter) {
    refuse('no_enter', 'typed input must end with Enter under this server\'s command policy: text left without it could be completed into an unchecked command line');
  }
  const body = text.endsWith('\r\n') ? text.slice(0, -2) : /[\r\n]$/.test(text) ? text.slice(0, -1) : text;
  // Tabs and line ends are kept; every other C0 byte and DEL is something the line discipline may act on.
  const index = [...body].findIndex((ch) => {
    const code = ch.charCodeAt(0);
    return (code < 0x20 && ch !== '\t' && ch !== '\n') || code === 0x7f;
  });
  if (index !== -1) {
    const code = [...body][index]!.charCodeAt(0);
    refuse(
      'command',
      `typed input holds the control byte 0x${code.toString(16).padStart(2, '0')} at character ${index}, refused under this server's command ` +
        'policy (the terminal\'s line editing would change the line it could become); send keys such as C-c by name',
    );
  }
  return body;
}

/** The line a session runs for a checked command: the host's line, or its argv quoted for bash. */
function sessionLine(authorized: AuthorizedRequest): string {
  return authorized.shellLine ? authorized.runCommand : [authorized.runCommand, ...(authorized.runArgs ?? [])].map(shellQuote).join(' ');
}

function sessionResult(
  result: ExecuteResult,
  content: string,
  truncated: boolean,
  timedOut: { which: 'this' | 'previous'; ms: number } | undefined,
): CallToolResult {
  const notes: string[] = [];
  if (truncated) notes.push('output truncated: only its end is shown');
  if (timedOut) {
    const what = timedOut.which === 'this' ? 'the command was stopped' : 'the previous command was stopped (its output comes first)';
    notes.push(`${what}: it ran longer than the server's limit of ${timedOut.ms / 1000} s`);
  }
  if (result.status === 'running') notes.push('still running: call again with an empty command to see more, or send C-c with is_input');
  else if (result.status === 'broken') notes.push(`session broken (${result.why ?? 'no reason given'}): use a new terminal_id`);
  else notes.push(`exit code ${result.exitCode ?? 'unknown'}`);
  if (result.sessionEnded) notes.push('the shell ended; the next call starts a new one');
  notes.push(`cwd ${result.workingDir}`);
  const text = content + (content === '' || content.endsWith('\n') ? '' : '\n') + `[${notes.join('; ')}]`;
  return textResult(text, {
    content,
    exit_code: result.exitCode,
    status: result.status,
    working_dir: result.workingDir,
    terminal_id: result.terminalId,
    truncated,
    ...(timedOut ? { timed_out: timedOut.which } : {}),
    ...(result.why !== undefined ? { why: result.why } : {}),
  });
}
