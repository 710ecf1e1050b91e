import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { RolloutOutcome } from '../activities/edge/rollouts';
import { reportingFailure } from './failure';

export interface RolloutWorkflowInput {
  rolloutId: string;
  /** How many stages the rollout has (their devices are planned by the steps, from the row). */
  stageCount: number;
  /** `timer`: a stage ends when `stageSeconds` have passed or an operator advances it; `operator`: only an operator ends it. */
  advance: 'timer' | 'operator';
  stageSeconds: number;
  /** Seconds between gate checks while a stage soaks (config edge.gateCheckSeconds). */
  checkSeconds: number;
}

/** An operator ends the running stage now: its gate decides at once (POST /api/edgeforge/rollout, action `advance`). */
export const advanceRolloutSignal = defineSignal<[{ by: string }]>('advance');
/** An operator aborts the rollout: every device goes back (action `rollback`). */
export const rollbackRolloutSignal = defineSignal<[{ by: string; reason: string }]>('rollback');

const steps = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['RolloutNotFound'] },
});

/**
 * RolloutWorkflow (`rollout-<id>`, docs/edge-rollout.md). For each stage: assign the artifact to the
 * stage's devices, then let it soak, checking the gate on their telemetry every `checkSeconds` — a
 * breach rolls every device back at once — until the stage ends (timer or operator); then the gate
 * decides: a pass advances, anything else rolls back. After the last stage the rollout is complete.
 * An operator's rollback signal aborts at any point.
 */
export async function rolloutWorkflow(input: RolloutWorkflowInput): Promise<RolloutOutcome> {
  const { rolloutId } = input;
  let advanceBy: string | undefined;
  let rollback: { by: string; reason: string } | undefined;
  setHandler(advanceRolloutSignal, ({ by }) => void (advanceBy ??= by));
  setHandler(rollbackRolloutSignal, (asked) => void (rollback ??= asked));
  const operatorRollback = (r: { by: string; reason: string }) =>
    steps.rollBackRollout({ rolloutId, rule: 'operator', reason: `operator ${r.by}: ${r.reason}` });

  return reportingFailure(
    async () => {
      for (let stage = 0; stage < input.stageCount; stage++) {
        // An advance applies to the stage running when it arrives, not to the next one.
        advanceBy = undefined;
        await steps.startRolloutStage({ rolloutId, stage });
        const deadline = input.advance === 'timer' ? Date.now() + input.stageSeconds * 1000 : Infinity;
        for (;;) {
          const wait = Math.max(1, Math.min(input.checkSeconds * 1000, deadline - Date.now()));
          await condition(() => advanceBy !== undefined || rollback !== undefined, wait);
          if (rollback) return operatorRollback(rollback);
          const final = advanceBy !== undefined || Date.now() >= deadline;
          const verdict = await steps.evaluateRolloutStage({
            rolloutId,
            stage,
            final,
            endedBy: advanceBy !== undefined ? `operator:${advanceBy}` : 'timer',
          });
          if (verdict.decision === 'rollback')
            return steps.rollBackRollout({
              rolloutId,
              // Only a breach or missing evidence rolls back, and the gate names the rule of both.
              rule: verdict.rule!,
              reason: verdict.reason,
            });
          if (verdict.decision === 'advance') break;
        }
      }
      if (rollback) return operatorRollback(rollback);
      return steps.completeRollout({ rolloutId });
    },
    (error) => steps.failRollout({ rolloutId, error }),
  );
}
