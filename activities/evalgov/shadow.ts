import { InputError, NotFoundError, RefusedError } from '../../core/errors';
import { triageShadow, type ShadowBox } from '../../core/evalgov';
import type { Box } from '../../core/geometry';
import type { InferenceRun } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { recordOperation } from '../quality/operations';
import { EVAL_MAX_PREDICTIONS, ontologyRows, usableRun } from './scope';

export const SHADOW_OP = 'shadow_triage';

export interface ShadowInput {
  champion_run_id: string;
  challenger_run_id: string;
  frame_ids?: string[] | undefined;
  iou_thr: number;
  conf_thr: number;
  limit: number;
  per_frame: number;
}

async function runBoxes(db: Db, run: InferenceRun, frameIds: string[] | undefined): Promise<ShadowBox[]> {
  const where = { runId: run.id, ...(frameIds ? { frameId: { in: frameIds } } : {}) };
  const n = await db.prediction.count({ where });
  if (n > EVAL_MAX_PREDICTIONS)
    throw new RefusedError(
      `run ${run.id} has ${n} predictions on these frames; one triage reads at most ${EVAL_MAX_PREDICTIONS} (name frame_ids)`,
      { reason: 'too_many_predictions', predictions: n, max: EVAL_MAX_PREDICTIONS },
    );
  const rows = await db.prediction.findMany({
    where,
    select: { id: true, frameId: true, classId: true, conf: true, bbox: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((p) => ({
    id: p.id,
    frame_id: p.frameId,
    class_id: p.classId,
    conf: p.conf ?? 0,
    bbox: p.bbox as Box,
  }));
}

/**
 * A challenger (shadow) run against the champion (production) run on the same frames, no gold
 * needed: frames ranked by disagreement for human triage (core/evalgov/shadow). The frames are
 * `frame_ids` when named (each must exist), else every frame either run predicted on — an imported
 * run records only frames it has predictions on, so a frame neither run saw anything on cannot
 * disagree and is not listed. Both runs must be completed and carry confidences (a reconstructed
 * run is refused by name: "confident" means nothing without them).
 */
export async function shadowTriage(db: Db, input: ShadowInput, actor: Actor) {
  if (input.champion_run_id === input.challenger_run_id)
    throw new InputError('the champion and the challenger are the same run', [
      { field: 'body.challenger_run_id', message: 'must differ from champion_run_id' },
    ]);
  const champion = await usableRun(db, input.champion_run_id, 'champion_run_id');
  const challenger = await usableRun(db, input.challenger_run_id, 'challenger_run_id');
  const named = input.frame_ids ? [...new Set(input.frame_ids)] : undefined;
  const [a, b] = await Promise.all([runBoxes(db, champion, named), runBoxes(db, challenger, named)]);
  const candidates = named ?? [...new Set([...a, ...b].map((p) => p.frame_id))];
  const frames = await db.frame.findMany({
    where: { id: { in: candidates } },
    select: { id: true, sessionId: true, index: true },
    orderBy: [{ sessionId: 'asc' }, { index: 'asc' }, { id: 'asc' }],
  });
  if (named) {
    const found = new Set(frames.map((f) => f.id));
    const missing = named.filter((id) => !found.has(id));
    if (missing.length)
      throw new NotFoundError(`${missing.length} frame(s) do not exist`, { missing: missing.slice(0, 50) });
  }
  const triage = triageShadow(
    a,
    b,
    frames.map((f) => f.id),
    { iouThr: input.iou_thr, confThr: input.conf_thr, limit: input.limit, perFrame: input.per_frame },
  );
  const names = new Map((await ontologyRows(db)).map((o) => [o.id, o.name]));
  const where = new Map(frames.map((f) => [f.id, f]));
  const show = (p: ShadowBox | null) =>
    p && {
      prediction_id: p.id,
      class_id: p.class_id,
      class_name: names.get(p.class_id) ?? null,
      conf: p.conf,
      bbox: p.bbox,
    };
  const result = {
    ...triage,
    frames: triage.frames.map((f) => ({
      frame_id: f.frame_id,
      session_id: where.get(f.frame_id)?.sessionId ?? null,
      frame_index: where.get(f.frame_id)?.index ?? null,
      score: f.score,
      disagreements: f.disagreements,
      by_kind: f.by_kind,
      items: f.items.map((d) => ({
        kind: d.kind,
        weight: d.weight,
        iou: d.iou,
        champion: show(d.champion),
        challenger: show(d.challenger),
      })),
    })),
  };
  const params = {
    champion_run_id: champion.id,
    challenger_run_id: challenger.id,
    champion_model: champion.modelVersion,
    challenger_model: challenger.modelVersion,
    frames_named: named?.length ?? null,
    iou_thr: input.iou_thr,
    conf_thr: input.conf_thr,
    limit: input.limit,
    per_frame: input.per_frame,
  };
  const op = await recordOperation(db, {
    opType: SHADOW_OP,
    subjectIds: [champion.id, challenger.id, champion.modelVersion, challenger.modelVersion],
    params,
    result,
    actor,
  });
  return { operation_id: op.id, ...params, ...result };
}
