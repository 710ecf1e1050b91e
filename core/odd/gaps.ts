import type { OddAttribute } from './attributes';

/**
 * Gaps against a target ODD (docs/odd-coverage.md). A requirement asks for a value of an attribute
 * to hold at least `min_frames` frames and/or at least `min_share` of the frames in scope. The
 * frames short are the frames carrying the value that would have to be added for every bound to
 * hold: for a share s, adding x such frames to n of N gives (n + x) / (N + x) ≥ s, so
 * x = ⌈(s·N − n) / (1 − s)⌉ (a share below 1, so x is finite).
 */

export interface OddRequirement {
  attribute: OddAttribute;
  value: string;
  min_frames?: number;
  min_share?: number;
}

export interface OddRequirementResult {
  attribute: OddAttribute;
  value: string;
  frames: number;
  share: number;
  min_frames: number | null;
  min_share: number | null;
  /** `missing`: no frame carries the value; `under`: some do, not enough; `met`. */
  status: 'met' | 'under' | 'missing';
  frames_short: number;
  /** How far the share is below min_share (0 when met or not asked). */
  share_short: number;
  /** The bound that needs the most frames: `min_frames` or `min_share`; null when met. */
  binding: 'min_frames' | 'min_share' | null;
}

/** Rounding noise of s·N (0.1 × 30 is 3.0000000000000004) must not cost a frame. */
const EPS = 1e-9;

export function framesShortForShare(frames: number, total: number, share: number): number {
  if (share >= 1) throw new Error('a share bound must be below 1');
  return Math.max(0, Math.ceil((share * total - frames) / (1 - share) - EPS));
}

export function evaluateRequirement(
  req: OddRequirement,
  frames: number,
  total: number,
): OddRequirementResult {
  const share = total ? frames / total : 0;
  const byFrames = req.min_frames === undefined ? 0 : Math.max(0, req.min_frames - frames);
  const byShare = req.min_share === undefined ? 0 : framesShortForShare(frames, total, req.min_share);
  const short = Math.max(byFrames, byShare);
  return {
    attribute: req.attribute,
    value: req.value,
    frames,
    share,
    min_frames: req.min_frames ?? null,
    min_share: req.min_share ?? null,
    status: short === 0 ? 'met' : frames === 0 ? 'missing' : 'under',
    frames_short: short,
    share_short: req.min_share === undefined ? 0 : Math.max(0, req.min_share - share),
    binding: short === 0 ? null : byShare > byFrames ? 'min_share' : 'min_frames',
  };
}

/** Every requirement evaluated; `counts` holds frames per `attribute` and value. */
export function oddGaps(
  requirements: readonly OddRequirement[],
  counts: ReadonlyMap<string, number>,
  total: number,
): { requirements: OddRequirementResult[]; gaps: OddRequirementResult[]; frames_short: number } {
  const results = requirements.map((r) =>
    evaluateRequirement(r, counts.get(`${r.attribute}=${r.value}`) ?? 0, total),
  );
  // Largest shortfall first: where the target is furthest away.
  const gaps = results
    .filter((r) => r.status !== 'met')
    .sort(
      (a, b) =>
        b.frames_short - a.frames_short ||
        `${a.attribute}=${a.value}`.localeCompare(`${b.attribute}=${b.value}`),
    );
  return { requirements: results, gaps, frames_short: gaps.reduce((s, g) => s + g.frames_short, 0) };
}
