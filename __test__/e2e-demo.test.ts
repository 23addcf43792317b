// `npm run demo` end to end: the demo client and agent processes (needs the built lib/).
import { execFile } from 'node:child_process';
import * as path from 'node:path';

test('the demo runs a succeeding, a failing and a timed-out command and prints a summary', async () => {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, '..', 'examples', 'demo.mjs')], { timeout: 110_000 }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    );
  });
  expect(stdout).toMatch(/■ A command that succeeds: completed/);
  expect(stdout).toMatch(/■ A command that fails: failed/);
  expect(stdout).toMatch(/exit code 0 .*building step/);
  expect(stdout).toMatch(/exit code 3 .*checking config/);
  expect(stdout).toMatch(/killed by SIGTERM .*tick/);
}, 120_000);
