/**
 * The control sample (spec "What the service does" 6, Limits): 2% of auto-accepted objects are
 * mirrored to human review, and their verdicts measure auto-accept precision.
 *
 * Selection is a seeded hash of a stable key of the object, not a random draw, so the same seed
 * over the same objects always picks the same controls (re-running a seed is reproducible and adds
 * nothing twice). Precision is Laplace-smoothed, (correct + 1) / (reviewed + 2), and reported only
 * from MIN_CONTROL_SAMPLE reviewed controls up — overall and for each critic check that ran on the
 * controlled objects; below that it is "not yet measurable" and says how many controls await review.
 */
export const CONTROL_RATE = 0.02;
export const MIN_CONTROL_SAMPLE = 25;

/** Human verdicts on a control: `correct`, or the way the auto-accept was wrong. */
export const CONTROL_VERDICTS = ['correct', 'wrong_class', 'bad_box', 'false_positive'] as const;
export type ControlVerdict = (typeof CONTROL_VERDICTS)[number];

/** A uniform draw in [0, 1) from (seed, key): FNV-1a over the text, then a murmur3 finaliser. */
export function controlDraw(seed: number, key: string): number {
  let h = 0x811c9dc5;
  const text = `${seed}:${key}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

export const isControlSample = (seed: number, key: string, rate: number = CONTROL_RATE): boolean =>
  controlDraw(seed, key) < rate;

export const laplacePrecision = (correct: number, reviewed: number): number => (correct + 1) / (reviewed + 2);

export interface ControlRecord {
  verdict: string | null;
  /** Critic checks that ran on the object (and passed: it stayed an auto-accept). */
  checks: readonly string[];
}

export interface PrecisionFigure {
  status: 'measured' | 'not_yet_measurable';
  reviewed: number;
  correct: number;
  pending: number;
  /** Laplace-smoothed; null while not measurable. */
  precision: number | null;
  /** Why it is not measurable yet. */
  reason: string | null;
}

function figure(records: readonly ControlRecord[]): PrecisionFigure {
  const reviewed = records.filter((r) => r.verdict !== null);
  const correct = reviewed.filter((r) => r.verdict === 'correct').length;
  const pending = records.length - reviewed.length;
  if (reviewed.length < MIN_CONTROL_SAMPLE) {
    const waiting = pending ? `; ${pending} control${pending === 1 ? '' : 's'} await review` : '';
    return {
      status: 'not_yet_measurable',
      reviewed: reviewed.length,
      correct,
      pending,
      precision: null,
      reason: `not yet measurable: ${reviewed.length} of the ${MIN_CONTROL_SAMPLE} reviewed controls needed${waiting}`,
    };
  }
  return {
    status: 'measured',
    reviewed: reviewed.length,
    correct,
    pending,
    precision: laplacePrecision(correct, reviewed.length),
    reason: null,
  };
}

export function precisionReport(
  records: readonly ControlRecord[],
  checks: readonly string[],
): PrecisionFigure & { by_check: Record<string, PrecisionFigure> } {
  return {
    ...figure(records),
    by_check: Object.fromEntries(checks.map((c) => [c, figure(records.filter((r) => r.checks.includes(c)))])),
  };
}
