#!/usr/bin/env node
// Drives one real third-party ACP agent (installed by scripts/real-agents.sh) over stdio against this
// package's TerminalHost + registerTerminalHandlers, with a scripted model: a fake OpenAI/Mistral/Anthropic
// HTTP server on 127.0.0.1 (in this process) answers the agent's model requests with the tool call each
// scenario needs, so the agent calls terminal/create, output, wait_for_exit, kill and release for real.
// Each scenario checks what the host served (the calls, the request's shape, the exit status, truncation,
// that nothing is left running) and what the agent handed back to its model (the tool result).
// Usage: node scripts/real-agents.mjs <agent> <install dir> [--quick]   (prints "N passed, N failed")
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import acpTerminal from '../lib/index.js';

const { TerminalHost, registerTerminalHandlers } = acpTerminal;
const [agentName, installArg, ...flags] = process.argv.slice(2);
const installDir = installArg && resolve(installArg);
const quick = flags.includes('--quick');
const verbose = !!process.env.REAL_AGENTS_VERBOSE;
const log = (...a) => verbose && console.error('[driver]', ...a);

// ---------------------------------------------------------------------------------------------------
// The scripted model: each request either gets the next queued tool call (when the agent offers that tool
// and its last message is not a tool result), or plain text. Tool results are recorded for the checks.
class ScriptedModel {
  queue = [];
  toolResults = [];
  requests = [];
  seq = 0;

  listen() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => this.handle(req, res, body));
    });
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve(this.server.address().port)));
  }

  close() {
    this.server.closeAllConnections?.();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  handle(req, res, raw) {
    let body = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      /* not JSON */
    }
    this.requests.push({ method: req.method, url: req.url });
    log(req.method, req.url, body.stream ? 'stream' : '', (body.messages ?? []).length, 'messages');
    if (req.method === 'POST' && /\/messages(\?|$)/.test(req.url) && !/count_tokens/.test(req.url)) return this.anthropic(res, body);
    if (req.method === 'POST' && /\/messages\/count_tokens/.test(req.url)) return json(res, { input_tokens: 10 });
    if (req.method === 'POST' && /chat\/completions/.test(req.url)) return this.openai(res, body);
    if (req.method === 'GET' && /\/models/.test(req.url)) return json(res, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'me' }] });
    json(res, { error: { message: `scripted model: no ${req.method} ${req.url}` } }, 404);
  }

  /** What to answer: `{ call: {name, args} }` or `{ text }`. */
  decide(toolNames, lastToolResult) {
    if (lastToolResult !== undefined) {
      this.toolResults.push(lastToolResult);
      return { text: 'done' };
    }
    const next = this.queue[0];
    if (next && toolNames.includes(next.name)) {
      this.queue.shift();
      return { call: next };
    }
    return { text: 'ok' };
  }

  openai(res, body) {
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1];
    const toolNames = (body.tools ?? []).map((t) => t.function?.name ?? t.name);
    const d = this.decide(toolNames, last?.role === 'tool' ? textOf(last.content) : undefined);
    const id = `chatcmpl-${++this.seq}`;
    const model = body.model ?? 'scripted';
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const toolCalls = d.call ? [{ index: 0, id: `call_${this.seq}`, type: 'function', function: { name: d.call.name, arguments: JSON.stringify(d.call.args) } }] : undefined;
    const finish = d.call ? 'tool_calls' : 'stop';
    if (!body.stream) {
      const message = { role: 'assistant', content: d.text ?? '', ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _i, ...c }) => c) } : {}) };
      return json(res, { id, object: 'chat.completion', created: 0, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta, finish_reason = null, extra = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`);
    chunk(d.call ? { role: 'assistant', content: '', tool_calls: toolCalls } : { role: 'assistant', content: d.text });
    chunk({ content: '' }, finish, { usage });
    res.end('data: [DONE]\n\n');
  }

  anthropic(res, body) {
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1];
    let toolResult;
    if (last?.role === 'user' && Array.isArray(last.content)) {
      const r = last.content.find((b) => b.type === 'tool_result');
      if (r) toolResult = textOf(r.content);
    }
    const toolNames = (body.tools ?? []).map((t) => t.name);
    const d = this.decide(toolNames, toolResult);
    const id = `msg_${++this.seq}`;
    const content = d.call ? [{ type: 'tool_use', id: `toolu_${this.seq}`, name: d.call.name, input: d.call.args }] : [{ type: 'text', text: d.text }];
    const stop = d.call ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: 10, output_tokens: 5 };
    if (!body.stream) return json(res, { id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stop, stop_sequence: null, usage });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message_start', { message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } });
    if (d.call) {
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${this.seq}`, name: d.call.name, input: {} } });
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(d.call.args) } });
    } else {
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: d.text } });
    }
    ev('content_block_stop', { index: 0 });
    ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
    ev('message_stop', {});
    res.end();
  }
}

