import type { Logger } from 'pino';
import type { Histogram, Registry } from 'prom-client';
import type { Db } from '../activities/db';
import {
  HTTP_DURATION_METRIC,
  snapshotDelta,
  snapshotGroups,
  type GroupSnapshot,
} from '../core/hardening/slo';

/** Samples older than the longest window an objective may have (SloIn's 525,600 minutes) are never read. */
const KEEP_MS = 525_600 * 60_000;

/**
 * Flushes what this API process's request histogram counted, per route group, to `slo_samples`
 * every `flushSeconds` and when the process closes (docs/slo.md), so the SLO board adds up every
 * API process and survives restarts. `pending()` is what is counted but not yet flushed.
 */
export interface SloRecorder {
  readonly processId: string;
  pending(): Promise<{ since: Date; groups: Map<string, GroupSnapshot> }>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createSloRecorder(deps: {
  db: Db;
  metrics: Registry;
  logger: Logger;
  flushSeconds: number;
}): SloRecorder {
  const processId = crypto.randomUUID();
  let flushed = new Map<string, GroupSnapshot>();
  let since = new Date();
  let flushing: Promise<void> = Promise.resolve();

  const current = async () => {
    const metric = deps.metrics.getSingleMetric(HTTP_DURATION_METRIC) as Histogram | undefined;
    return snapshotGroups(metric ? (await metric.get()).values : []);
  };

  const flushOnce = async () => {
    const now = await current();
    const at = new Date();
    const delta = snapshotDelta(now, flushed);
    if (delta.size)
      await deps.db.sloSample.createMany({
        data: [...delta].map(([routeGroup, d]) => ({
          processId,
          routeGroup,
          requests: d.requests,
          errors: d.errors,
          within: d.within,
          since,
          createdAt: at,
        })),
      });
    // Only once written: a failed flush keeps its counts pending for the next.
    flushed = now;
    since = at;
    await deps.db.sloSample.deleteMany({ where: { createdAt: { lt: new Date(at.getTime() - KEEP_MS) } } });
  };

  // One flush at a time: the timer and close never write the same counts twice.
  const flush = () => (flushing = flushing.then(flushOnce, flushOnce));
  const timer = setInterval(() => {
    flush().catch((err: unknown) =>
      deps.logger.warn({ err }, 'SLO samples not flushed; kept for the next flush'),
    );
  }, deps.flushSeconds * 1000);
  timer.unref();

  return {
    processId,
    async pending() {
      await flushing.catch(() => undefined);
      return { since, groups: snapshotDelta(await current(), flushed) };
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush().catch((err: unknown) => deps.logger.warn({ err }, 'SLO samples not flushed at close'));
    },
  };
}
