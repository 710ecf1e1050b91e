import { batchOut, framePlaces, listBatches } from '../../../activities/activelearn/batches';
import { loopState, planRetrain, recordRetrain } from '../../../activities/activelearn/loop';
import { POOL_MAX_FRAMES } from '../../../activities/activelearn/pool';
import { scoredPool, selectBatch } from '../../../activities/activelearn/select';
import { checkSessions } from '../../../activities/curation/slice-query';
import { RETRAIN_MIN_NEW_FRAMES } from '../../../core/activelearn/loop';
import { DEFAULT_WEIGHTS } from '../../../core/activelearn/score';
import { scoreFrames } from '../../../core/activelearn/select';
import { NotFoundError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startTrainingJob } from '../../http/training-start';
import {
  ActiveLearnBatchesQuery,
  ActiveLearnRetrainIn,
  ActiveLearnScoreQuery,
  ActiveLearnSelectIn,
  SELECT_MAX_BUDGET,
} from './validators';

const METHOD =
  'score = w_u·uncertainty + w_r·rarity + w_d·diversity (weights scaled to sum to 1), picked greedily; diversity is the embedding distance to the nearest earlier pick over the farthest candidate’s (k-center greedy), 0 without an embedding; ties by frame id';

/** The `activelearn` group (docs/activelearn.md): selection, scores, batches and the retrain loop. */
export function createActiveLearnRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('activelearn')
    .post(
      '/api/activelearn/select',
      {
        summary: `Pick the next frames to label from the candidates (frames with machine-made objects, none in an earlier batch) by uncertainty, class rarity and embedding diversity, each pick with its explained score; saved as a batch (201), optionally routed to review. At most ${SELECT_MAX_BUDGET} picks from ${POOL_MAX_FRAMES} candidates`,
        access: 'reviewer',
        body: { name: 'ActiveLearnSelectIn', schema: ActiveLearnSelectIn },
        successStatus: 201,
        statuses: {
          404: 'a session of session_ids does not exist',
          409: 'another batch picked some of these frames meanwhile',
          422: 'an unknown class, no candidate frame in scope, or more candidates than one request may score',
        },
      },
      async ({ body, principal, req }) => {
        const { saved, picks, consentExcluded } = await selectBatch(deps, body, actorOf(principal, req));
        return {
          ...batchOut(
            saved,
            await framePlaces(
              db,
              picks.map((p) => p.frame_id),
            ),
          ),
          method: METHOD,
          consent_excluded: consentExcluded,
        };
      },
    )
    .get(
      '/api/activelearn/score',
      {
        summary:
          "Scores of frames (frame_ids, or a session's candidates) as a selection's first pick sees them, best first, with each part, its weight and contribution; nothing is saved. Frames without a machine-made object are listed apart",
        access: 'annotator',
        query: ActiveLearnScoreQuery,
        statuses: {
          404: 'a frame of frame_ids or the session does not exist',
          422: 'more candidates than one request may score',
        },
      },
      async ({ query }) => {
        if (query.session_id) await checkSessions(db, [query.session_id], 'query.session_id');
        const named = query.frame_ids ? [...new Set(query.frame_ids)] : null;
        if (named) {
          const found = new Set(
            (await db.frame.findMany({ where: { id: { in: named } }, select: { id: true } })).map(
              (f) => f.id,
            ),
          );
          const missing = named.filter((id) => !found.has(id));
          if (missing.length)
            throw new NotFoundError(`no frame ${missing.join(', ')}`, { missing_frame_ids: missing });
        }
        const { pool, selection } = await scoredPool(
          deps,
          {
            sessionIds: query.session_id ? [query.session_id] : null,
            classes: null,
            frameIds: named,
            excludeBatched: false,
            model: query.model,
          },
          query.weights ?? DEFAULT_WEIGHTS,
          query.threshold ?? null,
          1,
        );
        const scores = scoreFrames(selection);
        const shown = scores.slice(0, query.limit);
        const places = await framePlaces(
          db,
          shown.map((s) => s.frame_id),
        );
        const scored = new Set(scores.map((s) => s.frame_id));
        return {
          method: METHOD,
          weights: selection.weights,
          threshold: selection.threshold,
          frames_scored: scores.length,
          candidates_without_embedding: pool.unembedded,
          items: shown.map((s) => ({ ...s, ...places.get(s.frame_id) })),
          not_candidates: (named ?? [])
            .filter((id) => !scored.has(id))
            .map((frame_id) => ({
              frame_id,
              reason: 'no machine-made object: nothing on it awaits a label',
            })),
        };
      },
    )
    .get(
      '/api/activelearn/batches',
      {
        summary:
          'Saved batches, newest first, each with its request, weights and picks (explained scores); paged by next_cursor',
        access: 'annotator',
        query: ActiveLearnBatchesQuery,
      },
      async ({ query }) => listBatches(db, query),
    )
    .get(
      '/api/activelearn/loop',
      {
        summary: `The loop: each batch with its frames and objects decided by review since it was made, the labels new since the last retrain, the current champion, and whether a retrain is due (none running, and ${RETRAIN_MIN_NEW_FRAMES} newly decided frames or a whole batch decided)`,
        access: 'annotator',
      },
      async () => loopState(deps),
    )
    .post(
      '/api/activelearn/loop/retrain',
      {
        summary:
          'Train a challenger on the newly labelled frames through the training start (202, Location /api/training/{job_id}): the commit named, else the newest, must hold batch frames decided since the last retrain, exported after their review; the parent defaults to the champion',
        access: 'reviewer',
        body: { name: 'ActiveLearnRetrainIn', schema: ActiveLearnRetrainIn },
        successStatus: 202,
        statuses: {
          404: 'no such dataset commit or parent model',
          409: 'a retrain the loop started is still running, or the kill switch is engaged',
          422: 'nothing new is labelled, no commit holds the new labels, or a refusal of the training start',
          503: 'the shipped detector (the default parent) is not there',
        },
      },
      async ({ body, principal, req, res }) => {
        const plan = await planRetrain(db, body.dataset_commit_id);
        const started = await startTrainingJob(
          deps,
          {
            ...body,
            dataset_commit_id: plan.commit.commitId,
            name: body.name ?? `activelearn retrain on ${plan.frameIds.length} newly labelled frames`,
          },
          { userId: principal.userId, requestId: String(req.id) },
          res,
          { beforeStart: (job) => recordRetrain(db, { jobId: job.id, plan, actorId: principal.userId }) },
        );
        return { ...started, labelled_frames: plan.frameIds.length, labelled_frame_ids: plan.frameIds };
      },
    );
}
