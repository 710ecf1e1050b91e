import type { AppConfig } from '../core/config';
import type { Db } from './db';
import { createDetectActivities } from './detect';
import type { ObjectStore } from './storage/object-store';

/** What activities receive: real instances in the workers, test instances in tests. */
export interface ActivityDeps {
  config: AppConfig;
  db: Db;
  storage: ObjectStore;
}

/** Activities of the `cpu` task queue (I/O and CPU work); later concerns add theirs here. */
export function createCpuActivities(_deps: ActivityDeps) {
  return {};
}

/** Activities of the `gpu` task queue (one slot): model inference, training, corpus relabel. */
export function createGpuActivities(deps: ActivityDeps) {
  return { ...createDetectActivities(deps) };
}

export type CpuActivities = ReturnType<typeof createCpuActivities>;
export type GpuActivities = ReturnType<typeof createGpuActivities>;
