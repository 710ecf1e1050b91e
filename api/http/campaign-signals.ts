import { campaignWorkflowId, tickCampaignSignal } from '../../workflows/campaign';
import type { AppDeps } from '../deps';

/**
 * Tells the campaigns waiting on review of a batch that holds any of these objects to look again
 * (the `tick` signal): a campaign moves on as soon as its batch is decided, not at its next poll.
 * Best effort, after the review has committed: a campaign that misses the signal still sees the
 * review at its next poll (APP_CAMPAIGNS__REVIEW_POLL_SECONDS).
 */
export async function tellCampaignsOfReview(deps: AppDeps, objectIds: readonly string[]): Promise<void> {
  if (objectIds.length === 0) return;
  const waiting = await deps.db.$queryRaw<Array<{ id: string }>>`
    SELECT DISTINCT c.id::text FROM campaigns c
      JOIN active_learning_batch_frames f ON f.batch_id = c.batch_id
     WHERE c.status = 'running' AND c.stage = 'review' AND f.object_ids && ${[...objectIds]}::uuid[]`;
  await Promise.all(
    waiting.map((c) =>
      deps.temporal.client.workflow
        .getHandle(campaignWorkflowId(c.id))
        .signal(tickCampaignSignal)
        .catch((err: unknown) =>
          deps.logger.warn(
            { err, campaign_id: c.id },
            'a campaign was not told of a review; its poll will see it',
          ),
        ),
    ),
  );
}
