/**
 * Per-id view of a capture that the detectors share: the id's data frames of its most common
 * payload length, in capture order, and their bit matrix.
 */
import type { CanFrame } from '../frame';
import type { ByteOrder } from '../dbc/model';
import { bytesSpanned, fieldBits, fieldFromLsb, formatId, type FieldRef } from '../analysis/bits';

export interface MessageFrames {
  id: number;
  extended: boolean;
  key: string;
  /** Payload length analysed, bytes. */
  length: number;
  /** Payloads of that length, in capture order. */
  data: Uint8Array[];
}

/** Groups data frames (no remote or error frames) by id, keeping capture order; ids in first-seen order. */
export function groupById(frames: Iterable<CanFrame>): Map<string, CanFrame[]> {
  const out = new Map<string, CanFrame[]>();
  for (const f of frames) {
    if (f.error || f.remote) continue;
    const key = formatId(f.id, f.extended);
    let list = out.get(key);
    if (!list) {
      list = [];
      out.set(key, list);
    }
    list.push(f);
  }
  return out;
}

/** Frames of one id reduced to the most common payload length. */
export function messageFrames(frames: readonly CanFrame[]): MessageFrames {
  const first = frames[0];
  if (!first) throw new RangeError('messageFrames needs at least one frame');
  const lengths = new Map<number, number>();
  for (const f of frames) lengths.set(f.data.length, (lengths.get(f.data.length) ?? 0) + 1);
  let length = 0;
  let best = -1;
  for (const [len, n] of lengths) {
    if (n > best || (n === best && len > length)) {
      best = n;
      length = len;
    }
  }
  return {
    id: first.id,
    extended: first.extended,
    key: formatId(first.id, first.extended),
    length,
    data: frames.filter((f) => f.data.length === length).map((f) => f.data),
  };
}

/** Bit `index` (DBC numbering) of a payload. */
export function bitOf(data: Uint8Array, index: number): number {
  return ((data[index >> 3] ?? 0) >> (index & 7)) & 1;
}

/** Flip count per DBC bit index over consecutive payloads. */
export function flipCounts(data: readonly Uint8Array[], length: number): number[] {
  const flips = new Array<number>(length * 8).fill(0);
  for (let t = 1; t < data.length; t++) {
    const a = data[t - 1]!;
    const b = data[t]!;
    for (let i = 0; i < length; i++) {
      const x = a[i]! ^ b[i]!;
      if (x === 0) continue;
      for (let k = 0; k < 8; k++) if ((x >> k) & 1) flips[i * 8 + k]!++;
    }
  }
  return flips;
}

/** Re-expresses a field that lies inside one byte in the given byte order (same bits, same value). */
export function inByteOrder(field: FieldRef, order: ByteOrder): FieldRef {
  if (field.byteOrder === order || bytesSpanned(field) > 1) return field;
  return fieldFromLsb(fieldBits(field)[0]!, field.length, order);
}

/**
 * Fewest distinct payloads an id needs before a checksum or multiplexer is claimed on it. Each rule
 * tried has a free parameter (a sum's constant, a CRC's data id) that the first payload fixes; every
 * further distinct payload then fits by accident with chance 1/256. Over 8 of them, the chance that
 * one of the ~10^3 rules tried per byte fits is about 10^3 / 256^7, nil; over 3, it is 1 in 65.
 * Fewer distinct payloads show too little to tell structure from coincidence.
 */
export const MIN_DISTINCT_PAYLOADS = 8;

/** Number of different payloads (up to `cap`, where counting can stop). */
export function distinctPayloads(data: readonly Uint8Array[], cap = Infinity): number {
  const seen = new Set<string>();
  for (const d of data) {
    seen.add(String.fromCharCode(...d));
    if (seen.size >= cap) break;
  }
  return seen.size;
}
