import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { AppConfig } from '../core/config';
import { createDb, type Db } from '../activities/db';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { createTemporalHandle, type TemporalHandle } from '../runtime/temporal';
import { createTokenIssuer, type TokenIssuer } from './auth/tokens';
import { createEventHub, type EventHub } from '../runtime/event-hub';
import { createRateLimiter, type RateLimiter } from './rate-limit';
import { createSloRecorder, type SloRecorder } from './slo-recorder';

/** Everything the routers need, built once per process and injected (tests build their own). */
export interface AppDeps {
  config: AppConfig;
  logger: Logger;
  db: Db;
  storage: ObjectStore;
  temporal: TemporalHandle;
  events: EventHub;
  tokens: TokenIssuer;
  limiter: RateLimiter;
  metrics: Registry;
  startedAt: Date;
  /** Flushes the request histogram's counts for the SLO board (docs/slo.md). */
  slo: SloRecorder;
}

export async function createAppDeps(config: AppConfig, logger: Logger): Promise<AppDeps> {
  const db = createDb(config.database.url);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  return {
    config,
    logger,
    db,
    storage: createObjectStore(config.storage),
    temporal: createTemporalHandle(config.temporal),
    events: await createEventHub(config.database.url, logger),
    tokens: createTokenIssuer({
      secret: config.auth.tokenSecret,
      issuer: config.auth.issuer,
      ttlHours: config.auth.tokenTtlHours,
      mediaTtlMinutes: config.auth.mediaTokenTtlMinutes,
    }),
    limiter: createRateLimiter(db, {
      api: { max: config.rateLimit.apiMax, windowSeconds: config.rateLimit.apiWindowSeconds },
      login: { max: config.rateLimit.loginMax, windowSeconds: config.rateLimit.loginWindowSeconds },
    }),
    metrics,
    startedAt: new Date(),
    slo: createSloRecorder({ db, metrics, logger, flushSeconds: config.slo.flushSeconds }),
  };
}

export async function closeAppDeps(deps: AppDeps): Promise<void> {
  // The last counts are flushed while the database is still there.
  await deps.slo.close();
  await Promise.allSettled([deps.events.close(), deps.temporal.close(), deps.db.$disconnect()]);
}
