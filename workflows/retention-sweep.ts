import { executeChild, proxyActivities, rootCause, workflowInfo } from '@temporalio/workflow';
import { eraseSessionWorkflow } from './erase-session';
import { reportingFailure } from './failure';
import { eraseWorkflowId } from '../core/govern/erasure';
import type { CpuActivities } from '../activities';

export interface RetentionSweepInput {
  /** The sweep's governance run, recorded by the route; null when the schedule starts it. */
  runId: string | null;
  actorId: string | null;
  /** Plan and record only: what a sweep would erase now (the manual call's default). */
  dryRun?: boolean;
}

export interface RetentionSweepOutcome {
  sweep_id: string;
  erased: number;
  failed: number;
}

const steps = proxyActivities<CpuActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumInterval: '1 minute' },
});

/**
 * The retention sweep (schedule `retention-sweep`, or `retention-sweep-<run_id>` from the route;
 * docs/erasure.md): erases every session past its retention_until, one at a time, each as a child
 * EraseSessionWorkflow under the session's erasure id, so a manual erase and a sweep never erase
 * the same session twice. A session whose erasure fails is recorded and the sweep goes on. A dry
 * run records its plan and erases nothing.
 */
export async function retentionSweepWorkflow(input: RetentionSweepInput): Promise<RetentionSweepOutcome> {
  const runId = input.runId ?? (await steps.beginRetentionSweep({ workflowId: workflowInfo().workflowId }));
  const erased: Array<{ erasure_id: string; outcome: 'completed' | 'failed'; reason?: string }> = [];
  const skipped: Array<{ session_id: string; reason: string }> = [];
  return reportingFailure(
    async () => {
      const plan = await steps.planRetentionSweep({ runId });
      for (const sessionId of input.dryRun ? [] : plan.erase) {
        const opened = await steps.openSweepErasure({ runId, sessionId });
        if ('skipped' in opened) {
          skipped.push({ session_id: sessionId, reason: opened.skipped });
          continue;
        }
        try {
          await executeChild(eraseSessionWorkflow, {
            workflowId: eraseWorkflowId(sessionId),
            args: [{ erasureId: opened.erasureId }],
          });
          erased.push({ erasure_id: opened.erasureId, outcome: 'completed' });
        } catch (err) {
          erased.push({
            erasure_id: opened.erasureId,
            outcome: 'failed',
            reason: rootCause(err) ?? String(err),
          });
        }
      }
      await steps.finishRetentionSweep({ runId, status: 'completed', erased, skipped });
      return {
        sweep_id: runId,
        erased: erased.filter((e) => e.outcome === 'completed').length,
        failed: erased.filter((e) => e.outcome === 'failed').length,
      };
    },
    (error) => steps.finishRetentionSweep({ runId, status: 'failed', erased, skipped, error }),
  );
}
