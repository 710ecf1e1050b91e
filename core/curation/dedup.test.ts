import {
  DEDUP_DEFAULT_THRESHOLD,
  DEDUP_MAX_FRAMES,
  DEDUP_MAX_THRESHOLD,
  bandPlan,
  dedupFrameCap,
  duplicateClusters,
  type HashedFrame,
} from './dedup';
import { hammingDistance } from '../media/phash';

/** A seeded generator, so every run tests the same hashes. */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) | 0;
    return (s >>> 0) / 2 ** 32;
  };
}

const randomHash = (rnd: () => number) =>
  Array.from({ length: 16 }, () => Math.floor(rnd() * 16).toString(16)).join('');

/** `hash` with `bits` distinct bits flipped. */
function flip(hash: string, bits: number, rnd: () => number): string {
  let value = BigInt(`0x${hash}`);
  const chosen = new Set<number>();
  while (chosen.size < bits) chosen.add(Math.floor(rnd() * 64));
  for (const bit of chosen) value ^= 1n << BigInt(bit);
  return value.toString(16).padStart(16, '0');
}

const frame = (id: string, sessionId: string, index: number, phash: string): HashedFrame => ({
  frameId: id,
  sessionId,
  index,
  phash,
});

/** Every pair's distance, once: the reference the banded search is checked against. */
const pairDistances = (frames: HashedFrame[]) =>
  frames.map((a, i) => frames.slice(0, i).map((b) => hammingDistance(a.phash, b.phash)));

/** The same clusters by comparing every pair: what the banded search must reproduce. */
function bruteForce(frames: HashedFrame[], distances: number[][], threshold: number): string[][] {
  const parent = frames.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < frames.length; i++)
    for (let j = 0; j < i; j++)
      if (frames[i]!.sessionId !== frames[j]!.sessionId && distances[i]![j]! <= threshold)
        parent[find(i)] = find(j);
  const groups = new Map<number, string[]>();
  frames.forEach((f, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), f.frameId]));
  return [...groups.values()].filter((g) => g.length > 1).map((g) => g.sort());
}

