/**
 * Carry evidence: whether two adjacent bit fields are the upper and lower parts of one number.
 *
 * When a number `J = A * 2^k + B` moves smoothly, its upper part A steps by exactly ±1 at the very
 * frames where its lower part B wraps around in the opposite direction (B falls by at least half
 * its range as A rises, or rises as A falls). Two independent fields do that only by coincidence,
 * at the rate B wraps while A holds still. The description-length segmentation cannot always see
 * this: when carries are rare (the upper bits of a 15-bit distance change a few times a minute) or
 * the lower bits are noise (the least significant bits of a measured value), coding the parts
 * together or apart costs about the same, and the cheaper split is a coin toss. A carry count far
 * above its chance rate is direct evidence, whatever the coding costs.
 *
 * The strength of the evidence is the information the carries carry against independence:
 * `m * KL(r || p0)` bits, where `m` counts A's ±1 steps, `r` the share of them that carry and `p0`
 * the share expected by chance. By Chernoff's bound, a coincidence that strong has probability at
 * most `2^-bits`.
 */
import { fieldBits, msbFirst, readField, type FieldRef } from '../analysis/bits';

const { log2 } = Math;

export interface CarryEvidence {
  /** Steps of the upper field by exactly ±1 (modulo its width). */
  steps: number;
  /** Steps at which the lower field wrapped the opposite way: the joint value moved by less than half the lower range. */
  carries: number;
  /** Carries expected if the fields were independent. */
  expected: number;
  /** Information against independence, bits (0 when carries are at or below chance). */
  bits: number;
}

/** Fewest carries, and least information, for two fields to count as one number. */
export const MIN_CARRIES = 3;
export const MIN_CARRY_BITS = 20;

/** Kullback-Leibler divergence of Bernoulli(r) from Bernoulli(p), bits. */
function klBits(r: number, p: number): number {
  const term = (x: number, y: number): number => (x === 0 ? 0 : x * log2(x / y));
  return term(r, p) + term(1 - r, 1 - p);
}

/** Carry statistics of `high` over `low` (the less significant part) across consecutive payloads. */
export function carryEvidence(data: readonly Uint8Array[], high: FieldRef, low: FieldRef): CarryEvidence {
  const mA = 2 ** high.length;
  const halfB = 2 ** (low.length - 1);
  // Frames counted by what A did (rose by 1, fell by 1, held) and how B wrapped (down, up).
  const rose = { n: 0, down: 0, up: 0 };
  const fell = { n: 0, down: 0, up: 0 };
  const held = { n: 0, down: 0, up: 0 };
  let a0 = data.length ? readField(data[0]!, high) : 0;
  let b0 = data.length ? readField(data[0]!, low) : 0;
  for (let t = 1; t < data.length; t++) {
    const a1 = readField(data[t]!, high);
    const b1 = readField(data[t]!, low);
    const dA = a1 - a0;
    const dB = b1 - b0;
    // Modulo the width: from the top value to 0 is +1 (two's complement crossing zero); a 1-bit A has no wrap.
    const tally =
      dA === 1 || (mA > 2 && dA === 1 - mA)
        ? rose
        : dA === -1 || (mA > 2 && dA === mA - 1)
          ? fell
          : dA === 0
            ? held
            : undefined;
    if (tally) {
      tally.n++;
      if (-dB >= halfB) tally.down++;
      if (dB >= halfB) tally.up++;
    }
    a0 = a1;
    b0 = b1;
  }
  const steps = rose.n + fell.n;
  const carries = rose.down + fell.up;
  // Chance rates, two ways, the larger kept: how often B wraps while A holds, and how often B wraps the
  // same way while A steps the other way. The second matters when all fields update in the same
  // frames (a radar's new measurement): B then wraps more often when A moves than when it holds.
  const rate = (k: number, n: number): number => (k + 1) / (n + 2);
  const chance = (k: number, n: number): number => (n >= 10 ? rate(k, n) : 0);
  const pDown = Math.max(rate(held.down, held.n), chance(fell.down, fell.n));
  const pUp = Math.max(rate(held.up, held.n), chance(rose.up, rose.n));
  const expected = rose.n * pDown + fell.n * pUp;
  if (steps === 0) return { steps, carries, expected, bits: 0 };
  const r = carries / steps;
  const p0 = expected / steps;
  return { steps, carries, expected, bits: r > p0 ? steps * klBits(r, p0) : 0 };
}

/** Whether the carries show `high` and `low` to be one number. */
export function carriesLink(evidence: CarryEvidence): boolean {
  return evidence.carries >= MIN_CARRIES && evidence.bits >= MIN_CARRY_BITS;
}

/**
 * Whether `high` (2 bits or more) is the sign extension of `low`: read together as one
 * two's-complement number, `high` is all zeros or all ones in (nearly) every frame (the value never
 * left the range `low` plus one sign bit can hold), both occur, and at least two of its switches
 * pass smoothly through zero (the joint value moves by less than half of `low`'s range: -1 to 0,
 * not a jump). A small signed value crossing zero looks like that; two fields that merely change
 * together do not, and a carry count cannot tell when zero is crossed only a few times.
 */
