import type { CloudSessionEvent } from '../../core/cloud';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { orRefused } from './failures';
import { activateCloudSession, endCloudSession, sessionOut } from './sessions';
import { createCloudTrainingActivity } from './training';

export type { CloudTrainingInput, CloudTrainingResult, CloudTrainingHeartbeat } from './training';

/** Cloud GPU activities of the `cpu` queue (docs/cloud.md): the session workflow's steps and cloud training. */
export function createCloudActivities(deps: ActivityDeps) {
  return {
    /** Submits a parked (`queued-cloud`) training job to the cloud provider and follows it to its end, heartbeating. */
    runCloudTraining: createCloudTrainingActivity(deps),

    /** A connecting session's check: `active` once the provider runs its instance, `failed` when it cannot. */
    async activateCloudSession(input: { sessionId: string }): Promise<string> {
      return orRefused(activateCloudSession(deps, input.sessionId), 'CloudSessionRefused');
    },

    /** Ends an open session the workflow gives up on (its maximum hours, a boot that never finished). */
    async endCloudSession(input: {
      sessionId: string;
      event: Extract<CloudSessionEvent, 'expire' | 'boot_failed'>;
      reason: string;
    }): Promise<{ status: string; ended: boolean; costUsd: number }> {
      const { session, ended } = await orRefused(
        endCloudSession(deps, input.sessionId, input.event, input.reason),
        'CloudSessionRefused',
      );
      if (ended)
        await recordAudit(deps.db, {
          actorId: null,
          action: input.event === 'expire' ? 'cloud.session.expired' : 'cloud.session.failed',
          subjectType: 'cloud_session',
          subjectId: session.id,
          detail: { status: session.status, reason: input.reason },
        });
      return { status: session.status, ended, costUsd: sessionOut(session).cost_usd };
    },
  };
}
