/**
 * A training job's progress as the training activity records it after every epoch, and as the
 * routes show it (docs/training.md): where it is, how long an epoch takes, when it should end, and
 * its best epoch so far.
 */
export interface TrainingProgress {
  epoch: number;
  epochs: number;
  train_loss: number;
  val_loss: number | null;
  map50: number | null;
  best_epoch: number | null;
  best_map50: number | null;
  /** Mean seconds per epoch over the current attempt's recent epochs. */
  epoch_seconds: number | null;
  eta_seconds: number | null;
  /** The epoch the current attempt resumed after (0: it started from the parent). */
  resumed_from: number;
  attempt: number;
  updated_at: string;
}

/** How many recent epochs the pace is averaged over: recent enough to follow a slowing machine. */
const PACE_WINDOW = 5;

/**
 * Seconds per epoch and seconds left, from the instants (ms) this attempt began and finished each
 * epoch so far: `marks[0]` is the attempt's first epoch's start, then one mark per finished epoch.
 * Null until an epoch has finished in this attempt.
 */
export function pace(
  marks: readonly number[],
  epochsLeft: number,
): { epoch_seconds: number | null; eta_seconds: number | null } {
  if (marks.length < 2) return { epoch_seconds: null, eta_seconds: null };
  const recent = marks.slice(-(PACE_WINDOW + 1));
  const epochSeconds = (recent.at(-1)! - recent[0]!) / 1000 / (recent.length - 1);
  return { epoch_seconds: epochSeconds, eta_seconds: Math.max(0, epochsLeft) * epochSeconds };
}

/** The best epoch so far by validation mAP@0.5 (the earlier epoch on a tie). */
export function bestEpoch(
  previous: { best_epoch?: number | null; best_map50?: number | null } | null,
  epoch: number,
  map50: number | null,
): { best_epoch: number | null; best_map50: number | null } {
  const kept = { best_epoch: previous?.best_epoch ?? null, best_map50: previous?.best_map50 ?? null };
  if (map50 === null || !Number.isFinite(map50)) return kept;
  if (kept.best_map50 !== null && kept.best_map50 >= map50) return kept;
  return { best_epoch: epoch, best_map50: map50 };
}
