/**
 * Signal boundaries from bit behaviour, in the spirit of READ (Marchetti & Stabili, "READ:
 * Reverse Engineering of Automotive Data Frames"): per-bit flip rates rise from a field's MSB to
 * its LSB, and a boundary sits where that pattern restarts. READ thresholds the flip-rate jumps;
 * here the same idea is scored with a description-length criterion, which also sees carries and
 * co-occurring changes: a candidate field costs the bits needed to code its value sequence under
 * the best of a few simple models (categorical values, categorical or Gaussian first/second
 * differences modulo 2^width, or raw bits), and a dynamic programme picks the split of each run of
 * moving bits that codes the frames in the fewest bits. Bits of one signal are cheaper together
 * (their carries are predictable); independent signals are cheaper apart.
 *
 * Runs are segmented in both bit orders (Intel fields are contiguous in DBC bit numbering,
 * Motorola fields in MSB-first numbering); the order with the shorter total description wins the
 * id. Signedness compares how smoothly the field reads as unsigned or two's complement.
 */
import type { ByteOrder } from '../dbc/model';
import { describeField, fieldBits, msbFirst, readField, toSigned, type FieldRef } from '../analysis/bits';
import { carriesLink, carryEvidence, extendsSign, MIN_CARRY_BITS } from './carries';
import { flipCounts } from './frames';

// Module-level bindings, not `Math.x` in loops: under jest the global object sits behind a
// vm interceptor and each global lookup in a hot loop costs ~50× (see docs/testing.md).
const { abs, log2, max, min, sqrt } = Math;

export interface SegmentOptions {
  maxFieldLength?: number;
  /** Frames used for scoring (the first ones). Default 1500. */
  maxFrames?: number;
}

export interface SegmentField {
  field: FieldRef;
  /** Description length of the field's values, bits. */
  cost: number;
  /** Sum of the description lengths of its bits taken one by one, bits. */
  bitsCost: number;
  /** Why parts of it that the description-length split kept apart were joined (evidence lines). */
  joins?: string[];
}

export interface Segmentation {
  byteOrder: ByteOrder;
  fields: SegmentField[];
  cost: number;
}

const LOG2_SQRT_2PI_E = 0.5 * log2(2 * Math.PI * Math.E);

/** Empirical entropy (bits per symbol) of values[from..], or Infinity once it has more than `cap` distinct symbols. */
function entropy(
  values: Float64Array,
  from: number,
  cap: number,
  sorted: Float64Array,
): { h: number; k: number } {
  const n = values.length - from;
  const buf = sorted.subarray(0, n);
  buf.set(values.subarray(from));
  buf.sort();
  let h = 0;
  let k = 0;
  let run = 1;
  for (let i = 1; i <= n; i++) {
    if (i < n && buf[i] === buf[i - 1]) {
      run++;
      continue;
    }
    k++;
    if (k > cap) return { h: Infinity, k };
    h -= run * log2(run / n);
    run = 1;
  }
  return { h: h / n, k };
}

/** Scratch buffers reused across cost evaluations. */
class Scratch {
  r1 = new Float64Array(0);
  r2 = new Float64Array(0);
  sorted = new Float64Array(0);
  ensure(n: number): void {
    if (this.r1.length < n) {
      this.r1 = new Float64Array(n);
      this.r2 = new Float64Array(n);
      this.sorted = new Float64Array(n);
    }
  }
}

/**
 * Description length in bits of a value sequence of a `width`-bit field: the cheapest of
 * categorical values, categorical or Gaussian first differences, Gaussian second differences
 * (differences taken modulo 2^width and centred), and raw bits; each with a parameter cost.
 */
