import type { ActivityDeps } from '../deps';
import { createCleanupActivities } from './cleanup';
import { createPiiRunActivities } from './runs';

/** The PII re-checks' and cleanup sweep's `cpu` activities (the backfill, the sweep). */
export const createPiiRecheckCpuActivities = (deps: ActivityDeps) => ({
  ...createPiiRunActivities(deps),
  ...createCleanupActivities(deps),
});

/** Their `gpu` activities: the re-check's pages hold the GPU slot. */
export const createPiiRecheckGpuActivities = createPiiRunActivities;
