import { z } from 'zod';
import { SWEEP_OP, dueGoldSets, type SweepRequest } from '../../../activities/registry/sweep';
import { currentChampion } from '../../../activities/models/artifacts';
import { championSweepWorkflow } from '../../../workflows/promotion';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';

/** Body of the champion sweep (the spec shows none; docs/promotion.md). */
export const ChampionSweepIn = z.strictObject({
  task: z.enum(['detection']).default('detection'),
  gold_ids: z.array(z.uuid()).min(1).max(20).nullable().default(null).meta({
    description: 'only these gold sets; null: every sealed gold set the champion has not been evaluated on',
  }),
});

/** POST /api/activelearn/champion-sweep (filed under `edge`). */
export function createChampionSweepRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('edge').post(
    '/api/activelearn/champion-sweep',
    {
      summary:
        'Re-evaluate the current champion on the sealed gold sets it has not been evaluated on (those sealed since its last evaluation, and older ones it never met; at most 20, oldest first) as workflow champion-sweep-<task>: its runs on the GPU slot, each evaluation recorded, and the sweep as a champion_sweep operation naming any safety floor new gold breaks (202)',
      access: 'reviewer',
      body: { name: 'ChampionSweepIn', schema: ChampionSweepIn },
      successStatus: 202,
      statuses: {
        404: 'no such gold set',
        409: 'a sweep of this task is already running',
        503: 'no champion can be had (the shipped detector is missing)',
      },
    },
    async ({ body, principal, req, res }) => {
      const champion = await currentChampion(deps, body.task);
      const due = await dueGoldSets(deps.db, champion.modelVersion, body.gold_ids);
      const request: SweepRequest = {
        task: body.task,
        goldIds: body.gold_ids,
        actor: actorOf(principal, req),
      };
      const started = await startWorkflow(deps, res, {
        workflow: championSweepWorkflow,
        workflowId: `champion-sweep-${body.task}`,
        args: [
          {
            request,
            gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
            heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
          },
        ],
        location: `/api/eval/operations?op_type=${SWEEP_OP}&subject_id=${encodeURIComponent(champion.modelVersion)}`,
        what: `a champion sweep of ${body.task}`,
      });
      return {
        ...started,
        champion_version: champion.modelVersion,
        last_evaluated_at: due.lastEvaluatedAt,
        due_gold_ids: due.golds.map((g) => g.id),
      };
    },
  );
}
