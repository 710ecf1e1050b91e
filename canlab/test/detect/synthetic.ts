import type { CanFrame } from '../../src/frame';
import { writeField, type FieldRef } from '../../src/analysis/bits';
import { idBytes } from '../../src/detect/crc';
import { prng } from '../../src/eval/generate';

/** Frames of one id built by `fill(t, data)`, 10 ms apart. */
export function makeFrames(
  n: number,
  length: number,
  fill: (t: number, data: Uint8Array) => void,
  id = 0x123,
  extended = false,
): CanFrame[] {
  const frames: CanFrame[] = [];
  for (let t = 0; t < n; t++) {
    const data = new Uint8Array(length);
    fill(t, data);
    frames.push({
      timestamp: t * 0.01,
      id,
      extended,
      remote: false,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc: length,
      data,
      channel: 1,
    });
  }
  return frames;
}

export function field(
  startBit: number,
  length: number,
  byteOrder: FieldRef['byteOrder'] = 'little_endian',
): FieldRef {
  return { startBit, length, byteOrder };
}

/**
 * Toyota's checksum as opendbc computes it (opendbc/can/common.cc, toyota_checksum): the id's bytes,
 * plus the payload length, plus every payload byte but the last, modulo 256.
 */
export function toyotaChecksum(id: number, extended: boolean, data: Uint8Array): number {
  let sum = idBytes(id, extended).reduce((a, b) => a + b, data.length);
  for (let i = 0; i < data.length - 1; i++) sum += data[i]!;
  return sum & 0xff;
}

/**
 * A multiplexed id: a 2-bit selector cycling through pages 0, 1 and 2, each with a moving field of
 * its own, and page 3 in 1 frame of 97, too rare to analyse.
 */
export function pagesWithRareValue(): CanFrame[] {
  return makeFrames(900, 8, (t, d) => {
    const page = t % 97 === 50 ? 3 : t % 3;
    writeField(d, field(0, 2), page);
    if (page === 0) writeField(d, field(8, 16), Math.round(30000 + 25000 * Math.sin(t / 60)));
    if (page === 1) writeField(d, field(8, 12), Math.round(2000 + 1800 * Math.cos(t / 70)));
    if (page === 2) writeField(d, field(30, 10), Math.round(500 + 450 * Math.sin(t / 30)));
  });
}

export { writeField, prng };
