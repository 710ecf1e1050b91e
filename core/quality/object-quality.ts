/**
 * An object's quality score in [0, 1] (GET /api/objects/{object_id}/quality, docs/quality-measure.md):
 * how far the evidence on record lets one trust the object as a training label. Pure: the caller
 * gathers the evidence.
 *
 * The base is the strongest evidence there is, in this order:
 * 1. a person judged it wrong — a control verdict other than `correct`, or the object is
 *    `rejected` — base 0 (nothing below can lift it);
 * 2. it is in a sealed gold set, or its control verdict is `correct` — base 1;
 * 3. a person decided it — source `human` and state `accepted` — base HUMAN_ACCEPTED (0.95);
 * 4. a person drew or touched it and no decision is on record yet (source `human`, `imported`,
 *    any other state) — base HUMAN_PENDING (0.8);
 * 5. a machine proposal — its confidence, calibrated under the active calibration when there is
 *    one, times (1 + agreement) / 2 when its provenance says what share of the paths that ran
 *    proposed it (an object only one of two paths saw loses a quarter), times
 *    (1 - entropy / 2) floored at 0.5 when the paths disputed its class (entropy in bits); with no
 *    confidence at all, 0.5.
 *
 * Then each open error candidate naming the object multiplies by (1 - score / 2) (its detector
 * score clipped to [0, 1]), and each critic veto on its provenance by CRITIC_FACTOR (0.7):
 * doubts lower even a human object, but only a verdict zeroes it.
 */

export const HUMAN_ACCEPTED = 0.95;
export const HUMAN_PENDING = 0.8;
export const CRITIC_FACTOR = 0.7;
export const NO_CONF = 0.5;

export interface ObjectQualityEvidence {
  source: string;
  state: string;
  machine: boolean;
  conf: number | null;
  calibratedConf: number | null;
  agreement: number | null;
  entropy: number | null;
  criticVetoes: readonly string[];
  controlVerdict: string | null;
  goldSets: number;
  openErrorScores: readonly number[];
}

export type QualityBasis =
  | 'judged_wrong'
  | 'gold'
  | 'control_correct'
  | 'human_accepted'
  | 'human_pending'
  | 'machine_confidence'
  | 'machine_no_confidence';

export interface ObjectQualityScore {
  score: number;
  basis: QualityBasis;
  base: number;
  /** Each factor applied after the base, with why. */
  factors: Array<{ reason: string; factor: number }>;
}

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

export function objectQualityScore(e: ObjectQualityEvidence): ObjectQualityScore {
  const factors: ObjectQualityScore['factors'] = [];
  let basis: QualityBasis;
  let base: number;
  if ((e.controlVerdict !== null && e.controlVerdict !== 'correct') || e.state === 'rejected') {
    return { score: 0, basis: 'judged_wrong', base: 0, factors };
  }
  if (e.goldSets > 0) [basis, base] = ['gold', 1];
  else if (e.controlVerdict === 'correct') [basis, base] = ['control_correct', 1];
  else if (!e.machine && e.source === 'human' && e.state === 'accepted')
    [basis, base] = ['human_accepted', HUMAN_ACCEPTED];
  else if (!e.machine) [basis, base] = ['human_pending', HUMAN_PENDING];
  else {
    const conf = e.calibratedConf ?? e.conf;
    if (conf === null) [basis, base] = ['machine_no_confidence', NO_CONF];
    else {
      [basis, base] = ['machine_confidence', clamp01(conf)];
      if (e.agreement !== null) {
        const f = (1 + clamp01(e.agreement)) / 2;
        if (f < 1)
          factors.push({ reason: `agreement ${e.agreement.toFixed(2)} of the paths that ran`, factor: f });
      }
      if (e.entropy !== null && e.entropy > 0) {
        factors.push({
          reason: `the paths disputed the class (entropy ${e.entropy.toFixed(2)} bits)`,
          factor: Math.max(0.5, 1 - e.entropy / 2),
        });
      }
    }
  }
  for (const s of e.openErrorScores)
    factors.push({
      reason: `open error candidate (score ${clamp01(s).toFixed(2)})`,
      factor: 1 - clamp01(s) / 2,
    });
  for (const check of e.criticVetoes)
    factors.push({ reason: `critic veto: ${check}`, factor: CRITIC_FACTOR });
  const score = clamp01(factors.reduce((acc, f) => acc * f.factor, base));
  return { score, basis, base, factors };
}

/** Critic checks that vetoed the object, from its provenance's quality flags (`critic:<check>`). */
export function criticVetoesOf(qualityFlags: unknown): string[] {
  if (!Array.isArray(qualityFlags)) return [];
  return qualityFlags
    .filter((f): f is string => typeof f === 'string' && f.startsWith('critic:'))
    .map((f) => f.slice('critic:'.length));
}