function json(res, value, status = 200) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : (p.text ?? textOf(p.content) ?? ''))).join('\n');
  return content == null ? '' : JSON.stringify(content);
}



// ---------------------------------------------------------------------------------------------------
// The agents: how to start each one, its configuration (a private HOME; the model pointed at the scripted
// server), and how its model calls its shell tool. `timeoutArgs(ms)` adds the tool's own timeout, for the
// kill scenario; an agent whose tool has none is stopped by the client's `session/cancel` instead.
const agents = {
  'fast-agent': {
    // Its own scripted model: `***CALL_TOOL <tool> <json>` in the prompt is the model's tool call.
    start: ({ home }) => {
      const cfg = join(home, 'fastagent.config.yaml');
      writeFileSync(cfg, 'default_model: passthrough\nlogger: {level: error}\n');
      return { command: join(installDir, 'bin/fast-agent-acp'), args: ['--model', 'passthrough', '--config-path', cfg, '--shell'] };
    },
    prompt: (command, extra = {}) => `***CALL_TOOL execute ${JSON.stringify({ command, ...extra })}`,
    argv: true, // its tool takes `args`: the argv scenario sends the program and its arguments apart
  },
  'kimi-cli': {
    // Moonshot's kimi-cli; an OpenAI-compatible provider pointed at the scripted model, approvals on (yolo off).
    start: ({ home, baseUrl }) => {
      const share = join(home, '.kimi');
      mkdirSync(share, { recursive: true });
      writeFileSync(
        join(share, 'config.toml'),
        [
          'default_model = "scripted"',
          'telemetry = false',
          '[providers.local]',
          'type = "openai_legacy"',
          `base_url = "${baseUrl}/v1"`,
          'api_key = "sk-scripted"',
          '[models.scripted]',
          'provider = "local"',
          'model = "scripted"',
          'max_context_size = 128000',
          '',
        ].join('\n'),
      );
      // Its ACP server refuses session/new without a stored Kimi Code login, whatever the configured
      // provider: a dummy token (never sent anywhere: the provider above is the scripted model; it expires
      // in a year, so no refresh is attempted) stands in for `kimi login`.
      mkdirSync(join(share, 'credentials'));
      const year = 365 * 24 * 3600;
      const token = { access_token: 'offline-dummy', refresh_token: '', expires_at: Date.now() / 1000 + year, scope: '', token_type: 'Bearer', expires_in: year };
      writeFileSync(join(share, 'credentials/kimi-code.json'), JSON.stringify(token));
      return { command: join(installDir, 'bin/kimi'), args: ['acp'], env: { KIMI_SHARE_DIR: share, KIMI_CLI_NO_AUTO_UPDATE: '1' } };
    },
    call: (command, extra) => ({ name: 'Shell', args: { command, ...extra } }),
    timeoutArgs: (ms) => ({ timeout: Math.max(1, Math.round(ms / 1000)) }),
  },
  'mistral-vibe': {
    // Mistral's vibe; an OpenAI-compatible provider (backend "generic") pointed at the scripted model,
    // telemetry and update checks off.
    start: ({ home, baseUrl }) => {
      const vibeHome = join(home, '.vibe');
      mkdirSync(vibeHome, { recursive: true });
      writeFileSync(
        join(vibeHome, 'config.toml'),
        [
          'active_model = "scripted"',
          'enable_telemetry = false',
          'enable_update_checks = false',
          'enable_auto_update = false',
          'enable_connectors = false',
          '[[providers]]',
          'name = "local"',
          `api_base = "${baseUrl}/v1"`,
          'api_key_env_var = ""',
          'backend = "generic"',
          '[[models]]',
          'name = "scripted"',
          'provider = "local"',
          'alias = "scripted"',
          '',
        ].join('\n'),
      );
      return { command: join(installDir, 'bin/vibe-acp'), args: [], env: { VIBE_HOME: vibeHome } };
    },
    call: (command, extra) => ({ name: 'bash', args: { command, ...extra } }),
    timeoutArgs: (ms) => ({ timeout: Math.max(1, Math.round(ms / 1000)) }),
  },
  'claude-code-acp': {
    // Zed's Claude agent; its Claude Code CLI talks to ANTHROPIC_BASE_URL (the scripted model).
    start: ({ baseUrl }) => ({
      command: process.execPath,
      args: [join(installDir, 'node_modules/@zed-industries/claude-code-acp/dist/index.js')],
      env: {
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-scripted',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
        IS_SANDBOX: '1', // Claude Code refuses to skip its permission prompts as root otherwise
      },
    }),
    call: (command, extra) => ({ name: 'mcp__acp__Bash', args: { command, timeout: 60_000, description: 'scripted', ...extra } }),
    timeoutArgs: (ms) => ({ timeout: ms }),
  },
};

