import { z } from 'zod';
import { createMaskStore } from '../../../activities/annotations/masks';
import { reviewObjects } from '../../../activities/annotations/review';
import { queueAgentRun } from '../../../activities/agent-runs/runs';
import { autolabelRefusal } from '../../../activities/autolabel/jobs';
import { forgetSpend, gateCorpusRun } from '../../../activities/govern/spend';
import { assertWorkMayStart } from '../../../activities/govern/start-guard';
import { RECALL_KIND, type RecallRunParams } from '../../../activities/recall';
import {
  listRecallCandidates,
  recallProgress,
  RECALL_CANDIDATE_STATES,
} from '../../../activities/recall/candidates';
import { ConflictError, NotFoundError, RefusedError } from '../../../core/errors';
import { emptyRecallTally } from '../../../core/recall/tally';
import { recallWorkflow, recallWorkflowId } from '../../../workflows/recall';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { announceRunStarted } from '../../http/agent-runs';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';
import { startWorkflowFor } from '../../http/start-workflow';

/** The body of a recall run (the spec shows none; docs/recall.md); absent fields take APP_RECALL__*. */
const RecallRunIn = z.strictObject({
  min_score: z.number().min(0.01).max(1).optional(),
  tile_min_score: z.number().min(0.01).max(1).optional(),
  match_iou: z.number().gt(0).max(1).optional(),
});

const CandidatesQuery = z.strictObject({
  session_id: z.uuid().optional(),
  run_id: z.uuid().optional(),
  state: z.enum(RECALL_CANDIDATE_STATES).optional(),
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

const VERDICT_ACTION = { accept: 'accept', reject: 'reject' } as const;

/**
 * The `recall` group (docs/recall.md): a more sensitive detector pass over a session that queues
 * what the first pass missed as review candidates, their verdicts, and the runs' progress.
 */
export function createRecallRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  const masks = createMaskStore(deps.storage);
  return new RouteGroup('recall')
    .post(
      '/api/recall/run/{session_id}',
      {
        summary:
          'Start a recall run over a session (202, Location: the run): the closed-set detector again, on the whole frame and its tiles with lower score floors, on the GPU slot; every detection no existing object covers becomes a candidate in review (source recall), one revertible AgentRun of kind recall (workflow recall-<session_id>)',
        access: 'reviewer',
        params: uuidParams('session_id'),
        body: { name: 'RecallRunIn', schema: RecallRunIn },
        successStatus: 202,
        statuses: {
          404: 'no such session',
          409: 'a recall run of the session is running, or the kill switch is engaged',
          422: 'the session is quarantined or has no frames, or the cost gate refuses',
          503: 'the workflow service does not answer',
        },
      },
      async ({ params, body, res, principal, req }) => {
        const actor = actorOf(principal, req);
        await assertWorkMayStart(db, 'corpus_run');
        const refused = await autolabelRefusal(db, params.session_id);
        if (refused?.status === 404) throw new NotFoundError(refused.reason);
        if (refused) throw new RefusedError(refused.reason);
        const runParams: RecallRunParams = {
          session_ids: [params.session_id],
          min_score: body.min_score ?? config.recall.minScore,
          tile_min_score: body.tile_min_score ?? config.recall.tileMinScore,
          match_iou: body.match_iou ?? config.recall.matchIou,
        };
        const workflowId = recallWorkflowId(params.session_id);
        const run = await queueAgentRun(db, RECALL_KIND, runParams, actor.userId, workflowId);
        const started = await startWorkflowFor(deps, res, {
          check: () => gateCorpusRun(deps, run, runParams.session_ids),
          workflow: recallWorkflow,
          workflowId,
          args: [
            {
              runId: run.id,
              gpuTaskQueue: config.temporal.gpuTaskQueue,
              heartbeatTimeoutSeconds: config.autolabel.heartbeatTimeoutSeconds,
              pageFrames: config.recall.pageFrames,
              after: null,
              tally: emptyRecallTally(),
            },
          ],
          location: `/api/agent/runs/${run.id}`,
          what: `a recall run of session ${params.session_id}`,
          forget: async () => {
            await forgetSpend(db, run.id);
            await db.agentRun.delete({ where: { id: run.id } });
          },
        });
        return announceRunStarted(deps, run, started, actor, { params: { ...runParams } });
      },
    )
    .get(
      '/api/recall/candidates',
      {
        summary:
          'Recall candidates (the objects recall runs queued), by id with a cursor: their box, class, score, state (pending, accepted, rejected, changed) and temporal support (neighbouring frames with an overlapping object of the class)',
        access: 'annotator',
        query: CandidatesQuery,
      },
      async ({ query }) => listRecallCandidates(db, query),
    )
    .post(
      '/api/recall/candidates/{candidate_id}/{verdict}',
      {
        summary:
          "A reviewer's verdict on a pending candidate, `accept` or `reject`: a review of its object (source becomes human, version + 1, the review record keeps what the recall run proposed)",
        access: 'reviewer',
        params: z.strictObject({ candidate_id: z.uuid(), verdict: z.enum(['accept', 'reject']) }),
        statuses: { 404: 'no such candidate', 409: 'the candidate was decided already' },
      },
      async ({ params, principal, req }) => {
        const [candidate] = (await listRecallCandidates(db, { candidate_id: params.candidate_id, limit: 1 }))
          .items;
        if (!candidate) throw new NotFoundError(`no recall candidate ${params.candidate_id}`);
        if (candidate.state !== 'pending')
          throw new ConflictError(`recall candidate ${candidate.candidate_id} is ${candidate.state} already`);
        await reviewObjects(
          db,
          masks,
          {
            objectIds: [candidate.object_id],
            action: VERDICT_ACTION[params.verdict],
            effect: {
              state: params.verdict === 'accept' ? 'accepted' : 'rejected',
              className: null,
              attrs: null,
              shape: null,
            },
            expectedVersions: { [candidate.object_id]: candidate.object.version },
            reviewer: principal.userId,
            timeSpentMs: 0,
            bulk: false,
          },
          actorOf(principal, req),
        );
        return (await listRecallCandidates(db, { candidate_id: candidate.candidate_id, limit: 1 })).items[0];
      },
    )
    .get(
      '/api/recall/progress',
      {
        summary:
          'Recall runs of a session (or all), newest first: frames done of the session, candidates by state and the yield (accepted among those decided)',
        access: 'annotator',
        query: z.strictObject({ session_id: z.uuid().optional() }),
      },
      async ({ query }) => recallProgress(db, query.session_id),
    );
}
