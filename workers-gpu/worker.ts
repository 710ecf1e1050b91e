import { NativeConnection, Worker } from '@temporalio/worker';
import pg from 'pg';
import type { AppConfig } from '../core/config';

/**
 * The `gpu` task queue has exactly one slot. `maxConcurrentActivityTaskExecutions: 1` serialises
 * activities only inside one process, so the process also holds a PostgreSQL advisory lock per
 * GPU: a second workers-gpu for the same device refuses to start instead of silently doubling the
 * slot. Heartbeat timeouts free the slot when a worker dies (the lock dies with its connection).
 */
export const GPU_SLOT_CONCURRENCY = 1;
const GPU_LOCK_BASE = 727_100;

export class GpuSlotTakenError extends Error {
  override name = 'GpuSlotTakenError';
}

/** Holds the per-GPU lock for as long as the returned client stays connected. */
export async function acquireGpuSlotLock(databaseUrl: string, device: number): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
    GPU_LOCK_BASE + device,
  ]);
  if (!rows[0]?.locked) {
    await client.end();
    throw new GpuSlotTakenError(
      `another workers-gpu process already serves GPU ${device}; one process per GPU keeps the slot exclusive`,
    );
  }
  return client;
}

export interface GpuWorkerOptions {
  connection: NativeConnection;
  config: AppConfig;
  activities: object;
}

export function createGpuWorker({ connection, config, activities }: GpuWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.gpuTaskQueue,
    activities,
    maxConcurrentActivityTaskExecutions: GPU_SLOT_CONCURRENCY,
    maxConcurrentLocalActivityExecutions: GPU_SLOT_CONCURRENCY,
    shutdownGraceTime: `${config.workers.shutdownGraceSeconds}s`,
  });
}