// ---------------------------------------------------------------------------------------------------
// The scenarios: a command for the agent's shell tool and the checks on what the host served.
const scenarios = [
  {
    name: 'shell line (pipe, &&)',
    command: "printf 'one\\n' && printf 'two\\n' | tr a-z A-Z",
    check: (o) => [
      ['one terminal created', o.created.length === 1],
      ['exit code 0', o.exit?.exitCode === 0],
      ['the output reached the agent', /one[\s\S]*TWO/.test(o.agentSaw)],
    ],
  },
  {
    name: 'quoted arguments (argv fidelity)',
    command: `printf '%s|' 'a b' "c'd" e`,
    argv: ['printf', '%s|', 'a b', "c'd", 'e'],
    check: (o) => [
      ['exit code 0', o.exit?.exitCode === 0],
      ['arguments kept whole', o.final?.output.includes("a b|c'd|e|") && o.agentSaw.includes("a b|c'd|e|")],
    ],
  },
  {
    name: 'failing command',
    command: 'echo oops >&2; exit 3',
    check: (o) => [
      ['exit code 3 served', o.exit?.exitCode === 3 && o.exit?.signal == null],
      ['stderr captured', o.final?.output.includes('oops')],
      ['the agent reported the failure', /oops/.test(o.agentSaw) && /3/.test(o.agentSaw)],
    ],
  },
  {
    name: 'truncated output',
    command: 'seq 1 200000',
    check: (o) => [
      ['exit code 0', o.exit?.exitCode === 0],
      ['output truncated at the agent\'s limit', o.calls.some((c) => c.method === 'terminal/output' && c.phase === 'completed' && c.truncated === true)],
      ['the tail kept (200000, not 1)', o.final?.output.trimEnd().endsWith('\n200000') && !o.final.output.startsWith('1\n2\n')],
      ['the agent saw the tail', o.agentSaw.includes('200000')],
    ],
  },
  {
    name: 'kill on timeout / cancel',
    command: 'sleep 30; echo finished',
    kill: true,
    check: (o) => [
      ['stopped by a signal', o.exit?.exitCode == null && !!o.exit?.signal],
      ['stopped early (< 20 s)', o.elapsedMs < 20_000],
      ['never finished', !o.final?.output.includes('finished')],
      [`stopped by ${o.stoppedBy}`, o.stoppedBy !== 'nobody'],
    ],
  },
];

