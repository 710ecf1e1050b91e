/**
 * Multiplexer detection: a small selector field whose value decides which other bits move. Frames
 * are grouped by the selector's value; bits that move within some groups and stay constant within
 * other (well-populated) groups are evidence of multiplexing.
 */
import type { ByteOrder } from '../dbc/model';
import { describeField, fieldBits, readField, type FieldRef } from '../analysis/bits';
import { partOfNumber } from './carries';
import { inByteOrder } from './frames';
import type { MultiplexerCandidate } from './types';

// Module-level bindings, not `Math.x` in loops: under jest the global object sits behind a
// vm interceptor and each global lookup in a hot loop costs ~50× (see docs/testing.md).
const { floor, max, min } = Math;

export interface MultiplexerOptions {
  /** Bits that cannot be the selector or multiplexed content (checksums). */
  excludeBits?: ReadonlySet<number>;
  /** Extra selector candidates to try (e.g. fields a counter detector claimed). */
  extraCandidates?: readonly FieldRef[];
  /** Fewest group-specific bits to call it a multiplexer. Default 3. */
  minSpecificBits?: number;
}

interface Grouping {
  value: number;
  frames: number[];
}

function groupBy(data: readonly Uint8Array[], field: FieldRef, maxGroups: number): Grouping[] | undefined {
  const groups = new Map<number, number[]>();
  for (let t = 0; t < data.length; t++) {
    const v = readField(data[t]!, field);
    let g = groups.get(v);
    if (!g) {
      if (groups.size >= maxGroups) return undefined;
      g = [];
      groups.set(v, g);
    }
    g.push(t);
  }
  return [...groups.entries()]
    .map(([value, frames]) => ({ value, frames }))
    .sort((a, b) => a.value - b.value);
}

/** Distinct patterns of `bits` over the frames (counting stops at `cap`). */
function patterns(
  data: readonly Uint8Array[],
  frames: readonly number[],
  bits: readonly number[],
  cap: number,
): number {
  const seen = new Set<string>();
  for (const t of frames) {
    seen.add(bits.map((b) => (data[t]![b >> 3]! >> (b & 7)) & 1).join(''));
    if (seen.size >= cap) break;
  }
  return seen.size;
}

/** Per bit, how often it flips between consecutive frames of the group. */
export function groupFlipCounts(
  data: readonly Uint8Array[],
  frames: readonly number[],
  length: number,
): number[] {
  const flips = new Array<number>(length * 8).fill(0);
  for (let k = 1; k < frames.length; k++) {
    const a = data[frames[k - 1]!]!;
    const b = data[frames[k]!]!;
    for (let i = 0; i < length; i++) {
      const x = a[i]! ^ b[i]!;
      if (x === 0) continue;
      for (let j = 0; j < 8; j++) if ((x >> j) & 1) flips[i * 8 + j]!++;
    }
  }
  return flips;
}

