// sendKeys end to end: the exact bytes a program on the pty reads.
import { createTerminal } from './helpers';
import { waitForOutput } from './pty-helpers';

async function bytesRead(keys: string[], count: number): Promise<string> {
  await using t = await createTerminal(
    { command: `stty raw -echo; echo ready; head -c ${count} | od -An -tx1 -v` },
    { pty: {} },
  );
  await waitForOutput(t, /ready/);
  await t.sendKeys(keys);
  await t.waitForExit();
  // Raw mode (-opost): no \r is added to the newline.
  const out = (await t.currentOutput()).output.replace(/^ready\r?\n/, '');
  return out.replace(/\s+/g, ' ').trim();
}

test('tmux key names arrive as xterm byte sequences', async () => {
  const keys = ['C-a', 'Up', 'S-F6', 'M-x', 'BTab', 'Enter', 'C-Space', 'BSpace', 'F1', 'C-Right', 'PgDn', 'q'];
  const expected = [
    '01',
    '1b 5b 41',
    '1b 5b 31 37 3b 32 7e',
    '1b 78',
    '1b 5b 5a',
    '0d',
    '00',
    '7f',
    '1b 4f 50',
    '1b 5b 31 3b 35 43',
    '1b 5b 36 7e',
    '71',
  ].join(' ');
  expect(await bytesRead(keys, expected.split(' ').length)).toBe(expected);
});
