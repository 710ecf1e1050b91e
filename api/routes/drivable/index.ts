import { agentRunOut } from '../../../activities/agent-runs/runs';
import { recordAudit } from '../../../activities/audit';
import { assertWorkMayStart } from '../../../activities/govern/start-guard';
import { DRIVABLE_BACKFILL_WORKFLOW_ID, queueDrivableBackfill } from '../../../activities/drivable/backfill';
import { createRoadSegmenter } from '../../../activities/drivable/model';
import {
  drawFrameArea,
  drivableCoverage,
  editFrameArea,
  getDrivable,
  segmentFrameNow,
} from '../../../activities/drivable/store';
import { drivableBackfillWorkflow } from '../../../workflows/drivable-backfill';
import { forgetSpend, gateCorpusRun } from '../../../activities/govern/spend';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import { CoverageQuery, DrivableBackfillIn, DrivableCreateIn, DrivableEditIn } from './validators';

/** The `drivable` group: drivable-area polygons per frame, backfill, coverage (docs/drivable.md). */
export function createDrivableRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  // Loaded on the first POST and kept: one frame's inference is short, loading the model is not.
  const segmenter = createRoadSegmenter(deps.config.models);
  const frameParams = uuidParams('frame_id');
  return new RouteGroup('drivable')
    .get(
      '/api/frames/{frame_id}/drivable',
      {
        summary:
          "The frame's drivable area: polygons and holes (frame px), lane/curb candidates, source, version",
        access: 'annotator',
        params: frameParams,
        statuses: { 404: 'no such frame, or it has no drivable area' },
      },
      async ({ params }) => getDrivable(db, params.frame_id),
    )
    .post(
      '/api/frames/{frame_id}/drivable',
      {
        summary:
          'Without polygons: runs the road model on the frame now and stores its area (source model, replacing a model-made one). With polygons: stores the reviewer-drawn area (source human) on a frame that has none',
        access: 'reviewer',
        params: frameParams,
        body: { name: 'DrivableCreateIn', schema: DrivableCreateIn },
        successStatus: 201,
        statuses: {
          404: 'no such frame, or its image is not stored',
          409: 'a human-drawn area exists (the model never replaces it), or an area exists (drawn polygons need PUT)',
          503: 'the road model is missing or does not fit',
        },
      },
      async ({ params, body, principal, req }) => {
        const actor = actorOf(principal, req);
        const { polygons } = body;
        return polygons
          ? drawFrameArea(db, params.frame_id, { ...body, polygons }, actor)
          : segmentFrameNow(db, deps.storage, segmenter, params.frame_id, actor);
      },
    )
    .put(
      '/api/frames/{frame_id}/drivable',
      {
        summary:
          "A reviewer's edit of the polygons (the area becomes human); expected_version must be the stored version",
        access: 'reviewer',
        params: frameParams,
        body: { name: 'DrivableEditIn', schema: DrivableEditIn },
        statuses: {
          404: 'no such frame, or it has no drivable area',
          409: 'expected_version is not the stored version',
        },
      },
      async ({ params, body, principal, req }) =>
        editFrameArea(
          db,
          params.frame_id,
          { ...body, expectedVersion: body.expected_version },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/drivable/backfill',
      {
        summary:
          'Backfills drivable areas over sessions on the GPU slot as a revertible agent run (kind drivable-backfill, workflow drivable-backfill); human-drawn areas are never replaced; 202, Location: the run',
        access: 'admin',
        body: { name: 'DrivableBackfillIn', schema: DrivableBackfillIn },
        successStatus: 202,
        statuses: {
          409: 'a backfill is already running, or the kill switch is engaged',
          422: 'no listed session exists with frames',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, principal, req, res }) => {
        await assertWorkMayStart(db, 'corpus_run');
        const actor = actorOf(principal, req);
        const { run, skipped } = await queueDrivableBackfill(db, body, actor.userId);
        const sessionIds = (run.params as { session_ids: string[] }).session_ids;
        let started: Awaited<ReturnType<typeof startWorkflow>>;
        try {
          await gateCorpusRun(deps, run, sessionIds);
          started = await startWorkflow(deps, res, {
            workflow: drivableBackfillWorkflow,
            workflowId: DRIVABLE_BACKFILL_WORKFLOW_ID,
            args: [
              {
                runId: run.id,
                sessionIds,
                gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
                heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
              },
            ],
            location: `/api/agent/runs/${run.id}`,
            what: 'a drivable-area backfill',
          });
        } catch (err) {
          // Nothing started: the run row and its estimate go, so a refused start leaves no trace.
          await forgetSpend(db, run.id);
          await db.agentRun.delete({ where: { id: run.id } });
          throw err;
        }
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'agent_run.started',
          subjectType: 'agent_run',
          subjectId: run.id,
          detail: { kind: run.kind, params: run.params, skipped },
          requestId: actor.requestId,
        });
        return { ...agentRunOut(run), workflow_run_id: started.run_id, skipped };
      },
    )
    .get(
      '/api/drivable/coverage',
      {
        summary:
          'Per session: frames, frames with a drivable area (by source), coverage and the mean road fraction of the areas; session_ids (comma-separated) narrows it',
        access: 'annotator',
        query: CoverageQuery,
      },
      async ({ query }) => drivableCoverage(db, query.session_ids),
    );
}
