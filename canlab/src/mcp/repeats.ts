/**
 * Repeated payload sequences per id: ids whose payloads cycle through a fixed block (a periodic
 * pattern, e.g. a counter-only message or a round-robin table), and blocks of consecutive payloads
 * that recur elsewhere in the capture (a replayed or scripted sequence).
 *
 * Payloads of an id are mapped to symbols; a period P holds when payload[i] = payload[i − P] for at
 * least `minPeriodicMatch` of the frames. Otherwise, recurring blocks are the maximal repeats of the
 * symbol sequence: runs of at least `minLength` payloads occurring two or more times, extended to the
 * right while every occurrence agrees and kept only when left-maximal (the payloads before the
 * occurrences differ), so a block is not reported again as its own tails.
 */
import { formatId } from '../analysis/bits';
import type { CanFrame } from '../frame';

export interface PeriodicPattern {
  id: string;
  frames: number;
  /** Period in frames of the id. */
  period: number;
  /** Period times the id's median frame interval. */
  periodSeconds: number;
  matchRate: number;
  /** The payloads of one period, from the first frame on. */
  block: string[];
}

export interface RepeatedBlock {
  id: string;
  length: number;
  /** Capture times at which each occurrence starts. */
  occurrences: number[];
  block: string[];
}

export interface RepeatsResult {
  periodic: PeriodicPattern[];
  blocks: RepeatedBlock[];
  /** Ids whose payload never (or almost never) changes: skipped. */
  staticIds: string[];
}

export interface RepeatsOptions {
  ids?: ReadonlySet<string>;
  /** Shortest block reported, in frames. Default 3. */
  minLength?: number;
  /** Longest period tried, in frames. Default 256. */
  maxPeriod?: number;
  /** Share of frames that must follow the period. Default 0.95. */
  minPeriodicMatch?: number;
  /** Frames per id analysed (the first ones). Default 20000. */
  maxFramesPerId?: number;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}

interface IdSequence {
  id: string;
  payloads: string[];
  symbols: Int32Array;
  times: number[];
}

/** Smallest period (≥ 1) with enough matching frames and at least three repetitions, or undefined. */
function findPeriod(
  sym: Int32Array,
  maxPeriod: number,
  minMatch: number,
): { period: number; matchRate: number } | undefined {
  const n = sym.length;
  for (let p = 1; p <= maxPeriod && 3 * p <= n; p++) {
    const trials = n - p;
    const allowed = Math.floor((1 - minMatch) * trials);
    let misses = 0;
    for (let i = p; i < n && misses <= allowed; i++) if (sym[i] !== sym[i - p]) misses++;
    if (misses <= allowed) return { period: p, matchRate: 1 - misses / trials };
  }
  return undefined;
}

function medianInterval(times: readonly number[]): number {
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  gaps.sort((a, b) => a - b);
  return gaps[gaps.length >> 1] ?? 0;
}

function maximalRepeats(seq: IdSequence, k: number): RepeatedBlock[] {
  const sym = seq.symbols;
  const n = sym.length;
  const groups = new Map<string, number[]>();
  for (let i = 0; i + k <= n; i++) {
    let key = '';
    for (let j = 0; j < k; j++) key += `${sym[i + j]},`;
    const list = groups.get(key);
    if (list) list.push(i);
    else groups.set(key, [i]);
  }
  const out: RepeatedBlock[] = [];
  for (const positions of groups.values()) {
    // Occurrences must not overlap: keep a greedy left-to-right non-overlapping subset.
    const occ: number[] = [];
    for (const p of positions) if (occ.length === 0 || p >= occ[occ.length - 1]! + k) occ.push(p);
    if (occ.length < 2) continue;
    const first = occ[0]!;
    const before = first > 0 ? sym[first - 1] : undefined;
    if (before !== undefined && occ.every((p) => p > 0 && sym[p - 1] === before)) continue;
    let length = k;
    const fits = (len: number): boolean =>
      occ.every((p, j) => p + len < n && (j + 1 >= occ.length || p + len < occ[j + 1]!));
    while (fits(length) && occ.every((p) => sym[p + length] === sym[first + length])) length++;
    const block = Array.from(sym.subarray(first, first + length));
    if (new Set(block).size < 2) continue;
    out.push({
      id: seq.id,
      length,
      occurrences: occ.map((p) => seq.times[p]!),
      block: seq.payloads.slice(first, first + length),
    });
  }
  return out;
}

export function findRepeats(frames: Iterable<CanFrame>, options: RepeatsOptions = {}): RepeatsResult {
  const minLength = options.minLength ?? 3;
  const maxPeriod = options.maxPeriod ?? 256;
  const minMatch = options.minPeriodicMatch ?? 0.95;
  const cap = options.maxFramesPerId ?? 20000;
  const seqs = new Map<string, { id: string; payloads: string[]; times: number[] }>();
  for (const f of frames) {
    if (f.error || f.remote) continue;
    const id = formatId(f.id, f.extended);
    if (options.ids && !options.ids.has(id)) continue;
    let s = seqs.get(id);
    if (!s) {
      s = { id, payloads: [], times: [] };
      seqs.set(id, s);
    }
    if (s.payloads.length >= cap) continue;
    s.payloads.push(hex(f.data));
    s.times.push(f.timestamp);
  }
  const result: RepeatsResult = { periodic: [], blocks: [], staticIds: [] };
  for (const s of seqs.values()) {
    const symbolOf = new Map<string, number>();
    const symbols = Int32Array.from(s.payloads, (p) => {
      let v = symbolOf.get(p);
      if (v === undefined) {
        v = symbolOf.size;
        symbolOf.set(p, v);
      }
      return v;
    });
    const seq: IdSequence = { ...s, symbols };
    const found = findPeriod(symbols, maxPeriod, minMatch);
    if (found?.period === 1) {
      result.staticIds.push(s.id);
      continue;
    }
    if (found) {
      result.periodic.push({
        id: s.id,
        frames: symbols.length,
        period: found.period,
        periodSeconds: found.period * medianInterval(s.times),
        matchRate: found.matchRate,
        block: s.payloads.slice(0, found.period),
      });
      continue;
    }
    result.blocks.push(...maximalRepeats(seq, minLength));
  }
  result.blocks.sort((a, b) => b.length * b.occurrences.length - a.length * a.occurrences.length);
  return result;
}
