import { exposureFromLuma, type ExposureStats } from '../health';

/**
 * The ingest quality gate: blur (variance of the Laplacian), exposure (mean luminance and the share
 * of clipped pixels) and size. Metrics are measured on a grey copy scaled to QUALITY_WIDTH pixels,
 * so thresholds do not depend on the drive's resolution.
 */

export const QUALITY_WIDTH = 320;

/** Exposure as the session-health inspector measures it (core/health), plus sharpness. */
export interface QualityMetrics extends ExposureStats {
  laplacianVariance: number;
}

export interface QualityThresholds {
  blurMinLaplacianVariance: number;
  exposureMinMean: number;
  exposureMaxMean: number;
  exposureMaxClippedFraction: number;
  minWidth: number;
  minHeight: number;
}

export const REJECTION_REASONS = ['too_small', 'underexposed', 'overexposed', 'blur'] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export function measureQuality(gray: Uint8Array, width: number, height: number): QualityMetrics {
  if (gray.length !== width * height)
    throw new Error(`measureQuality: ${gray.length} pixels for ${width}×${height}`);
  // 4-neighbour Laplacian over the interior.
  let lapSum = 0;
  let lapSq = 0;
  let n = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const lap = gray[i - width]! + gray[i + width]! + gray[i - 1]! + gray[i + 1]! - 4 * gray[i]!;
      lapSum += lap;
      lapSq += lap * lap;
      n++;
    }
  }
  const lapMean = n ? lapSum / n : 0;
  return { ...exposureFromLuma(gray), laplacianVariance: n ? lapSq / n - lapMean * lapMean : 0 };
}

/** The failing checks, most fundamental first; empty when the frame passes. */
export function judgeQuality(
  m: QualityMetrics & { width: number; height: number },
  t: QualityThresholds,
): RejectionReason[] {
  const reasons: RejectionReason[] = [];
  if (m.width < t.minWidth || m.height < t.minHeight) reasons.push('too_small');
  if (m.meanLuma < t.exposureMinMean || m.clippedDark > t.exposureMaxClippedFraction)
    reasons.push('underexposed');
  if (m.meanLuma > t.exposureMaxMean || m.clippedBright > t.exposureMaxClippedFraction)
    reasons.push('overexposed');
  if (m.laplacianVariance < t.blurMinLaplacianVariance) reasons.push('blur');
  return reasons;
}
