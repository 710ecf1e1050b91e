import { minCostAssignment } from '../../tracking/assignment';
import { isMatch } from './clear';
import type { MotSequence } from './sequence';

/** Identity measures (Ristani et al. 2016), as py-motmetrics computes them. */
export interface IdentityScores {
  /** 2 IDTP / (ground-truth boxes + hypothesis boxes); null when both are empty. */
  idf1: number | null;
  /** IDTP / hypothesis boxes; null without hypotheses. */
  idp: number | null;
  /** IDTP / ground-truth boxes; null without ground truth. */
  idr: number | null;
  idtp: number;
  idfp: number;
  idfn: number;
}

const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

/**
 * The one-to-one pairing of whole ground-truth and hypothesis tracks that maximises the frames on
 * which the pair overlaps enough (IDTP); its value is unique even where the pairing is not.
 */
export function identityScores(seq: MotSequence): IdentityScores {
  const together = seq.gtIds.map(() => seq.hypIds.map(() => 0));
  for (const f of seq.frames)
    f.gt.forEach((g, i) =>
      f.hyp.forEach((h, j) => {
        if (isMatch(f.iou[i]![j]!)) together[g]![h]!++;
      }),
    );
  const idtp = minCostAssignment(together.map((row) => row.map((n) => -n))).reduce(
    (sum, [g, h]) => sum + together[g]![h]!,
    0,
  );
  return {
    idf1: ratio(2 * idtp, seq.gtBoxes + seq.hypBoxes),
    idp: ratio(idtp, seq.hypBoxes),
    idr: ratio(idtp, seq.gtBoxes),
    idtp,
    idfp: seq.hypBoxes - idtp,
    idfn: seq.gtBoxes - idtp,
  };
}
