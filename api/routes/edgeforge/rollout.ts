import { WorkflowNotFoundError } from '@temporalio/client';
import {
  discardRollout,
  queueRollout,
  rolloutOut,
  runningRollout,
  settingsOf,
  stagesOf,
} from '../../../activities/edge';
import { recordAudit } from '../../../activities/audit';
import { ConflictError } from '../../../core/errors';
import {
  advanceRolloutSignal,
  rollbackRolloutSignal,
  rolloutWorkflow,
} from '../../../workflows/edge-rollout';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import { RolloutIn } from './rollout-validators';

const gateUrl = (artifactId: string, rolloutId: string) =>
  `/api/edge/artifacts/${artifactId}/gate?rollout_id=${rolloutId}`;

/** POST /api/edgeforge/rollout: start a staged rollout (workflow `rollout-<id>`), or advance or abort a running one (docs/edge-rollout.md). */
export function createRolloutRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('edge forge').post(
    '/api/edgeforge/rollout',
    {
      summary:
        "Start a staged rollout of an edge artifact to the devices of its target (workflow rollout-<id>): each stage's share of the fleet gets the artifact, soaks, and is judged on its telemetry against the gate; a breach rolls every device back. Or, with rollout_id and action, advance the running stage now or roll the rollout back. 202, Location: the rollout against its gate",
      access: 'reviewer',
      body: { name: 'RolloutIn', schema: RolloutIn },
      successStatus: 202,
      statuses: {
        404: 'no such artifact or rollout',
        409: 'a rollout is already running on the target (of this artifact or another); the rollout acted on is not running',
        422: 'the artifact file is not in the models bucket; no registered device of the target matches the selector',
      },
    },
    async ({ body, principal, req, res }) => {
      const actor = actorOf(principal, req);
      if (body.rollout_id !== undefined && body.action !== undefined) {
        const rollout = await runningRollout(db, body.rollout_id);
        const handle = deps.temporal.client.workflow.getHandle(rollout.workflowId);
        const reason = body.reason ?? `asked by ${actor.userId}`;
        try {
          if (body.action === 'advance') await handle.signal(advanceRolloutSignal, { by: actor.userId });
          else await handle.signal(rollbackRolloutSignal, { by: actor.userId, reason });
        } catch (err) {
          if (err instanceof WorkflowNotFoundError)
            throw new ConflictError(`rollout ${rollout.id} has ended; it takes no more actions`);
          throw err;
        }
        await recordAudit(db, {
          actorId: actor.userId,
          action: `edge.rollout.${body.action}_asked`,
          subjectType: 'edge_rollout',
          subjectId: rollout.id,
          detail: { stage: rollout.stage, reason },
          requestId: actor.requestId,
        });
        const location = gateUrl(rollout.artifactId, rollout.id);
        res.status(202).location(location);
        return { rollout_id: rollout.id, action: body.action, stage: rollout.stage, status_url: location };
      }
      const rollout = await queueRollout(
        deps,
        {
          artifact_id: body.artifact_id!,
          stages: body.stages,
          ...body.gate,
          advance: body.advance,
          stage_seconds: body.stage_seconds ?? deps.config.edge.stageSeconds,
          selector: body.selector,
        },
        actor.userId,
      );
      let started: Awaited<ReturnType<typeof startWorkflow>>;
      try {
        const settings = settingsOf(rollout);
        started = await startWorkflow(deps, res, {
          workflow: rolloutWorkflow,
          workflowId: rollout.workflowId,
          args: [
            {
              rolloutId: rollout.id,
              stageCount: stagesOf(rollout).length,
              advance: settings.advance,
              stageSeconds: settings.stage_seconds,
              checkSeconds: deps.config.edge.gateCheckSeconds,
            },
          ],
          location: gateUrl(rollout.artifactId, rollout.id),
          what: `rollout ${rollout.id}`,
        });
      } catch (err) {
        await discardRollout(db, rollout.id);
        throw err;
      }
      await recordAudit(db, {
        actorId: actor.userId,
        action: 'edge.rollout.started',
        subjectType: 'edge_rollout',
        subjectId: rollout.id,
        detail: {
          artifact_id: rollout.artifactId,
          stages: body.stages,
          gate: body.gate,
          fleet: Object.keys(rolloutOut(rollout).previous).length,
        },
        requestId: actor.requestId,
      });
      return { ...rolloutOut(rollout), workflow_run_id: started.run_id, status_url: started.status_url };
    },
  );
}
