/**
 * The static aarch64 server (`bash scripts/remote/build-server.sh musl-arm64`) at an aarch64 far end:
 * this machine runs it under qemu-user (`qemu-aarch64-static`, Debian's qemu-user-static, which
 * scripts/remote/test-arm64.sh installs). A short acceptance through the generic argv backend
 * (create, output, exit, kill, release), and how a backend picks the binary a far end gets and the
 * digest its launcher checks: both by the far end's `uname -m`, so another arch's build or a tampered
 * one at the server's path is replaced, never run, and a wrong-arch binary is never uploaded.
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

    describe("the binary a far end gets follows its `uname -m`, and the launcher checks that arch's digest", () => {
      let n = 0;
      /**
       * A stand-in far end of the machine `arch` (an exec prefix, like `podman exec -i CTR`): its `uname`
       * says `arch` (a `uname` first on its PATH), and every command runs here as it is, the real launcher
       * included (its digest choice, its checks). For an aarch64 far end the launcher's one `exec` of the
       * verified file runs it under qemu-user, as a kernel with qemu registered in binfmt_misc would: an
       * x86_64 executable there fails to start, as it would on an aarch64 machine.
       */
      function farEnd(arch: string, options: backends.BackendOptions = { serverBinaries: { x64: X64, arm64: ARM64 } }): backends.Backend & { installed: string } {
        const dir = path.join(tmp, `far-${arch}-${n++}`);
        fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
        fs.writeFileSync(path.join(dir, 'bin', 'uname'), `#!/bin/sh\n[ "$1" = -m ] && { echo ${arch}; exit 0; }\nexec /bin/uname "$@"\n`, { mode: 0o755 });
        const script = path.join(dir, 'far-end');
        fs.writeFileSync(
          script,
          [
            '#!/bin/sh',
            `PATH=${dir}/bin:$PATH; export PATH`,
            ...(arch === 'aarch64'
              ? [
                  'if [ "$1" = sh ] && [ "$2" = -c ] && [ "$4" = acp-terminal-launch ]; then',
                  `  launcher=$(printf '%s' "$3" | sed 's#exec /proc/self/fd/3#exec ${QEMU} /proc/self/fd/3#'); shift 3`,
                  '  exec sh -c "$launcher" "$@"',
                  'fi',
                ]
              : []),
            'exec "$@"',
            '',
          ].join('\n'),
          { mode: 0o755 },
        );
        const installed = path.join(dir, 'installed', 'acp-terminal-server');
        const b = backends.execPrefix(`far:${arch}`, [script], { serverPath: installed, reconnectGraceMs: 0, ...options });
        return Object.assign(b, { installed });
      }

      async function echo(b: backends.Backend): Promise<string> {
        try {
          const t = await b.createTerminal({ command: 'printf ok' });
          await t.waitForExit();
          const out = (await t.currentOutput()).output;
          await t.release();
          return out;
        } finally {
          await b.close();
        }
      }

      test.each([
        ['aarch64', ARM64],
        ['x86_64', X64],
      ])('a far end that says %s gets that binary installed; the next connection runs it as it is (its digest checks)', async (arch, binary) => {
        const first = farEnd(arch);
        expect(await echo(first)).toBe('ok');
        expect(sha(first.installed)).toBe(sha(binary));
        const installedAt = fs.statSync(first.installed);
        // A second backend with the same binaries: the launcher accepts the file, nothing is uploaded.
        const again = farEnd(arch);
        fs.mkdirSync(path.dirname(again.installed), { recursive: true });
        fs.copyFileSync(first.installed, again.installed);
        fs.chmodSync(again.installed, 0o555);
        const before = fs.statSync(again.installed);
        expect(await echo(again)).toBe('ok');
        const after = fs.statSync(again.installed);
        expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
        expect(installedAt.mode & 0o777).toBe(0o555);
      });

      test('another arch\'s build at the path of an aarch64 far end is not run: the aarch64 build replaces it', async () => {
        const b = farEnd('aarch64');
        fs.mkdirSync(path.dirname(b.installed), { recursive: true });
        fs.copyFileSync(X64, b.installed);
        fs.chmodSync(b.installed, 0o555);
        expect(await echo(b)).toBe('ok');
        expect(sha(b.installed)).toBe(sha(ARM64));
      });

      test('a tampered aarch64 build (still a runnable executable) is not run: the aarch64 build replaces it', async () => {
        const b = farEnd('aarch64');
        fs.mkdirSync(path.dirname(b.installed), { recursive: true });
        fs.writeFileSync(b.installed, Buffer.concat([fs.readFileSync(ARM64), Buffer.from('tampered')]), { mode: 0o555 });
        // It runs as it is (the appended bytes are outside every segment).
        expect(spawnSync(QEMU, [b.installed, '--version']).status).toBe(0);
        expect(await echo(b)).toBe('ok');
        expect(sha(b.installed)).toBe(sha(ARM64));
      });

      test('a binary an option names for the wrong arch is refused with ERR_INVALID_ARG naming the option; nothing is installed', async () => {
        const b = farEnd('aarch64', { serverBinaries: { x64: X64, arm64: X64 } });
        await expect(echo(b)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.serverBinaries.arm64') });
        expect(fs.existsSync(b.installed)).toBe(false);
        const script = path.join(tmp, 'not-elf');
        fs.writeFileSync(script, '#!/bin/sh\n', { mode: 0o755 });
        const c = farEnd('x86_64', { serverBinary: script });
        await expect(echo(c)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options.serverBinary') });
        expect(fs.existsSync(c.installed)).toBe(false);
      });

      test('serverBinary serves the far ends of its own arch; the other arch gets its own build', async () => {
        const b = farEnd('aarch64', { serverBinary: X64, serverBinaries: { arm64: ARM64 } });
        expect(await echo(b)).toBe('ok');
        expect(sha(b.installed)).toBe(sha(ARM64));
      });

      test('another machine is refused with ERR_NATIVE_UNAVAILABLE naming it; nothing is installed', async () => {
        const b = farEnd('riscv64');
        await expect(echo(b)).rejects.toMatchObject({ code: 'ERR_NATIVE_UNAVAILABLE', message: expect.stringContaining('"riscv64"') });
        expect(fs.existsSync(b.installed)).toBe(false);
      });

      test('uname -m spellings map to the builds; ELF headers say the arch of a file', () => {
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
        expect([ARM64, X64, path.join(ROOT, 'package.json')].map((f) => backends.elfArchOf(f))).toEqual(['arm64', 'x64', undefined]);
      });
    });
  },
);
