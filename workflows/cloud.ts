import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';

export interface CloudSessionWorkflowInput {
  sessionId: string;
  /** When the session must end (APP_CLOUD__MAX_SESSION_HOURS after it was created), ISO 8601. */
  endsAt: string;
  /** Seconds between checks of the booting instance (APP_CLOUD__POLL_SECONDS). */
  pollSeconds: number;
  /** How long the instance may take to boot (APP_CLOUD__BOOT_TIMEOUT_MINUTES), in seconds. */
  bootTimeoutSeconds: number;
}

export interface CloudSessionOutcome {
  /**
   * disconnect: POST /api/cloud/disconnect; expire: the maximum hours; boot_failed: the instance
   * never ran; elsewhere: found ended by something else (orphan termination).
   */
  endedBy: 'disconnect' | 'expire' | 'boot_failed' | 'elsewhere';
  status: string;
}

/** Sent by POST /api/cloud/disconnect once it has ended the session: the workflow has nothing left to wait for. */
export const cloudSessionEndedSignal = defineSignal('cloudSessionEnded');

const steps = proxyActivities<CpuActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * CloudSessionWorkflow (`cloud-session-<session_id>`, docs/cloud.md): the session's timers. While
 * the instance boots it checks the provider every pollSeconds and makes the session `active` (or
 * `failed`, terminating the instance, when it fails or outlasts the boot timeout). Then it waits,
 * durably, for a disconnect or the session's maximum hours, and at that deadline ends the session
 * itself: the instance is terminated and the cost recorded even if nobody is watching.
 */
export async function cloudSessionWorkflow(input: CloudSessionWorkflowInput): Promise<CloudSessionOutcome> {
  let disconnected = false;
  setHandler(cloudSessionEndedSignal, () => {
    disconnected = true;
  });
  const bootDeadline = Date.now() + input.bootTimeoutSeconds * 1000;
  let status = await steps.activateCloudSession({ sessionId: input.sessionId });
  while (status === 'connecting' && !disconnected) {
    if (Date.now() >= bootDeadline) {
      const ended = await steps.endCloudSession({
        sessionId: input.sessionId,
        event: 'boot_failed',
        reason: `the instance did not run within ${input.bootTimeoutSeconds} seconds`,
      });
      return { endedBy: 'boot_failed', status: ended.status };
    }
    await condition(() => disconnected, input.pollSeconds * 1000);
    if (!disconnected) status = await steps.activateCloudSession({ sessionId: input.sessionId });
  }
  if (disconnected) return { endedBy: 'disconnect', status: 'disconnected' };
  if (status !== 'active') return { endedBy: status === 'failed' ? 'boot_failed' : 'elsewhere', status };
  const remainingMs = Date.parse(input.endsAt) - Date.now();
  if (remainingMs > 0 && (await condition(() => disconnected, remainingMs)))
    return { endedBy: 'disconnect', status: 'disconnected' };
  const ended = await steps.endCloudSession({
    sessionId: input.sessionId,
    event: 'expire',
    reason: `the session reached its end at ${input.endsAt} (APP_CLOUD__MAX_SESSION_HOURS)`,
  });
  return { endedBy: 'expire', status: ended.status };
}
