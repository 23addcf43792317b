/**
 * The static aarch64 server (`bash scripts/remote/build-server.sh musl-arm64`) at an aarch64 far end:
 * this machine runs it under qemu-user (`qemu-aarch64-static`, Debian's qemu-user-static, which
 * scripts/remote/test-arm64.sh installs). A short acceptance through the generic argv backend
 * (create, output, exit, kill, release), and how a backend picks the binary a far end gets and the
 * digest its launcher checks: both by the far end's `uname -m`, so another arch's build or a tampered
 * one at the server's path is replaced, never run, and a wrong-arch binary is never uploaded.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { QEMU, echoOk, farEnd, plant, sha } from './fixtures/far-arch';
import { describeIf } from './fixtures/require-feature';

const ROOT = path.join(__dirname, '..');
const ARM64 = path.join(ROOT, 'target', 'aarch64-unknown-linux-musl', 'release', 'acp-terminal-server');
const X64 = path.join(ROOT, 'target', 'release', 'acp-terminal-server');
const hasQemu = spawnSync('sh', ['-c', `command -v ${QEMU}`], { stdio: 'ignore' }).status === 0;
const ready = fs.existsSync(ARM64) && fs.existsSync(X64) && hasQemu;

/** ELF: machine (183 = AArch64) and whether it asks for a dynamic loader (a PT_INTERP header). */
function elf(file: string): { machine: number; interp: boolean } {
  const b = fs.readFileSync(file);
  expect(b.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  expect(b[4]).toBe(2); // 64-bit
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  let interp = false;
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) interp = true;
  return { machine: b.readUInt16LE(0x12), interp };
}

describeIf('acp-terminal-server-arm64', ready, `needs ${ARM64} (bash scripts/remote/build-server.sh musl-arm64), ${X64} and ${QEMU}`)(
  'the aarch64 server under qemu-user',
  () => {
    const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-arm64-')));
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    test('the binary is static aarch64 (no dynamic loader)', () => {
      expect(elf(ARM64)).toEqual({ machine: 183, interp: false });
    });

    describe('through backends.command([qemu-aarch64-static, server])', () => {
      let backend: backends.Backend;
      beforeAll(() => {
        backend = backends.command([QEMU, ARM64]);
      });
      afterAll(() => backend.close());

      test('create, output and exit code', async () => {
        const chunks: Buffer[] = [];
        const t = await backend.createTerminal({ command: 'echo one; echo two >&2; exit 7' }, { onOutput: (c: Buffer) => chunks.push(c) });
        expect(await t.waitForExit()).toEqual({ exitCode: 7, signal: null });
        const out = await t.currentOutput();
        expect(out.output).toBe('one\ntwo\n');
        expect(Buffer.concat(chunks).toString()).toBe('one\ntwo\n');
        await t.release();
      });

      test('kill ends the group with SIGTERM; release; later calls reject', async () => {
        const t = await backend.createTerminal({ command: 'sleep 30 & sleep 30; wait' });
        await t.kill();
        expect(await t.waitForExit()).toEqual({ exitCode: null, signal: 'SIGTERM' });
        await t.release();
        await expect(t.currentOutput()).rejects.toMatchObject({ code: 'ERR_TERMINAL_RELEASED' });
      });
    });

    describe("an aarch64 far end: the build for its `uname -m` is installed, and the launcher checks that build's digest", () => {
      const both = { serverBinaries: { x64: X64, arm64: ARM64 } };

      test('it gets the aarch64 build, read-only; the next connection runs that file as it is (its digest checks)', async () => {
        const first = farEnd(tmp, 'aarch64', both);
        expect(await echoOk(first)).toBe('ok');
        expect(sha(first.installed)).toBe(sha(ARM64));
        expect(fs.statSync(first.installed).mode & 0o777).toBe(0o555);
        const again = farEnd(tmp, 'aarch64', both);
        plant(again, fs.readFileSync(ARM64));
        const before = fs.statSync(again.installed);
        expect(await echoOk(again)).toBe('ok');
        const after = fs.statSync(again.installed);
        expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
      });

      test("the x86_64 build at its path is not run (not the aarch64 digest): the aarch64 build replaces it", async () => {
        const b = farEnd(tmp, 'aarch64', both);
        plant(b, fs.readFileSync(X64));
        expect(await echoOk(b)).toBe('ok');
        expect(sha(b.installed)).toBe(sha(ARM64));
      });

      test('a tampered aarch64 build (still a runnable executable) is not run: the aarch64 build replaces it', async () => {
        const b = farEnd(tmp, 'aarch64', both);
        plant(b, Buffer.concat([fs.readFileSync(ARM64), Buffer.from('tampered')]));
        // It runs as it is (the appended bytes are outside every segment): only the digest tells.
        expect(spawnSync(QEMU, [b.installed, '--version']).status).toBe(0);
        expect(await echoOk(b)).toBe('ok');
        expect(sha(b.installed)).toBe(sha(ARM64));
      });

      test('serverBinary serves the far ends of its own arch; an aarch64 one gets the aarch64 build', async () => {
        const b = farEnd(tmp, 'aarch64', { serverBinary: X64, serverBinaries: { arm64: ARM64 } });
        expect(await echoOk(b)).toBe('ok');
        expect(sha(b.installed)).toBe(sha(ARM64));
      });

      test('the ELF header says the arch of the build', () => {
        expect(backends.elfArchOf(ARM64)).toBe('arm64');
      });
    });
  },
);
