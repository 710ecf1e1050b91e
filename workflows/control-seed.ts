import { proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import type { CpuActivities } from '../activities';
import type { ControlSeedInput, ControlSeedTally } from '../activities/govern/control-seed';

const notice = proxyActivities<CpuActivities>({ startToCloseTimeout: '1 minute' });
const { seedControlSample } = proxyActivities<CpuActivities>({
  // One activity walks the whole corpus a page at a time; the heartbeat carries its cursor, so a
  // worker that dies is noticed within a minute and the retry resumes after the last page it reported.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export type ControlSeedWorkflowInput = ControlSeedInput;

/**
 * Seeds the control sample (workflow id `control-seed-<seed>`): mirrors the seeded draw of the
 * auto-accepted objects to review, in one heartbeating activity on the `cpu` queue. A run that gives
 * up says so on the jobs stream (`control.seed.failed`) and in the audit log.
 */
export async function controlSeedWorkflow(input: ControlSeedWorkflowInput): Promise<ControlSeedTally> {
  return reportingFailure(
    () => seedControlSample(input),
    (error) => notice.failControlSeed({ ...input, error }),
  );
}