export function sequenceCost(
  values: Float64Array,
  n: number,
  width: number,
  scratch = new Scratch(),
): number {
  scratch.ensure(n);
  const m = 2 ** width;
  const half = m / 2;
  const logN = log2(max(2, n));
  const param = 0.5 * logN;
  const r1 = scratch.r1;
  const r2 = scratch.r2;
  let s1 = 0;
  let s2 = 0;
  let zeros = 0;
  for (let t = 1; t < n; t++) {
    let d = (values[t]! - values[t - 1]!) % m;
    if (d >= half) d -= m;
    else if (d < -half) d += m;
    r1[t] = d;
    s1 += d * d;
    if (d === 0) zeros++;
    if (t >= 2) {
      let e = (d - r1[t - 1]!) % m;
      if (e >= half) e -= m;
      else if (e < -half) e += m;
      r2[t] = e;
      s2 += e * e;
    }
  }
  let best = n * width; // raw bits
  const cap = max(8, n >> 2);
  const hv = entropy(values.subarray(0, n), 0, cap, scratch.sorted);
  if (Number.isFinite(hv.h)) best = min(best, n * hv.h + (hv.k - 1) * param + hv.k * min(width, 8));
  const h1 = entropy(r1.subarray(0, n), 1, cap, scratch.sorted);
  if (Number.isFinite(h1.h))
    best = min(best, width + (n - 1) * h1.h + (h1.k - 1) * param + h1.k * min(width, 8));
  const perSymbol = (sigma: number): number =>
    min(width, max(LOG2_SQRT_2PI_E, log2(max(sigma, 1)) + LOG2_SQRT_2PI_E));
  const gaussian = (ss: number, count: number): number =>
    count * perSymbol(sqrt(ss / max(1, count))) + 2 * param;
  /** Gaussian with outliers escaped (coded raw), so that a few wrap-arounds or jumps do not inflate sigma. */
  const robust = (r: Float64Array, from: number, ss: number): number => {
    const count = n - from;
    let sigma = sqrt(ss / max(1, count));
    let inliers = count;
    for (let pass = 0; pass < 2; pass++) {
      const limit = 3 * max(sigma, 1);
      let s = 0;
      let k = 0;
      for (let t = from; t < n; t++) {
        const v = r[t]!;
        if (abs(v) <= limit) {
          s += v * v;
          k++;
        }
      }
      if (k === 0) break;
      sigma = sqrt(s / k);
      inliers = k;
    }
    const outliers = count - inliers;
    const pOut = outliers / count;
    const flag = outliers > 0 ? count * -(pOut * log2(pOut) + (1 - pOut) * log2(1 - pOut)) : 0;
    return inliers * perSymbol(sigma) + outliers * width + flag + 3 * param;
  };
  if (n > 1) best = min(best, width + gaussian(s1, n - 1));
  if (n > 1 && zeros > 0 && zeros < n - 1) {
    // Held values with jumps: code "changed or not" per frame, then the jump (Gaussian or raw).
    const p0 = zeros / (n - 1);
    const changes = n - 1 - zeros;
    const flag = (n - 1) * -(p0 * log2(p0) + (1 - p0) * log2(1 - p0)) + param;
    best = min(best, width + flag + min(gaussian(s1, changes), changes * width));
  }
  if (n > 2) best = min(best, 2 * width + gaussian(s2, n - 2));
  if (n > 2) best = min(best, width + robust(r1, 1, s1), 2 * width + robust(r2, 2, s2));
  return best;
}

/** Positions of a byte order's contiguous numbering mapped to DBC bit indices. */
function orderIndex(order: ByteOrder, q: number): number {
  return order === 'little_endian' ? q : msbFirst(q);
}

/** Field covering contiguous positions a..b of the order's numbering. */
function fieldOfSpan(order: ByteOrder, a: number, b: number): FieldRef {
  const length = b - a + 1;
  return order === 'little_endian'
    ? { startBit: a, length, byteOrder: order }
    : { startBit: msbFirst(a), length, byteOrder: order };
}

