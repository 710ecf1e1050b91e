/**
 * A generated capture with known structure for the tool-server tests, 10 s long:
 * - 0x100 (100 Hz): Motorola unsigned 14-bit at start bit 7, Motorola SIGNED 12-bit at start bit 21,
 *   a flag at bit 40, a 4-bit counter in bits 48–51, and an XOR checksum of bytes 0–6 in byte 7;
 * - 0x200 (90 Hz): a round-robin multiplexer in bits 0–1 with a different page per selector value;
 * - 0x300 (50 Hz): a byte counter in byte 1, and byte 3 that changes only inside BUTTON (4–6 s);
 * - 0x310 (20 Hz): a value table (gear 1, 2, 6) in bits 8–10;
 * - 0x7E0/0x7E8: ISO-TP ReadDataByIdentifier F190 (VIN) exchanges with flow control, every 2 s;
 * - 0x400 (20 Hz): cycles through a block of 4 payloads; 0x410 (20 Hz): noise with one 5-frame
 *   block replayed 3 times;
 * - 0x500 (50 Hz): a byte counter, and an Intel 16-bit field at bit 8 carrying raw = (v + 10) / 0.05
 *   of a quantity v, which the reference CSV logs at 2 Hz.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readField, writeField, type FieldRef } from '../../src/analysis/bits';
import { prng } from '../../src/eval/generate';
import { createCaptureWriter } from '../../src/formats';
import type { CanFrame } from '../../src/frame';

export const BUTTON: readonly [number, number] = [4, 6];
export const VIN = 'W0L000051T2123456';
export const CALIBRATION = {
  id: '0x500',
  field: { startBit: 8, length: 16, byteOrder: 'little_endian' } as FieldRef,
  scale: 0.05,
  offset: -10,
};
export const REPLAYED_BLOCK_LENGTH = 5;

const f = (
  startBit: number,
  length: number,
  byteOrder: FieldRef['byteOrder'] = 'little_endian',
): FieldRef => ({ startBit, length, byteOrder });

function frame(timestamp: number, id: number, data: Uint8Array, channel = 0): CanFrame {
  return {
    timestamp,
    id,
    extended: false,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: data.length,
    data,
    channel,
  };
}

function bytes(...values: number[]): Uint8Array {
  return Uint8Array.from(values);
}

export function sceneFrames(): CanFrame[] {
  const rand = prng(7);
  const noise = (): number => (rand() - 0.5) * 2;
  const out: CanFrame[] = [];
  for (let t = 0; t < 1000; t++) {
    const d = new Uint8Array(8);
    writeField(d, f(7, 14, 'big_endian'), Math.round(8000 + 7000 * Math.sin(t / 50) + 4 * noise()));
    writeField(d, f(21, 12, 'big_endian'), Math.round(-1500 * Math.sin(t / 33) + 2 * noise()) & 0xfff);
    writeField(d, f(40, 1), Math.floor(t / 97) % 2);
    writeField(d, f(48, 4), t % 16);
    d[7] = d.subarray(0, 7).reduce((a, b) => a ^ b, 0);
    out.push(frame(t * 0.01 + 0.001, 0x100, d));
  }
  for (let t = 0; t < 900; t++) {
    const d = new Uint8Array(8);
    const page = t % 3;
    writeField(d, f(0, 2), page);
    writeField(d, f(56, 4), t % 16);
    if (page === 0) writeField(d, f(8, 16), Math.round(30000 + 25000 * Math.sin(t / 60)));
    if (page === 1) writeField(d, f(8, 8), Math.round(120 + 100 * Math.sin(t / 45)));
    if (page === 1) writeField(d, f(16, 12), Math.round(2000 + 1800 * Math.cos(t / 70)));
    if (page === 2) writeField(d, f(30, 10), Math.round(500 + 450 * Math.sin(t / 30)));
    out.push(frame(t / 90 + 0.002, 0x200, d));
  }
  for (let t = 0; t < 500; t++) {
    const time = t * 0.02 + 0.003;
    const inside = time >= BUTTON[0] && time <= BUTTON[1];
    out.push(
      frame(
        time,
        0x300,
        bytes(0x11, t % 256, 0x22, inside ? Math.floor(rand() * 256) : 0, 0x33, 0x44, 0x55, 0x66),
      ),
    );
  }
  for (let t = 0; t < 200; t++) {
    const d = new Uint8Array(4);
    writeField(d, f(8, 3), [1, 2, 6][Math.floor(t / 30) % 3]!);
    out.push(frame(t * 0.05 + 0.008, 0x310, d));
  }
  const vin = Array.from(VIN, (c) => c.charCodeAt(0));
  const answer = [0x62, 0xf1, 0x90, ...vin]; // 20 bytes
  for (const start of [1, 3, 5, 7, 9]) {
    out.push(frame(start + 0.0004, 0x7e0, bytes(0x03, 0x22, 0xf1, 0x90, 0xcc, 0xcc, 0xcc, 0xcc)));
    out.push(frame(start + 0.0104, 0x7e8, bytes(0x10, answer.length, ...answer.slice(0, 6))));
    out.push(frame(start + 0.0204, 0x7e0, bytes(0x30, 0x00, 0x0a, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc)));
    out.push(frame(start + 0.0304, 0x7e8, bytes(0x21, ...answer.slice(6, 13))));
    out.push(frame(start + 0.0404, 0x7e8, bytes(0x22, ...answer.slice(13, 20))));
  }
  const cycle = [bytes(1, 0, 0, 0), bytes(2, 0x10, 0, 0), bytes(3, 0x20, 0xff, 0), bytes(4, 0x30, 0, 0x80)];
  for (let t = 0; t < 200; t++) out.push(frame(t * 0.05 + 0.005, 0x400, cycle[t % 4]!));
  const replay = Array.from({ length: REPLAYED_BLOCK_LENGTH }, (_, k) => bytes(0xa0 + k, 0x5a, k * 3, 0xee));
  const replayAt = [20, 90, 150];
  for (let t = 0; t < 200; t++) {
    const k = replayAt.findIndex((s) => t >= s && t < s + REPLAYED_BLOCK_LENGTH);
    const d =
      k >= 0
        ? replay[t - replayAt[k]!]!
        : bytes(
            Math.floor(rand() * 256),
            Math.floor(rand() * 256),
            Math.floor(rand() * 256),
            Math.floor(rand() * 256),
          );
    out.push(frame(t * 0.05 + 0.006, 0x410, d));
  }
  for (let t = 0; t < 500; t++) {
    const time = t * 0.02 + 0.007;
    const d = new Uint8Array(8);
    d[0] = t % 256;
    writeField(d, CALIBRATION.field, Math.round(2000 + 1500 * Math.sin((2 * Math.PI * time) / 7)));
    out.push(frame(time, 0x500, d));
  }
  return out.sort((a, b) => a.timestamp - b.timestamp);
}

/** The quantity the 0x500 field encodes, logged at 2 Hz from the frame at or before each instant. */
export function referenceCsv(frames: readonly CanFrame[]): string {
  const carrier = frames.filter((x) => x.id === 0x500);
  const lines = ['time,coolant_c'];
  for (let t = 0.25; t < 10; t += 0.5) {
    const at = carrier.filter((x) => x.timestamp <= t).pop()!;
    lines.push(
      `${t.toFixed(3)},${(readField(at.data, CALIBRATION.field) * CALIBRATION.scale + CALIBRATION.offset).toFixed(4)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export interface SceneFiles {
  dir: string;
  capture: string;
  reference: string;
}

/** Writes the scene as a candump log and its reference CSV into a fresh temporary directory. */
export async function writeScene(): Promise<SceneFiles> {
  const dir = mkdtempSync(join(tmpdir(), 'canlab-mcp-'));
  const capture = join(dir, 'scene.log');
  const frames = sceneFrames();
  const writer = createCaptureWriter(capture);
  for (const x of frames) await writer.write(x);
  await writer.close();
  const reference = join(dir, 'reference.csv');
  writeFileSync(reference, referenceCsv(frames));
  return { dir, capture, reference };
}
