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

/** The counts of one route group from the histogram's samples (all methods, routes and statuses). */
export function groupCounts(
  samples: readonly HistogramSample[],
  group: string,
  latencyMs: number,
): GroupCounts {
  const bound = readBound(latencyMs);
  let total = 0;
  let errors = 0;
  let within = 0;
  for (const s of samples) {
    if (s.labels.route_group !== group) continue;
    const name = s.metricName ?? '';
    const status = Number(s.labels.status);
    if (name.endsWith('_count')) {
      total += s.value;
      if (status >= 500) errors += s.value;
    } else if (name.endsWith('_bucket') && bound !== null && Number(s.labels.le) === bound && status < 500)
      within += s.value;
  }
  return { total, errors, within, bound_ms: bound === null ? null : bound * 1000 };
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
