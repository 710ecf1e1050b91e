/**
 * Counter detection: fields of any width (1..16 bits) and position, in either byte order, whose
 * value advances by a constant step every frame modulo 2^width (or modulo max+1 for counters that
 * skip the top values), with wrap-around.
 */
import type { ByteOrder } from '../dbc/model';
import { fieldBits, fieldFromLsb, msbFirst, readField } from '../analysis/bits';
import { partOfNumber } from './carries';
import { flipCounts, type MessageFrames } from './frames';
import type { CounterCandidate } from './types';

export interface CounterOptions {
  /** Share of consecutive frames that must follow the rule. Default 0.9 (tolerates lost frames). */
  minMatchRate?: number;
  maxWidth?: number;
  /** Bits already claimed (e.g. by a checksum): no counter may use them. */
  excludeBits?: ReadonlySet<number>;
}

interface Fit {
  step: number;
  modulus: number;
  matchRate: number;
  wraps: number;
}

function fitCounter(values: Float64Array, width: number): Fit | undefined {
  const n = values.length;
  if (n < 3) return undefined;
  const m = 2 ** width;
  const deltas = new Map<number, number>();
  let max = 0;
  for (let t = 0; t < n; t++) if (values[t]! > max) max = values[t]!;
  for (let t = 1; t < n; t++) {
    const d = (((values[t]! - values[t - 1]!) % m) + m) % m;
    deltas.set(d, (deltas.get(d) ?? 0) + 1);
  }
  let step = 0;
  let best = 0;
  for (const [d, c] of deltas) if (c > best && d !== 0) [step, best] = [d, c];
  if (step === 0) return undefined;
  const trans = n - 1;
  let rate = best / trans;
  let modulus = m;
  if (rate < 0.999 && max + 1 < m) {
    // Counter that wraps before 2^width (e.g. 0..14): count steps modulo max+1 instead.
    const mod = max + 1;
    let ok = 0;
    for (let t = 1; t < n; t++) if ((((values[t]! - values[t - 1]!) % mod) + mod) % mod === step % mod) ok++;
    if (ok / trans > rate) {
      rate = ok / trans;
      modulus = mod;
    }
  }
  let wraps = 0;
  for (let t = 1; t < n; t++) if (values[t]! < values[t - 1]!) wraps++;
  return { step, modulus, matchRate: rate, wraps };
}

/**
 * Whether `bit` is the least significant bit of a number moving by about an odd amount per frame (a
 * fast ramp): its LSB alternates like a 1-bit counter's, but the bits above carry from it or change
 * against it (carries.ts), in either byte order, while its wider readings do not count.
 */
function lsbOfNumber(
  data: readonly Uint8Array[],
  bit: number,
  flips: readonly number[],
  exclude: ReadonlySet<number>,
): boolean {
  const moving = (b: number): boolean => flips[b]! > 0 && !exclude.has(b);
  const orders: ByteOrder[] = ['little_endian', 'big_endian'];
  return orders.some((order) => partOfNumber(data, fieldFromLsb(bit, 1, order), moving, ['above']));
}