/** Segments the moving bits of one message in one byte order. `bits[t * nbits + index]` is bit `index` of frame t. */
function segmentOrder(
  data: readonly Uint8Array[],
  bits: Uint8Array,
  n: number,
  nbits: number,
  available: ReadonlySet<number>,
  order: ByteOrder,
  maxLen: number,
  scratch: Scratch,
): Segmentation {
  const fields: SegmentField[] = [];
  const frames = data.slice(0, n);
  const flips = flipCounts(frames, nbits >> 3);
  let total = 0;
  // Describing where a field ends costs about a bit per boundary; a little more keeps noise bits with their field.
  const fieldOverhead = 2;
  const singleCost = new Map<number, number>();
  const values = new Float64Array(n);
  const bitCost = (index: number): number => {
    let c = singleCost.get(index);
    if (c === undefined) {
      for (let t = 0; t < n; t++) values[t] = bits[t * nbits + index]!;
      c = sequenceCost(values, n, 1, scratch) + fieldOverhead;
      singleCost.set(index, c);
    }
    return c;
  };
  let q = 0;
  while (q < nbits) {
    if (!available.has(orderIndex(order, q))) {
      q++;
      continue;
    }
    let end = q;
    while (end + 1 < nbits && available.has(orderIndex(order, end + 1))) end++;
    // Run q..end: cost[a][b] for b - a < maxLen, then DP.
    const len = end - q + 1;
    const cost: number[][] = [];
    for (let a = 0; a < len; a++) {
      const row: number[] = [];
      values.fill(0);
      for (let b = a; b < len && b - a < maxLen; b++) {
        const index = orderIndex(order, q + b);
        if (order === 'little_endian') {
          const scale = 2 ** (b - a);
          for (let t = 0; t < n; t++) values[t] = values[t]! + bits[t * nbits + index]! * scale;
        } else {
          for (let t = 0; t < n; t++) values[t] = values[t]! * 2 + bits[t * nbits + index]!;
        }
        row.push(b === a ? bitCost(index) : sequenceCost(values, n, b - a + 1, scratch) + fieldOverhead);
      }
      cost.push(row);
    }
    const best = new Array<number>(len + 1).fill(Infinity);
    const from = new Array<number>(len + 1).fill(0);
    best[0] = 0;
    for (let b = 0; b < len; b++) {
      for (let a = max(0, b - maxLen + 1); a <= b; a++) {
        const c = best[a]! + cost[a]![b - a]!;
        if (c < best[b + 1]!) {
          best[b + 1] = c;
          from[b + 1] = a;
        }
      }
    }
    let b = len;
    const runFields: SegmentField[] = [];
    while (b > 0) {
      const a = from[b]!;
      let bitsCost = 0;
      for (let k = a; k < b; k++) bitsCost += bitCost(orderIndex(order, q + k));
      runFields.push({ field: fieldOfSpan(order, q + a, q + b - 1), cost: cost[a]![b - 1 - a]!, bitsCost });
      b = a;
    }
    const joined = joinLinked(runFields.reverse(), order, frames, flips, maxLen, scratch, fieldOverhead);
    fields.push(...joined.fields);
    // Carries are information the split's coding missed: credited, they also decide the byte order,
    // since bytes carry into each other only when read in the order they were written.
    total += best[len]! - joined.credit;
    q = end + 1;
  }
  return { byteOrder: order, fields, cost: total };
}

/**
 * Whether `low` is the noise beneath the measured value `high`: READ's flip-rate profile, which
 * rises from a value's MSB to its LSB and restarts at the next field's MSB, carries on into `low`
 * (every bit of it flips at least 90% as often as `high`'s least significant bit, which itself
 * moves in at least a tenth of the frame pairs), and `low` has no structure of its own (it codes in
 * at least 90% of its raw width per frame). The least significant bits of a sensor reading look like
 * that; they carry rarely into the bits above, so neither the coding cost nor the carries can join
 * them, while a separate field beneath a value would restart the profile or show structure.
 */
function noiseBeneath(
  high: SegmentField,
  low: SegmentField,
  flips: readonly number[],
  n: number,
  overhead: number,
): boolean {
  if (high.field.length < 2 || (low.cost - overhead) / n < 0.9 * low.field.length) return false;
  const pairs = max(1, n - 1);
  const lsbRate = flips[fieldBits(high.field)[0]!]! / pairs;
  return lsbRate >= 0.1 && fieldBits(low.field).every((b) => flips[b]! / pairs >= 0.9 * lsbRate);
}

/**
 * How strongly `low` continues `high` as one number: the carry information in bits (see
 * carries.ts), at least MIN_CARRY_BITS for sign-extension bits, a token 1 for noise beneath a value
 * (joined only when no carry link competes), 0 when nothing links them; and the evidence line.
 */
function linkStrength(
  frames: readonly Uint8Array[],
  high: SegmentField,
  low: SegmentField,
  flips: readonly number[],
  overhead: number,
): { rank: number; carried: boolean; why: string } {
  const carry = carryEvidence(frames, high.field, low.field);
  const at = `${describeField(high.field)} over ${describeField(low.field)}`;
  const carries = `${carry.carries} carries in ${carry.steps} steps where chance gives ${carry.expected.toFixed(1)} (${carry.bits.toFixed(0)} bits)`;
  if (extendsSign(frames, high.field, low.field))
    return {
      rank: max(carry.bits, MIN_CARRY_BITS),
      carried: true,
      why: `joined ${at}: sign extension; ${carries}`,
    };
  if (carriesLink(carry)) return { rank: carry.bits, carried: true, why: `joined ${at}: ${carries}` };
  return noiseBeneath(high, low, flips, frames.length, overhead)
    ? { rank: 1, carried: false, why: `joined ${at}: noise bits continuing the flip-rate profile` }
    : { rank: 0, carried: false, why: '' };
}

