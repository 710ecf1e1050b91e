import type { CanFrame } from '../../src/frame';
import { writeField, type FieldRef } from '../../src/analysis/bits';
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

export { writeField, prng };
