/**
 * Ranks payload bytes and bits by how differently they behave inside annotated intervals (marks)
 * than outside them: the analyst holds a button, marks the interval, and asks which bits moved.
 *
 * Every consecutive pair of frames of one id is a trial, inside when the later frame's time lies in
 * a marked interval. Two statistics per byte and bit, both two-proportion z-scores
 * z = (p_in − p_out) / sqrt(p (1 − p) (1/n_in + 1/n_out)) with p the pooled proportion:
 * - change: the share of pairs in which the byte (bit) changed. A byte that moves only while the
 *   button is held scores high; a counter or checksum that moves in every frame scores 0.
 * - level: the share of frames in which a bit is set. A flag that is 1 exactly while held changes
 *   only at the edges, so its change score is weak but its level score is high. A byte's level score
 *   is the level score of its strongest bit.
 * score = max(change z, |level z|); results are sorted by it, highest first.
 */
import { formatId } from '../analysis/bits';
import type { CanFrame } from '../frame';

const { sqrt, abs, max } = Math;
const MAX_BYTES = 64;

export type Interval = readonly [number, number];

interface Stat {
  pairsInside: number;
  pairsOutside: number;
  changeRateInside: number;
  changeRateOutside: number;
  changeZ: number;
  levelZ: number;
  score: number;
}

export interface ByteRank extends Stat {
  id: string;
  byte: number;
}

export interface BitRank extends Stat {
  id: string;
  /** DBC bit index: byte * 8 + bit in byte (0 = least significant). */
  bit: number;
  setRateInside: number;
  setRateOutside: number;
}

export interface RankResult {
  pairsInside: number;
  pairsOutside: number;
  bytes: ByteRank[];
  bits: BitRank[];
}

/** Two-proportion z-score; 0 when either side has no trials or the pooled proportion is 0 or 1. */
export function twoProportionZ(hitsIn: number, nIn: number, hitsOut: number, nOut: number): number {
  if (nIn === 0 || nOut === 0) return 0;
  const p = (hitsIn + hitsOut) / (nIn + nOut);
  if (p <= 0 || p >= 1) return 0;
  return (hitsIn / nIn - hitsOut / nOut) / sqrt(p * (1 - p) * (1 / nIn + 1 / nOut));
}

/** Sorted, merged copy of the intervals. */
function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter(([a, b]) => b >= a).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function insideAny(merged: readonly Interval[], t: number): boolean {
  let lo = 0;
  let hi = merged.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = merged[mid]!;
    if (t < a) hi = mid - 1;
    else if (t > b) lo = mid + 1;
    else return true;
  }
  return false;
}

class IdCounts {
  prev: Uint8Array | undefined;
  length = 0;
  pairs = [0, 0];
  // Index [side * MAX_BYTES + byte] and [side * MAX_BYTES * 8 + bit]; side 1 = inside.
  byteChanges = new Int32Array(2 * MAX_BYTES);
  bitFlips = new Int32Array(2 * MAX_BYTES * 8);
  bitSet = new Int32Array(2 * MAX_BYTES * 8);

  add(data: Uint8Array, inside: boolean): void {
    const prev = this.prev;
    this.prev = data;
    if (!prev) return;
    const side = inside ? 1 : 0;
    this.pairs[side]!++;
    const n = data.length < MAX_BYTES ? data.length : MAX_BYTES;
    if (n > this.length) this.length = n;
    const byteBase = side * MAX_BYTES;
    const bitBase = byteBase * 8;
    for (let i = 0; i < n; i++) {
      const cur = data[i]!;
      const diff = cur ^ (prev[i] ?? 0);
      if (diff !== 0) this.byteChanges[byteBase + i]!++;
      for (let k = 0; k < 8; k++) {
        const bit = bitBase + i * 8 + k;
        if ((diff >> k) & 1) this.bitFlips[bit]!++;
        if ((cur >> k) & 1) this.bitSet[bit]!++;
      }
    }
  }
}

export interface RankOptions {
  /** Keep only these ids (formatId keys). */
  ids?: ReadonlySet<string>;
}

/** Ranks bytes and bits of every id against the intervals (capture time, seconds, inclusive). */
export function rankAgainstIntervals(
  frames: Iterable<CanFrame>,
  intervals: readonly Interval[],
  options: RankOptions = {},
): RankResult {
  const merged = mergeIntervals(intervals);
  const counts = new Map<string, IdCounts>();
  for (const f of frames) {
    if (f.error || f.remote) continue;
    const key = formatId(f.id, f.extended);
    if (options.ids && !options.ids.has(key)) continue;
    let c = counts.get(key);
    if (!c) {
      c = new IdCounts();
      counts.set(key, c);
    }
    c.add(f.data, insideAny(merged, f.timestamp));
  }
  const bytes: ByteRank[] = [];
  const bits: BitRank[] = [];
  let pairsInside = 0;
  let pairsOutside = 0;
  for (const [id, c] of counts) {
    const nOut = c.pairs[0]!;
    const nIn = c.pairs[1]!;
    pairsInside += nIn;
    pairsOutside += nOut;
    for (let i = 0; i < c.length; i++) {
      let strongestLevel = 0;
      for (let k = 0; k < 8; k++) {
        const b = i * 8 + k;
        const flipsIn = c.bitFlips[MAX_BYTES * 8 + b]!;
        const flipsOut = c.bitFlips[b]!;
        const setIn = c.bitSet[MAX_BYTES * 8 + b]!;
        const setOut = c.bitSet[b]!;
        const changeZ = twoProportionZ(flipsIn, nIn, flipsOut, nOut);
        const levelZ = twoProportionZ(setIn, nIn, setOut, nOut);
        if (abs(levelZ) > abs(strongestLevel)) strongestLevel = levelZ;
        bits.push({
          id,
          bit: b,
          pairsInside: nIn,
          pairsOutside: nOut,
          changeRateInside: nIn ? flipsIn / nIn : 0,
          changeRateOutside: nOut ? flipsOut / nOut : 0,
          setRateInside: nIn ? setIn / nIn : 0,
          setRateOutside: nOut ? setOut / nOut : 0,
          changeZ,
          levelZ,
          score: max(changeZ, abs(levelZ)),
        });
      }
      const chIn = c.byteChanges[MAX_BYTES + i]!;
      const chOut = c.byteChanges[i]!;
      const changeZ = twoProportionZ(chIn, nIn, chOut, nOut);
      bytes.push({
        id,
        byte: i,
        pairsInside: nIn,
        pairsOutside: nOut,
        changeRateInside: nIn ? chIn / nIn : 0,
        changeRateOutside: nOut ? chOut / nOut : 0,
        changeZ,
        levelZ: strongestLevel,
        score: max(changeZ, abs(strongestLevel)),
      });
    }
  }
  const order = (a: Stat, b: Stat): number => b.score - a.score;
  return { pairsInside, pairsOutside, bytes: bytes.sort(order), bits: bits.sort(order) };
}
