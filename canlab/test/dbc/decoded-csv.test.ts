import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { run as decodeCommand } from '../../src/cli/commands/decode';
import { compileDecoder } from '../../src/dbc/codec';
import { DecodedCsvWriter, formatPhysical } from '../../src/dbc/decoded-csv';
import type { DbcDatabase } from '../../src/dbc/model';
import { loadDbc, parseDbc } from '../../src/dbc/parse';
import { generateCapture, prng } from '../../src/eval/generate';
import { readCapture } from '../../src/formats';
import type { CanFrame } from '../../src/frame';
import { fixture } from '../fixtures';
import { frame as formatsFrame } from '../formats/helpers';
import { runCanTool } from './cantools';

const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-decoded-csv-'));
const quiet = { stdout: () => undefined, stderr: () => undefined };

/**
 * The CSV as `canlab decode` wrote it before DecodedCsvWriter, in the plain way: compileDecoder per
 * frame, then toFixed, a regular expression per cell, and rounding per value. It is the reference
 * the writer must match byte for byte.
 */
function referenceCsv(db: DbcDatabase, frames: CanFrame[]): string {
  const decimalsOf = (x: number): number => {
    if (!Number.isFinite(x) || x === 0 || Number.isInteger(x)) return 0;
    const [mantissa = '', exponent = '0'] = x.toExponential().split('e');
    return Math.min(15, Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exponent)));
  };
  const quoted = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  const decode = compileDecoder(db);
  let csv = 'timestamp,id,message,signals\n';
  for (const frame of frames) {
    const result = decode(frame.id, frame.extended, frame.data);
    if (result === undefined) continue;
    const { message } = result;
    const decimals = new Map<string, number>();
    for (const s of message.signals) {
      if (!decimals.has(s.name))
        decimals.set(
          s.name,
          s.valueType === 'integer' ? Math.max(decimalsOf(s.factor), decimalsOf(s.offset)) : -1,
        );
    }
    const id =
      '0x' +
      message.id
        .toString(16)
        .toUpperCase()
        .padStart(message.extended ? 8 : 3, '0');
    let row = `${frame.timestamp.toFixed(6)},${id},${quoted(message.name)}`;
    for (const s of result.signals) {
      const value = formatPhysical(s.value, decimals.get(s.name)!);
      row += ',' + quoted(s.label === undefined ? `${s.name}=${value}` : `${s.name}=${value} (${s.label})`);
    }
    csv += row + '\n';
  }
  return csv;
}

function writerCsv(db: DbcDatabase, frames: CanFrame[]): string {
  const writer = new DecodedCsvWriter(db);
  const chunks: Buffer[] = [];
  for (const f of frames) {
    writer.add(f.timestamp, f.id, f.extended, f.data);
    if (writer.full) chunks.push(Buffer.from(writer.take()));
  }
  chunks.push(Buffer.from(writer.take()));
  return Buffer.concat(chunks).toString('utf8');
}

function frame(timestamp: number, id: number, extended: boolean, data: Uint8Array): CanFrame {
  return formatsFrame({ timestamp, id, extended, data, fd: data.length > 8 });
}

/** Frames with pseudo-random payloads for every message, some cut short (signals past the end drop out). */
function randomFrames(db: DbcDatabase, rounds: number): CanFrame[] {
  const rand = prng(11);
  const frames: CanFrame[] = [];
  let t = 1000;
  for (let round = 0; round < rounds; round++) {
    for (const m of db.messages) {
      const short = round % 7 === 6;
      const length = short ? (m.length > 8 ? 8 : Math.max(0, m.length - 1 - (round % 3))) : m.length;
      const data = new Uint8Array(length);
      for (let i = 0; i < length; i++) data[i] = Math.floor(rand() * 256);
      t += 0.000137;
      frames.push(frame(t, m.id, m.extended, data));
    }
  }
  return frames;
}