/** Counters of one id's frames, widest first, no two sharing a bit. */
export function detectCounters(msg: MessageFrames, options: CounterOptions = {}): CounterCandidate[] {
  const minRate = options.minMatchRate ?? 0.9;
  const maxWidth = options.maxWidth ?? 16;
  const exclude = options.excludeBits ?? new Set<number>();
  const { data, length } = msg;
  const n = data.length;
  if (n < 8 || length === 0) return [];
  const nbits = length * 8;
  const flips = flipCounts(data, length);
  const found: CounterCandidate[] = [];
  const orders: ByteOrder[] = ['little_endian', 'big_endian'];
  for (const order of orders) {
    for (let lsb = 0; lsb < nbits; lsb++) {
      if (exclude.has(lsb) || flips[lsb]! < 0.85 * (n - 1)) continue;
      const values = new Float64Array(n);
      for (let t = 0; t < n; t++) values[t] = (data[t]![lsb >> 3]! >> (lsb & 7)) & 1;
      // Width 1 is a counter too: a bit that toggles in (nearly) every frame counts modulo 2, where a
      // flag would hold its state. Wider readings replace it when they also count.
      const single = fitCounter(values, 1);
      let best: { width: number; fit: Fit } | undefined =
        single && single.matchRate >= minRate && !lsbOfNumber(data, lsb, flips, exclude)
          ? { width: 1, fit: single }
          : undefined;
      for (let w = 2; w <= maxWidth; w++) {
        const bit = order === 'little_endian' ? lsb + w - 1 : msbFirst(msbFirst(lsb) - (w - 1));
        if (order === 'little_endian' ? bit >= nbits : msbFirst(lsb) - (w - 1) < 0) break;
        // Big endian: bits step towards the MSB by decreasing MSB-first position; stop at the payload start.
        if (exclude.has(bit) || flips[bit] === 0) break;
        const scale = 2 ** (w - 1);
        for (let t = 0; t < n; t++) values[t] = values[t]! + ((data[t]![bit >> 3]! >> (bit & 7)) & 1) * scale;
        const fit = fitCounter(values, w);
        if (!fit || fit.matchRate < minRate) break;
        // A wider reading must explain the frames as well as the narrower one: a slow neighbouring
        // bit above a counter still "counts" in most frames but breaks the rule whenever it toggles.
        if (best && fit.matchRate < best.fit.matchRate - 0.5 / n - 0.001) break;
        best = { width: w, fit };
      }
      if (!best) continue;
      const field = fieldFromLsb(lsb, best.width, order);
      const { step, modulus, matchRate, wraps } = best.fit;
      const evidence = [
        `value steps +${step}${step > modulus / 2 ? ` (= -${modulus - step}, counting down)` : ''} mod ${modulus} in ${(matchRate * 100).toFixed(1)}% of ${n - 1} frame pairs; ${wraps} wrap-arounds`,
        `all ${best.width} bits toggle (LSB ${flips[lsb]} flips, MSB ${flips[fieldBits(field)[best.width - 1]!]} flips)`,
      ];
      const cand: CounterCandidate = {
        kind: 'counter',
        field,
        step,
        modulus,
        matchRate,
        confidence: Math.min(
          1,
          matchRate * (wraps > 0 ? 1 : 0.8) * (1 - 1 / n) * (best.width >= 3 ? 1 : 0.9),
        ),
        evidence,
      };
      // Constant bits right below the LSB that reach a nibble boundary: the aligned reading steps by 2^k.
      for (let e = 1; e <= 3; e++) {
        const below = order === 'little_endian' ? lsb - e : msbFirst(msbFirst(lsb) + e);
        if (below < 0 || below >= nbits || (order === 'big_endian' && msbFirst(lsb) + e >= nbits)) break;
        if (flips[below]! > 0 || exclude.has(below)) break;
        if (below % 4 === 0) {
          const af = fieldFromLsb(below, best.width + e, order);
          const aligned = { field: af, step: step * 2 ** e };
          cand.aligned = aligned;
          evidence.push(
            `read from aligned bit ${below} as ${best.width + e} bits it steps +${aligned.step} (low ${e} bit(s) constant ${readField(data[0]!, fieldFromLsb(below, e, order))})`,
          );
          break;
        }
      }
      found.push(cand);
    }
  }
  // Keep the widest; drop candidates sharing bits with a wider or equally wide earlier one.
  found.sort(
    (a, b) =>
      b.field.length - a.field.length ||
      b.confidence - a.confidence ||
      (a.field.byteOrder === 'little_endian' ? -1 : 1),
  );
  const used = new Set<number>();
  const out: CounterCandidate[] = [];
  for (const c of found) {
    const bits = fieldBits(c.field);
    if (bits.some((b) => used.has(b))) continue;
    bits.forEach((b) => used.add(b));
    out.push(c);
  }
  return out;
}