const asSets = (clusters: Array<{ frames: Array<{ frame_id: string }> }>) =>
  clusters.map((c) => c.frames.map((f) => f.frame_id).sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

describe('the band plan', () => {
  it('searches four 16-bit bands at radius 1 for the default threshold 6', () => {
    expect(bandPlan(6, 100_000)).toMatchObject({ widths: [16, 16, 16, 16], radius: 1 });
  });

  it('always covers the threshold by pigeonhole: bands × (radius + 1) > threshold, widths summing to 64', () => {
    for (let threshold = 0; threshold <= DEDUP_MAX_THRESHOLD; threshold++) {
      for (const frames of [10, 10_000, DEDUP_MAX_FRAMES]) {
        const plan = bandPlan(threshold, frames);
        expect(plan.widths.reduce((s, w) => s + w, 0)).toBe(64);
        expect(Math.max(...plan.widths)).toBeLessThanOrEqual(16);
        expect(plan.widths.length * (plan.radius + 1)).toBeGreaterThan(threshold);
      }
    }
  });

  it('lets 100 000 frames through up to threshold 10 and fewer, never more, as the threshold grows', () => {
    const caps = Array.from({ length: DEDUP_MAX_THRESHOLD + 1 }, (_, t) => dedupFrameCap(t));
    expect(caps.slice(0, 11)).toEqual(Array(11).fill(DEDUP_MAX_FRAMES));
    for (let t = 1; t < caps.length; t++) expect(caps[t]).toBeLessThanOrEqual(caps[t - 1]!);
    expect(caps[DEDUP_MAX_THRESHOLD]).toBeGreaterThanOrEqual(10_000);
  });
});

describe('duplicate clusters', () => {
  it('finds exactly the clusters comparing every pair would, at every threshold', () => {
    const rnd = random(7);
    const frames: HashedFrame[] = [];
    for (let i = 0; i < 600; i++) {
      // A third are near copies (0–16 bits off) of an earlier frame, in any session.
      const base = i > 0 && rnd() < 0.35 ? frames[Math.floor(rnd() * i)]!.phash : null;
      const phash = base ? flip(base, Math.floor(rnd() * 17), rnd) : randomHash(rnd);
      frames.push(frame(`f${String(i).padStart(4, '0')}`, `s${Math.floor(rnd() * 12)}`, i, phash));
    }
    const distances = pairDistances(frames);
    for (let threshold = 0; threshold <= DEDUP_MAX_THRESHOLD; threshold++) {
      const found = duplicateClusters(frames, threshold);
      if (threshold === DEDUP_DEFAULT_THRESHOLD) expect(found.clusters.length).toBeGreaterThan(20);
      expect({ threshold, clusters: asSets(found.clusters) }).toEqual({
        threshold,
        clusters: bruteForce(frames, distances, threshold).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
      });
    }
  });

  it('links only frames of different sessions, and chains them (single linkage)', () => {
    const a = '0000000000000000';
    const b = flip(a, 5, random(1)); // 5 from a
    const c = '00000000000000ff'; // 8 from a
    const result = duplicateClusters(
      [
        frame('a1', 's1', 0, a),
        frame('a2', 's1', 9, a), // the same picture again in its own drive: no cluster on its own
        frame('c3', 's3', 2, c),
        frame('x', 's4', 0, 'ffffffffffffffff'),
      ],
      6,
    );
    expect(result.clusters).toEqual([]);

    const chained = duplicateClusters(
      [frame('a1', 's1', 0, a), frame('b2', 's2', 4, b), frame('c3', 's3', 2, flip(b, 1, random(2)))],
      6,
    );
    expect(chained.clusters).toHaveLength(1);
    expect(chained.clusters[0]).toMatchObject({
      frames: [
        { frame_id: 'a1', session_id: 's1', index: 0 },
        { frame_id: 'b2', session_id: 's2', index: 4 },
        { frame_id: 'c3', session_id: 's3', index: 2 },
      ],
      sessions: 3,
    });
    expect(chained.clusters[0]!.max_distance).toBeLessThanOrEqual(6);
    expect(chained.clusters[0]!.max_distance).toBeGreaterThanOrEqual(5);
  });

  it('keeps a within-session copy in the cluster its session partner joins, counting sessions once', () => {
    const a = '0123456789abcdef';
    const { clusters } = duplicateClusters(
      [frame('a1', 's1', 0, a), frame('a2', 's1', 5, a), frame('b1', 's2', 3, flip(a, 2, random(3)))],
      6,
    );
    expect(clusters).toEqual([
      {
        frames: [
          { frame_id: 'a1', session_id: 's1', index: 0 },
          { frame_id: 'a2', session_id: 's1', index: 5 },
          { frame_id: 'b1', session_id: 's2', index: 3 },
        ],
        sessions: 2,
        max_distance: 2,
      },
    ]);
  });

  it('orders clusters largest first, then by sessions, tightness and first frame id', () => {
    const rnd = random(11);
    const h1 = randomHash(rnd);
    const h2 = flip(h1, 40, rnd);
    const h3 = flip(h1, 20, rnd);
    const { clusters } = duplicateClusters(
      [
        frame('p', 's1', 0, h3),
        frame('q', 's2', 0, flip(h3, 3, rnd)),
        frame('m', 's1', 1, h1),
        frame('n', 's2', 1, h1),
        frame('k', 's1', 2, h2),
        frame('l', 's2', 2, h2),
        frame('j', 's3', 2, h2),
      ],
      4,
    );
    expect(clusters.map((c) => c.frames.map((f) => f.frame_id).join())).toEqual(['k,l,j', 'm,n', 'p,q']);
  });

  it('leaves out malformed hashes and refuses a threshold outside 0–16', () => {
    const result = duplicateClusters(
      [
        frame('a', 's1', 0, 'abc'),
        frame('b', 's2', 0, 'zzzzzzzzzzzzzzzz'),
        frame('c', 's3', 0, '0000000000000000'),
      ],
      6,
    );
    expect(result).toMatchObject({ hashed: 1, clusters: [], links: 0 });
    expect(() => duplicateClusters([], 17)).toThrow(RangeError);
    expect(() => duplicateClusters([], -1)).toThrow(RangeError);
    expect(() => duplicateClusters([], 2.5)).toThrow(RangeError);
  });
});
