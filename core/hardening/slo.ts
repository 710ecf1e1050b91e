/**
 * Service-level objectives per route group (docs/slo.md), measured from the API's own Prometheus
 * histogram `http_request_duration_seconds` (labels method, route, route_group, status). A request
 * is an error when it answers 5xx; it is good for latency when it answers below 500 within the
 * objective's latency. The histogram counts requests per bucket bound, so the latency threshold is
 * read at the largest bound not above it: a request is counted good only when it was surely within.
 */

export const HTTP_DURATION_METRIC = 'http_request_duration_seconds';

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;
/** Bucket bounds (seconds) of the histogram; an objective's latency is measured at these. */
export const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** One sample of prom-client's `histogram.get().values`. */
export interface HistogramSample {
  metricName?: string;
  value: number;
  labels: Record<string, string | number | undefined>;
}

export interface SloObjective {
  route_group: string;
  latency_ms: number;
  latency_target: number;
  error_rate_target: number;
}

export interface GroupCounts {
  total: number;
  errors: number;
  /** Non-error requests within the bound read. */
  within: number;
  /** The bound (ms) the latency was read at; null when the latency is under the smallest bound. */
  bound_ms: number | null;
}

/** The largest bucket bound (seconds) not above `latencyMs`, or null when none is. */
export function readBound(latencyMs: number): number | null {
  const fits = HTTP_DURATION_BUCKETS.filter((b) => b * 1000 <= latencyMs + 1e-9);
  return fits.length ? fits[fits.length - 1]! : null;
}

/**
 * What a route group's answers add up to: all of them, the 5xx ones, and the non-5xx ones within
 * each bucket bound (cumulative, in HTTP_DURATION_BUCKETS order). Snapshots of one histogram
 * subtract (what was counted since) and add (several processes, flushed periods).
 */
export interface GroupSnapshot {
  requests: number;
  errors: number;
  within: number[];
}

const emptySnapshot = (): GroupSnapshot => ({
  requests: 0,
  errors: 0,
  within: HTTP_DURATION_BUCKETS.map(() => 0),
});

/** Every route group's snapshot from the histogram's samples (all methods, routes and statuses). */
export function snapshotGroups(samples: readonly HistogramSample[]): Map<string, GroupSnapshot> {
  const groups = new Map<string, GroupSnapshot>();
  for (const s of samples) {
    const group = String(s.labels.route_group ?? 'none');
    const g = groups.get(group) ?? emptySnapshot();
    groups.set(group, g);
    const name = s.metricName ?? '';
    const status = Number(s.labels.status);
    if (name.endsWith('_count')) {
      g.requests += s.value;
      if (status >= 500) g.errors += s.value;
    } else if (name.endsWith('_bucket') && status < 500) {
      const i = HTTP_DURATION_BUCKETS.findIndex((b) => b === Number(s.labels.le));
      if (i >= 0) g.within[i]! += s.value;
    }
  }
  return groups;
}

export function addSnapshots(snapshots: Iterable<GroupSnapshot>): GroupSnapshot {
  const sum = emptySnapshot();
  for (const s of snapshots) {
    sum.requests += s.requests;
    sum.errors += s.errors;
    s.within.forEach((v, i) => (sum.within[i]! += v));
  }
  return sum;
}

/** What `now` counted beyond `before`, per group; groups with nothing new are left out. */
export function snapshotDelta(
  now: ReadonlyMap<string, GroupSnapshot>,
  before: ReadonlyMap<string, GroupSnapshot>,
): Map<string, GroupSnapshot> {
  const delta = new Map<string, GroupSnapshot>();
  for (const [group, n] of now) {
    const b = before.get(group) ?? emptySnapshot();
    if (n.requests === b.requests) continue;
    delta.set(group, {
      requests: n.requests - b.requests,
      errors: n.errors - b.errors,
      within: n.within.map((v, i) => v - (b.within[i] ?? 0)),
    });
  }
  return delta;
}

/** An objective's counts from a group's snapshot: its latency read at the largest bound not above it. */
export function countsOf(snapshot: GroupSnapshot, latencyMs: number): GroupCounts {
  const bound = readBound(latencyMs);
  const i = bound === null ? -1 : HTTP_DURATION_BUCKETS.findIndex((b) => b === bound);
  return {
    total: snapshot.requests,
    errors: snapshot.errors,
    within: i >= 0 ? (snapshot.within[i] ?? 0) : 0,
    bound_ms: bound === null ? null : bound * 1000,
  };
}

export interface SloStatus extends SloObjective {
  requests: number;
  latency: {
    /** Share of requests good for latency (non-errors within the bound). */
    compliance: number | null;
    read_at_ms: number | null;
    /** Requests the target allows to be slow or failing, those that were, and what is left. */
    budget: number;
    spent: number;
    remaining: number;
    met: boolean | null;
  };
  errors: {
    rate: number | null;
    budget: number;
    spent: number;
    remaining: number;
    met: boolean | null;
  };
  /** `no_traffic` when the group answered nothing yet. */
  status: 'met' | 'breached' | 'no_traffic';
}

export function sloStatus(objective: SloObjective, counts: GroupCounts): SloStatus {
  const n = counts.total;
  const latencyBudget = round6((1 - objective.latency_target) * n);
  const slow = n - counts.within;
  const errorBudget = round6(objective.error_rate_target * n);
  const latencyMet = n ? counts.within / n >= objective.latency_target : null;
  const errorsMet = n ? counts.errors / n <= objective.error_rate_target : null;
  return {
    ...objective,
    requests: n,
    latency: {
      compliance: n ? round6(counts.within / n) : null,
      read_at_ms: counts.bound_ms,
      budget: latencyBudget,
      spent: slow,
      remaining: round6(latencyBudget - slow),
      met: latencyMet,
    },
    errors: {
      rate: n ? round6(counts.errors / n) : null,
      budget: errorBudget,
      spent: counts.errors,
      remaining: round6(errorBudget - counts.errors),
      met: errorsMet,
    },
    status: n === 0 ? 'no_traffic' : latencyMet && errorsMet ? 'met' : 'breached',
  };
}
