import { proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import type { CpuActivities } from '../activities';
import type { CurationEmbedInput, CurationEmbedTally } from '../activities/curation/embed';

const notice = proxyActivities<CpuActivities>({ startToCloseTimeout: '1 minute' });
const { embedFrames } = proxyActivities<CpuActivities>({
  // One activity walks the frames a page at a time; the heartbeat carries its cursor, so a worker
  // that dies is noticed within a minute and the retry resumes after the last page it reported.
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export type CurationEmbedWorkflowInput = CurationEmbedInput;

/**
 * Embeds the frames that lack an embedding of a model (workflow id `curation-embed-<model>`), for
 * GET /api/curation/diverse, in one heartbeating activity on the `cpu` queue. A run that gives up
 * says so on the jobs stream (`curation.embed.failed`) and in the audit log.
 */
export async function curationEmbedWorkflow(input: CurationEmbedWorkflowInput): Promise<CurationEmbedTally> {
  return reportingFailure(
    () => embedFrames(input),
    (error) => notice.failCurationEmbed({ ...input, error }),
  );
}
