/**
 * Near-duplicate frames across sessions from their stored 64-bit perceptual hashes
 * (core/media/phash.ts: 16 hex digits), by multi-index hashing (Norouzi, Punjani and Fleet,
 * "Fast Search in Hamming Space with Multi-Index Hashing", CVPR 2012).
 *
 * The 64 bits are cut into `m` disjoint bands. Two hashes within Hamming distance `r` differ in at
 * most `floor(r / m)` bits of at least one band (pigeonhole), so each frame is looked up in every
 * band's table under all band values within that radius, and only the frames found there are
 * compared bit for bit. `m` is chosen per threshold and corpus size to minimise the expected work
 * (probes plus candidates; see `bandPlan`): for the default threshold 6 over tens of thousands of
 * frames, four 16-bit bands searched at radius 1. Nothing compares every frame with every other.
 *
 * Frames are linked when they lie within the threshold and come from different sessions (ingest
 * already drops a frame that repeats the one kept before it in its own drive); a cluster is a
 * connected group of linked frames (single linkage), so it always spans at least two sessions.
 */

export const DEDUP_DEFAULT_THRESHOLD = 6;
export const DEDUP_MAX_THRESHOLD = 16;
/** Hard cap on the frames one request clusters, whatever the threshold. */
export const DEDUP_MAX_FRAMES = 100_000;
/**
 * Expected work (band probes plus candidate comparisons, uniform hashes) one request may cost:
 * a second or two on one core. It caps the frames at high thresholds, where bands must be narrow
 * and buckets fill up (see `dedupFrameCap`).
 */
export const DEDUP_WORK_BUDGET = 100_000_000;

const HEX64 = /^[0-9a-f]{16}$/i;
/** At most 16-bit bands, so each band's table is a flat array of 2^16 buckets. */
const MIN_BANDS = 4;
const MAX_BANDS = 16;

export interface HashedFrame {
  frameId: string;
  sessionId: string;
  index: number;
  phash: string;
}

export interface BandPlan {
  /** Band widths in bits, summing to 64. */
  widths: number[];
  /** Bits a band may differ in and still be probed. */
  radius: number;
}

export interface DuplicateCluster {
  frames: Array<{ frame_id: string; session_id: string; index: number }>;
  sessions: number;
  /** The largest Hamming distance of a link that joined the cluster (≤ the threshold). */
  max_distance: number;
}

export interface DedupResult {
  clusters: DuplicateCluster[];
  /** Frames whose hash was compared (those with a well-formed pHash). */
  hashed: number;
  /** Pairs of frames of different sessions within the threshold. */
  links: number;
  plan: BandPlan;
}

const bandWidths = (bands: number): number[] =>
  Array.from({ length: bands }, (_, i) => Math.floor(64 / bands) + (i < 64 % bands ? 1 : 0));

function binomial(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
}

/** Values within `radius` bits of a `width`-bit band value. */
const ballSize = (width: number, radius: number): number => {
  let v = 0;
  for (let i = 0; i <= Math.min(radius, width); i++) v += binomial(width, i);
  return v;
};

/**
 * Expected operations for `frames` hashes: each frame probes every band's table under each value
 * in the band's ball and compares the frames found there, half the corpus being in the tables on
 * average (a frame is looked up before it is added).
 */
function planWork(widths: number[], radius: number, frames: number): number {
  let perFrame = 0;
  for (const w of widths) {
    const probes = ballSize(w, radius);
    perFrame += probes * (1 + frames / 2 / 2 ** w);
  }
  return frames * perFrame;
}

/** The band count whose expected work is least for this threshold and corpus size. */
export function bandPlan(threshold: number, frames: number): BandPlan & { work: number } {
  let best: (BandPlan & { work: number }) | undefined;
  for (let bands = MIN_BANDS; bands <= MAX_BANDS; bands++) {
    const widths = bandWidths(bands);
    const radius = Math.floor(threshold / bands);
    const work = planWork(widths, radius, frames);
    if (!best || work < best.work) best = { widths, radius, work };
  }
  return best!;
}

/** The most frames one request may cluster at this threshold (DEDUP_MAX_FRAMES, or fewer where the work would pass the budget). */
export function dedupFrameCap(threshold: number): number {
  if (bandPlan(threshold, DEDUP_MAX_FRAMES).work <= DEDUP_WORK_BUDGET) return DEDUP_MAX_FRAMES;
  let lo = 1;
  let hi = DEDUP_MAX_FRAMES;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (bandPlan(threshold, mid).work <= DEDUP_WORK_BUDGET) lo = mid;
    else hi = mid;
  }
  // A round figure, so the documented cap and the refusal read the same.
  return Math.max(1000, Math.floor(lo / 1000) * 1000);
}

const isPhash = (hash: string): boolean => HEX64.test(hash);

const popcount32 = (x: number): number => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
};

/** Bits [start, start + width) of the 64-bit value hi:lo (bit 0 is lo's lowest), width ≤ 16. */
function bandValue(hi: number, lo: number, start: number, width: number): number {
  const mask = (1 << width) - 1;
  if (start >= 32) return (hi >>> (start - 32)) & mask;
  if (start + width <= 32) return (lo >>> start) & mask;
  const fromLo = 32 - start;
  return ((lo >>> start) | (hi << fromLo)) & mask;
}

/** Every XOR mask of `width` bits with at most `radius` bits set, the empty mask first. */
function ballMasks(width: number, radius: number): Int32Array {
  const masks: number[] = [0];
  const extend = (mask: number, from: number, left: number) => {
    for (let bit = from; bit < width; bit++) {
      const next = mask | (1 << bit);
      masks.push(next);
      if (left > 1) extend(next, bit + 1, left - 1);
    }
  };
  if (radius > 0) extend(0, 0, radius);
  return Int32Array.from(masks);
}