/**
 * Joins neighbouring fields of one run that are one number (`linkStrength`), strongest link first,
 * until none is left: the description-length split cannot tell one number from two when carries
 * are rare or the low bits are noise, and the carries and the flip profile can. Returns the fields
 * and the carry information credited to this byte order.
 */
function joinLinked(
  run: SegmentField[],
  order: ByteOrder,
  frames: readonly Uint8Array[],
  flips: readonly number[],
  maxLen: number,
  scratch: Scratch,
  overhead: number,
): { fields: SegmentField[]; credit: number } {
  const n = frames.length;
  const fields = [...run];
  let credit = 0;
  for (;;) {
    let best = -1;
    let strongest = { rank: 0, carried: false, why: '' };
    for (let i = 0; i + 1 < fields.length; i++) {
      const a = fields[i]!;
      const b = fields[i + 1]!;
      if (a.field.length + b.field.length > maxLen) continue;
      // Intel numbering runs from the LSB up, Motorola (MSB-first) from the MSB down.
      const link =
        order === 'little_endian'
          ? linkStrength(frames, b, a, flips, overhead)
          : linkStrength(frames, a, b, flips, overhead);
      if (link.rank > strongest.rank) {
        best = i;
        strongest = link;
      }
    }
    if (best < 0) return { fields, credit };
    if (strongest.carried) credit += strongest.rank;
    const a = fields[best]!;
    const b = fields[best + 1]!;
    // The first field holds the start bit in both orders: the Intel LSB, the Motorola MSB.
    const field: FieldRef = {
      startBit: a.field.startBit,
      length: a.field.length + b.field.length,
      byteOrder: order,
    };
    const values = new Float64Array(n);
    for (let t = 0; t < n; t++) values[t] = readField(frames[t]!, field);
    const cost = sequenceCost(values, n, field.length, scratch) + overhead;
    fields.splice(best, 2, {
      field,
      cost,
      bitsCost: a.bitsCost + b.bitsCost,
      joins: [...(a.joins ?? []), ...(b.joins ?? []), strongest.why],
    });
  }
}

/** Frame-major bit matrix of the first `n` payloads. */
export function bitMatrix(data: readonly Uint8Array[], n: number, nbits: number): Uint8Array {
  const bits = new Uint8Array(n * nbits);
  for (let t = 0; t < n; t++) {
    const d = data[t]!;
    for (let i = 0; i < nbits; i++) bits[t * nbits + i] = ((d[i >> 3] ?? 0) >> (i & 7)) & 1;
  }
  return bits;
}

/**
 * Segments the bits in `available` (moving bits not claimed by counters or checksums) into
 * fields, in both byte orders; returns both, best (lowest cost) first.
 */
export function segmentFields(
  data: readonly Uint8Array[],
  length: number,
  available: ReadonlySet<number>,
  options: SegmentOptions = {},
): Segmentation[] {
  const n = min(data.length, options.maxFrames ?? 1500);
  const nbits = length * 8;
  const maxLen = options.maxFieldLength ?? 32;
  const bits = bitMatrix(data, n, nbits);
  const scratch = new Scratch();
  const le = segmentOrder(data, bits, n, nbits, available, 'little_endian', maxLen, scratch);
  const be = segmentOrder(data, bits, n, nbits, available, 'big_endian', maxLen, scratch);
  // Ties (every field inside one byte) go to little endian.
  return be.cost < le.cost - 1e-6 ? [be, le] : [le, be];
}

export interface Signedness {
  signed: boolean;
  confidence: number;
  evidence: string;
}

/**
 * Two's complement or unsigned: a signed signal moving around zero jumps between 0 and 2^n-1 when
 * read unsigned, so the total variation of its unsigned reading is far larger than of its signed
 * one; an unsigned signal crossing the middle of its range shows the opposite.
 */