export function extendsSign(data: readonly Uint8Array[], high: FieldRef, low: FieldRef): boolean {
  if (high.length < 2) return false;
  const ones = 2 ** high.length - 1;
  const range = 2 ** low.length;
  let negative = 0;
  let positive = 0;
  let smooth = 0;
  let previous: number | undefined;
  for (const d of data) {
    const a = readField(d, high);
    const b = readField(d, low);
    if (a === 0) positive++;
    else if (a === ones) negative++;
    const joint = a === ones ? b - range : a === 0 ? b : undefined;
    if (
      joint !== undefined &&
      previous !== undefined &&
      joint < 0 !== previous < 0 &&
      Math.abs(joint - previous) < range / 2
    )
      smooth++;
    previous = joint;
  }
  return (
    negative + positive >= 0.99 * data.length &&
    negative >= MIN_CARRIES &&
    positive >= MIN_CARRIES &&
    smooth >= 2
  );
}

/**
 * The generalisation of a carry to numbers that move by more than one step of the upper part per
 * frame: when `low` is the bottom of the same number as `high`, what the joint value gains in one
 * part it does not gain in the other. A ramp rising 21 per frame rises 10 or 11 in the bits above
 * its LSB, 11 exactly when the LSB falls; so the frame-to-frame changes of those changes (second
 * differences, which stay put while the slope does) of the two parts are negatively correlated.
 * Independent fields, even ones updated in the same frames, are not. Returns the information in
 * that correlation, bits: `-(n/2) log2(1 - rho^2)` for negative rho, else 0.
 */
export function opposedChanges(data: readonly Uint8Array[], high: FieldRef, low: FieldRef): number {
  const mA = 2 ** high.length;
  const mB = 2 ** low.length;
  // Differences modulo the width, centred, so that a wrap reads as the small step it is; a 1-bit
  // part has no wrap.
  const step = (f: FieldRef, m: number, t: number): number => {
    const d = readField(data[t]!, f) - readField(data[t - 1]!, f);
    if (m === 2) return d;
    const r = ((d % m) + m) % m;
    return r >= m / 2 ? r - m : r;
  };
  let n = 0;
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  for (let t = 2; t < data.length; t++) {
    const a = step(high, mA, t) - step(high, mA, t - 1);
    const b = step(low, mB, t) - step(low, mB, t - 1);
    n++;
    sa += a;
    sb += b;
    saa += a * a;
    sbb += b * b;
    sab += a * b;
  }
  if (n < 3) return 0;
  const cov = sab / n - (sa / n) * (sb / n);
  const va = saa / n - (sa / n) ** 2;
  const vb = sbb / n - (sb / n) ** 2;
  if (va <= 0 || vb <= 0 || cov >= 0) return 0;
  const rho2 = Math.min(0.999999, (cov * cov) / (va * vb));
  return -(n / 2) * log2(1 - rho2);
}

/** Whether `low` continues `high` as one number, by carries, sign extension or opposed changes. */
export function oneNumber(data: readonly Uint8Array[], high: FieldRef, low: FieldRef): boolean {
  return (
    carriesLink(carryEvidence(data, high, low)) ||
    extendsSign(data, high, low) ||
    opposedChanges(data, high, low) >= MIN_CARRY_BITS
  );
}

/**
 * The `width` bits next to `field` on its more (`above`) or less (`below`) significant side, in the
 * field's byte order; undefined where that runs off a payload of `nbits` bits.
 */
function adjacent(
  field: FieldRef,
  side: 'above' | 'below',
  width: number,
  nbits: number,
): FieldRef | undefined {
  const bits = fieldBits(field);
  if (field.byteOrder === 'little_endian') {
    const lsb = side === 'above' ? bits[bits.length - 1]! + 1 : bits[0]! - width;
    return lsb < 0 || lsb + width > nbits
      ? undefined
      : { startBit: lsb, length: width, byteOrder: field.byteOrder };
  }
  // Motorola: more significant bits come first in MSB-first numbering.
  const start = side === 'above' ? msbFirst(bits[bits.length - 1]!) - width : msbFirst(bits[0]!) + 1;
  return start < 0 || start + width > nbits
    ? undefined
    : { startBit: msbFirst(start), length: width, byteOrder: field.byteOrder };
}

/**
 * Whether `field` is part of a wider number: some run of 1 to 7 moving bits right above or below it
 * (in its byte order) continues it (`oneNumber`). Every width is tried, as a wide window wraps and
 * hides the relation a narrow one shows.
 */
export function partOfNumber(
  data: readonly Uint8Array[],
  field: FieldRef,
  moving: (bit: number) => boolean,
  sides: ReadonlyArray<'above' | 'below'> = ['above', 'below'],
): boolean {
  const nbits = (data[0]?.length ?? 0) * 8;
  return sides.some((side) => {
    for (let width = 1; width <= 7; width++) {
      const next = adjacent(field, side, width, nbits);
      if (!next || !fieldBits(next).every(moving)) return false;
      if (side === 'above' ? oneNumber(data, next, field) : oneNumber(data, field, next)) return true;
    }
    return false;
  });
}
