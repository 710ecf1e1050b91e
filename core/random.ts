import { xoroshiro128plus } from 'pure-rand';

/** Uniform draws from one seed (pure-rand's xoroshiro128+); the same seed gives the same sequence. */
export interface SeededRandom {
  /** Uniform in [0, 1), 53 random bits. */
  next(): number;
  /** Uniform in [low, high). */
  between(low: number, high: number): number;
  /** Uniform integer in [low, high]. */
  integer(low: number, high: number): number;
  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): SeededRandom {
  if (!Number.isInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
  const rng = xoroshiro128plus(seed);
  // A small integer seed leaves xoroshiro's first outputs near the top of the range; one jump
  // (2^64 steps ahead) mixes the state first.
  rng.unsafeJump!();
  // 27 + 26 bits of two 32-bit outputs, as pure-rand's own uniformFloat64 does.
  const next = (): number => ((rng.unsafeNext() >>> 5) * 2 ** 26 + (rng.unsafeNext() >>> 6)) / 2 ** 53;
  return {
    next,
    between: (low, high) => low + (high - low) * next(),
    integer: (low, high) => low + Math.floor((high - low + 1) * next()),
    pick: (items) => {
      if (items.length === 0) throw new Error('cannot pick from nothing');
      return items[Math.floor(items.length * next())]!;
    },
  };
}