/** The best multiplexer of one id's frames, if any. */
export function detectMultiplexer(
  data: readonly Uint8Array[],
  length: number,
  options: MultiplexerOptions = {},
): MultiplexerCandidate | undefined {
  const n = data.length;
  if (n < 40) return undefined;
  const exclude = options.excludeBits ?? new Set<number>();
  const minSpecific = options.minSpecificBits ?? 3;
  const candidates: FieldRef[] = [];
  for (let byte = 0; byte < length; byte++) {
    for (let lo = 0; lo < 8; lo++) {
      for (let w = 1; lo + w <= 8; w++)
        candidates.push({ startBit: byte * 8 + lo, length: w, byteOrder: 'little_endian' });
    }
  }
  // After the in-byte fields, so that a tie (page content that copies the selector) goes to the field
  // nearest the start of the payload, where selectors sit.
  candidates.push(...(options.extraCandidates ?? []));
  let best: { cand: MultiplexerCandidate; score: number } | undefined;
  const allFlips = groupFlipCounts(
    data,
    data.map((_, t) => t),
    length,
  );
  const minGroup = max(10, floor(n * 0.02));
  const movingBit = (b: number): boolean => allFlips[b]! > 0 && !exclude.has(b);
  const orders: ByteOrder[] = ['little_endian', 'big_endian'];
  for (const field of candidates) {
    const own = new Set(fieldBits(field));
    if ([...own].some((b) => exclude.has(b))) continue;
    const groups = groupBy(data, field, 16);
    if (!groups || groups.length < 2) continue;
    // Selectors switch often (round-robin pages); a rarely toggling flag only splits the capture in time.
    let changes = 0;
    for (let t = 1; t < n; t++) if (readField(data[t]!, field) !== readField(data[t - 1]!, field)) changes++;
    if (changes < max(10, 0.05 * n)) continue;
    const big = groups.filter((g) => g.frames.length >= minGroup);
    if (big.length < 2) continue;
    const flips = big.map((g) => groupFlipCounts(data, g.frames, length));
    const moving = flips.map((f) => f.map((c) => c > 0));
    const specific: number[] = [];
    for (let b = 0; b < length * 8; b++) {
      if (own.has(b) || exclude.has(b)) continue;
      // Constant under one value although, at the rate it moves under another value, it would have flipped many times.
      let maxRate = 0;
      for (let g = 0; g < big.length; g++)
        maxRate = max(maxRate, flips[g]![b]! / max(1, big[g]!.frames.length - 1));
      const still = big.some((g, i) => flips[i]![b] === 0 && maxRate * (g.frames.length - 1) >= 20);
      if (still) specific.push(b);
    }
    if (specific.length < minSpecific) continue;
    // Pages carry content of their own: under at least two values, the bits specific to pages must
    // take three or more patterns (a signal moving). A cut through a cycling table shows instead
    // two fixed entries that happen to share the cut's value alternating, and nothing else.
    const withContent = big.filter((g) => patterns(data, g.frames, specific, 3) >= 3).length;
    if (withContent < 2) continue;
    // Switching pages makes the other bits flip far more between consecutive frames than within a page.
    let across = 0;
    let within = 0;
    let pairs = 0;
    for (let g = 0; g < big.length; g++) pairs += big[g]!.frames.length - 1;
    for (let b = 0; b < length * 8; b++) {
      if (own.has(b) || exclude.has(b)) continue;
      across += allFlips[b]! / (n - 1);
      let f = 0;
      for (let g = 0; g < big.length; g++) f += flips[g]![b]!;
      within += f / max(1, pairs);
    }
    const ratio = across / max(1e-9, within);
    if (ratio < 1.25) continue;
    // A selector is a field of its own. Bits of a number that moves smoothly across all frames (a
    // radar track's speed) also split the capture into "pages" (other fields differ between the
    // track's states), but they carry into their neighbours: such a cut is no multiplexer. The upper
    // part of a number changes only when the part below carries into it, so it is never a field that
    // switches in most frames; for one that does (a round-robin selector) the "carries" would measure
    // how page contents differ, not carries, and are not tested.
    const slow = changes <= 0.5 * (n - 1);
    if (slow && orders.some((order) => partOfNumber(data, inByteOrder(field, order), movingBit))) continue;
    // Prefer the selector under which pages are purest (fewest flips within a page), then narrower ones.
    const score = ratio - 0.001 * field.length;
    if (best && score <= best.score) continue;
    const groupsOut = big.map((g, i) => ({
      value: g.value,
      frames: g.frames.length,
      movingBits: moving[i]!.flatMap((m, b) => (m && !own.has(b) ? [b] : [])),
    }));
    best = {
      score,
      cand: {
        kind: 'multiplexer',
        field,
        groups: groupsOut,
        rareValues: groups
          .filter((g) => g.frames.length < minGroup)
          .map((g) => ({ value: g.value, frames: g.frames.length })),
        confidence: min(0.95, 0.5 + 0.05 * specific.length),
        evidence: [
          `${describeField(field)} takes ${groups.length} values; ${specific.length} other bits move under some values and stay constant under others`,
          `other bits flip ${ratio.toFixed(1)}x more often between consecutive frames than between consecutive frames of one selector value`,
          ...groupsOut.map(
            (g) => `selector ${g.value}: ${g.frames} frames, ${g.movingBits.length} moving bits`,
          ),
        ],
      },
    };
  }
  return best?.cand;
}
