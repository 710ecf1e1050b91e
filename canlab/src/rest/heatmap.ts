/**
 * The window's bit-change heatmap: for one id, how often each payload bit flips between
 * consecutive frames and how often it is set. A counter shows as a row of rates halving from its
 * least significant bit, a checksum as a byte of bits flipping about half the time, a signal
 * boundary as the step where the rates change.
 */
import type { CanFrame } from '../frame';

/** Counts per DBC bit index (`byte * 8 + bit`, bit 0 the least significant bit of byte 0). */
export interface BitHeatmap {
  /** Data frames of the id (error and remote frames are not counted). */
  frames: number;
  /** Longest payload seen, bytes. */
  length: number;
  /** Frames whose payload reaches byte i: the denominator of a bit's set rate. */
  byteFrames: number[];
  /** Consecutive frame pairs that both reach byte i: the denominator of a bit's flip rate. */
  bytePairs: number[];
  /** Per bit: pairs in which it changed. */
  flips: number[];
  /** Per bit: frames in which it is 1. */
  sets: number[];
}

const MAX_PAYLOAD = 64;

export function bitHeatmap(frames: readonly CanFrame[], id: number, extended: boolean): BitHeatmap {
  // Histograms of each byte's values and of its changes (XOR with the previous frame's byte): one
  // increment per byte per frame, the bits are counted once per distinct value at the end.
  const values = new Uint32Array(MAX_PAYLOAD * 256);
  const changes = new Uint32Array(MAX_PAYLOAD * 256);
  const byteFrames = new Array<number>(MAX_PAYLOAD).fill(0);
  const bytePairs = new Array<number>(MAX_PAYLOAD).fill(0);
  let count = 0;
  let length = 0;
  let previous: Uint8Array | undefined;
  for (const f of frames) {
    if (f.id !== id || f.extended !== extended || f.error || f.remote) continue;
    const data = f.data;
    count++;
    length = Math.max(length, data.length);
    const paired = previous === undefined ? 0 : Math.min(previous.length, data.length);
    for (let i = 0; i < data.length; i++) {
      byteFrames[i]!++;
      values[i * 256 + data[i]!]!++;
      if (i < paired) {
        bytePairs[i]!++;
        changes[i * 256 + (data[i]! ^ previous![i]!)]!++;
      }
    }
    previous = data;
  }
  const perBit = (histogram: Uint32Array): number[] => {
    const out = new Array<number>(length * 8).fill(0);
    for (let i = 0; i < length; i++)
      for (let value = 1; value < 256; value++) {
        const n = histogram[i * 256 + value]!;
        if (n === 0) continue;
        for (let k = 0; k < 8; k++) if ((value >> k) & 1) out[i * 8 + k]! += n;
      }
    return out;
  };
  return {
    frames: count,
    length,
    byteFrames: byteFrames.slice(0, length),
    bytePairs: bytePairs.slice(0, length),
    flips: perBit(changes),
    sets: perBit(values),
  };
}
