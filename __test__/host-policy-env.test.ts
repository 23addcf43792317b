// TerminalHost policy: the environment (dropInheritedEnv, envPolicy), on the scripted fake backend
// (fixtures/policy-host.ts).
import { TerminalHost, type ApprovalRequest, type HostCreateTerminalRequest } from '../ts/host';
import { DANGEROUS_ENV_PATTERNS, SECRET_ENV_PATTERNS } from '../ts/policy-env';
import { expectConstructorRejects } from './fixtures/host-assert';
import { backend, events, failure, newHost, S, usePolicyFixtures } from './fixtures/policy-host';

let host: TerminalHost;

usePolicyFixtures();

beforeEach(() => {
  host = newHost();
});

describe('dropInheritedEnv', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.ACPT_TEST_TOKEN = 'secret-1';
    process.env.ACPT_AWS_LIKE = 'keep';
    process.env.AWS_ACPT_TEST = 'secret-2';
    process.env.acpt_lower_secret = 'secret-3';
    process.env.PAGER = 'less';
  });
  afterEach(() => {
    for (const k of ['ACPT_TEST_TOKEN', 'ACPT_AWS_LIKE', 'AWS_ACPT_TEST', 'acpt_lower_secret', 'PAGER']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  test('drops matching inherited variables, keeps the rest; the overlay and the request env are never filtered', async () => {
    host = newHost({ dropInheritedEnv: ['*_TOKEN', 'AWS_*', /secret$/i], env: { HOST_TOKEN: 'overlay' } });
    await host.createTerminal({ sessionId: S, command: 'x', env: [{ name: 'REQ_TOKEN', value: 'request' }] });
    const t = backend.terminals[0]!;
    expect(t.options).toMatchObject({ inheritEnv: false });
    const env = new Map(t.params.env!.map((e) => [e.name, e.value]));
    expect(env.has('ACPT_TEST_TOKEN')).toBe(false);
    expect(env.has('AWS_ACPT_TEST')).toBe(false);
    expect(env.has('acpt_lower_secret')).toBe(false);
    expect(env.get('ACPT_AWS_LIKE')).toBe('keep');
    expect(env.get('PATH')).toBe(process.env.PATH);
    expect(env.get('HOST_TOKEN')).toBe('overlay');
    expect(env.get('REQ_TOKEN')).toBe('request');
    // The core's PAGER=cat default must still win over an inherited PAGER.
    expect(env.has('PAGER')).toBe(false);
  });

  test('glob strings are case-insensitive; SECRET_ENV_PATTERNS drops the usual suspects', async () => {
    process.env.acpt_gh_token = 'x';
    host = newHost({ dropInheritedEnv: SECRET_ENV_PATTERNS });
    await host.createTerminal({ sessionId: S, command: 'x' });
    const names = backend.terminals[0]!.params.env!.map((e) => e.name);
    expect(names).not.toContain('acpt_gh_token');
    expect(names).not.toContain('ACPT_TEST_TOKEN');
    expect(names).not.toContain('AWS_ACPT_TEST');
    delete process.env.acpt_gh_token;
  });

  test('the env seen by onCreate and approve holds no inherited variables', async () => {
    let approved: ApprovalRequest | undefined;
    host = newHost({ dropInheritedEnv: ['*_TOKEN'], approve: (r) => ((approved = r), true) });
    const seen: unknown[] = [];
    host.onCreate((e) => seen.push(e.request.env));
    await host.createTerminal({ sessionId: S, command: 'x', env: [{ name: 'A', value: '1' }] });
    expect(approved!.env).toEqual([{ name: 'A', value: '1' }]);
    expect(seen).toEqual([[{ name: 'A', value: '1' }]]);
  });

  test('no effect when inheritEnv is false; invalid patterns are rejected', async () => {
    host = newHost({ inheritEnv: false, dropInheritedEnv: ['*'] });
    await host.createTerminal({ sessionId: S, command: 'x' });
    expect(backend.terminals[0]!.params.env).toBeUndefined();
    expect(() => new TerminalHost({ dropInheritedEnv: ['ok', ''] })).toThrow(/options\.dropInheritedEnv\[1\]/);
    expect(() => new TerminalHost({ dropInheritedEnv: '*_TOKEN' as never })).toThrow(/options\.dropInheritedEnv/);
  });
});

describe('envPolicy', () => {
  const req = (name: string, value = '/tmp/x'): HostCreateTerminalRequest => ({ sessionId: S, command: 'ls', args: ['-l'], env: [{ name, value }] });

  test.each([
    'LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV', 'ENV', 'BASH_FUNC_ls%%', 'SHELLOPTS', 'BASHOPTS', 'PS4',
    'PROMPT_COMMAND', 'IFS', 'PATH', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0',
    'GIT_CONFIG_PARAMETERS', 'GIT_EXEC_PATH', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_EDITOR', 'EDITOR', 'VISUAL', 'PAGER',
    'NODE_OPTIONS', 'PYTHONSTARTUP', 'PYTHONPATH', 'PERL5OPT', 'PERL5LIB', 'RUBYOPT', 'JAVA_TOOL_OPTIONS', 'ld_preload',
    // Programs and code named for make's built-in rules, perl's debugger, version-manager shims, wget.
    'CC', 'CXX', 'CPP', 'LD', 'AR', 'YACC', 'MAKE', 'CFLAGS', 'LDFLAGS', 'RUSTFLAGS', 'GOFLAGS', 'LDLIBS', 'PERL5DB', 'PERLDB_OPTS',
    'PYTHONBREAKPOINT', 'PYENV_HOOK_PATH', 'RBENV_HOOK_PATH', 'NODENV_HOOK_PATH', 'WGETRC',
  ])('with a command policy, a request setting %s is refused (reason env, naming it)', async (name) => {
    host = newHost({ commandPolicy: { deny: ['rm'] } });
    const err = await failure(host.createTerminal(req(name)));
    expect(err).toMatchObject({ code: 'ERR_POLICY_DENIED', details: { field: 'env', reason: 'env', name } });
    expect(err.message).toMatch(new RegExp(`^env: \`${name.replace(/[$%]/g, '\\$&')}\` is not allowed`));
    expect(backend.terminals).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ type: 'denied', code: 'ERR_POLICY_DENIED' })]);
  });

  test('ordinary variables, and a pager turned off, pass', async () => {
    host = newHost({ commandPolicy: { deny: ['rm'] } });
    await host.createTerminal({
      sessionId: S,
      command: 'ls',
      args: ['-l'],
      env: [
        { name: 'CI', value: '1' },
        { name: 'NODE_ENV', value: 'test' },
        { name: 'PAGER', value: 'cat' },
        { name: 'GIT_PAGER', value: '' },
        { name: 'LANG', value: 'C.UTF-8' },
      ],
    });
    expect(backend.terminals).toHaveLength(1);
    await expect(host.createTerminal(req('GIT_PAGER', 'less'))).rejects.toMatchObject({ details: { name: 'GIT_PAGER' } });
  });

  test('the host overlay is not judged (the host chose it); without any policy nothing is judged', async () => {
    host = newHost({ commandPolicy: { deny: ['rm'] }, env: { LD_LIBRARY_PATH: '/opt/lib' } });
    await host.createTerminal({ sessionId: S, command: 'ls', args: ['-l'] });
    expect(backend.terminals[0]!.params.env).toEqual([{ name: 'LD_LIBRARY_PATH', value: '/opt/lib' }]);
    const open = newHost({ approve: () => true });
    await expect(open.createTerminal(req('LD_PRELOAD'))).resolves.toHaveProperty('terminalId');
    await open.close();
  });

  test('envPolicy alone applies it; allow extends, deny replaces, { deny: [] } turns it off', async () => {
    host = newHost({ envPolicy: {} });
    await expect(host.createTerminal(req('BASH_ENV'))).rejects.toMatchObject({ details: { reason: 'env', name: 'BASH_ENV' } });
    const allowing = newHost({ commandPolicy: { deny: ['rm'] }, envPolicy: { allow: ['PATH', /^EDITOR$/] } });
    await expect(allowing.createTerminal(req('PATH'))).resolves.toHaveProperty('terminalId');
    await expect(allowing.createTerminal(req('EDITOR'))).resolves.toHaveProperty('terminalId');
    // A host-given allow replaces the default exceptions: PAGER=cat is refused again.
    await expect(allowing.createTerminal(req('PAGER', 'cat'))).rejects.toMatchObject({ details: { name: 'PAGER' } });
    const extended = newHost({ commandPolicy: { deny: ['rm'] }, envPolicy: { deny: [...DANGEROUS_ENV_PATTERNS, 'MY_HOOK', (n, v) => n === 'X' && v === 'bad'] } });
    await expect(extended.createTerminal(req('my_hook'))).rejects.toMatchObject({ details: { name: 'my_hook' } });
    await expect(extended.createTerminal(req('X', 'bad'))).rejects.toMatchObject({ details: { name: 'X' } });
    await expect(extended.createTerminal(req('X', 'good'))).resolves.toHaveProperty('terminalId');
    const off = newHost({ commandPolicy: { deny: ['rm'] }, envPolicy: { deny: [] } });
    await expect(off.createTerminal(req('LD_PRELOAD'))).resolves.toHaveProperty('terminalId');
    await Promise.all([allowing.close(), extended.close(), off.close()]);
  });

  test.each([
    ['options.envPolicy', { envPolicy: 'strict' }],
    ['options.envPolicy.deny', { envPolicy: { deny: 'PATH' } }],
    ['options.envPolicy.deny[1]', { envPolicy: { deny: ['PATH', ''] } }],
    ['options.envPolicy.allow[0]', { envPolicy: { allow: [7] } }],
    ['options.envPolicy.bogus', { envPolicy: { bogus: [] } }],
  ])('the constructor rejects a bad %s', expectConstructorRejects);
});
