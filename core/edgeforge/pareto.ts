/**
 * The accuracy/latency Pareto front of the co-optimisation grid (docs/edgeforge.md): the points no
 * other point beats on both — as fast or faster and as accurate or more, better on at least one.
 */
export interface TradeOffPoint {
  latency_ms: number;
  map50: number;
}

export function dominates(a: TradeOffPoint, b: TradeOffPoint): boolean {
  return (
    a.latency_ms <= b.latency_ms && a.map50 >= b.map50 && (a.latency_ms < b.latency_ms || a.map50 > b.map50)
  );
}

/** The non-dominated points, fastest first. */
export function paretoFront<T extends TradeOffPoint>(points: readonly T[]): T[] {
  return points
    .filter((p) => !points.some((q) => q !== p && dominates(q, p)))
    .sort((a, b) => a.latency_ms - b.latency_ms || b.map50 - a.map50);
}
