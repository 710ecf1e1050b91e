import { RouteGroup } from '../../http/route-group';
import { NotReadyError } from '../../../core/errors';
import type { AppDeps } from '../../deps';

/** How long one dependency may take to answer before readiness calls it down. */
const CHECK_TIMEOUT_MS = 2500;

type Check = { ok: boolean; latency_ms: number; error?: string };

async function timed(probe: () => Promise<unknown>): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
          CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** The `untagged` group: liveness, readiness and Prometheus metrics. */
export function createHealthRoutes(deps: AppDeps): RouteGroup {
  const metricsHandler = async ({ res }: { res: import('express').Response }) => {
    res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
  };
  return new RouteGroup('untagged')
    .get(
      '/api/health',
      { summary: 'Liveness: always 200 while the process serves', access: 'public' },
      () => ({
        status: 'ok',
        uptime_s: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
        env: deps.config.env,
      }),
    )
    .get(
      '/api/readyz',
      {
        summary:
          'Readiness: 200 only when PostgreSQL, Temporal and MinIO each answer; 503 names the failing ones',
        access: 'public',
        statuses: { 503: 'a dependency does not answer' },
      },
      async () => {
        const [database, temporal, storage] = await Promise.all([
          timed(() => deps.db.$queryRaw`SELECT 1`),
          timed(() => deps.temporal.ping()),
          timed(() => deps.storage.ping()),
        ]);
        const checks = { database, temporal, storage };
        const failing = Object.entries(checks)
          .filter(([, c]) => !c.ok)
          .map(([name]) => name);
        if (failing.length === 0) return { status: 'ready', checks };
        throw new NotReadyError(
          `not ready: ${failing.map((n) => `${n} (${checks[n as keyof typeof checks].error})`).join(', ')}`,
          { failing, checks },
        );
      },
    )
    .get(
      '/api/metrics',
      {
        summary: 'Prometheus metrics of this API process',
        access: 'annotator',
        respondsItself: { contentType: 'text/plain' },
      },
      metricsHandler,
    )
    .get(
      '/metrics',
      {
        summary: 'Prometheus metrics of this API process (conventional path)',
        access: 'annotator',
        respondsItself: { contentType: 'text/plain' },
      },
      metricsHandler,
    );
}