export function judgeSignedness(values: readonly number[], width: number): Signedness {
  if (width < 2 || values.length < 3)
    return { signed: false, confidence: 0.5, evidence: 'too short to judge signedness' };
  let tvU = 0;
  let tvS = 0;
  let negatives = 0;
  // Half-range jumps: a signed signal crossing zero jumps by about 2^n read unsigned; an unsigned one
  // crossing the middle of its range jumps by about 2^n read signed. Smooth signals never jump that far otherwise.
  const half = 2 ** (width - 1);
  let jumpsU = 0;
  let jumpsS = 0;
  for (let t = 0; t < values.length; t++) {
    const s = toSigned(values[t]!, width);
    if (s < 0) negatives++;
    if (t === 0) continue;
    const du = abs(values[t]! - values[t - 1]!);
    const ds = abs(s - toSigned(values[t - 1]!, width));
    tvU += du;
    tvS += ds;
    if (du >= half) jumpsU++;
    if (ds >= half) jumpsS++;
  }
  if (negatives === 0 || negatives === values.length || tvU === 0) {
    return {
      signed: false,
      confidence: 0.5,
      evidence: `MSB ${negatives === 0 ? 'never set' : 'always set'}: signedness not observable`,
    };
  }
  const distinct = new Set(values.slice(0, 4096)).size;
  if (distinct < 8) {
    return {
      signed: false,
      confidence: 0.6,
      evidence: `only ${distinct} distinct values: an enumeration, read as unsigned`,
    };
  }
  const ratio = tvS / tvU;
  const crossings = topBitCrossings(values, width);
  if (crossings.middle >= 2 && crossings.zero === 0) {
    return {
      signed: false,
      confidence: 0.8,
      evidence: `passes the middle of its range in small steps ${crossings.middle} times and never passes through zero: unsigned`,
    };
  }
  const markers = new Set(values.filter((v) => v >= half).slice(0, 64)).size;
  if (crossings.zero < 2 && markers <= 2 && (ratio < 0.5 || (jumpsU >= 2 && jumpsU > 2 * jumpsS + 1))) {
    // Read signed it would be smoother, but it reaches "negative" values only by jumps, and only one
    // or two of them: a range plus a marker such as 0x7FFC ("no target"), unsigned, not negative.
    return {
      signed: false,
      confidence: 0.6,
      evidence: `the two's-complement reading is smoother, but its ${markers} negative value(s) are reached only in ${crossings.jumps} jumps larger than ${crossings.limit} (8 × the median step), never by a small step through zero: a marker value, read as unsigned`,
    };
  }
  let signed: boolean;
  let confidence: number;
  if (jumpsU >= 2 && jumpsU > 2 * jumpsS + 1) {
    signed = true;
    confidence = min(0.99, 0.7 + 0.3 * (1 - jumpsS / jumpsU) * (1 - min(1, ratio)));
  } else if (jumpsS >= 2 && jumpsS > 2 * jumpsU + 1) {
    signed = false;
    confidence = min(0.99, 0.7 + 0.3 * (1 - jumpsU / jumpsS));
  } else {
    signed = ratio < 0.5;
    confidence = signed ? min(0.95, 1 - ratio) : min(0.95, 0.5 + 0.5 * min(1, (ratio - 0.5) / 0.5));
  }
  return {
    signed,
    confidence,
    evidence: `half-range jumps: ${jumpsU} read unsigned, ${jumpsS} read as two's complement; total variation signed/unsigned ${(ratio * 100).toFixed(1)}%; MSB set in ${((negatives / values.length) * 100).toFixed(1)}% of frames`,
  };
}

/**
 * Changes of the top bit, by how the value passes them: `zero` counts those that are a small step
 * read as two's complement (through zero), `middle` those that are a small step read unsigned
 * (through the middle of the range), `jumps` the rest. Small is at most 8 times the median nonzero
 * step (at least 2). A quantity crosses a boundary the way it moves elsewhere; a marker value is
 * reached by a jump.
 */
function topBitCrossings(
  values: readonly number[],
  width: number,
): { zero: number; middle: number; jumps: number; limit: number } {
  const steps: number[] = [];
  for (let t = 1; t < values.length; t++) {
    const d = min(
      abs(values[t]! - values[t - 1]!),
      abs(toSigned(values[t]!, width) - toSigned(values[t - 1]!, width)),
    );
    if (d > 0) steps.push(d);
  }
  steps.sort((a, b) => a - b);
  const limit = max(2, 8 * (steps[steps.length >> 1] ?? 0));
  const half = 2 ** (width - 1);
  let zero = 0;
  let middle = 0;
  let jumps = 0;
  for (let t = 1; t < values.length; t++) {
    const a = values[t - 1]!;
    const b = values[t]!;
    if (a >= half === b >= half) continue;
    if (abs(toSigned(b, width) - toSigned(a, width)) <= limit) zero++;
    else if (abs(b - a) <= limit) middle++;
    else jumps++;
  }
  return { zero, middle, jumps, limit };
}

/** Flip rate of each bit of a field from MSB to LSB, for evidence lines. */
export function flipProfile(field: FieldRef, flips: readonly number[], pairs: number): string {
  const bits = fieldBits(field).reverse();
  return bits.map((b) => ((flips[b] ?? 0) / max(1, pairs)).toFixed(2)).join(' ');
}