/** One band's table: the frames of each band value, in index order (a counting sort). */
interface BandTable {
  values: Int32Array;
  masks: Int32Array;
  /** Frames of value v are frames[starts[v] .. starts[v + 1]). */
  starts: Int32Array;
  frames: Int32Array;
}

function bandTables(plan: BandPlan, hi: Int32Array, lo: Int32Array): BandTable[] {
  const n = hi.length;
  let start = 0;
  return plan.widths.map((width) => {
    const values = new Int32Array(n);
    const starts = new Int32Array((1 << width) + 1);
    for (let i = 0; i < n; i++) {
      values[i] = bandValue(hi[i]!, lo[i]!, start, width);
      starts[values[i]! + 1]!++;
    }
    for (let v = 1; v < starts.length; v++) starts[v]! += starts[v - 1]!;
    const fill = starts.slice(0, -1);
    const frames = new Int32Array(n);
    for (let i = 0; i < n; i++) frames[fill[values[i]!]!++] = i;
    start += width;
    return { values, masks: ballMasks(width, plan.radius), starts, frames };
  });
}

class DisjointSets {
  private readonly parent: Int32Array;
  private readonly size: Int32Array;
  /** Largest link distance inside each root's set. */
  readonly maxLink: Int32Array;

  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
    this.size = new Int32Array(n).fill(1);
    this.maxLink = new Int32Array(n);
  }

  find(i: number): number {
    let root = i;
    while (this.parent[root] !== root) root = this.parent[root]!;
    while (this.parent[i] !== root) {
      const next = this.parent[i]!;
      this.parent[i] = root;
      i = next;
    }
    return root;
  }

  link(a: number, b: number, distance: number): void {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra !== rb) {
      if (this.size[ra]! < this.size[rb]!) [ra, rb] = [rb, ra];
      this.parent[rb] = ra;
      this.size[ra]! += this.size[rb]!;
      this.maxLink[ra] = Math.max(this.maxLink[ra]!, this.maxLink[rb]!);
    }
    this.maxLink[ra] = Math.max(this.maxLink[ra]!, distance);
  }
}

/**
 * Clusters of near-duplicate frames across sessions, largest first (then more sessions, then
 * tighter, then by first frame id, so the order is stable). Frames without a well-formed hash are
 * left out (`hashed` counts the others).
 */
export function duplicateClusters(frames: readonly HashedFrame[], threshold: number): DedupResult {
  if (!Number.isInteger(threshold) || threshold < 0 || threshold > DEDUP_MAX_THRESHOLD)
    throw new RangeError(`threshold must be an integer in [0, ${DEDUP_MAX_THRESHOLD}]`);
  const kept = frames.filter((f) => isPhash(f.phash));
  const n = kept.length;
  const hi = new Int32Array(n);
  const lo = new Int32Array(n);
  const session = new Int32Array(n);
  const sessionIds = new Map<string, number>();
  kept.forEach((f, i) => {
    hi[i] = parseInt(f.phash.slice(0, 8), 16) | 0;
    lo[i] = parseInt(f.phash.slice(8), 16) | 0;
    let s = sessionIds.get(f.sessionId);
    if (s === undefined) sessionIds.set(f.sessionId, (s = sessionIds.size));
    session[i] = s;
  });

  const plan = bandPlan(threshold, n);
  const bands = bandTables(plan, hi, lo);
  const sets = new DisjointSets(n);
  // The frame a candidate was last compared against: a pair found through two bands is compared once.
  const seenBy = new Int32Array(n).fill(-1);
  let links = 0;
  for (let i = 0; i < n; i++) {
    const hiI = hi[i]!;
    const loI = lo[i]!;
    const sessionI = session[i]!;
    for (const { values, masks, starts, frames: bucketed } of bands) {
      const value = values[i]!;
      for (let m = 0; m < masks.length; m++) {
        const probe = value ^ masks[m]!;
        // Buckets list frames in index order; only frames before i are compared, so each pair once.
        for (let at = starts[probe]!, end = starts[probe + 1]!; at < end; at++) {
          const j = bucketed[at]!;
          if (j >= i) break;
          if (seenBy[j] === i) continue;
          seenBy[j] = i;
          if (session[j] === sessionI) continue;
          const distance = popcount32(hiI ^ hi[j]!) + popcount32(loI ^ lo[j]!);
          if (distance > threshold) continue;
          links++;
          sets.link(i, j, distance);
        }
      }
    }
  }

  const members = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = sets.find(i);
    const list = members.get(root);
    if (list) list.push(i);
    else members.set(root, [i]);
  }
  const clusters: DuplicateCluster[] = [];
  for (const [root, list] of members) {
    if (list.length < 2) continue;
    const ordered = list
      .map((i) => kept[i]!)
      .sort((a, b) => cmp(a.sessionId, b.sessionId) || a.index - b.index || cmp(a.frameId, b.frameId));
    clusters.push({
      frames: ordered.map((f) => ({ frame_id: f.frameId, session_id: f.sessionId, index: f.index })),
      sessions: new Set(ordered.map((f) => f.sessionId)).size,
      max_distance: sets.maxLink[root]!,
    });
  }
  const firstId = (c: DuplicateCluster) =>
    c.frames.reduce((m, f) => (f.frame_id < m ? f.frame_id : m), '\uffff');
  clusters.sort(
    (a, b) =>
      b.frames.length - a.frames.length ||
      b.sessions - a.sessions ||
      a.max_distance - b.max_distance ||
      cmp(firstId(a), firstId(b)),
  );
  return { clusters, hashed: n, links, plan: { widths: plan.widths, radius: plan.radius } };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
