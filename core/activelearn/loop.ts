/**
 * The active-learning loop's bookkeeping (docs/activelearn.md): when a retrain is due, and which
 * frames a dataset commit holds.
 */

/** Newly decided batch frames that make a retrain due even while a batch is still open. */
export const RETRAIN_MIN_NEW_FRAMES = 20;

export interface LoopCounts {
  /** A retrain the loop started is queued or running. */
  runningJobId: string | null;
  /** Batch frames decided since the last retrain (all of them before the first). */
  newFrames: number;
  /** Batches made since the last retrain, and how many of them are fully decided. */
  batchesSince: number;
  batchesDecidedSince: number;
}

export interface RetrainVerdict {
  due: boolean;
  reason: string;
}

/**
 * A retrain is due when none runs and new labels are there: RETRAIN_MIN_NEW_FRAMES newly decided
 * frames, or a whole batch made since the last retrain decided (a small batch need not wait for
 * the next one). Anything less waits: a challenger trained on a handful of new frames measures noise.
 */
export function retrainDue(c: LoopCounts): RetrainVerdict {
  if (c.runningJobId) return { due: false, reason: `a retrain is running (training job ${c.runningJobId})` };
  if (c.newFrames === 0)
    return {
      due: false,
      reason: 'nothing new is labelled: no batch frame was decided since the last retrain',
    };
  if (c.newFrames >= RETRAIN_MIN_NEW_FRAMES)
    return {
      due: true,
      reason: `${c.newFrames} batch frames decided since the last retrain (due from ${RETRAIN_MIN_NEW_FRAMES})`,
    };
  if (c.batchesDecidedSince > 0)
    return {
      due: true,
      reason: `${c.batchesDecidedSince} of ${c.batchesSince} batches since the last retrain fully decided (${c.newFrames} frames)`,
    };
  return {
    due: false,
    reason: `${c.newFrames} batch frames decided since the last retrain: due at ${RETRAIN_MIN_NEW_FRAMES}, or when a batch is fully decided`,
  };
}

const IMAGE_PATH = /^images\/[^/]+\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jpg$/;

/** The frames a commit holds, from its image paths (`images/<split>/<frame_id>.jpg`, as exports write them). */
export function commitFrameIds(paths: Iterable<string>): Set<string> {
  const ids = new Set<string>();
  for (const p of paths) {
    const m = IMAGE_PATH.exec(p);
    if (m) ids.add(m[1]!);
  }
  return ids;
}
