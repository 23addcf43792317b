// Retention and exit under load: a thousand terminals at once, a thousand floods in a row (slow:
// `npm test` runs these, `npm run test:fast` leaves them out; see jest.config.js).
import { createTerminal, run, type TerminalHandle } from './helpers';

describe('outputByteLimit', () => {
  test('1,000 quiet terminals with a 1 MiB limit stay small (nothing preallocated)', async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    const terms: TerminalHandle[] = [];
    for (let i = 0; i < 1000; i++) {
      terms.push(await createTerminal({ command: 'echo start; exec sleep 30', outputByteLimit: 1 << 20 }));
    }
    await waitFor(async () => {
      const outs = await Promise.all(terms.map((t) => t.currentOutput()));
      return outs.every((o) => o.output === 'start\n');
    });
    const grown = process.memoryUsage().rss - before;
    await Promise.all(terms.map((t) => t.release()));
    // Preallocating the limit would take 1 GiB; what is retained is 6 bytes each.
    expect(grown).toBeLessThan(256 * 1024 * 1024);
  }, 120000);
});

describe('exitStatus and waitForExit', () => {
  test('1,000 runs of "write 2 MB then exit" never lose a byte', async () => {
    const size = 2_000_000;
    let runs = 0;
    const worker = async () => {
      while (runs < 1000) {
        runs++;
        const r = await run({ command: `head -c ${size} /dev/zero | tr '\\0' z; printf END` });
        if (r.output.length !== size + 3 || !r.output.endsWith('zEND')) {
          throw new Error(`lost bytes: got ${r.output.length}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
  }, 600000);
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}
