/**
 * A hostile far end (a replaced `acp-terminal-server`, or the container or host it runs in): it prints the
 * right banner, answers `hello`, then answers with frames the protocol does not allow. The near side's
 * process survives every one, the calls pending on that connection reject with `ERR_BACKEND_PROTOCOL`,
 * and another backend in the same process keeps working. Each case runs in its own Node process: a crash
 * is seen as that process dying, not as a test runner's caught error.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { describeIf } from './fixtures/require-feature';

const ROOT = path.join(__dirname, '..');
const lib = path.join(ROOT, 'lib', 'index.js');
const server = path.join(ROOT, 'target', 'release', 'acp-terminal-server');
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-hostile-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The fake far end: answers `hello`, holds every other request, answers `create` with the HOSTILE mode's frames. */
const farEnd = path.join(tmp, 'far-end.js');
fs.writeFileSync(
  farEnd,
  `const { version } = require(${JSON.stringify(path.join(ROOT, 'package.json'))});
process.stdout.write('\\x1eACP-TERMINAL-SERVER/2 ' + version + '\\n');
const raw = (kind, body) => { const h = Buffer.alloc(5); h.writeUInt32BE(body.length + 1); h[4] = kind; return Buffer.concat([h, body]); };
const json = (text) => raw(1, Buffer.from(text));
const output = (sub) => { const b = Buffer.alloc(12); b.writeUInt32BE(sub); return raw(2, Buffer.concat([b, Buffer.from('x')])); };
const modes = {
  null: () => json('null'),
  array: () => json('[]'),
  string: () => json('"x"'),
  number: () => json('42'),
  empty: () => json('{}'),
  notJson: () => json('{"id":'),
  unknownKind: () => raw(9, Buffer.from('x')),
  errorNotObject: (id) => json(JSON.stringify({ id, error: 'boom' })),
  errorNoCode: (id) => json(JSON.stringify({ id, error: { message: 'boom' } })),
  resultNotObject: (id) => json(JSON.stringify({ id, result: 5 })),
  idString: (id) => json(JSON.stringify({ id: String(id), result: {} })),
  idNeverAsked: () => json(JSON.stringify({ id: 999, result: {} })),
  idHuge: () => json('{"id":1e300,"result":{}}'),
  outputUnknownSub: () => output(77),
  endUnknownSub: () => json(JSON.stringify({ event: 'end', sub: 77 })),
  exitTermHuge: () => json('{"event":"exit","term":18446744073709551616,"status":{"exitCode":0,"signal":null}}'),
  exitStatusNull: () => json(JSON.stringify({ event: 'exit', term: 1, status: null })),
  exitCodeString: () => json(JSON.stringify({ event: 'exit', term: 1, status: { exitCode: '0', signal: null } })),
  unknownEvent: () => json(JSON.stringify({ event: 'surprise' })),
  // Exits of 100000 terminals nobody created, then term 1's own exit before its create's answer.
  exitFlood: (id) => {
    const exit = (term) => json(JSON.stringify({ event: 'exit', term, status: { exitCode: 7, signal: null } }));
    const frames = [];
    for (let t = 1000; t < 101000; t++) frames.push(exit(t));
    frames.push(exit(1), json(JSON.stringify({ id, result: { term: 1, id: 't1', sessionId: 's', pid: 1, cwd: '/', isPty: false } })));
    return Buffer.concat(frames);
  },
};
let buf = Buffer.alloc(0);
process.stdin.on('data', (c) => {
  buf = Buffer.concat([buf, c]);
  while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
    const len = buf.readUInt32BE(0);
    const m = JSON.parse(buf.subarray(5, 4 + len).toString());
    buf = buf.subarray(4 + len);
    if (m.op === 'hello') process.stdout.write(json(JSON.stringify({ id: m.id, result: { protocol: 2, pid: process.pid } })));
    else if (m.op === 'create') process.stdout.write(modes[process.env.HOSTILE](m.id));
  }
});
process.stdin.on('end', () => process.exit(0));
`,
);

/** The near side: a terminal on the good backend, a lookup left pending and a create answered with hostile frames, then the good backend again. */
const nearSide = path.join(tmp, 'near-side.js');
fs.writeFileSync(
  nearSide,
  `const { backends } = require(${JSON.stringify(lib)});
(async () => {
  const hostile = backends.command([process.execPath, ${JSON.stringify(farEnd)}]);
  const good = backends.command([${JSON.stringify(server)}]);
  const before = await good.createTerminal({ command: 'sh', args: ['-c', 'read x; echo got $x'] }, { stdin: 'pipe' });
  const pending = hostile.lookup({ env: true }).then(() => 'resolved', (e) => e.code);
  const created = await hostile
    .createTerminal({ command: 'echo', args: ['hi'] })
    .then(() => 'resolved', (e) => e.code + ': ' + e.message);
  await before.write('again\\n');
  const beforeExit = await before.waitForExit();
  const after = await good.createTerminal({ command: 'echo', args: ['still working'] });
  await after.waitForExit();
  const out = (await after.currentOutput()).output + (await before.currentOutput()).output;
  console.log(JSON.stringify({ created, pending: await pending, beforeExit, out }));
  await good.close();
  await hostile.close();
})();
`,
);

const modes = [
  'null', 'array', 'string', 'number', 'empty', 'notJson', 'unknownKind', 'errorNotObject', 'errorNoCode', 'resultNotObject',
  'idString', 'idNeverAsked', 'idHuge', 'outputUnknownSub', 'endUnknownSub', 'exitTermHuge', 'exitStatusNull', 'exitCodeString',
  'unknownEvent',
];

/** The near side against `exitFlood`: the early exit of its own terminal is kept, the others are not. */
const floodSide = path.join(tmp, 'flood-side.js');
fs.writeFileSync(
  floodSide,
  `const { backends } = require(${JSON.stringify(lib)});
(async () => {
  const hostile = backends.command([process.execPath, ${JSON.stringify(farEnd)}]);
  const before = process.memoryUsage().heapUsed;
  const t = await hostile.createTerminal({ command: 'true' });
  const exit = await t.waitForExit();
  global.gc();
  console.log(JSON.stringify({ exit, kept: hostile.earlyExits.size, grewMiB: (process.memoryUsage().heapUsed - before) / 2 ** 20 }));
  await hostile.close();
})();
`,
);

test('a far end that sends exits of terminals nobody created: only the created one is kept', () => {
  const r = spawnSync(process.execPath, ['--expose-gc', floodSide], { env: { ...process.env, HOSTILE: 'exitFlood' }, encoding: 'utf8', timeout: 60000 });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!);
  expect(got.exit).toEqual({ exitCode: 7, signal: null });
  expect(got.kept).toBe(0);
  expect(got.grewMiB).toBeLessThan(4);
});

describeIf('acp-terminal-server', fs.existsSync(server), 'no acp-terminal-server: run bash scripts/remote/build-server.sh')('a hostile far end', () => {
  test.each(modes)('%s: the process survives, pending calls reject ERR_BACKEND_PROTOCOL, the other backend works', (mode) => {
    const r = spawnSync(process.execPath, [nearSide], { env: { ...process.env, HOSTILE: mode }, encoding: 'utf8', timeout: 30000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const got = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(got.created).toMatch(/^ERR_BACKEND_PROTOCOL: acp-terminal: the terminal server broke the protocol \(.+\)$/);
    expect(got).toMatchObject({ pending: 'ERR_BACKEND_PROTOCOL', beforeExit: { exitCode: 0, signal: null } });
    expect(got.out).toBe('still working\ngot again\n');
  });
});
