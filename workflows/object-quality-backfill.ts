import { proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { BackfillInput } from '../activities/quality/object-quality';

const { backfillObjectQuality } = proxyActivities<CpuActivities>({
  // One activity pages through the scope; the heartbeat carries its keyset cursor, so a worker that
  // dies is noticed within a minute and the retry resumes after the last page it reported.
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export type ObjectQualityBackfillInput = BackfillInput;

/**
 * Backfills object quality (workflow id `object-quality-backfill-<session|corpus>-<scope>`,
 * docs/quality-measure.md): computes and stores the quality of every object in scope that has none
 * (or of all of them), then records an `object_quality_backfill` eval operation.
 */
export async function objectQualityBackfillWorkflow(
  input: ObjectQualityBackfillInput,
): Promise<{ computed: number }> {
  return backfillObjectQuality(input);
}
