import { canonicalJson, sha256Hex } from '../datasets/manifest';
import { CONTAINMENT_TOLERANCE, COVERAGE_L1 } from '../export/gate-report';

/**
 * The redaction proof (docs/redaction-proof.md): per frame, what the PII pass examined and
 * redacted and whether every person and vehicle annotated on it contains a redaction region by the
 * export privacy gate's containment rule; a verdict per frame, the totals, and a digest of the
 * whole evidence so that a copy can be checked against it.
 */

/** What the database holds for one frame (activities/govern/redaction-proof.ts reads it). */
export interface FrameEvidenceRow {
  frame_id: string;
  session_id: string;
  index: number;
  examined: boolean;
  redacted_copy: boolean;
  faces: number;
  plates: number;
  regions: number;
  /** Non-rejected objects of the gate's classes (persons, riders, vehicles) on the frame. */
  subjects: number;
  /** Those of them no redaction region lies inside (all of them when the frame has no audit). */
  uncovered_object_ids: string[];
  model_versions: Record<string, string> | null;
}

/** Why a frame is not proven, in the order checked: the first that applies. */
export const FRAME_VERDICTS = ['proven', 'no_audit', 'no_redacted_copy', 'uncovered_objects'] as const;
export type FrameVerdict = (typeof FRAME_VERDICTS)[number];

export interface FrameEvidence extends FrameEvidenceRow {
  covered: number;
  verdict: FrameVerdict;
}

export function frameVerdict(row: FrameEvidenceRow): FrameVerdict {
  if (!row.examined) return 'no_audit';
  if (!row.redacted_copy) return 'no_redacted_copy';
  if (row.uncovered_object_ids.length) return 'uncovered_objects';
  return 'proven';
}

export interface ProofSummary {
  frames: number;
  proven: number;
  by_verdict: Record<FrameVerdict, number>;
  faces: number;
  plates: number;
  regions: number;
  subjects: number;
  covered_subjects: number;
  /** Every frame proven. */
  complete: boolean;
}

/** The rule the proof applies, stated in the proof itself. */
export const PROOF_RULE = {
  containment_tolerance: CONTAINMENT_TOLERANCE,
  subject_l1: COVERAGE_L1,
  statement:
    'a frame is proven when the PII pass examined it, its redacted copy exists, and every non-rejected object of these classes contains a redaction region, which may stick out of its box by the tolerance times its own size on each side',
} as const;

export function proveFrames(rows: readonly FrameEvidenceRow[]): {
  frames: FrameEvidence[];
  summary: ProofSummary;
  evidence_sha256: string;
} {
  const frames = rows.map((r) => ({
    ...r,
    covered: r.subjects - r.uncovered_object_ids.length,
    verdict: frameVerdict(r),
  }));
  const by_verdict = Object.fromEntries(FRAME_VERDICTS.map((v) => [v, 0])) as Record<FrameVerdict, number>;
  for (const f of frames) by_verdict[f.verdict] += 1;
  const sum = (key: 'faces' | 'plates' | 'regions' | 'subjects' | 'covered') =>
    frames.reduce((s, f) => s + f[key], 0);
  return {
    frames,
    summary: {
      frames: frames.length,
      proven: by_verdict.proven,
      by_verdict,
      faces: sum('faces'),
      plates: sum('plates'),
      regions: sum('regions'),
      subjects: sum('subjects'),
      covered_subjects: sum('covered'),
      complete: frames.length > 0 && by_verdict.proven === frames.length,
    },
    evidence_sha256: sha256Hex(canonicalJson({ rule: PROOF_RULE, frames })),
  };
}
