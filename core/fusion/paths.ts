import type { Box } from '../geometry';

/**
 * The three auto-label paths. The two detectors propose boxes; the verifier, asked only about the
 * uncertain subset, confirms, rejects or relabels what they proposed.
 */
export const FUSION_PATHS = ['closed_set', 'open_vocab', 'verifier'] as const;
export type FusionPath = (typeof FUSION_PATHS)[number];
export type DetectorPath = Exclude<FusionPath, 'verifier'>;
export const DETECTOR_PATHS: readonly DetectorPath[] = ['closed_set', 'open_vocab'];

/** One detection of one path, in frame pixels, with an ontology class name. */
export interface PathDetection {
  box: Box;
  className: string;
  score: number;
  /** Polygon rings [x, y, x, y, ...] in frame pixels (open-vocabulary path only). */
  mask?: number[][] | null;
  /** What the path itself called it (COCO class, prompt), kept in provenance. */
  label?: string;
}

/**
 * What one path did on a frame: `ran` (its detections, possibly none), `refused` (not configured,
 * or its model or device is absent: the reason names it) or `failed` (it was asked and broke).
 * Fusion uses only paths that ran and never stands in for the others.
 */
export type PathRun =
  | { path: DetectorPath; status: 'ran'; detections: PathDetection[]; model?: string }
  | { path: FusionPath; status: 'refused' | 'failed'; reason: string };

export const ranPaths = (runs: readonly PathRun[]): FusionPath[] =>
  runs.filter((r) => r.status === 'ran').map((r) => r.path);
