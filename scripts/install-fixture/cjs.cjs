// CommonJS consumer: require() the package, run a command end to end.
const assert = require('node:assert');
const { createTerminal, shellCommandWords } = require('acp-terminal');

(async () => {
  assert.deepEqual(shellCommandWords('ls -l | wc').words.map((w) => w.word), ['ls', 'wc']);
  const t = await createTerminal({ command: 'printf', args: ['cjs-ok'] });
  try {
    assert.deepEqual(await t.waitForExit(), { exitCode: 0, signal: null });
    assert.equal((await t.currentOutput()).output, 'cjs-ok');
  } finally {
    await t.release();
  }
  console.log('cjs: ok');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
