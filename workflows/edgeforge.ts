import { proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';

export interface EdgeForgeWorkflowInput {
  runId: string;
}

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['EdgeForgeRefused'] },
});

/**
 * Compiling, scoring and timing run models for up to minutes; they heartbeat after every frame
 * and every timed run, so a worker that dies is noticed within the heartbeat timeout.
 */
const work = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['EdgeForgeRefused'] },
});

/**
 * EdgeForgeWorkflow (docs/edgeforge.md), one per forge run: `edgeforge-export-<target>-<model>`
 * (one export of a model for a target at a time), `edgeforge-{measure,cooptimize,thermal}-<run_id>`.
 * Export: the source model's mAP@0.5 on the gold set, then each precision built, checked and
 * stored, then each artifact timed when its target is this host. Measure: one artifact timed.
 * Cooptimize: one activity per grid point (prune fraction × precision), then the Pareto front.
 * Thermal: one sustained run. The run row goes queued → running → completed, or failed with the reason.
 */
export async function edgeForgeWorkflow(input: EdgeForgeWorkflowInput) {
  const { runId } = input;
  return reportingFailure(
    async () => {
      const plan = await steps.startForgeRun({ runId });
      if (plan.kind === 'export') {
        await work.forgeSourceAccuracy({ runId });
        const artifactIds: string[] = [];
        for (const precision of plan.precisions)
          artifactIds.push(await work.forgeBuildVariant({ runId, precision }));
        if (plan.measure)
          for (const artifactId of artifactIds) await work.forgeMeasure({ runId, artifactId });
      } else if (plan.kind === 'measure') {
        await work.forgeMeasure({ runId, artifactId: plan.artifactId! });
      } else if (plan.kind === 'cooptimize') {
        for (const point of plan.points) await work.forgeCooptPoint({ runId, ...point });
      } else {
        await work.forgeThermal({ runId });
      }
      return steps.finishForgeRun({ runId });
    },
    (error) => steps.failForgeRun({ runId, error }),
  );
}
