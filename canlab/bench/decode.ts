/**
 * Decode benchmarks.
 *
 * - benchDecode: compileDecoder in process over synthetic frames of the largest opendbc fixture
 *   (tesla_can.dbc). Frames cycle through every message with pseudo-random payloads, plus a share
 *   of ids the database does not define. Prints frames/s and decoded signals/s.
 * - benchDecodeCsv: `canlab decode --out x.csv` (the command's run(), in process, after one warm-up
 *   run) on the real RAV4 radar capture with toyota_adas.dbc, beside cantools doing the same job
 *   on the same file in the same run: tools/can/decode_csv.py reads the log with python-can,
 *   decodes every frame with cantools and writes the same CSV, which is compared byte for byte.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { run as decodeCommand } from '../src/cli/commands/decode';
import { compileDecoder } from '../src/dbc/codec';
import { loadDbc } from '../src/dbc/parse';

const FIXTURES = path.resolve(__dirname, '../../../shared/fixtures/can');
const DBC = path.join(FIXTURES, 'dbc-opendbc/tesla_can.dbc');
const REAL_CAPTURE = path.join(FIXTURES, 'real/rav4-2018-radar.log');
const REAL_DBC = path.join(FIXTURES, 'real/toyota_adas.dbc');
const REPO = path.resolve(__dirname, '../..');
/** The real capture is 60 s; this many copies, shifted 60 s apart, make a run long enough to time. */
const COPIES = 4;
const CSV_TARGET = 1_000_000;
const CSV_RUNS = 5;

interface SyntheticFrame {
  id: number;
  extended: boolean;
  data: Uint8Array;
}

export async function benchDecode(frameCount = 2_000_000): Promise<void> {
  const db = await loadDbc(DBC);
  const decode = compileDecoder(db);
  let seed = 0x12345678;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 24;
  };
  // A pool of distinct frames (one message in ten frames is an unknown id), reused cyclically.
  const pool: SyntheticFrame[] = [];
  for (let round = 0; round < 50; round++) {
    for (const m of db.messages) {
      const data = new Uint8Array(m.length);
      for (let i = 0; i < data.length; i++) data[i] = random();
      pool.push({ id: m.id, extended: m.extended, data });
    }
    for (let k = 0; k < db.messages.length / 10; k++)
      pool.push({ id: 0x7ff - k, extended: false, data: new Uint8Array(8) });
  }

  // Warm up the JIT, then time.
  let signals = 0;
  for (let i = 0; i < 200_000; i++) {
    const f = pool[i % pool.length]!;
    signals += decode(f.id, f.extended, f.data)?.signals.length ?? 0;
  }
  signals = 0;
  let unknown = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < frameCount; i++) {
    const f = pool[i % pool.length]!;
    const decoded = decode(f.id, f.extended, f.data);
    if (decoded === undefined) unknown++;
    else signals += decoded.signals.length;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const fps = frameCount / seconds;
  console.log(
    `decode: ${frameCount.toLocaleString('en-US')} frames of tesla_can.dbc (${db.messages.length} messages) in ` +
      `${seconds.toFixed(3)} s: ${Math.round(fps).toLocaleString('en-US')} frames/s, ` +
      `${Math.round(signals / seconds).toLocaleString('en-US')} signals/s (${unknown.toLocaleString('en-US')} unknown ids)`,
  );
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US');

/** The real capture repeated COPIES times, each copy 60 s after the one before. */
function repeatedCapture(file: string): number {
  const lines = readFileSync(REAL_CAPTURE, 'latin1')
    .split('\n')
    .filter((l) => l !== '');
  let text = '';
  for (let copy = 0; copy < COPIES; copy++) {
    for (const line of lines) {
      const close = line.indexOf(')');
      const [seconds = '', micros = ''] = line.slice(1, close).split('.');
      text += `(${Number(seconds) + 60 * copy}.${micros}${line.slice(close)}\n`;
    }
  }
  writeFileSync(file, text, 'latin1');
  return lines.length * COPIES;
}

/** cantools on the same job: its frames/s, or why it could not run. */
function cantoolsDecode(capture: string, out: string): { fps: number; seconds: number } | string {
  let python: string;
  try {
    python = execFileSync('bash', [path.join(REPO, 'infra/can-tools.sh'), 'path'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'cantools not installed (infra/can-tools.sh install)';
  }
  const report = JSON.parse(
    execFileSync(python, [path.join(REPO, 'tools/can/decode_csv.py'), capture, REAL_DBC, out], {
      encoding: 'utf8',
    }),
  ) as { frames: number; seconds: number };
  return { fps: report.frames / report.seconds, seconds: report.seconds };
}

export async function benchDecodeCsv(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-bench-decode-'));
  try {
    const capture = path.join(dir, 'rav4.log');
    const frames = repeatedCapture(capture);
    const out = path.join(dir, 'canlab.csv');
    const quiet = { stdout: () => undefined, stderr: () => undefined };
    const seconds: number[] = [];
    const cpuSeconds: number[] = [];
    for (let i = 0; i <= CSV_RUNS; i++) {
      const start = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      await decodeCommand({ positionals: [capture], values: { dbc: REAL_DBC, out } }, quiet);
      const used = process.cpuUsage(cpu);
      if (i === 0) continue;
      seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
      cpuSeconds.push((used.user + used.system) / 1e6);
    }
    // CPU time as well as wall time: on a shared machine the wall time also counts other jobs' turns
    const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const wall = median(seconds);
    const fps = frames / wall;
    const cantoolsOut = path.join(dir, 'cantools.csv');
    const cantools = cantoolsDecode(capture, cantoolsOut);
    let beside: string;
    if (typeof cantools === 'string') beside = cantools;
    else {
      const same = readFileSync(cantoolsOut).equals(readFileSync(out)) ? 'byte-identical CSV' : 'CSV DIFFERS';
      beside = `cantools + python-can ${count(cantools.fps)} frames/s (${cantools.seconds.toFixed(2)} s, ${same}): canlab ${(fps / cantools.fps).toFixed(1)}x`;
    }
    console.log(
      `decode to CSV: ${count(frames)} frames of the real RAV4 capture x${COPIES} with toyota_adas.dbc, ` +
        `median of ${CSV_RUNS} warm runs ${wall.toFixed(3)} s: ${count(fps)} frames/s ` +
        `(${count(frames / median(cpuSeconds))} frames per CPU second; target ${count(CSV_TARGET)}); ${beside}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchDecode()
    .then(benchDecodeCsv)
    .catch((e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    });
}
