import { NotFoundError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { MATCH_IOU } from '../../core/metrics/mot';
import { TRACKER_VERSION, type TrackerSettings } from '../../core/tracking';
import { scoreRunTracking, type GroundTruthBox, type RunBox } from '../../core/tracking/run-eval';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { loadPredictions, usableRun } from '../evalgov/scope';
import { recordOperation } from '../quality/operations';
import { requireSession } from '../sessions';

export const TRACKING_EVAL_OP = 'tracking';

export interface TrackingEvalInput {
  session_id: string;
  run_id: string;
  settings: TrackerSettings;
  class_name: string | null;
}

/**
 * POST /api/eval/tracking (docs/tracks.md "Tracking metrics"): an inference run's boxes on one
 * session, tracked as the platform tracks, scored against the session's human tracks — people's
 * boxes (source `human`, not rejected) grouped by the track a person's edits left them in. Refused
 * by name when the session has no human track or the run no box on it; recorded as an eval
 * operation `tracking`.
 */
export async function evaluateRunTracking(db: Db, input: TrackingEvalInput, actor: Actor) {
  await requireSession(db, input.session_id);
  const run = await usableRun(db, input.run_id);
  const classFilter = input.class_name
    ? await db.ontologyClass.findFirst({ where: { name: input.class_name }, select: { id: true } })
    : null;
  if (input.class_name && !classFilter) throw new NotFoundError(`no ontology class ${input.class_name}`);

  const frames = await db.frame.findMany({
    where: { sessionId: input.session_id },
    orderBy: { index: 'asc' },
    select: { id: true, index: true, timestampMs: true },
  });
  const indexOf = new Map(frames.map((f) => [f.id, f.index]));
  const human = await db.annoObject.findMany({
    where: {
      frame: { sessionId: input.session_id },
      source: 'human',
      state: { not: 'rejected' },
      trackId: { not: null },
      ...(classFilter ? { classId: classFilter.id } : {}),
    },
    select: { frameId: true, trackId: true, bbox: true },
  });
  const groundTruth: GroundTruthBox[] = human
    .filter((o) => o.bbox.length === 4)
    .map((o) => ({ frameIndex: indexOf.get(o.frameId)!, trackId: o.trackId!, box: o.bbox as Box }));
  const scope = `session ${input.session_id}${input.class_name ? ` (class ${input.class_name})` : ''}`;
  if (!groundTruth.length)
    throw new RefusedError(
      `${scope} has no human tracks: tracking is scored against people's boxes in tracks (source human), and it has none`,
      { reason: 'track_ground_truth_unavailable' },
    );

  const classes = new Map(
    (await db.ontologyClass.findMany({ select: { id: true, name: true } })).map((c) => [c.id, c.name]),
  );
  const predictions = (await loadPredictions(db, run, [...indexOf.keys()])).filter(
    (p) => !classFilter || p.class_id === classFilter.id,
  );
  if (!predictions.length)
    throw new RefusedError(`run ${run.id} has no boxes on ${scope}`, { reason: 'run_has_no_boxes_here' });
  const runBoxes: RunBox[] = predictions.map((p, i) => ({
    predictionId: `p${i}`,
    frameIndex: indexOf.get(p.frame_id)!,
    box: p.bbox,
    score: p.conf,
    className: classes.get(p.class_id) ?? String(p.class_id),
  }));
  const score = scoreRunTracking(
    frames.map((f) => ({ frameId: f.id, index: f.index, tsMs: f.timestampMs })),
    groundTruth,
    runBoxes,
    input.settings,
  );
  const params = {
    session_id: input.session_id,
    run_id: run.id,
    model_version: run.modelVersion,
    class_name: input.class_name,
    tracker_version: TRACKER_VERSION,
    settings: input.settings,
    match_iou: MATCH_IOU,
  };
  const result = {
    frames: frames.length,
    gt_tracks: score.gt_tracks,
    hypothesis_tracks: score.hypothesis_tracks,
    tracker_switch_flags: score.tracker_switch_flags,
    ...score.evaluation,
  };
  const op = await recordOperation(db, {
    opType: TRACKING_EVAL_OP,
    subjectIds: [input.session_id, run.id],
    params,
    result,
    actor,
  });
  return { operation_id: op.id, ...params, ...result };
}
