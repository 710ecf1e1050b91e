import { Histogram, Registry } from 'prom-client';
import {
  addSnapshots,
  countsOf,
  HTTP_DURATION_BUCKETS,
  readBound,
  sloStatus,
  snapshotDelta,
  snapshotGroups,
  type HistogramSample,
} from './slo';

/** One group's counts for an objective, read from histogram samples. */
const groupCounts = (s: readonly HistogramSample[], group: string, latencyMs: number) =>
  countsOf(snapshotGroups(s).get(group) ?? addSnapshots([]), latencyMs);

const histogram = () =>
  new Histogram({
    name: 'http_request_duration_seconds',
    help: 'test',
    labelNames: ['method', 'route', 'route_group', 'status'],
    buckets: [...HTTP_DURATION_BUCKETS],
    registers: [new Registry()],
  });

/** The API's histogram, fed known requests: [group, status, seconds]. */
async function samples(
  requests: Array<[string, number, number]>,
  h = histogram(),
): Promise<HistogramSample[]> {
  for (const [group, status, seconds] of requests)
    h.observe({ method: 'GET', route: `/api/${group}`, route_group: group, status: String(status) }, seconds);
  return (await h.get()).values;
}

describe('SLO measurement', () => {
  it('reads the latency at the largest bucket bound not above the objective', () => {
    expect(readBound(250)).toBe(0.25);
    expect(readBound(300)).toBe(0.25);
    expect(readBound(4)).toBeNull();
    expect(readBound(60_000)).toBe(30);
  });

  it('counts a group’s requests, its 5xx answers and the non-errors within the bound, and budgets them', async () => {
    const s = await samples([
      ['datasets', 200, 0.02],
      ['datasets', 200, 0.2],
      ['datasets', 404, 0.01], // a refusal is a good answer
      ['datasets', 200, 0.7], // slow
      ['datasets', 500, 0.01], // an error, however fast
      ['review', 200, 3],
    ]);
    const counts = groupCounts(s, 'datasets', 300);
    expect(counts).toEqual({ total: 5, errors: 1, within: 3, bound_ms: 250 });
    const status = sloStatus(
      { route_group: 'datasets', latency_ms: 300, latency_target: 0.9, error_rate_target: 0.1 },
      counts,
    );
    expect(status.latency).toEqual({
      compliance: 0.6,
      read_at_ms: 250,
      budget: 0.5,
      spent: 2,
      remaining: -1.5,
      met: false,
    });
    expect(status.errors).toEqual({ rate: 0.2, budget: 0.5, spent: 1, remaining: -0.5, met: false });
    expect(status.status).toBe('breached');
    const lenient = sloStatus(
      { route_group: 'datasets', latency_ms: 1000, latency_target: 0.5, error_rate_target: 0.25 },
      groupCounts(s, 'datasets', 1000),
    );
    expect(lenient).toMatchObject({ status: 'met', latency: { spent: 1, met: true }, errors: { met: true } });
  });

  it('reports a group with no traffic as such, not as met', async () => {
    const status = sloStatus(
      { route_group: 'billing', latency_ms: 100, latency_target: 0.99, error_rate_target: 0.01 },
      groupCounts(await samples([['review', 200, 0.01]]), 'billing', 100),
    );
    expect(status).toMatchObject({
      requests: 0,
      status: 'no_traffic',
      latency: { compliance: null, met: null },
    });
  });

  it('counts what a process added since its last flush, and adds processes up as one', async () => {
    const h = histogram();
    const first = snapshotGroups(
      await samples(
        [
          ['datasets', 200, 0.02],
          ['review', 500, 0.01],
        ],
        h,
      ),
    );
    const later = snapshotGroups(
      await samples(
        [
          ['datasets', 200, 0.7],
          ['datasets', 503, 0.01],
        ],
        h,
      ),
    );
    const delta = snapshotDelta(later, first);
    // The review group counted nothing new: no sample for it.
    expect([...delta.keys()]).toEqual(['datasets']);
    expect(countsOf(delta.get('datasets')!, 300)).toEqual({ total: 2, errors: 1, within: 0, bound_ms: 250 });
    // Another process's flushed counts and this one's, added: as if one histogram had seen them all.
    const other = snapshotGroups(await samples([['datasets', 200, 0.1]]));
    const all = addSnapshots([first.get('datasets')!, delta.get('datasets')!, other.get('datasets')!]);
    const one = await samples([
      ['datasets', 200, 0.02],
      ['datasets', 200, 0.7],
      ['datasets', 503, 0.01],
      ['datasets', 200, 0.1],
    ]);
    expect(countsOf(all, 300)).toEqual(groupCounts(one, 'datasets', 300));
    expect(countsOf(all, 300)).toEqual({ total: 4, errors: 1, within: 2, bound_ms: 250 });
  });
});
