/**
 * The static aarch64 server (`bash scripts/remote/build-server.sh musl-arm64`) at an aarch64 far end:
 * this machine runs it under qemu-user (`qemu-aarch64-static`, Debian's qemu-user-static, which
 * scripts/remote/build-server.sh installs). A short acceptance through the generic argv backend
 * (create, output, exit, kill, release), and how a backend picks the binary a far end gets: by the
 * far end's `uname -m`, through the same transport.
 */

import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as backends from '../ts/backends';
import { describeIf } from './fixtures/require-feature';

const ROOT = path.join(__dirname, '..');
const ARM64 = path.join(ROOT, 'target', 'aarch64-unknown-linux-musl', 'release', 'acp-terminal-server');
const X64 = path.join(ROOT, 'target', 'release', 'acp-terminal-server');
const QEMU = 'qemu-aarch64-static';
const hasQemu = spawnSync('sh', ['-c', `command -v ${QEMU}`], { stdio: 'ignore' }).status === 0;
const ready = fs.existsSync(ARM64) && fs.existsSync(X64) && hasQemu;

const sha = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

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

    describe("the binary a far end gets follows its `uname -m`", () => {
      /**
       * A stand-in far end of the machine `arch` (an exec prefix, like `podman exec -i CTR`): it answers
       * `uname -m` with `arch`, and runs the installed server as that machine would (an aarch64 one under
       * qemu-user); every other command runs here as it is.
       */
      function farEnd(arch: string): backends.Backend & { installed: string } {
        const script = path.join(tmp, `far-${arch}`);
        fs.writeFileSync(
          script,
          [
            '#!/bin/sh',
            `if [ "$1" = uname ] && [ "$2" = -m ]; then echo ${arch}; exit 0; fi`,
            'if [ "$1" = sh ] && [ "$2" = -c ] && [ "$4" = acp-terminal-launch ]; then',
            '  p="$5"; shift 5',
            `  if [ -x "$p" ]; then ${arch === 'aarch64' ? `exec ${QEMU} "$p" "$@"` : 'exec "$p" "$@"'}; fi`,
            "  printf '\\036ACP-TERMINAL-SERVER-MISSING\\n'; exit 0",
            'fi',
            'exec "$@"',
            '',
          ].join('\n'),
          { mode: 0o755 },
        );
        const installed = path.join(tmp, `server-${arch}`);
        const b = backends.execPrefix(`far:${arch}`, [script], {
          serverBinaries: { x64: X64, arm64: ARM64 },
          serverPath: installed,
          reconnectGraceMs: 0,
        });
        return Object.assign(b, { installed });
      }

      async function echo(b: backends.Backend): Promise<string> {
        const t = await b.createTerminal({ command: 'printf ok' });
        await t.waitForExit();
        const out = (await t.currentOutput()).output;
        await t.release();
        return out;
      }

      test.each([
        ['aarch64', ARM64],
        ['x86_64', X64],
      ])('a far end that says %s gets that binary installed, and it runs', async (arch, binary) => {
        const b = farEnd(arch);
        try {
          expect(await echo(b)).toBe('ok');
          expect(sha(b.installed)).toBe(sha(binary));
        } finally {
          await b.close();
        }
      });

      test('another machine is refused with ERR_NATIVE_UNAVAILABLE naming it; nothing is installed', async () => {
        const b = farEnd('riscv64');
        try {
          await expect(b.createTerminal({ command: 'true' })).rejects.toMatchObject({
            code: 'ERR_NATIVE_UNAVAILABLE',
            message: expect.stringContaining('"riscv64"'),
          });
          expect(fs.existsSync(b.installed)).toBe(false);
        } finally {
          await b.close();
        }
      });

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
    });
  },
);