describe('DecodedCsvWriter writes what canlab decode wrote before it, byte for byte', () => {
  test('the real RAV4 capture: the same SHA-256 as before the writer, and the same bytes cantools writes', async () => {
    const out = path.join(dir, 'rav4.csv');
    const capture = fixture('real', 'rav4-2018-radar.log');
    const dbc = fixture('real', 'toyota_adas.dbc');
    expect(await decodeCommand({ positionals: [capture], values: { dbc, out } }, quiet)).toBe(0);
    const csv = readFileSync(out);
    // Recorded from `canlab decode` as it was before this writer (commit 921b264).
    expect(createHash('sha256').update(csv).digest('hex')).toBe(
      'ba582ccc1802ab89d0f040f5f652af02c60bdd48c5dd9cda07d0222acf63a2a8',
    );
    const frames: CanFrame[] = [];
    for await (const f of readCapture(capture)) frames.push(f);
    expect(csv.toString('utf8')).toBe(referenceCsv(await loadDbc(dbc), frames));
    // tools/can/decode_csv.py: python-can reads the log, cantools decodes, Python formats the layout.
    const theirs = path.join(dir, 'rav4-cantools.csv');
    const report = JSON.parse(runCanTool('decode_csv.py', [capture, dbc, theirs])) as { rows: number };
    expect(report.rows).toBe(39000);
    expect(readFileSync(theirs).equals(csv)).toBe(true);
  }, 60_000);

  test.each([
    ['dbc-opendbc', 'tesla_can.dbc'],
    ['dbc-opendbc', 'hyundai_i30_2014.dbc'],
    ['dbc-opendbc', 'ford_fusion_2018_pt.dbc'],
    ['dbc-opendbc', 'mazda_2017.dbc'],
    ['dbc-cantools', 'multiplex_2.dbc'],
    ['dbc-cantools', 'floating_point.dbc'],
    ['dbc-cantools', 'choices.dbc'],
    ['dbc-cantools', 'fd_test.dbc'],
    ['dbc-cantools', 'signed.dbc'],
  ])('%s/%s: generated traces and random payloads', async (folder, file) => {
    const db = await loadDbc(fixture(folder, file));
    const frames = [
      ...generateCapture(db, { seed: 7, framesPerMessage: 40 }).frames,
      ...randomFrames(db, 15),
    ];
    const reference = referenceCsv(db, frames);
    expect(reference.split('\n').length).toBeGreaterThan(frames.length / 2);
    expect(writerCsv(db, frames)).toBe(reference);
  });

  test('cells past what a signal keeps: more distinct values than its cache holds, a cell too long to keep', async () => {
    const floats = await loadDbc(fixture('dbc-cantools', 'floating_point.dbc'));
    // every payload random: each float signal sees ~20,000 distinct values, past the 16,384 it keeps
    const frames = randomFrames(floats, 20_000 / floats.messages.length);
    expect(writerCsv(floats, frames)).toBe(referenceCsv(floats, frames));
    const label = 'x'.repeat(70_000);
    const long = parseDbc(`BO_ 1 Long: 1 A\n SG_ S : 0|8@1+ (1,0) [0|0] "" A\nVAL_ 1 S 7 "${label}" ;\n`);
    const seven = [frame(1, 1, false, Uint8Array.of(7)), frame(2, 1, false, Uint8Array.of(7))];
    expect(writerCsv(long, seven)).toBe(referenceCsv(long, seven));
  });

  test('timestamps print as toFixed(6) prints them, whatever their size or sign', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'motohawk.dbc'));
    const rand = prng(5);
    const stamps = [
      0,
      -0,
      1e-7,
      5e-7,
      0.0000015,
      46408.587652,
      1436509052.249713,
      2 ** 51 / 1e6,
      2 ** 52 / 1e6,
      1e21,
    ];
    stamps.push(-1.5, -1436509052.249713, Number.MAX_SAFE_INTEGER / 1e3);
    for (let i = 0; i < 2000; i++)
      stamps.push(rand() * 10 ** Math.floor(rand() * 12), Math.floor(rand() * 2e9) + rand());
    // whole microseconds plus a half, the case where the rounding of the product could matter
    for (let i = 0; i < 200; i++) stamps.push((Math.floor(rand() * 2e15) + 0.5) / 1e6);
    const frames = stamps.map((t) => frame(t, 0x1f0, false, new Uint8Array(8)));
    const rows = writerCsv(db, frames).split('\n').slice(1, -1);
    expect(rows.map((r) => r.slice(0, r.indexOf(',')))).toEqual(stamps.map((t) => t.toFixed(6)));
  });
});
