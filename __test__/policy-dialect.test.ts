// Shell lines run by cmd.exe or PowerShell (Windows) are judged by a bash analysis: under an allow list,
// whatever those shells read differently is refused. Each line below passes the bash reading (the first
// expectation shows it: the policy alone lets it through) yet makes cmd.exe run a program nobody checked.
import { childPath } from '../ts/host-options';
import { checkCommand, compileCommandPolicy, shellDialect, type CommandCheck } from '../ts/policy';

const policy = compileCommandPolicy({ allow: ['git', 'echo'] }, 'commandPolicy')!;
// Resolution as on a machine where git exists (the analysis looks programs up; cmd builtins are not found).
const resolve = (word: string): string => {
  if (word === 'git') return 'C:/Program Files/Git/cmd/git.exe';
  throw Object.assign(new Error(`${word} not found`), { code: 'ENOENT' });
};
const check = (command: string, dialect?: CommandCheck['dialect']): CommandCheck => ({
  command,
  args: [],
  shellLine: true,
  cwd: undefined,
  path: undefined,
  resolve,
  ...(dialect ? { dialect } : {}),
});

describe('shell lines of another dialect under an allow list', () => {
  // What cmd.exe does with each line, in words.
  const cmdBypasses: Array<[string, string]> = [
    ["git log 'x & calc'", "' does not quote for cmd: calc runs"],
    ['git log %EVIL%', '% expands before cmd splits commands (EVIL may hold & calc)'],
    ['git log ^& calc', '^ escapes for cmd only'],
    ['git log # & calc', '# is a comment for bash only: cmd runs calc'],
    ['git log "a\\" & calc "', '\\" escapes for bash only: cmd closes the quote and runs calc'],
    ['x=1 git status', 'cmd has no assignment prefix: it runs the program x'],
    ['git log\ncalc', 'a line break starts a new command'],
    ['g\\it status', 'bash reads git; cmd runs the relative path g\\it'],
    ['git,calc status', 'cmd ends the command name at , (bash reads one word)'],
  ];
  test.each(cmdBypasses)('%j passes the bash reading, and is refused for cmd (%s)', (line) => {
    let bash: unknown;
    try {
      checkCommand(policy, check(line));
    } catch (error) {
      bash = error;
    }
    const first = (bash as { details?: { reason?: string } } | undefined)?.details?.reason;
    // Without the dialect rule the line is either allowed outright or refused for an unrelated
    // reason the attacker controls (a program the agent can name differently).
    expect(first === undefined || first === 'not-allowed' || first === 'shell-construct').toBe(true);
    expect(() => checkCommand(policy, check(line, 'cmd'))).toThrow(
      expect.objectContaining({ code: 'ERR_POLICY_DENIED', details: expect.objectContaining({ dialect: 'cmd' }) }),
    );
  });

  test('the first three bypasses are allowed by the bash reading itself', () => {
    for (const line of ["git log 'x & calc'", 'git log %EVIL%', 'git log # & calc']) {
      expect(checkCommand(policy, check(line)).commands.map((c) => c.word)).toEqual(['git']);
    }
  });

  test('plain cmd lines still pass, and name the position of what is refused', () => {
    expect(checkCommand(policy, check('git status && git log --format=oneline -n 3 > out.txt', 'cmd')).commands.map((c) => c.word)).toEqual([
      'git',
      'git',
    ]);
    expect(() => checkCommand(policy, check('git log %X%', 'cmd'))).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ construct: '`%`', position: 8, reason: 'shell-construct' }) }),
    );
  });

  test('PowerShell lines are refused under an allow list; without one the dialect does not matter', () => {
    expect(() => checkCommand(policy, check('git status', 'powershell'))).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ reason: 'shell-line', dialect: 'powershell' }) }),
    );
    const denyOnly = compileCommandPolicy({ deny: ['calc'] }, 'commandPolicy')!;
    expect(checkCommand(denyOnly, check("git log 'x'", 'cmd')).commands.map((c) => c.word)).toEqual(['git']);
  });

  test('shellDialect: cmd by default on Windows, by the shell otherwise; POSIX everywhere else', () => {
    expect(shellDialect(undefined, 'win32')).toBe('cmd');
    expect(shellDialect('C:\\Windows\\System32\\cmd.exe', 'win32')).toBe('cmd');
    expect(shellDialect('C:\\Program Files\\PowerShell\\7\\pwsh.exe', 'win32')).toBe('powershell');
    expect(shellDialect('powershell', 'win32')).toBe('powershell');
    expect(shellDialect('C:/Program Files/Git/bin/bash.exe', 'win32')).toBe('posix');
    expect(shellDialect(undefined, 'linux')).toBe('posix');
    expect(shellDialect('/bin/bash', 'darwin')).toBe('posix');
  });
});

test('the PATH a request sets is found without case on Windows, as the core applies it there', () => {
  const env = [
    { name: 'PATH', value: 'C:/a' },
    { name: 'Path', value: 'C:/b' },
  ];
  expect(childPath(env, 'win32')).toBe('C:/b');
  expect(childPath(env, 'linux')).toBe('C:/a');
});

describe('command rules on Windows name files as Windows does', () => {
  const cmd = (word: string, p?: string) => ({ word, path: p, realPath: p, builtin: false, dynamic: false });
  const tool = 'C:\\work\\real\\acp-tool.cmd';
  test('a name rule holds for every spelling Windows runs: case, extension, the absolute path', () => {
    const unix = compileCommandPolicy({ deny: ['acp-tool'] }, 'p', 'linux')!;
    const win = compileCommandPolicy({ deny: ['acp-tool'] }, 'p', 'win32')!;
    for (const c of [cmd('ACP-TOOL', tool.toUpperCase()), cmd('acp-tool.cmd', tool), cmd(tool, tool)]) {
      expect(unix.deny[0]!.matches(c, true)).toBe(false); // the bypass the Unix reading allows
      expect(win.deny[0]!.matches(c, true)).toBe(true);
    }
    expect(win.deny[0]!.matches(cmd('acp-tool-2', 'C:\\x\\acp-tool-2.exe'), true)).toBe(false);
  });
  test('a path rule with backslashes is a path rule, without case; * stops at either separator', () => {
    const win = compileCommandPolicy({ deny: [tool], allow: ['C:\\tools\\*'] }, 'p', 'win32')!;
    expect(win.deny[0]!.matches(cmd('acp-tool', tool.toUpperCase()), true)).toBe(true);
    expect(win.deny[0]!.matches(cmd('acp-tool', 'C:/work/real/acp-tool.cmd'), true)).toBe(true);
    expect(win.allow![0]!.matches(cmd('x', 'c:\\TOOLS\\x.exe'), false)).toBe(true);
    expect(win.allow![0]!.matches(cmd('x', 'C:\\tools\\sub\\x.exe'), false)).toBe(false);
    const unix = compileCommandPolicy({ deny: [tool] }, 'p', 'linux')!;
    expect(unix.deny[0]!.matches(cmd('acp-tool', tool), true)).toBe(true);
    expect(unix.deny[0]!.matches(cmd('acp-tool', tool.toUpperCase()), true)).toBe(false);
  });
});
