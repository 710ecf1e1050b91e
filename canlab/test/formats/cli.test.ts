/** `runCli` with captured io, `canlab convert`, and the real launcher once. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { createCaptureWriter, readCapture } from '../../src/formats';
import { fixture } from '../fixtures';
import { collect, expectSameFrames, manyFrames, tempDir } from './helpers';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

test('--help lists every command usage', async () => {
  const r = await cli('--help');
  expect(r.code).toBe(0);
  expect(r.out).toContain('convert <in> <out>');
  expect(r.err).toBe('');
});

test('no command prints help on stderr and exits 2', async () => {
  const r = await cli();
  expect(r.code).toBe(2);
  expect(r.err).toContain('usage: canlab');
});

test('unknown command: one line, exit 2', async () => {
  const r = await cli('frobnicate');
  expect(r.code).toBe(2);
  expect(r.err).toBe("canlab: unknown command 'frobnicate' (see canlab --help)\n");
});

test('unknown option: one line, exit 2', async () => {
  const r = await cli('convert', '--bogus', 'a.log', 'b.csv');
  expect(r.code).toBe(2);
  expect(r.err.trim().split('\n')).toHaveLength(1);
});

test('convert needs two paths', async () => {
  const r = await cli('convert', 'a.log');
  expect(r.code).toBe(1);
  expect(r.err).toBe('canlab: convert: expects <in> <out>, got 1 argument\n');
});

test('convert BLF → ASC → candump → CSV keeps the frames', async () => {
  const src = fixture('python-can', 'issue_1905.blf');
  const asc = tmp.file('a.asc');
  const log = tmp.file('b.log');
  const blf = tmp.file('c.blf');
  for (const [from, to] of [
    [src, asc],
    [asc, log],
    [log, blf],
  ] as const) {
    const r = await cli('convert', from, to);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^converted 22 frames: /);
  }
  const original = await collect(readCapture(src));
  expectSameFrames(await collect(readCapture(blf)), original, 1.01e-6);
  expect(readdirSync(tmp.dir).filter((f) => f.includes('.partial-'))).toEqual([]);
});

/** A fresh directory per test, so that "no temporary file left behind" can look at all of it. */
let dirs = 0;
function freshDir(): string {
  const dir = tmp.file(`convert-${dirs++}`);
  mkdirSync(dir);
  return dir;
}