// ---------------------------------------------------------------------------------------------------
async function main() {
  const agent = agents[agentName];
  if (!agent || !installDir) {
    console.error(`usage: real-agents.mjs <${Object.keys(agents).join('|')}> <install dir> [--quick]`);
    process.exit(2);
  }
  const model = new ScriptedModel();
  const port = await model.listen();
  const home = mkdtempSync(join(tmpdir(), `real-agent-${agentName}-`));
  const work = join(home, 'project');
  mkdirSync(work);
  const host = new TerminalHost({ cwd: work, killAfterCancelMs: 5000 });
  const audit = [];
  const calls = [];
  const creates = [];
  host.onEvent((e) => audit.push(e));
  host.onCall((e) => calls.push(e));
  host.onCreate(({ terminalId, request }) => creates.push({ terminalId, request }));
  const updates = [];
  const app = registerTerminalHandlers(client({ name: 'acp-terminal-real-agents' }), host)
    .onNotification('session/update', ({ params }) => updates.push(params.update))
    .onRequest('session/request_permission', ({ params }) => {
      const allow = params.options.find((o) => o.kind === 'allow_always') ?? params.options.find((o) => o.kind === 'allow_once') ?? params.options[0];
      return { outcome: { outcome: 'selected', optionId: allow.optionId } };
    });

  const spec = agent.start({ home, work, baseUrl: `http://127.0.0.1:${port}` });
  const env = { ...process.env, HOME: home, NO_COLOR: '1', ...(spec.env ?? {}) };
  // Its own process group: agents start helpers (claude-code-acp runs the Claude Code CLI), all stopped at the end.
  const child = spawn(spec.command, spec.args, { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* already gone */
    }
  };
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-20_000);
    if (verbose) process.stderr.write(d);
  });
  const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const results = [];
  let passed = 0;
  let failed = 0;
  const record = (scenario, what, ok) => {
    if (ok) passed++;
    else failed++;
    results.push(`${ok ? 'ok    ' : 'FAILED'} ${agentName}: ${scenario}: ${what}`);
    console.log(results[results.length - 1]);
  };
  try {
    const init = await withTimeout(connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientInfo: { name: 'acp-terminal-real-agents', version: '0' } }), 120_000, 'initialize');
    log('initialize', JSON.stringify(init.agentInfo ?? {}));
    const { sessionId } = await withTimeout(connection.agent.request('session/new', { cwd: work, mcpServers: [] }), 120_000, 'session/new');
    for (const scenario of quick ? scenarios.slice(0, 3) : scenarios) {
      const mark = { audit: audit.length, calls: calls.length, creates: creates.length, updates: updates.length, results: model.toolResults.length };
      const started = Date.now();
      let command = scenario.command;
      let extra = scenario.kill && agent.timeoutArgs ? agent.timeoutArgs(1500) : {};
      if (scenario.argv && agent.argv) [command, extra] = [scenario.argv[0], { args: scenario.argv.slice(1) }];
      const text = agent.prompt ? agent.prompt(command, extra) : 'run it';
      if (!agent.prompt) model.queue.push(agent.call(command, extra));
      const prompt = connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
      let cancelled = false;
      if (scenario.kill && !agent.timeoutArgs) {
        // No timeout of its own: the user presses stop once the command runs.
        await until(() => creates.length > mark.creates, 60_000);
        await sleep(1500);
        cancelled = true;
        await connection.agent.notify('session/cancel', { sessionId });
      }
      let stopReason;
      try {
        ({ stopReason } = await withTimeout(prompt, 120_000, 'session/prompt'));
      } catch (e) {
        stopReason = `error: ${e.message}`;
      }
      const ids = creates.slice(mark.creates).map((c) => c.terminalId);
      // Give the agent a moment to release what it created (and the host's cancel grace, when cancelled).
      await until(() => ids.every((id) => audit.some((e) => e.type === 'released' && e.terminalId === id)), cancelled ? 8000 : 3000);
      const scAudit = audit.slice(mark.audit);
      const scCalls = calls.slice(mark.calls);
      const id = ids[0];
      const exitedEv = scAudit.find((e) => e.type === 'exited' && e.terminalId === id);
      const killedEv = scAudit.find((e) => e.type === 'killed' && e.terminalId === id);
      const releasedEv = scAudit.find((e) => e.type === 'released' && e.terminalId === id);
      const stoppedBy = killedEv?.reason === 'request' ? 'terminal/kill' : killedEv?.reason === 'cancel' ? "the host's kill after session/cancel" : releasedEv?.wasRunning ? 'terminal/release' : 'nobody';
      const updateText = updates.slice(mark.updates).flatMap((u) => (Array.isArray(u.content) ? u.content : []).map((c) => c.content?.text ?? '')).join('\n');
      const o = {
        created: ids,
        request: creates.slice(mark.creates)[0]?.request,
        exit: exitedEv?.exitStatus,
        final: id ? (host.finalOutput(id) ?? (await host.terminal(id)?.currentOutput())) : undefined,
        calls: scCalls,
        agentSaw: [...model.toolResults.slice(mark.results), updateText].join('\n'),
        elapsedMs: Date.now() - started,
        stoppedBy,
      };
      const methods = [...new Set(scCalls.filter((c) => c.phase === 'running').map((c) => c.method.replace('terminal/', '')))].join(',');
      const req = o.request ? JSON.stringify({ command: o.request.command, args: o.request.args, outputByteLimit: o.request.outputByteLimit }) : 'none';
      console.log(`# ${scenario.name}: stopReason=${stopReason} calls=${methods} request=${req.length > 160 ? `${req.slice(0, 157)}...` : req}`);
      if (!id) {
        record(scenario.name, 'the agent created a terminal', false);
        continue;
      }
      for (const [what, ok] of scenario.check(o)) record(scenario.name, what, !!ok);
      if (!cancelled) record(scenario.name, 'released by the agent', releasedEv?.reason === 'request');
      else console.log(`# ${scenario.name}: after session/cancel the agent ${releasedEv ? 'released its terminal' : 'did not release its terminal (the host killed it; it stays readable until released)'}`);
    }
    const live = host.listTerminals();
    record('end', 'no command left running on the host', live.every((t) => !t.running));
    if (live.length) console.log(`# end: ${live.length} terminal(s) never released by the agent: ${live.map((t) => t.commandLine).join(' ; ')}`);
  } catch (e) {
    record('run', `the agent answered (${e.message})`, false);
    console.error(`--- ${agentName} stderr (tail) ---\n${stderr.slice(-4000)}`);
  } finally {
    connection.close();
    const gone = new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
    killGroup('SIGTERM');
    const hard = setTimeout(() => killGroup('SIGKILL'), 3000);
    await gone;
    clearTimeout(hard);
    await sleep(200); // helpers of the group that outlived the leader's exit by a moment
    killGroup('SIGKILL');
    await host.close();
    await model.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
  console.log(`${agentName}: ${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(pred, ms) {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await sleep(50);
}
function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
}

await main();
