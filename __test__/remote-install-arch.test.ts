/**
 * Which server a far end gets and which digest its launcher checks: both follow the far end's
 * `uname -m` (docs/remote.md, Install). Here with x86_64 far ends and the binaries' ELF headers; the
 * aarch64 far end, run under qemu-user, is __test__/remote-arm64.test.ts.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { FrameReader, MISSING_MARKER } from '../ts/backends/protocol';
import { HOST_MACHINE, echoOk, farEnd, plant, sha } from './fixtures/far-arch';
import { HOST_SERVER } from './fixtures/remote-env';
import { describeIf } from './fixtures/require-feature';

test('uname -m spellings map to the builds', () => {
  expect(['x86_64', 'amd64', 'aarch64', 'arm64', 'armv7l', 'riscv64', ''].map((m) => backends.serverArchOf(m))).toEqual([
    'x64',
    'x64',
    'arm64',
    'arm64',
    undefined,
    undefined,
    undefined,
  ]);
  expect(backends.serverFileName('arm64')).toBe('acp-terminal-server.linux-arm64-musl');
});

test("the launcher's missing marker names the machine; the reader waits for its end of line", () => {
  const r = new FrameReader();
  expect(r.push(Buffer.from(`rc noise\n${MISSING_MARKER} aarc`))).toEqual([]);
  expect(r.missing).toBe(false);
  r.push(Buffer.from('h64\n'));
  expect([r.missing, r.machine, r.noise]).toEqual([true, 'aarch64', 'rc noise\n']);
});

describeIf('acp-terminal-server', fs.existsSync(HOST_SERVER), `${HOST_SERVER} is not built (bash scripts/remote/build-server.sh)`)(
  "the build of the far end's machine",
  () => {
    const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-arch-')));
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const arch = backends.serverArchOf(HOST_MACHINE)!;
    const other = arch === 'x64' ? 'arm64' : 'x64';

    test('the ELF header says the arch of a file; a script or a missing file is none', () => {
      const script = path.join(tmp, 'script');
      fs.writeFileSync(script, '#!/bin/sh\n');
      expect([HOST_SERVER, script, path.join(tmp, 'absent')].map((f) => backends.elfArchOf(f))).toEqual([
        arch,
        undefined,
        undefined,
      ]);
    });

    describe(`a far end of this machine's arch (${HOST_MACHINE})`, () => {
      test('it gets the build of its arch; the next connection runs that file as it is (its digest checks)', async () => {
        const first = farEnd(tmp, HOST_MACHINE, { serverBinary: HOST_SERVER });
        expect(await echoOk(first)).toBe('ok');
        expect(sha(first.installed)).toBe(sha(HOST_SERVER));
        const again = farEnd(tmp, HOST_MACHINE, { serverBinary: HOST_SERVER });
        plant(again, fs.readFileSync(HOST_SERVER));
        const before = fs.statSync(again.installed);
        expect(await echoOk(again)).toBe('ok');
        const after = fs.statSync(again.installed);
        expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
      });

      test('a tampered build (still a runnable executable) is not run: the build replaces it', async () => {
        const b = farEnd(tmp, HOST_MACHINE, { serverBinary: HOST_SERVER });
        const marker = path.join(tmp, 'TAMPERED-RAN');
        plant(b, Buffer.from(`#!/bin/sh\necho ran > ${marker}\nexec ${HOST_SERVER} "$@"\n`));
        expect(await echoOk(b)).toBe('ok');
        expect(fs.existsSync(marker)).toBe(false);
        expect(sha(b.installed)).toBe(sha(HOST_SERVER));
      });

      test('a binary an option names for the wrong arch is refused with ERR_INVALID_ARG naming the option; nothing is installed', async () => {
        const b = farEnd(tmp, HOST_MACHINE, { serverBinaries: { [other]: HOST_SERVER } });
        await expect(echoOk(b)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining(`options.serverBinaries.${other}`) });
        expect(fs.existsSync(b.installed)).toBe(false);
        const script = path.join(tmp, 'not-elf');
        fs.writeFileSync(script, '#!/bin/sh\n', { mode: 0o755 });
        const c = farEnd(tmp, HOST_MACHINE, { serverBinary: script });
        await expect(echoOk(c)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.serverBinary') });
        expect(fs.existsSync(c.installed)).toBe(false);
      });
    });

    test('another machine is refused with ERR_NATIVE_UNAVAILABLE naming it; nothing is installed', async () => {
      const b = farEnd(tmp, 'riscv64', { serverBinary: HOST_SERVER });
      await expect(echoOk(b)).rejects.toMatchObject({ code: 'ERR_NATIVE_UNAVAILABLE', message: expect.stringContaining('"riscv64"') });
      expect(fs.existsSync(b.installed)).toBe(false);
    });
  },
);
