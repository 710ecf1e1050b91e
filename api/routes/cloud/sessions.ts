import { assertWorkMayStart } from '../../../activities/govern/start-guard';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  cloudSessionWorkflowId,
  cloudStatus,
  connectCloudSession,
  disconnectCloudSession,
  endCloudSession,
  listOrphans,
  sessionOut,
  terminateOrphans,
} from '../../../activities/cloud/sessions';
import { cloudSessionEndedSignal, cloudSessionWorkflow } from '../../../workflows/cloud';
import { assertCostAllowed, recordSpendEstimate } from '../../../activities/govern/spend';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import { ConnectIn } from './validators';

const NOT_CONFIGURED = 'no cloud provider is configured (APP_CLOUD__PROVIDER / APP_CLOUD__ENDPOINT empty)';
const PROVIDER_DOWN = 'the cloud provider did not answer, or answered with an error (its reason named)';

/**
 * Cloud GPU sessions of the `cloud` group (docs/cloud.md): connect at an acknowledged price, one
 * session at a time, disconnect with its cost, status, and orphans (instances and sessions that
 * lost each other). Spending and stopping paid compute is the admin's; reading it is open wider.
 */
export function createCloudSessionRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('cloud')
    .post(
      '/api/cloud/connect',
      {
        summary:
          'Connect a cloud GPU session: quotes the provider’s hourly price, refuses an ack_hourly_usd under it (422 naming both), starts one instance tagged with the session id and a cloud-session-<id> workflow that makes it active once the instance runs and ends it after APP_CLOUD__MAX_SESSION_HOURS; 202, Location: /api/cloud/status',
        access: 'admin',
        body: { name: 'ConnectIn', schema: ConnectIn },
        successStatus: 202,
        statuses: {
          409: 'a cloud session is already connecting or active, or the kill switch is engaged',
          422: `${NOT_CONFIGURED}, or ack_hourly_usd is under the provider’s price`,
          503: `${PROVIDER_DOWN}, or the workflow service did not take the session workflow (the instance is terminated)`,
        },
      },
      async ({ body, principal, req, res }) => {
        await assertWorkMayStart(deps.db, 'cloud');
        // A session may run until APP_CLOUD__MAX_SESSION_HOURS at the price acknowledged: that is what it may cost.
        const verdict = await assertCostAllowed(deps, 'the cloud session', {
          gpu_hours: config.cloud.maxSessionHours,
          hourly_usd: body.ack_hourly_usd,
        });
        const { session, endsAt } = await connectCloudSession(deps, {
          ackHourlyUsd: body.ack_hourly_usd,
          actor: actorOf(principal, req),
        });
        await recordSpendEstimate(db, {
          kind: 'cloud',
          subjectType: 'cloud_session',
          subjectId: session.id,
          verdict,
          detail: { max_session_hours: config.cloud.maxSessionHours },
          createdBy: principal.userId,
        });
        try {
          const started = await startWorkflow(deps, res, {
            workflow: cloudSessionWorkflow,
            workflowId: cloudSessionWorkflowId(session.id),
            args: [
              {
                sessionId: session.id,
                endsAt,
                pollSeconds: config.cloud.pollSeconds,
                bootTimeoutSeconds: config.cloud.bootTimeoutMinutes * 60,
              },
            ],
            location: '/api/cloud/status',
            what: `cloud session ${session.id}`,
          });
          return { ...sessionOut(session), workflow_run_id: started.run_id, status_url: started.status_url };
        } catch (err) {
          // Nobody would end it: the instance goes now rather than bill until someone notices.
          await endCloudSession(
            deps,
            session.id,
            'boot_failed',
            `its workflow did not start: ${(err as Error).message}`,
          );
          throw err;
        }
      },
    )
    .post(
      '/api/cloud/disconnect',
      {
        summary:
          'End the connected cloud session: terminates its instance at the provider and records the end and its cost at its price; jobs still parked queued-cloud are listed (they fail by name when they reach the ended session)',
        access: 'admin',
        statuses: {
          409: 'no cloud session is connected',
          422: NOT_CONFIGURED,
          503: PROVIDER_DOWN,
        },
      },
      async ({ principal, req }) => {
        const ended = await disconnectCloudSession(deps, actorOf(principal, req));
        await deps.temporal.client.workflow
          .getHandle(cloudSessionWorkflowId(ended.session.id))
          .signal(cloudSessionEndedSignal)
          .catch((err: unknown) => {
            // A workflow that already ended (its own deadline) has nothing left to stop.
            if (!(err instanceof WorkflowNotFoundError)) throw err;
          });
        return ended;
      },
    )
    .get(
      '/api/cloud/status',
      {
        summary:
          'The cloud provider (and whether one is configured, naming the settings missing), the open session with its uptime and cost so far at its price, the last ended session, and the training jobs parked queued-cloud',
        access: 'annotator',
      },
      async () => cloudStatus({ db, config }),
    )
    .get(
      '/api/cloud/orphans',
      {
        summary:
          'Instances at the provider tagged with this installation’s owner tag that no open session knows (with what they have cost), and open sessions whose instance the provider no longer runs',
        access: 'reviewer',
        statuses: { 422: NOT_CONFIGURED, 503: PROVIDER_DOWN },
      },
      async () => listOrphans({ db, config }),
    )
    .post(
      '/api/cloud/orphans/terminate',
      {
        summary:
          'Terminate every orphan: untracked instances are terminated and recorded as terminated sessions with their cost; sessions whose instance is gone end as orphaned. Idempotent: a second call reports nothing left',
        access: 'admin',
        statuses: { 422: NOT_CONFIGURED, 503: PROVIDER_DOWN },
      },
      async ({ principal, req }) => terminateOrphans({ db, config }, actorOf(principal, req)),
    );
}
