import type { AppConfig } from '../core/config';
import type { EventHub } from '../runtime/event-hub';
import type { Db } from './db';
import type { ResidentClosedSetDetector } from './detect/closed-set';
import type { ObjectStore } from './storage/object-store';

/** What activities receive: real instances in the workers, test instances in tests. */
export interface ActivityDeps {
  config: AppConfig;
  db: Db;
  storage: ObjectStore;
  /** Publishes job events; both workers pass the EventHub, so events reach every API process's SSE clients. */
  events: Pick<EventHub, 'publish'>;
  /**
   * The gpu worker's closed-set model, loaded once and kept between sessions (workers-gpu warms it
   * at start); the gpu activities keep one of their own when none is given.
   */
  closedSet?: ResidentClosedSetDetector;
}
