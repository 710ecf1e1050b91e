import { LATENCY_STATS, type LatencyStat } from './targets';

/**
 * Latency statistics of timed runs (docs/edgeforge.md): nearest-rank percentiles of the sorted
 * samples, so p50 ≤ p90 ≤ p99 always holds and every figure is a latency that was really observed.
 */
export interface LatencyStats {
  runs: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Latency figures as a benchmark row stores them; a reported one may carry only some. */
export type LatencyFigures = Partial<Record<LatencyStat | 'min' | 'max', number>>;

/** The nearest-rank percentile of sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) throw new Error('no samples');
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function latencyStats(samples: readonly number[]): LatencyStats {
  if (!samples.length) throw new Error('no latency samples');
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    runs: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((s, v) => s + v, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}

/** Frames per second of one stream running back to back at this mean latency. */
export const throughputFps = (meanMs: number): number => (meanMs > 0 ? 1000 / meanMs : 0);

/** The first of p50, p90, p99, mean that both figures carry: the one two benchmarks are compared on. */
export function commonStat(a: LatencyFigures, b: LatencyFigures): LatencyStat | null {
  return LATENCY_STATS.find((s) => typeof a[s] === 'number' && typeof b[s] === 'number') ?? null;
}

export interface TimedSample {
  /** When the run started, ms from the start of the sustained run. */
  at: number;
  ms: number;
}

export interface LatencyWindow extends LatencyStats {
  window: number;
  start_s: number;
  end_s: number;
}

/**
 * A sustained run cut into `count` equal windows of time, each with its statistics; a window in
 * which no run started is left out (a run longer than a window).
 */
export function latencyWindows(
  samples: readonly TimedSample[],
  durationMs: number,
  count: number,
): LatencyWindow[] {
  const width = durationMs / count;
  const out: LatencyWindow[] = [];
  for (let w = 0; w < count; w++) {
    const lo = w * width;
    const hi = w === count - 1 ? Infinity : (w + 1) * width;
    const inside = samples.filter((s) => s.at >= lo && s.at < hi).map((s) => s.ms);
    if (inside.length)
      out.push({ window: w, start_s: lo / 1000, end_s: (lo + width) / 1000, ...latencyStats(inside) });
  }
  return out;
}

/** How the last window's median moved against the first's: (last − first) / first. */
export function latencyDrift(windows: readonly LatencyWindow[]) {
  const first = windows[0];
  const last = windows[windows.length - 1];
  if (!first || !last || windows.length < 2) return null;
  return {
    first_p50_ms: first.p50,
    last_p50_ms: last.p50,
    change_ms: last.p50 - first.p50,
    change: first.p50 > 0 ? (last.p50 - first.p50) / first.p50 : null,
  };
}
