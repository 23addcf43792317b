// The ACP layers on Windows, unchanged: TerminalHost, registerTerminalHandlers (through
// createTestClient and an in-process agent), and the v2 bridge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { acp, root, tempDir, NO_POWERSHELL, NO_BASH } from './helpers.mjs';

const require = createRequire(`${root}/package.json`);

test('TerminalHost: create, output, waitForExit, release for a session', async () => {
  const host = new acp.TerminalHost();
  try {
    const { terminalId } = await host.createTerminal({ sessionId: 's1', command: 'echo host-ok& exit /b 3' });
    const exit = await host.waitForTerminalExit({ sessionId: 's1', terminalId });
    assert.deepEqual(exit, { exitCode: 3, signal: null });
    const out = await host.terminalOutput({ sessionId: 's1', terminalId });
    assert.equal(out.output, 'host-ok\r\n');
    await host.releaseTerminal({ sessionId: 's1', terminalId });
  } finally {
    await host.close();
  }
});

test('TerminalHost: kill of a running terminal reports exitCode null and a signal', async () => {
  const host = new acp.TerminalHost();
  try {
    const { terminalId } = await host.createTerminal({ sessionId: 's1', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] });
    await host.killTerminal({ sessionId: 's1', terminalId });
    const exit = await host.waitForTerminalExit({ sessionId: 's1', terminalId });
    assert.equal(exit.exitCode, null);
    assert.ok(['SIGTERM', 'SIGKILL'].includes(exit.signal), JSON.stringify(exit));
  } finally {
    await host.close();
  }
});

/** Runs a request through a host to its end: the output, or the error it was refused with. */
async function hostRun(host, request) {
  const { terminalId } = await host.createTerminal({ sessionId: 's1', ...request });
  const exit = await host.waitForTerminalExit({ sessionId: 's1', terminalId });
  const { output } = await host.terminalOutput({ sessionId: 's1', terminalId });
  await host.releaseTerminal({ sessionId: 's1', terminalId });
  return { exit, output };
}

/**
 * Two directories holding a batch file of the same name: the host's (prints `real`) and the
 * agent's (writes a marker file). What the policy judged must be what runs.
 */
function twoTools() {
  const { dir, remove } = tempDir();
  const real = path.join(dir, 'real');
  const evil = path.join(dir, 'evil');
  const marker = path.join(dir, 'INJECTED');
  for (const d of [real, evil]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(real, 'acp-tool.cmd'), '@echo off\r\necho real\r\n');
  fs.writeFileSync(path.join(evil, 'acp-tool.cmd'), `@echo off\r\ntype nul > "${marker}"\r\necho evil\r\n`);
  return { real, evil, marker, tool: path.join(real, 'acp-tool.cmd'), remove };
}

test("TerminalHost command policy: a program is found through the host's PATH, never the request's (any case of Path)", async () => {
  const t = twoTools();
  const host = new acp.TerminalHost({
    env: { PATH: `${t.real};${process.env.PATH}` },
    commandPolicy: { allow: ['acp-tool'] },
    envPolicy: { allow: ['PATH'] },
  });
  try {
    for (const name of ['PATH', 'Path', 'path']) {
      const r = await hostRun(host, { command: 'acp-tool', args: ['x'], env: [{ name, value: t.evil }] });
      assert.equal(r.output, 'real\r\n', `request env ${name}`);
    }
    assert.equal(fs.existsSync(t.marker), false);
  } finally {
    await host.close();
    t.remove();
  }
});

test('TerminalHost env policy: the request may not set PATH (any case), ComSpec (the cmd that runs pipes and batch files) or PATHEXT', async () => {
  const t = twoTools();
  const host = new acp.TerminalHost({ env: { PATH: `${t.real};${process.env.PATH}` }, commandPolicy: { allow: ['acp-tool'] } });
  try {
    for (const name of ['PATH', 'Path', 'path', 'ComSpec', 'COMSPEC', 'PATHEXT']) {
      await assert.rejects(host.createTerminal({ sessionId: 's1', command: 'acp-tool', env: [{ name, value: t.evil }] }), (e) => {
        assert.equal(e.code, 'ERR_POLICY_DENIED', `${name}: ${e.message}`);
        assert.equal(e.details?.name, name);
        return true;
      });
    }
    assert.equal(fs.existsSync(t.marker), false);
  } finally {
    await host.close();
    t.remove();
  }
});

test("TerminalHost command policy: a shell line's words are judged through the PATH cmd will have, whatever the case of its name", async () => {
  // envPolicy allows PATH: a shell line's programs are then looked up through the request's PATH
  // (the one cmd.exe will search). Spelled `Path`, it is still that PATH.
  const t = twoTools();
  // A function rule (it names the program exactly, matched on the resolved path, in any case): only the
  // host's acp-tool.cmd is allowed.
  const onlyReal = (cmd) => typeof cmd.path === 'string' && cmd.path.toLowerCase() === t.tool.toLowerCase();
  const host = new acp.TerminalHost({ env: { PATH: `${t.real};${process.env.PATH}` }, commandPolicy: { allow: [onlyReal] }, envPolicy: { allow: ['PATH'] } });
  try {
    // Control: the rule admits the host's program.
    assert.equal((await hostRun(host, { command: 'acp-tool x' })).output, 'real\r\n');
    let outcome;
    try {
      outcome = (await hostRun(host, { command: 'acp-tool x', env: [{ name: 'Path', value: `${t.evil};${process.env.PATH}` }] })).output;
    } catch (e) {
      outcome = e.code;
    }
    assert.equal(fs.existsSync(t.marker), false, `the agent's acp-tool ran (${outcome})`);
    assert.equal(outcome, 'ERR_POLICY_DENIED');
  } finally {
    await host.close();
    t.remove();
  }
});

