// Run with the platform package moved away: the pure-JS parts still load and work, and the first call
// that needs the core fails with ERR_NATIVE_UNAVAILABLE naming the platform and the package to install.
const assert = require('node:assert');
const acp = require('acp-terminal');

assert.equal(acp.globToRegExp('*.js').test('a.js'), true);
// The shell analysis is the core's (tree-sitter-bash), so it needs the native core too.
assert.throws(() => acp.shellCommandWords('git status'), { code: 'ERR_NATIVE_UNAVAILABLE' });
const host = new acp.TerminalHost();
assert.equal(host.liveTerminals, 0);
const platform = process.argv[2];
try {
  acp.containmentInfo();
  assert.fail('containmentInfo() loaded a native core that should be missing');
} catch (e) {
  assert.equal(e.code, 'ERR_NATIVE_UNAVAILABLE', e.stack);
  assert.match(e.message, new RegExp(`on ${platform} `));
  assert.match(e.message, new RegExp(`acp-terminal-${platform}`));
  assert.match(e.message, /reinstall acp-terminal without --omit=optional/);
  assert.doesNotMatch(e.message, /npm has a bug/);
}
(async () => {
  await assert.rejects(acp.createTerminal({ command: 'true' }), { code: 'ERR_NATIVE_UNAVAILABLE' });
  await host.close();
  console.log('no-native: ok');
})();
