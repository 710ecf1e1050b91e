import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { CpuActivities } from '../activities';

const { inspectSessionHealth, listSessionIdsForSweep } = proxyActivities<CpuActivities>({
  // Decoding a sample of frames from storage is the slow part; a drive's sample takes seconds.
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['SessionNotFound'] },
});

export interface SessionHealthInput {
  sessionId: string;
}

/** One health run of one session (workflow id `health-<sessionId>`). */
export async function sessionHealthWorkflow(
  input: SessionHealthInput,
): Promise<{ passed: boolean; score: number }> {
  return inspectSessionHealth(input.sessionId);
}

export interface SweepTally {
  inspected: number;
  passed: number;
  failed: number;
  /** Sessions whose inspection failed (e.g. deleted meanwhile); the first few are named. */
  errored: number;
  errors: Array<{ session_id: string; error: string }>;
}

export interface HealthSweepInput {
  /** Resume after this session id (set by continue-as-new). */
  after?: string | null;
  tally?: SweepTally;
  pageSize?: number;
}

const SWEEP_CONCURRENCY = 4;
const NAMED_ERRORS = 20;

/**
 * Inspects every session, in id order, a page at a time (workflow id `health-sweep`). A session
 * whose inspection fails is counted and the sweep goes on; the history is kept short by
 * continuing as new between pages when Temporal suggests it.
 */
export async function healthSweepWorkflow(input: HealthSweepInput = {}): Promise<SweepTally> {
  const pageSize = input.pageSize ?? 100;
  const tally: SweepTally = input.tally ?? { inspected: 0, passed: 0, failed: 0, errored: 0, errors: [] };
  let after = input.after ?? null;
  for (;;) {
    const ids = await listSessionIdsForSweep(after, pageSize);
    if (ids.length === 0) return tally;
    for (let i = 0; i < ids.length; i += SWEEP_CONCURRENCY) {
      await Promise.all(
        ids.slice(i, i + SWEEP_CONCURRENCY).map(async (sessionId) => {
          try {
            const { passed } = await inspectSessionHealth(sessionId);
            tally.inspected++;
            if (passed) tally.passed++;
            else tally.failed++;
          } catch (err) {
            if (!(err instanceof ActivityFailure)) throw err;
            tally.errored++;
            const cause = err.cause instanceof ApplicationFailure ? err.cause.message : err.message;
            if (tally.errors.length < NAMED_ERRORS)
              tally.errors.push({ session_id: sessionId, error: cause });
          }
        }),
      );
    }
    after = ids[ids.length - 1]!;
    if (workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof healthSweepWorkflow>({ after, tally, pageSize });
  }
}
