import { munkres } from 'munkres';

/**
 * Linear assignment problems of the tracker and the tracking metrics, solved by munkres (the
 * Hungarian algorithm; rectangular matrices are padded by the package).
 */

/** The pairs [row, column] of a minimum-cost assignment; every row or every column is assigned. */
export function minCostAssignment(cost: readonly (readonly number[])[]): Array<[number, number]> {
  if (cost.length === 0 || cost[0]!.length === 0) return [];
  return munkres(cost.map((row) => [...row])).map(([r, c]): [number, number] => [r, c]);
}

/**
 * The assignment ByteTrack makes with lap.lapjv(cost, extend_cost=True, cost_limit=limit): a pair
 * is worth taking only when its cost is below the limit, and the total of (cost - limit) over taken
 * pairs is minimised, so rows and columns may stay unmatched.
 */
export function assignBelow(cost: readonly (readonly number[])[], limit: number): Array<[number, number]> {
  const gain = cost.map((row) => row.map((c) => (c < limit ? c - limit : 0)));
  return minCostAssignment(gain).filter(([r, c]) => cost[r]![c]! < limit);
}

/**
 * The assignment py-motmetrics makes (motmetrics.lap add_expensive_edges): as many valid pairs as
 * possible, then the least total cost among them. Invalid pairs cost more than any number of valid
 * ones could save, and are dropped from the answer.
 */
export function assignMostThenCheapest(
  cost: readonly (readonly number[])[],
  valid: (row: number, column: number) => boolean,
): Array<[number, number]> {
  let anyValid = false;
  let largest = 0;
  cost.forEach((row, r) =>
    row.forEach((c, k) => {
      if (!valid(r, k)) return;
      anyValid = true;
      largest = Math.max(largest, Math.abs(c));
    }),
  );
  if (!anyValid) return [];
  const expensive = 2 * Math.min(cost.length, cost[0]!.length) * (largest + 1) + 1;
  const finite = cost.map((row, r) => row.map((c, k) => (valid(r, k) ? c : expensive)));
  return minCostAssignment(finite).filter(([r, k]) => valid(r, k));
}
