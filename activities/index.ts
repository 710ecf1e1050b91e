import type { EventHub } from '../api/events/event-hub';
import type { AppConfig } from '../core/config';
import type { Db } from './db';
import { createAutolabelActivities } from './autolabel';
import { createAutolabelJobActivities } from './autolabel/jobs';
import { createDetectActivities } from './detect';
import type { ResidentClosedSetDetector } from './detect/closed-set';
import { createIngestActivities } from './ingest';
import { createInspectorActivities } from './inspector';
import type { ObjectStore } from './storage/object-store';

/** What activities receive: real instances in the workers, test instances in tests. */
export interface ActivityDeps {
  config: AppConfig;
  db: Db;
  storage: ObjectStore;
  /** Publishes job events (the workers pass an EventHub); activities publish nothing without it. */
  events?: Pick<EventHub, 'publish'>;
  /**
   * The gpu worker's closed-set model, loaded once and kept between sessions (workers-gpu warms it
   * at start); the gpu activities keep one of their own when none is given.
   */
  closedSet?: ResidentClosedSetDetector;
}

/** Activities of the `cpu` task queue (I/O and CPU work); later concerns add theirs here. */
export function createCpuActivities(deps: ActivityDeps) {
  return {
    ...createIngestActivities(deps),
    ...createInspectorActivities(deps),
    ...createAutolabelJobActivities(deps),
  };
}

/** Activities of the `gpu` task queue (one slot): model inference, training, corpus relabel. */
export function createGpuActivities(deps: ActivityDeps) {
  return { ...createDetectActivities(deps), ...createAutolabelActivities(deps) };
}

export type CpuActivities = ReturnType<typeof createCpuActivities>;
export type GpuActivities = ReturnType<typeof createGpuActivities>;