test('TerminalHost command policy: a shell line is judged as cmd.exe reads it (single quotes do not quote in cmd)', async () => {
  // bash reads `echo '...'` as one echo; cmd.exe, which runs the line, reads the & inside the
  // single quotes as command separators and runs the agent's script.
  const t = twoTools();
  const host = new acp.TerminalHost({ commandPolicy: { allow: ['echo'] } });
  try {
    for (const line of [`echo ' & "${t.evil}\\acp-tool.cmd" & rem '`, `echo ^" & "${t.evil}\\acp-tool.cmd" & rem ^"`]) {
      let outcome;
      try {
        outcome = (await hostRun(host, { command: line })).output;
      } catch (e) {
        outcome = e.code;
      }
      assert.equal(fs.existsSync(t.marker), false, `${line}: the agent's script ran (${JSON.stringify(outcome)})`);
      assert.equal(outcome, 'ERR_POLICY_DENIED', line);
    }
  } finally {
    await host.close();
    t.remove();
  }
});

test('TerminalHost command policy: a deny rule holds for every spelling Windows runs (case, extension, absolute path)', async () => {
  const t = twoTools();
  const host = new acp.TerminalHost({ env: { PATH: `${t.real};${process.env.PATH}` }, commandPolicy: { deny: ['acp-tool'] } });
  const byPath = new acp.TerminalHost({ env: { PATH: `${t.real};${process.env.PATH}` }, commandPolicy: { deny: [t.tool] } });
  const ran = [];
  try {
    for (const [h, command] of [
      [host, 'acp-tool'],
      [host, 'ACP-TOOL'],
      [host, 'acp-tool.cmd'],
      [host, t.tool],
      [byPath, 'acp-tool'],
      [byPath, t.tool.toUpperCase()],
    ]) {
      try {
        const { terminalId } = await h.createTerminal({ sessionId: 's1', command, args: ['x'] });
        await h.releaseTerminal({ sessionId: 's1', terminalId });
        ran.push(`${command} (deny ${h === host ? "'acp-tool'" : 'by absolute path'})`);
      } catch (e) {
        assert.equal(e.code, 'ERR_POLICY_DENIED', `${command}: ${e.code} ${e.message}`);
      }
    }
    assert.deepEqual(ran, []);
  } finally {
    await host.close();
    await byPath.close();
    t.remove();
  }
});

test("TerminalHost shell option: 'cmd' is found through the host's PATH (cmd.exe) and runs the line as cmd does", async () => {
  const host = new acp.TerminalHost({ shell: 'cmd' });
  try {
    const r = await hostRun(host, { command: 'echo [%OS%]& exit /b 4' });
    assert.deepEqual(r, { exit: { exitCode: 4, signal: null }, output: '[Windows_NT]\r\n' });
  } finally {
    await host.close();
  }
});

test("TerminalHost shell option: 'powershell' is found through the host's PATH and runs the line", { skip: NO_POWERSHELL }, async () => {
  const host = new acp.TerminalHost({ shell: 'powershell' });
  try {
    assert.equal((await hostRun(host, { command: 'Write-Output ("ps" + 1)' })).output.trim(), 'ps1');
  } finally {
    await host.close();
  }
});

test("TerminalHost shell option: 'bash' is found through the host's PATH and runs the line", { skip: NO_BASH }, async () => {
  const host = new acp.TerminalHost({ shell: 'bash' });
  try {
    assert.equal((await hostRun(host, { command: 'echo $((6 * 7))' })).output.trim(), '42');
  } finally {
    await host.close();
  }
});

test('createTestClient + registerTerminalHandlers: an agent runs a command in the client terminal', async () => {
  const { agent, PROTOCOL_VERSION } = require('@agentclientprotocol/sdk');
  const app = agent({ name: 'win-agent' })
    .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }))
    .onRequest('session/new', () => ({ sessionId: 's1' }))
    .onRequest('session/prompt', async (ctx) => {
      const { sessionId } = ctx.params;
      const terminal = await ctx.client.createTerminal({ sessionId, command: 'echo via-acp' });
      await ctx.client.notify('session/update', {
        sessionId,
        update: { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'echo', content: [{ type: 'terminal', terminalId: terminal.id }] },
      });
      await terminal.waitForExit();
      return { stopReason: 'end_turn' };
    });
  const tc = await acp.createTestClient();
  try {
    const { agent: conn } = await tc.connect(app);
    const session = await conn.buildSession(process.cwd()).start();
    await session.prompt('run it');
    const [id] = tc.terminalIds();
    const out = await tc.output(id);
    assert.equal(out.output, 'via-acp\r\n');
    assert.deepEqual(out.exitStatus, { exitCode: 0, signal: null });
  } finally {
    await tc.close();
  }
});

test('v2 bridge: startV2Terminal sends the updates and the exit status', async () => {
  const updates = [];
  const bridge = await acp.startV2Terminal({ sessionId: 's1', command: 'echo v2-ok' }, { send: (n) => void updates.push(n) });
  const exitStatus = await bridge.done;
  assert.deepEqual(exitStatus, { exitCode: 0, signal: null });
  const bytes = updates
    .map((n) => n.update ?? n.params?.update)
    .filter((u) => u?.sessionUpdate === 'terminal_output_chunk')
    .map((u) => Buffer.from(u.data, 'base64').toString())
    .join('');
  assert.equal(bytes, 'v2-ok\r\n');
  await bridge.terminal.release();
});