describe('convert never leaves a half-written output', () => {
  // The two 20,000-frame cases convert for real: a second on an idle machine, several under load.
  // They assert what is left on disk, not speed, so they get room beyond jest's 5 s default.
  const LARGE_CASE_MS = 30_000;

  const badAtLine3 = '(1.0) can0 123#11\n(2.0) can0 124#22\n(3.0) can0 125#3\n(4.0) can0 126#44\n';

  test.each(['csv', 'log', 'asc', 'blf'])(
    'malformed line 3 → exit 1, located error, no .%s and no temporary file',
    async (ext) => {
      const dir = freshDir();
      const bad = path.join(dir, 'bad.log');
      writeFileSync(bad, badAtLine3);
      const out = path.join(dir, `out.${ext}`);
      const r = await cli('convert', bad, out);
      expect(r.code).toBe(1);
      expect(r.err).toBe(`canlab: ${bad}:3: candump log: data has an odd number of hex digits\n`);
      expect(r.out).toBe('');
      expect(readdirSync(dir)).toEqual(['bad.log']);
    },
  );

  test('an existing output is left untouched when the conversion fails', async () => {
    const dir = freshDir();
    const bad = path.join(dir, 'bad.log');
    writeFileSync(bad, badAtLine3);
    const out = path.join(dir, 'out.csv');
    writeFileSync(out, 'previous content\n');
    const r = await cli('convert', bad, out);
    expect(r.code).toBe(1);
    expect(readFileSync(out, 'latin1')).toBe('previous content\n');
    expect(readdirSync(dir).sort()).toEqual(['bad.log', 'out.csv']);
  });

  test(
    'an error after many frames were already written (and flushed) leaves nothing behind',
    async () => {
      const dir = freshDir();
      const bad = path.join(dir, 'late.log');
      const good = Array.from(
        { length: 20000 },
        (_, i) => `(${(1700000000 + i / 1000).toFixed(6)}) can0 123#1122334455667788`,
      ).join('\n');
      writeFileSync(bad, `${good}\n(1700000100.000000) can0 123#XY\n`);
      const out = path.join(dir, 'out.log');
      writeFileSync(out, 'previous content\n');
      const r = await cli('convert', bad, out);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`^canlab: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:20001: `));
      expect(readFileSync(out, 'latin1')).toBe('previous content\n');
      expect(readdirSync(dir).sort()).toEqual(['late.log', 'out.log']);
    },
    LARGE_CASE_MS,
  );

  test(
    'a BLF read error midway (file cut short) leaves nothing behind',
    async () => {
      const dir = freshDir();
      const full = path.join(dir, 'full.blf');
      const w = createCaptureWriter(full);
      for (const f of manyFrames(20000)) await w.write(f);
      await w.close();
      const bytes = readFileSync(full);
      const cut = path.join(dir, 'cut.blf');
      writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.7)));
      const out = path.join(dir, 'out.asc');
      const r = await cli('convert', cut, out);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^canlab: .*cut\.blf@\d+: Vector BLF: truncated LOG_CONTAINER/);
      expect(readdirSync(dir).sort()).toEqual(['cut.blf', 'full.blf']);
    },
    LARGE_CASE_MS,
  );

  test('a frame the output cannot hold leaves no output either', async () => {
    const dir = freshDir();
    const src = path.join(dir, 'fdremote.asc');
    writeFileSync(src, 'base hex  timestamps absolute\n 1.0 1 100 Rx d 1 00\n 2.0 CANFD 1 Rx 123 0 0 f 0\n');
    const r = await cli('convert', src, path.join(dir, 'out.log'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/frame 2 of .*cannot record CAN FD remote frame/);
    expect(readdirSync(dir)).toEqual(['fdremote.asc']);
  });

  test('an output directory that does not exist is reported as the output path', async () => {
    const dir = freshDir();
    const src = path.join(dir, 'ok.log');
    writeFileSync(src, '(1.0) can0 123#11\n');
    const out = path.join(dir, 'missing', 'out.csv');
    const r = await cli('convert', src, out);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`canlab: ${out}: no such file or directory\n`);
    expect(readdirSync(dir)).toEqual(['ok.log']);
  });

  test('an output path that is a directory fails without touching it', async () => {
    const dir = freshDir();
    const src = path.join(dir, 'ok.log');
    writeFileSync(src, '(1.0) can0 123#11\n');
    const out = path.join(dir, 'taken.csv');
    mkdirSync(out);
    const r = await cli('convert', src, out);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`canlab: ${out}: is a directory\n`);
    expect(readdirSync(dir).sort()).toEqual(['ok.log', 'taken.csv']);
    expect(readdirSync(out)).toEqual([]);
  });

  test('success replaces an existing output and leaves no temporary file', async () => {
    const dir = freshDir();
    const src = path.join(dir, 'ok.log');
    writeFileSync(src, '(1.0) can0 123#11\n(2.0) can1 124#22\n');
    const out = path.join(dir, 'out.csv');
    writeFileSync(out, 'previous content\n');
    const r = await cli('convert', src, out);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`converted 2 frames: ${src} (candump log) -> ${out} (GVRET CSV)\n`);
    expect(existsSync(out)).toBe(true);
    expect(await collect(readCapture(out))).toHaveLength(2);
    expect(readdirSync(dir).sort()).toEqual(['ok.log', 'out.csv']);
  });
});

test('malformed input: canlab: <file:line>: <message>, exit 1', async () => {
  const bad = tmp.file('bad.log');
  writeFileSync(bad, '(1.0) can0 123#11\n(2.0) can0 123#1\n');
  const r = await cli('convert', bad, tmp.file('out.csv'));
  expect(r.code).toBe(1);
  expect(r.err).toBe(`canlab: ${bad}:2: candump log: data has an odd number of hex digits\n`);
});

test('a frame the output cannot hold is an input error, not a crash', async () => {
  const src = tmp.file('fdremote.asc');
  writeFileSync(src, 'base hex  timestamps absolute\n 1.0 CANFD 1 Rx 123 0 0 f 0\n');
  const r = await cli('convert', src, tmp.file('fdremote.log'));
  expect(r.code).toBe(1);
  expect(r.err).toMatch(/^canlab: .*fdremote\.log: frame 1 of .*cannot record CAN FD remote frame/);
});

test('convert refuses to overwrite its input', async () => {
  const src = tmp.file('same.log');
  writeFileSync(src, '(1.0) can0 123#11\n');
  const r = await cli('convert', src, src);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(/output is the input file/);
});

test('bin/canlab.js: content no reader claims and an unknown extension → exit 1, one line on stderr', () => {
  const bin = path.resolve(__dirname, '../../bin/canlab.js');
  const r = spawnSync(process.execPath, [bin, 'convert', 'bad.dat', 'out.csv'], {
    cwd: tmp.dir,
    encoding: 'utf8',
    timeout: 60000,
  });
  expect(r.status).toBe(1);
  expect(r.stderr).toBe('canlab: bad.dat: no such file or directory\n');
  writeFileSync(tmp.file('bad.dat'), 'hello\n');
  const again = spawnSync(process.execPath, [bin, 'convert', 'bad.dat', 'out.csv'], {
    cwd: tmp.dir,
    encoding: 'utf8',
    timeout: 60000,
  });
  expect(again.status).toBe(1);
  expect(again.stderr).toMatch(
    /^canlab: bad\.dat: content is not a capture format canlab reads, and extension \.dat names none; formats: .*GVRET CSV.*; extensions: .*\.trc.*\n$/,
  );
  expect(again.stderr.split('\n')).toHaveLength(2);
  expect(again.stdout).toBe('');
}, 60000);
