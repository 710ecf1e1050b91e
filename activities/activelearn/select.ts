import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { normaliseWeights, type Weights } from '../../core/activelearn/score';
import { selectionPicks, type BatchPick, type SelectionPool } from '../../core/activelearn/select';
import type { AppConfig } from '../../core/config';
import type { EmbeddingModelName } from '../../core/curation/embedding';
import { RefusedError } from '../../core/errors';
import { blockedSentence } from '../../core/govern/consent';
import type { Actor } from '../annotations/objects';
import { checkPredicate, checkSessions } from '../curation/slice-query';
import { prismaSql } from '../export/sql';
import { excludeBlockedSessions } from '../govern/consent';
import type { Db } from '../db';
import { saveBatch } from './batches';
import { predicateOf, readPool, type PoolScope } from './pool';

/**
 * Up to `budget` picks of the pool (core/activelearn/select.ts), letting other requests in between
 * picks: each pick is one pass over the candidates' embeddings.
 */
export async function pickBatch(pool: SelectionPool, budget: number): Promise<BatchPick[]> {
  const picks: BatchPick[] = [];
  for (const pick of selectionPicks(pool)) {
    picks.push(pick);
    if (picks.length >= budget) break;
    await yieldToOthers();
  }
  return picks;
}

/** What a selection is asked (the API's ActiveLearnSelectIn once parsed; a campaign asks the same). */
export interface SelectRequest {
  budget: number;
  session_ids?: string[] | undefined;
  classes?: string[] | undefined;
  weights: Weights;
  threshold: number | null;
  model: EmbeddingModelName;
  route_to_review: boolean;
}

/** The pool of a scope, scored with these weights from this threshold (null: the auto-accept threshold). */
export async function scoredPool(
  deps: { db: Db; config: AppConfig },
  scope: PoolScope,
  weights: Weights,
  threshold: number | null,
  picks: number,
) {
  const used = normaliseWeights(weights);
  const pool = await readPool(deps.db, scope, picks, used.diversity > 0);
  const selection: SelectionPool = {
    frames: pool.frames,
    counts: pool.counts,
    threshold: threshold ?? deps.config.autolabel.autoAcceptConf,
    weights: used,
  };
  return { pool, selection };
}

/**
 * Picks and saves the next batch (POST /api/activelearn/select, and each campaign iteration):
 * candidates are frames with machine-made objects in scope that no earlier batch picked; none left
 * is a refusal. Routing to review happens in the batch's transaction (saveBatch).
 */
export async function selectBatch(
  deps: { db: Db; config: AppConfig },
  request: SelectRequest,
  actor: Pick<Actor, 'userId' | 'requestId'>,
) {
  const { db } = deps;
  await checkSessions(db, request.session_ids, 'body.session_ids');
  if (request.classes) await checkPredicate(db, { classes: request.classes }, 'body');
  const scope: PoolScope = {
    sessionIds: request.session_ids ?? null,
    classes: request.classes ?? null,
    frameIds: null,
    excludeBatched: true,
    model: request.model,
  };
  // Frames of sessions whose consent blocks a selection never reach reviewers (docs/consent.md).
  const consent = await excludeBlockedSessions(prismaSql(db), deps.config.consent, predicateOf(scope));
  const { pool, selection } = await scoredPool(
    deps,
    { ...scope, excludeSessionIds: consent.predicate.exclude_session_ids },
    request.weights,
    request.threshold,
    request.budget,
  );
  const picks = await pickBatch(selection, request.budget);
  if (!picks.length)
    throw new RefusedError(
      `no candidate frame in scope: every frame of it has only human-verified objects, or an earlier batch picked it${consent.excluded.length ? `, once ${blockedSentence('campaigns', consent.excluded)}` : ''}`,
      { candidates: 0, consent_excluded: consent.excluded },
    );
  const saved = await saveBatch(
    db,
    {
      request: { ...request, threshold: selection.threshold },
      weights: selection.weights,
      threshold: selection.threshold,
      routeToReview: request.route_to_review,
      picks,
      pool,
    },
    actor,
  );
  return { saved, picks, consentExcluded: consent.excluded };
}
