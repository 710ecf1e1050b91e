/**
 * Seeded randomness for the trainer. Every random choice draws from a stream named by the job's
 * seed and the place it serves (an epoch's shuffle, an image's negative sample), never from one
 * stream that runs through the whole job: a job resumed at epoch e then draws exactly what an
 * uninterrupted one draws from epoch e on.
 */
import { seededRandom as seededDraws } from '../random';

export type Random = () => number;

/** A 32-bit mix of the seed and the stream's coordinates (murmur3's finaliser over each part). */
function mix(parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** Uniform numbers in [0, 1) from pure-rand's xoroshiro128+, seeded by `seed` and the stream's coordinates. */
export function seededRandom(seed: number, ...stream: number[]): Random {
  const draws = seededDraws(mix([seed, ...stream]));
  return () => draws.next();
}

/** Fisher–Yates, in place. */
export function shuffle<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** `count` distinct items chosen uniformly (all of them when there are fewer), in their original order. */
export function sampleWithoutReplacement<T>(items: readonly T[], count: number, random: Random): T[] {
  if (count >= items.length) return [...items];
  const picked = shuffle(
    items.map((_, i) => i),
    random,
  )
    .slice(0, count)
    .sort((a, b) => a - b);
  return picked.map((i) => items[i]!);
}
