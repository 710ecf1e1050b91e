import { type ClearMot, clearMot } from './clear';
import { type HotaScores, hotaScores } from './hota';
import { type IdentityScores, identityScores } from './identity';
import { buildSequence, type MotBox } from './sequence';

/** Every tracking metric of one sequence: CLEAR MOT, identity and HOTA. */
export interface MotEvaluation {
  clear: ClearMot;
  identity: IdentityScores;
  hota: HotaScores;
}

/**
 * Scores hypothesis tracks against ground-truth tracks of one sequence (one camera, frames in
 * order). The numbers equal py-motmetrics' (CLEAR, identity) and TrackEval's (HOTA) on the
 * committed fixtures (tools/reference/mot_reference.py, docs/tracks.md).
 */
export function evaluateMot(gt: readonly MotBox[], hyp: readonly MotBox[]): MotEvaluation {
  const seq = buildSequence(gt, hyp);
  return { clear: clearMot(seq), identity: identityScores(seq), hota: hotaScores(seq) };
}
