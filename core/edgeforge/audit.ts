import { commonStat, type LatencyFigures } from './latency';
import type { LatencyStat } from './targets';

/**
 * The benchmark audit (docs/edgeforge.md): a latency a device reports is checked against what the
 * forge measured for the same artifact (or, when the claim names none, the same model version and
 * target). A claim faster than the fastest measurement by more than the tolerance does not
 * reproduce; a claim with nothing measured to check against is unverified, never accepted.
 */

/** A reported figure may be this much faster than the measured one (a share of it) and still reproduce. */
export const DEFAULT_AUDIT_TOLERANCE = 0.25;

export type AuditVerdict = 'reproduced' | 'not_reproduced' | 'unverified';

export interface MeasuredFigure {
  id: string;
  latency: LatencyFigures;
}

export interface ClaimAudit {
  verdict: AuditVerdict;
  /** The figure compared (the first of p50, p90, p99, mean both carry). */
  stat: LatencyStat | null;
  reported_ms: number | null;
  measured_ms: number | null;
  /** The measured benchmark the claim was checked against. */
  measured_id: string | null;
  /** measured / reported: how many times faster than measured the claim is. */
  speedup_claimed: number | null;
  reason: string;
}

export function auditClaim(
  reported: LatencyFigures,
  measured: readonly MeasuredFigure[],
  tolerance: number = DEFAULT_AUDIT_TOLERANCE,
): ClaimAudit {
  const none = (reason: string): ClaimAudit => ({
    verdict: 'unverified',
    stat: null,
    reported_ms: null,
    measured_ms: null,
    measured_id: null,
    speedup_claimed: null,
    reason,
  });
  if (!measured.length) return none('nothing was measured for this artifact or model and target');
  // The most lenient reference: the fastest measurement that shares a figure with the claim.
  let best: { m: MeasuredFigure; stat: LatencyStat; value: number } | null = null;
  for (const m of measured) {
    const stat = commonStat(reported, m.latency);
    if (!stat) continue;
    const value = m.latency[stat]!;
    if (!best || value < best.value) best = { m, stat, value };
  }
  if (!best) return none('the claim shares no figure (p50, p90, p99, mean) with any measurement');
  const claim = reported[best.stat]!;
  const floor = best.value * (1 - tolerance);
  const reproduced = claim >= floor;
  return {
    verdict: reproduced ? 'reproduced' : 'not_reproduced',
    stat: best.stat,
    reported_ms: claim,
    measured_ms: best.value,
    measured_id: best.m.id,
    speedup_claimed: claim > 0 ? best.value / claim : null,
    reason: reproduced
      ? `${best.stat} ${claim} ms is within ${Math.round(tolerance * 100)}% of the ${best.value.toFixed(2)} ms measured`
      : `${best.stat} ${claim} ms is faster than the ${best.value.toFixed(2)} ms measured by more than the ${Math.round(tolerance * 100)}% tolerance`,
  };
}
